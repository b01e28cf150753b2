#include "controller/admission.h"

#include <gtest/gtest.h>

namespace routestatus::controller {
namespace {

using kubeclient::Route;
using RoutePtr = std::shared_ptr<const Route>;

Route MakeRoute(const std::string& ns, const std::string& name, const std::string& host,
                int64_t created = 1000, const std::string& uid = "",
                const std::string& path = "", const std::string& wildcard = "") {
  Route r;
  r.metadata.namespace_name = ns;
  r.metadata.name = name;
  r.metadata.uid = uid.empty() ? ns + "-" + name : uid;
  r.metadata.creation_unix = created;
  r.spec.host = host;
  r.spec.path = path;
  r.spec.wildcard_policy = wildcard;
  return r;
}

AdmissionOptions Opts() {
  AdmissionOptions o;
  o.router_name = "default";
  o.canonical_hostname = "router-default.apps.example.com";
  return o;
}

TEST(EffectiveHostTest, Derivation) {
  struct Case {
    const char* name;
    std::string host, subdomain, domain, tmpl;
    bool override_hostname;
    std::string want;
  } cases[] = {
      {"spec host", "www.example.com", "", "apps.example.com", "", false, "www.example.com"},
      {"subdomain", "", "shop", "apps.example.com", "", false, "shop.apps.example.com"},
      {"subdomain without router domain uses template", "", "shop", "",
       "${name}-${namespace}.apps.example.com", false, "web-team.apps.example.com"},
      {"template", "", "", "", "${name}-${namespace}.apps.example.com", false,
       "web-team.apps.example.com"},
      {"host beats template", "a.example.com", "", "", "${name}.x.com", false, "a.example.com"},
      {"override applies template to all", "a.example.com", "shop", "apps.example.com",
       "${name}.${namespace}.x.com", true, "web.team.x.com"},
      {"override without template keeps host", "a.example.com", "", "", "", true,
       "a.example.com"},
      {"nothing", "", "", "", "", false, ""},
      {"subdomain beats template", "", "shop", "apps.example.com", "${name}.x.com", false,
       "shop.apps.example.com"},
      // openshift-router expands with Go's os.Expand and trims quotes.
      {"$name without braces", "", "", "", "$name-$namespace.apps.example.com", false,
       "web-team.apps.example.com"},
      {"quotes around the template", "", "", "", "\"${name}.apps.example.com\"", false,
       "web.apps.example.com"},
      {"single quotes", "", "", "", "'${name}.apps.example.com'", false, "web.apps.example.com"},
      {"unknown key gives no host", "", "", "", "${name}-${cluster}.apps.example.com", false, ""},
      {"unknown key with override keeps spec.host", "a.example.com", "", "", "${nope}.x.com", true,
       "a.example.com"},
      {"unknown key with subdomain keeps subdomain host", "", "shop", "apps.example.com",
       "${nope}.x.com", true, "shop.apps.example.com"},
  };
  for (const auto& c : cases) {
    Route r = MakeRoute("team", "web", c.host);
    r.spec.subdomain = c.subdomain;
    AdmissionOptions o = Opts();
    o.router_domain = c.domain;
    o.hostname_template = c.tmpl;
    o.override_hostname = c.override_hostname;
    EXPECT_EQ(EffectiveHost(r, o), c.want) << c.name;
  }
}

TEST(Dns1123Test, EdgeCases) {
  std::string label63(63, 'a'), label64(64, 'a');
  std::string long253, long254;
  while (long253.size() < 253) long253 += (long253.empty() ? "" : ".") + std::string(49, 'b');
  long253 = long253.substr(0, 253);
  if (long253.back() == '.') long253.back() = 'c';
  long254 = long253 + "d";
  struct Case {
    std::string host;
    bool valid;
  } cases[] = {
      {"www.example.com", true},
      {"a", true},
      {"1-2.x9", true},
      {label63 + ".com", true},
      {label64 + ".com", false},
      {long253, true},
      {long254, false},
      {"", false},
      {"WWW.example.com", false},
      {"-a.example.com", false},
      {"a-.example.com", false},
      {"a..example.com", false},
      {".example.com", false},
      {"example.com.", false},
      {"exa_mple.com", false},
      {"exa mple.com", false},
      {"*.example.com", false},
      {"a.*.example.com", false},
      {"*", false},
      {"com", true},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(ValidateHost(c.host).empty(), c.valid) << c.host;
  }
}

TEST(HostInDomainTest, SubdomainMatching) {
  EXPECT_TRUE(HostInDomain("example.com", "example.com"));
  EXPECT_TRUE(HostInDomain("a.example.com", "example.com"));
  EXPECT_TRUE(HostInDomain("a.b.example.com", "example.com"));
  EXPECT_FALSE(HostInDomain("badexample.com", "example.com"));
  EXPECT_FALSE(HostInDomain("example.com.evil.org", "example.com"));
  // openshift-router matches "*.example.com" literally: no valid host is in it.
  EXPECT_FALSE(HostInDomain("example.com", "*.example.com"));
  EXPECT_FALSE(HostInDomain("a.example.com", "*.example.com"));
  EXPECT_TRUE(HostInDomain("*.example.com", "*.example.com"));
  EXPECT_TRUE(HostInDomain("*.example.com", "example.com"));
  EXPECT_FALSE(HostInDomain("a.example.com", ""));
  // It stops at a leading dot.
  EXPECT_FALSE(HostInDomain(".example.com", "example.com"));
}

struct AloneCase {
  const char* name;
  std::string host;
  std::string wildcard;
  bool allow_wildcard;
  std::vector<std::string> allowed, denied;
  bool admitted;
  std::string reason;
};

TEST(AdmitAloneTest, Rules) {
  AloneCase cases[] = {
      {"plain", "www.example.com", "", false, {}, {}, true, ""},
      {"explicit None", "www.example.com", "None", false, {}, {}, true, ""},
      {"no host", "", "", false, {}, {}, false, kReasonNoHostValue},
      {"invalid host", "WWW.example.com", "", false, {}, {}, false, kReasonInvalidHost},
      {"label too long", std::string(64, 'a') + ".com", "", false, {}, {}, false,
       kReasonInvalidHost},
      {"wildcard not allowed", "www.example.com", "Subdomain", false, {}, {}, false,
       kReasonRouteNotAdmitted},
      {"wildcard allowed", "www.example.com", "Subdomain", true, {}, {}, true, ""},
      // openshift-router's ValidateHost refuses "*." whatever the policy.
      {"wildcard syntax refused", "*.example.com", "Subdomain", true, {}, {}, false,
       kReasonInvalidHost},
      {"wildcard syntax without policy", "*.example.com", "", true, {}, {}, false,
       kReasonInvalidHost},
      // A single label is a valid host there, for wildcard routes too.
      {"wildcard single label", "localhost", "Subdomain", true, {}, {}, true, ""},
      // The admission function rejects first, but openshift-router records
      // the unique-host plugin's NoHostValue / InvalidHost after it.
      {"wildcard not allowed, invalid host", "Bad.example.com", "Subdomain", false, {}, {}, false,
       kReasonInvalidHost},
      {"denied, invalid host", "Bad.example.com", "", false, {}, {"example.com"}, false,
       kReasonInvalidHost},
      {"wildcard not allowed, no host", "", "Subdomain", false, {}, {}, false,
       kReasonNoHostValue},
      // Domain entries are literal: "*.example.com" matches no valid host.
      {"allowed *.domain matches nothing", "a.example.com", "", false, {"*.example.com"}, {},
       false, kReasonRouteNotAdmitted},
      {"denied *.domain matches nothing", "a.example.com", "", false, {}, {"*.example.com"}, true,
       ""},
      {"unknown policy", "www.example.com", "Everything", true, {}, {}, false,
       kReasonRouteNotAdmitted},
      {"denied exact", "example.com", "", false, {}, {"example.com"}, false,
       kReasonRouteNotAdmitted},
      {"denied subdomain", "a.b.example.com", "", false, {}, {"example.com"}, false,
       kReasonRouteNotAdmitted},
      {"denied other", "a.example.org", "", false, {}, {"example.com"}, true, ""},
      {"allowed", "a.apps.example.com", "", false, {"apps.example.com"}, {}, true, ""},
      {"not allowed", "a.example.org", "", false, {"apps.example.com", "x.io"}, {}, false,
       kReasonRouteNotAdmitted},
      {"suffix is not a subdomain", "badapps.example.com", "", false, {"apps.example.com"}, {},
       false, kReasonRouteNotAdmitted},
      {"denied beats allowed", "a.bad.example.com", "", false, {"example.com"},
       {"bad.example.com"}, false, kReasonRouteNotAdmitted},
  };
  for (const auto& c : cases) {
    Route r = MakeRoute("ns", "r", c.host, 1000, "", "", c.wildcard);
    AdmissionOptions o = Opts();
    o.allow_wildcard_routes = c.allow_wildcard;
    o.allowed_domains = c.allowed;
    o.denied_domains = c.denied;
    AdmissionDecision d = AdmitAlone(r, o);
    EXPECT_EQ(d.admitted, c.admitted) << c.name << ": " << d.message;
    EXPECT_EQ(d.reason, c.reason) << c.name;
    EXPECT_EQ(d.host, c.host) << c.name;
    EXPECT_EQ(d.admitted, d.message.empty()) << c.name;
    EXPECT_EQ(d.wildcard_policy, c.wildcard.empty() ? "None" : c.wildcard) << c.name;
  }
}

TEST(AdmitAloneTest, MessagesSayWhatToDo) {
  AdmissionOptions o = Opts();
  EXPECT_NE(AdmitAlone(MakeRoute("ns", "r", ""), o).message.find("set spec.host"),
            std::string::npos);
  EXPECT_NE(AdmitAlone(MakeRoute("ns", "r", "A.com"), o).message.find("fix spec.host"),
            std::string::npos);
}

// Each message names what to change for where the host came from: a route
// with spec.subdomain was told to "set spec.host or spec.subdomain"; a bad
// host built from the template was told to "fix spec.host".
TEST(AdmitAloneTest, MessagesNameWhatToChangeForTheCaseAtHand) {
  struct Case {
    const char* name;
    std::string host, subdomain, domain, tmpl;
    bool override_hostname;
    std::vector<std::string> want;     // substrings of the message
    std::vector<std::string> not_want;
  } cases[] = {
      {"nothing at all", "", "", "", "", false,
       {"route ns/r has no host: set spec.host or spec.subdomain, or configure a hostname "
        "template (--hostname-template) for router default"},
       {}},
      {"subdomain without a router domain", "", "shop", "", "", false,
       {"route ns/r has spec.subdomain 'shop' but router default has no domain for it: set "
        "--router-domain on router default, or set spec.host"},
       {"set spec.host or spec.subdomain"}},
      {"bad spec.host", "A.com", "", "", "", false, {"host 'A.com'", "; fix spec.host"}, {}},
      {"bad subdomain", "", "Shop", "apps.example.com", "", false,
       {"host 'Shop.apps.example.com' (spec.subdomain 'Shop' + router domain 'apps.example.com')",
        "; fix spec.subdomain"},
       {"fix spec.host"}},
      {"bad host from the template", "", "", "", "${name}-${namespace}.apps.example.com", false,
       {"host '" + std::string(70, 'r') + "-ns.apps.example.com' (from --hostname-template '${name}-${namespace}.apps.example.com' of router default)",
        "; set spec.host, or shorten the route's name or namespace, or change the template"},
       {"fix spec.host"}},
      {"bad host from the template with override", "ok.example.com", "", "",
       "${name}-${namespace}.apps.example.com", true,
       {"(from --hostname-template", "--override-hostname applies it to every route",
        "; change the template or rename the route"},
       {"fix spec.host", "set spec.host"}},
  };
  for (const auto& c : cases) {
    std::string name = c.tmpl.empty() ? "r" : std::string(70, 'r');
    Route r = MakeRoute("ns", name, c.host);
    r.spec.subdomain = c.subdomain;
    AdmissionOptions o = Opts();
    o.router_domain = c.domain;
    o.hostname_template = c.tmpl;
    o.override_hostname = c.override_hostname;
    AdmissionDecision d = AdmitAlone(r, o);
    EXPECT_FALSE(d.admitted) << c.name;
    for (const auto& w : c.want) EXPECT_NE(d.message.find(w), std::string::npos) << c.name << ": " << d.message;
    for (const auto& w : c.not_want) EXPECT_EQ(d.message.find(w), std::string::npos) << c.name << ": " << d.message;
  }
}

TEST(IsOlderTest, TimestampThenUid) {
  EXPECT_TRUE(IsOlder(MakeRoute("a", "x", "h", 1, "z"), MakeRoute("a", "y", "h", 2, "a")));
  EXPECT_FALSE(IsOlder(MakeRoute("a", "x", "h", 2, "a"), MakeRoute("a", "y", "h", 1, "z")));
  EXPECT_TRUE(IsOlder(MakeRoute("a", "x", "h", 1, "a"), MakeRoute("a", "y", "h", 1, "b")));
  EXPECT_FALSE(IsOlder(MakeRoute("a", "x", "h", 1, "b"), MakeRoute("a", "y", "h", 1, "a")));
}

struct ClaimCase {
  const char* name;
  Route route;
  std::vector<Route> peers;
  bool disable_ownership;
  bool admitted;
  std::string holder_in_message;  // "" when admitted
};

TEST(AdmitTest, Claims) {
  const std::string h = "www.example.com";
  ClaimCase cases[] = {
      {"alone", MakeRoute("b", "r", h, 20), {}, false, true, ""},
      {"older other namespace", MakeRoute("b", "r", h, 20), {MakeRoute("a", "old", h, 10)},
       false, false, "a/old"},
      {"younger other namespace", MakeRoute("b", "r", h, 20), {MakeRoute("a", "new", h, 30)},
       false, true, ""},
      {"same time smaller uid wins", MakeRoute("b", "r", h, 20, "u2"),
       {MakeRoute("a", "o", h, 20, "u1")}, false, false, "a/o"},
      {"same time bigger uid loses", MakeRoute("b", "r", h, 20, "u1"),
       {MakeRoute("a", "o", h, 20, "u2")}, false, true, ""},
      {"same namespace other path shares", MakeRoute("a", "r", h, 20, "", "/api"),
       {MakeRoute("a", "old", h, 10, "", "/")}, false, true, ""},
      {"same namespace same path", MakeRoute("a", "r", h, 20, "", "/api"),
       {MakeRoute("a", "old", h, 10, "", "/api")}, false, false, "a/old"},
      {"other namespace other path: owner namespace wins", MakeRoute("b", "r", h, 20, "", "/api"),
       {MakeRoute("a", "old", h, 10, "", "/")}, false, false, "a/old"},
      {"ownership off: other path shares", MakeRoute("b", "r", h, 20, "", "/api"),
       {MakeRoute("a", "old", h, 10, "", "/")}, true, true, ""},
      {"ownership off: same path oldest wins", MakeRoute("b", "r", h, 20, "", "/api"),
       {MakeRoute("a", "old", h, 10, "", "/api")}, true, false, "a/old"},
      {"other host", MakeRoute("b", "r", h, 20), {MakeRoute("a", "old", "x.example.com", 10)},
       false, true, ""},
      {"invalid older peer claims nothing", MakeRoute("b", "r", h, 20),
       {MakeRoute("a", "old", h, 10, "", "", "Bogus")}, false, true, ""},
      {"self in peers ignored", MakeRoute("b", "r", h, 20), {MakeRoute("b", "r", h, 20)}, false,
       true, ""},
      {"oldest of several named", MakeRoute("c", "r", h, 30),
       {MakeRoute("b", "mid", h, 20), MakeRoute("a", "old", h, 10)}, false, false, "a/old"},
      {"owner namespace wins over older-than-me middle", MakeRoute("a", "r", h, 30, "", "/x"),
       {MakeRoute("b", "mid", h, 20), MakeRoute("a", "old", h, 10)}, false, true, ""},
      // openshift-router: a rejected route holds no claim (ns2/b is rejected
      // for ns1/a's host, so ns1/c takes /x).
      {"a rejected route holds no claim", MakeRoute("ns1", "c", h, 30, "", "/x"),
       {MakeRoute("ns1", "a", h, 10, "", "/"), MakeRoute("ns2", "b", h, 20, "", "/x")}, false,
       true, ""},
  };
  for (auto& c : cases) {
    AdmissionOptions o = Opts();
    o.disable_namespace_ownership_check = c.disable_ownership;
    std::vector<RoutePtr> peers;
    for (auto& p : c.peers) peers.push_back(std::make_shared<const Route>(p));
    AdmissionDecision d = Admit(c.route, peers, o);
    EXPECT_EQ(d.admitted, c.admitted) << c.name << ": " << d.message;
    if (!c.admitted) {
      EXPECT_EQ(d.reason, kReasonHostAlreadyClaimed) << c.name;
      EXPECT_NE(d.message.find("route " + c.holder_in_message + " already exposes " + h),
                std::string::npos)
          << c.name << ": " << d.message;
      EXPECT_NE(d.message.find("is older"), std::string::npos) << c.name;
      EXPECT_EQ(d.host, h) << c.name;
    }
  }
}

TEST(AdmitTest, WildcardClaimsDomain) {
  AdmissionOptions o = Opts();
  o.allow_wildcard_routes = true;
  Route old_wild = MakeRoute("a", "w1", "one.example.com", 10, "", "", "Subdomain");
  Route new_wild = MakeRoute("b", "w2", "two.example.com", 20, "", "", "Subdomain");
  EXPECT_EQ(HostClaimKeys(new_wild, o), std::vector<std::string>{"*.example.com"});
  AdmissionDecision d = Admit(new_wild, {std::make_shared<const Route>(old_wild)}, o);
  EXPECT_FALSE(d.admitted);
  EXPECT_EQ(d.reason, kReasonHostAlreadyClaimed);
  EXPECT_EQ(d.wildcard_policy, "Subdomain");
  // A plain route in another namespace on a host inside the older
  // wildcard's subdomain is rejected (admission_wildcard_test.cc has all cases).
  Route plain = MakeRoute("b", "p", "two.example.com", 30);
  EXPECT_FALSE(Admit(plain, {std::make_shared<const Route>(old_wild)}, o).admitted);
}

TEST(AdmitTest, RejectionCarriesHostAndPolicy) {
  AdmissionOptions o = Opts();
  Route r = MakeRoute("b", "r", "www.example.com", 20, "", "", "Subdomain");
  AdmissionDecision d = Admit(r, {}, o);
  EXPECT_FALSE(d.admitted);
  EXPECT_EQ(d.host, "www.example.com");
  EXPECT_EQ(d.wildcard_policy, "Subdomain");
}

}  // namespace
}  // namespace routestatus::controller
