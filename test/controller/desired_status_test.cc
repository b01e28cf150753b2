#include "controller/desired_status.h"

#include <gtest/gtest.h>

namespace routestatus::controller {
namespace {

using kubeclient::RouteCondition;
using kubeclient::RouteIngress;

AdmissionOptions Opts() {
  AdmissionOptions o;
  o.router_name = "default";
  o.canonical_hostname = "router-default.apps.example.com";
  return o;
}

SystemTime At(int64_t unix_seconds) {
  return SystemTime(std::chrono::seconds(unix_seconds)) +
         std::chrono::milliseconds(700);  // fractions are dropped
}

AdmissionDecision Admitted(const std::string& host) {
  AdmissionDecision d;
  d.admitted = true;
  d.host = host;
  d.wildcard_policy = "None";
  return d;
}

AdmissionDecision Rejected(const std::string& host, const std::string& reason,
                           const std::string& message) {
  AdmissionDecision d = Admitted(host);
  d.admitted = false;
  d.reason = reason;
  d.message = message;
  d.wildcard_policy = "Subdomain";
  return d;
}

TEST(DesiredEntryTest, AdmittedEntryFields) {
  RouteIngress e = DesiredEntry(Admitted("www.example.com"), Opts(), nullptr, At(1800000000));
  EXPECT_EQ(e.router_name, "default");
  EXPECT_EQ(e.host, "www.example.com");
  EXPECT_EQ(e.router_canonical_hostname, "router-default.apps.example.com");
  EXPECT_EQ(e.wildcard_policy, "None");
  ASSERT_EQ(e.conditions.size(), 1u);
  EXPECT_EQ(e.conditions[0].type, "Admitted");
  EXPECT_EQ(e.conditions[0].status, "True");
  EXPECT_EQ(e.conditions[0].reason, "");
  EXPECT_EQ(e.conditions[0].last_transition_time, kubeclient::FormatRfc3339(1800000000));
  EXPECT_EQ(e.conditions[0].last_transition_time.size(), 20u);  // whole seconds, Z
}

TEST(DesiredEntryTest, RejectionCarriesHostCanonicalAndWildcard) {
  RouteIngress e = DesiredEntry(Rejected("www.example.com", "HostAlreadyClaimed", "route a/b ..."),
                                Opts(), nullptr, At(1800000000));
  EXPECT_EQ(e.host, "www.example.com");
  EXPECT_EQ(e.router_canonical_hostname, "router-default.apps.example.com");
  EXPECT_EQ(e.wildcard_policy, "Subdomain");
  EXPECT_EQ(e.conditions[0].status, "False");
  EXPECT_EQ(e.conditions[0].reason, "HostAlreadyClaimed");
  EXPECT_EQ(e.conditions[0].message, "route a/b ...");
}

TEST(DesiredEntryTest, TransitionTime) {
  const std::string old_time = "2026-01-01T00:00:00Z";
  RouteIngress observed = DesiredEntry(Admitted("a.example.com"), Opts(), nullptr, At(0));
  observed.conditions[0].last_transition_time = old_time;
  const std::string now = kubeclient::FormatRfc3339(1800000000);
  struct Case {
    const char* name;
    AdmissionDecision decision;
    std::string want;
  } cases[] = {
      {"unchanged keeps", Admitted("a.example.com"), old_time},
      // Why: like openshift, any change of the entry is a transition; users
      // read the time as "when did this entry change".
      {"host change only stamps", Admitted("b.example.com"), now},
      {"status change stamps", Rejected("a.example.com", "InvalidHost", "m"), now},
  };
  for (const auto& c : cases) {
    RouteIngress e = DesiredEntry(c.decision, Opts(), &observed, At(1800000000));
    EXPECT_EQ(e.conditions[0].last_transition_time, c.want) << c.name;
  }
  AdmissionOptions other_canonical = Opts();
  other_canonical.canonical_hostname = "router-b.apps.example.com";
  EXPECT_EQ(DesiredEntry(Admitted("a.example.com"), other_canonical, &observed, At(1800000000))
                .conditions[0].last_transition_time,
            now)
      << "a canonical hostname change is a transition";
  AdmissionDecision wildcard = Admitted("a.example.com");
  wildcard.wildcard_policy = "Subdomain";
  EXPECT_EQ(DesiredEntry(wildcard, Opts(), &observed, At(1800000000))
                .conditions[0].last_transition_time,
            now)
      << "a wildcard policy change is a transition";
  RouteIngress extra = observed;
  extra.conditions.push_back(RouteCondition{"Custom", "True", "", "", old_time});
  EXPECT_EQ(DesiredEntry(Admitted("a.example.com"), Opts(), &extra, At(1800000000))
                .conditions[0].last_transition_time,
            now)
      << "dropping another condition changes the entry";
  RouteIngress rejected =
      DesiredEntry(Rejected("a.example.com", "HostAlreadyClaimed", "m1"), Opts(), nullptr, At(5));
  EXPECT_EQ(DesiredEntry(Rejected("a.example.com", "HostAlreadyClaimed", "m1"), Opts(), &rejected,
                         At(99)).conditions[0].last_transition_time,
            kubeclient::FormatRfc3339(5));
  EXPECT_EQ(DesiredEntry(Rejected("a.example.com", "HostAlreadyClaimed", "m2"), Opts(), &rejected,
                         At(99)).conditions[0].last_transition_time,
            kubeclient::FormatRfc3339(99))
      << "a new message is a transition";
  EXPECT_EQ(DesiredEntry(Rejected("a.example.com", "InvalidHost", "m1"), Opts(), &rejected,
                         At(99)).conditions[0].last_transition_time,
            kubeclient::FormatRfc3339(99))
      << "a new reason is a transition";
  RouteIngress no_time = rejected;
  no_time.conditions[0].last_transition_time.clear();
  EXPECT_EQ(DesiredEntry(Rejected("a.example.com", "HostAlreadyClaimed", "m1"), Opts(), &no_time,
                         At(99)).conditions[0].last_transition_time,
            kubeclient::FormatRfc3339(99));
}

TEST(DiffersOnlyInViewTest, OnlyHostClaimDecisionsAreViewDifferences) {
  const RouteIngress admitted = DesiredEntry(Admitted("a.example.com"), Opts(), nullptr, At(5));
  auto rejected = [](const std::string& reason, const std::string& message) {
    return DesiredEntry(
        [&] {
          AdmissionDecision d = Rejected("a.example.com", reason, message);
          d.wildcard_policy = "None";
          return d;
        }(),
        Opts(), nullptr, At(9));
  };
  RouteIngress other_host = admitted;
  other_host.host = "b.example.com";
  RouteIngress other_canonical = admitted;
  other_canonical.router_canonical_hostname = "router-b.apps.example.com";
  RouteIngress extra = admitted;
  extra.conditions.push_back(RouteCondition{"Custom", "True", "", "", ""});
  struct Case {
    const char* name;
    RouteIngress theirs;
    bool want;
  } cases[] = {
      {"equal (another time)", DesiredEntry(Admitted("a.example.com"), Opts(), nullptr, At(77)),
       false},
      {"claimed vs admitted", rejected("HostAlreadyClaimed", "route x/y ..."), true},
      {"another host", other_host, false},
      {"another canonical hostname", other_canonical, false},
      {"rejected for its own host", rejected("InvalidHost", "bad"), false},
      {"another condition", extra, false},
  };
  for (const auto& c : cases) EXPECT_EQ(DiffersOnlyInView(admitted, c.theirs), c.want) << c.name;
  EXPECT_TRUE(DiffersOnlyInView(rejected("HostAlreadyClaimed", "route x/y ..."),
                                rejected("HostAlreadyClaimed", "route x/z ...")))
      << "another holder named";
  EXPECT_FALSE(DiffersOnlyInView(rejected("HostAlreadyClaimed", "m"), rejected("InvalidHost", "m")));
}

RouteIngress EntryAt(const std::string& router, const std::string& time) {
  RouteIngress e;
  e.router_name = router;
  RouteCondition c;
  c.type = "Admitted";
  c.status = "True";
  c.last_transition_time = time;
  e.conditions.push_back(c);
  return e;
}


}  // namespace
}  // namespace routestatus::controller
