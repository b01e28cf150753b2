// Host claims between wildcard (wildcardPolicy Subdomain) and plain routes:
// the OpenShift host admitter's rules (see HostClaimKeys in admission.h),
// checked through the index keys the controller uses to find peers.
#include <algorithm>

#include <gtest/gtest.h>

#include "controller/admission.h"

namespace routestatus::controller {
namespace {

using kubeclient::Route;
using RoutePtr = std::shared_ptr<const Route>;

Route Make(const std::string& ns, const std::string& name, const std::string& host,
           int64_t created, const std::string& policy, const std::string& path = "") {
  Route r;
  r.metadata.namespace_name = ns;
  r.metadata.name = name;
  r.metadata.uid = ns + "-" + name;
  r.metadata.creation_unix = created;
  r.spec.host = host;
  r.spec.path = path;
  r.spec.wildcard_policy = policy;
  return r;
}
Route Plain(const std::string& ns, const std::string& name, const std::string& host,
            int64_t created, const std::string& path = "") {
  return Make(ns, name, host, created, "", path);
}
Route Wild(const std::string& ns, const std::string& name, const std::string& host,
           int64_t created, const std::string& path = "") {
  return Make(ns, name, host, created, "Subdomain", path);
}

AdmissionOptions Opts(bool allow_wildcards = true, bool disable_ownership = false) {
  AdmissionOptions o;
  o.router_name = "default";
  o.allow_wildcard_routes = allow_wildcards;
  o.disable_namespace_ownership_check = disable_ownership;
  return o;
}

// What the controller passes to Admit: the routes of `all` indexed (by
// HostClaimKeys) under one of HostClaimPeerKeys(route), without `route`.
std::vector<RoutePtr> PeersOf(const Route& route, const std::vector<Route>& all,
                              const AdmissionOptions& o) {
  std::vector<RoutePtr> out;
  const std::vector<std::string> lookup = HostClaimPeerKeys(route, o);
  for (const auto& r : all) {
    if (r.metadata.uid == route.metadata.uid) continue;
    for (const auto& key : HostClaimKeys(r, o)) {
      if (std::find(lookup.begin(), lookup.end(), key) != lookup.end()) {
        out.push_back(std::make_shared<const Route>(r));
        break;
      }
    }
  }
  return out;
}

bool Contains(const std::vector<RoutePtr>& peers, const Route& r) {
  return std::any_of(peers.begin(), peers.end(),
                     [&](const RoutePtr& p) { return p->metadata.uid == r.metadata.uid; });
}

struct WildcardCase {
  const char* name;
  Route route;
  Route other;
  bool allow_wildcards;
  bool disable_ownership;
  std::string reason;   // "" = admitted
  std::string message;  // a part of the message ("" when admitted)
};

TEST(AdmitWildcardTest, Combinations) {
  const std::string kPlainLoses =
      "wildcard route a/w already claims *.example.com, which covers foo.example.com, and is "
      "older; namespace a owns that subdomain";
  const std::string kWildLoses =
      "route a/p already exposes foo.example.com, which is inside *.example.com, and is older; "
      "namespace a owns that host, so wildcard route b/w cannot claim *.example.com";
  const WildcardCase cases[] = {
      // Plain route against a wildcard route.
      {"plain, other ns, newer than wildcard", Plain("b", "p", "foo.example.com", 20),
       Wild("a", "w", "www.example.com", 10), true, false, kReasonHostAlreadyClaimed, kPlainLoses},
      {"plain, other ns, older than wildcard", Plain("b", "p", "foo.example.com", 5),
       Wild("a", "w", "www.example.com", 10), true, false, "", ""},
      {"plain, same ns, newer than wildcard", Plain("a", "p", "foo.example.com", 20),
       Wild("a", "w", "www.example.com", 10), true, false, "", ""},
      {"plain on the wildcard's own host, other ns", Plain("b", "p", "www.example.com", 20),
       Wild("a", "w", "www.example.com", 10), true, false, kReasonHostAlreadyClaimed,
       "wildcard route a/w already claims *.example.com, which covers www.example.com"},
      {"plain, other ns, other path: namespace still owns", Plain("b", "p", "foo.example.com", 20,
       "/api"), Wild("a", "w", "www.example.com", 10, "/"), true, false,
       kReasonHostAlreadyClaimed, kPlainLoses},
      {"wildcard written *.example.com", Plain("b", "p", "foo.example.com", 20),
       Wild("a", "w", "*.example.com", 10), true, false, kReasonHostAlreadyClaimed, kPlainLoses},
      {"ownership off: plain newer, other ns", Plain("b", "p", "foo.example.com", 20),
       Wild("a", "w", "www.example.com", 10), true, true, "", ""},
      {"two labels deep is outside the wildcard", Plain("b", "p", "a.b.example.com", 20),
       Wild("a", "w", "www.example.com", 10), true, false, "", ""},
      {"the parent domain itself is outside", Plain("b", "p", "example.com", 20),
       Wild("a", "w", "www.example.com", 10), true, false, "", ""},
      {"deeper wildcard covers one label below it", Plain("b", "p", "a.b.example.com", 20),
       Wild("a", "w", "www.b.example.com", 10), true, false, kReasonHostAlreadyClaimed,
       "wildcard route a/w already claims *.b.example.com, which covers a.b.example.com"},
      {"other domain", Plain("b", "p", "foo.example.org", 20),
       Wild("a", "w", "www.example.com", 10), true, false, "", ""},
      {"wildcards off: rejected wildcard claims nothing", Plain("b", "p", "foo.example.com", 20),
       Wild("a", "w", "www.example.com", 10), false, false, "", ""},
      // Wildcard route against a plain route.
      {"wildcard, other ns, newer than plain", Wild("b", "w", "www.example.com", 20),
       Plain("a", "p", "foo.example.com", 10), true, false, kReasonHostAlreadyClaimed, kWildLoses},
      {"wildcard, other ns, older than plain", Wild("b", "w", "www.example.com", 5),
       Plain("a", "p", "foo.example.com", 10), true, false, "", ""},
      {"wildcard, same ns, newer than plain", Wild("a", "w", "www.example.com", 20),
       Plain("a", "p", "foo.example.com", 10), true, false, "", ""},
      // openshift-router's unique-host index: one route per host and path,
      // whatever the wildcard policy.
      {"wildcard vs plain on its own host, same ns", Wild("a", "w", "www.example.com", 20),
       Plain("a", "p", "www.example.com", 10), true, false, kReasonHostAlreadyClaimed,
       "route a/p already exposes www.example.com and is older"},
      {"wildcard vs plain on its own host, same ns, other path",
       Wild("a", "w", "www.example.com", 20, "/x"), Plain("a", "p", "www.example.com", 10), true,
       false, "", ""},
      {"ownership off: wildcard vs plain on its own host, other ns",
       Wild("b", "w", "www.example.com", 20), Plain("a", "p", "www.example.com", 10), true, true,
       kReasonHostAlreadyClaimed, "route a/p already exposes www.example.com and is older"},
      // A single label has the empty domain: a wildcard route on "com"
      // claims every single-label host.
      {"single-label wildcard covers single-label hosts", Plain("b", "p", "org", 20),
       Wild("a", "w", "com", 10), true, false, kReasonHostAlreadyClaimed,
       "wildcard route a/w already claims *., which covers org"},
      {"ownership off: wildcard newer, other ns", Wild("b", "w", "www.example.com", 20),
       Plain("a", "p", "foo.example.com", 10), true, true, "", ""},
      {"plain two labels deep does not block", Wild("b", "w", "www.example.com", 20),
       Plain("a", "p", "a.b.example.com", 10), true, false, "", ""},
      {"wildcards off: wildcard rejected by policy", Wild("b", "w", "www.example.com", 5),
       Plain("a", "p", "foo.example.com", 10), false, false, kReasonRouteNotAdmitted,
       "does not allow wildcard routes"},
      // Two wildcard routes of one subdomain.
      {"wildcards, other ns, newer", Wild("b", "w", "one.example.com", 20),
       Wild("a", "old", "two.example.com", 10), true, false, kReasonHostAlreadyClaimed,
       "wildcard route a/old already exposes *.example.com and is older; namespace a owns"},
      {"wildcards, other ns, older", Wild("b", "w", "one.example.com", 5),
       Wild("a", "old", "two.example.com", 10), true, false, "", ""},
      {"wildcards, same ns, other path", Wild("a", "w", "one.example.com", 20, "/x"),
       Wild("a", "old", "two.example.com", 10, "/y"), true, false, "", ""},
      {"wildcards, same ns, same path", Wild("a", "w", "one.example.com", 20, "/x"),
       Wild("a", "old", "two.example.com", 10, "/x"), true, false, kReasonHostAlreadyClaimed,
       "wildcard route a/old already exposes *.example.com/x and is older"},
      {"ownership off: wildcards, other path", Wild("b", "w", "one.example.com", 20, "/x"),
       Wild("a", "old", "two.example.com", 10, "/y"), true, true, "", ""},
      {"ownership off: wildcards, same path", Wild("b", "w", "one.example.com", 20, "/x"),
       Wild("a", "old", "two.example.com", 10, "/x"), true, true, kReasonHostAlreadyClaimed,
       "wildcard route a/old already exposes *.example.com/x and is older"},
      // Two plain routes in one domain are unrelated.
      {"plain siblings", Plain("b", "p", "foo.example.com", 20),
       Plain("a", "q", "bar.example.com", 10), true, false, "", ""},
  };
  for (const auto& c : cases) {
    const AdmissionOptions o = Opts(c.allow_wildcards, c.disable_ownership);
    const std::vector<Route> all{c.route, c.other};
    AdmissionDecision d = Admit(c.route, PeersOf(c.route, all, o), o);
    EXPECT_EQ(d.admitted, c.reason.empty()) << c.name << ": " << d.message;
    EXPECT_EQ(d.reason, c.reason) << c.name;
    EXPECT_NE(d.message.find(c.message), std::string::npos) << c.name << ": " << d.message;
    if (c.reason == kReasonHostAlreadyClaimed) {
      EXPECT_NE(d.message.find("route " + c.route.Key()), std::string::npos)
          << c.name << ": " << d.message;
    }
    // Re-queueing: when one of the two can decide the other, each finds the
    // other under its peer keys (so a change of either re-queues the other).
    EXPECT_EQ(Contains(PeersOf(c.route, all, o), c.other),
              Contains(PeersOf(c.other, all, o), c.route))
        << c.name;
    if (c.reason == kReasonHostAlreadyClaimed) {
      EXPECT_TRUE(Contains(PeersOf(c.other, all, o), c.route)) << c.name;
    }
  }
}

TEST(AdmitWildcardTest, IndexKeys) {
  const Route plain = Plain("a", "p", "foo.example.com", 1);
  const Route wild = Wild("a", "w", "www.example.com", 1);
  using Keys = std::vector<std::string>;
  EXPECT_EQ(HostClaimKeys(plain, Opts(false)), Keys{"foo.example.com"});
  EXPECT_EQ(HostClaimPeerKeys(plain, Opts(false)), Keys{"foo.example.com"});
  EXPECT_EQ(HostClaimKeys(plain, Opts(true)), (Keys{"foo.example.com", "hosts-in:example.com"}));
  EXPECT_EQ(HostClaimPeerKeys(plain, Opts(true)), (Keys{"foo.example.com", "*.example.com"}));
  EXPECT_EQ(HostClaimKeys(wild, Opts(true)), Keys{"*.example.com"});
  EXPECT_EQ(HostClaimPeerKeys(wild, Opts(true)), (Keys{"*.example.com", "hosts-in:example.com"}));
  EXPECT_EQ(HostClaimKeys(Plain("a", "p", "localhost", 1), Opts(true)),
            (Keys{"localhost", "hosts-in:"}));
  EXPECT_EQ(HostClaimKeys(Wild("a", "w", "localhost", 1), Opts(true)), Keys{"*."});
  EXPECT_TRUE(HostClaimKeys(Plain("a", "p", "", 1), Opts(true)).empty());
  EXPECT_TRUE(HostClaimPeerKeys(Plain("a", "p", "", 1), Opts(true)).empty());
}

// Plain routes in one big domain are not each other's peers (Why: the
// peers of every route would otherwise be the whole domain).
TEST(AdmitWildcardTest, PlainSiblingsAreNotPeers) {
  std::vector<Route> all;
  for (int i = 0; i < 50; ++i) all.push_back(Plain("a", "p" + std::to_string(i),
                                                   "h" + std::to_string(i) + ".example.com", i));
  EXPECT_TRUE(PeersOf(all[7], all, Opts(true)).empty());
  all.push_back(Wild("b", "w", "www.example.com", 100));
  EXPECT_EQ(PeersOf(all[7], all, Opts(true)).size(), 1u);
  EXPECT_EQ(PeersOf(all.back(), all, Opts(true)).size(), 50u);
}

// Documented divergence from OpenShift: an older route keeps its claim even
// when it is itself rejected (decisions depend only on the cache).
TEST(AdmitWildcardTest, ChainUsesEveryOlderClaim) {
  const AdmissionOptions o = Opts();
  const Route a = Plain("ns1", "a", "foo.example.com", 10);
  const Route b = Wild("ns2", "b", "www.example.com", 20);
  const Route c = Plain("ns3", "c", "bar.example.com", 30);
  const std::vector<Route> all{a, b, c};
  EXPECT_TRUE(Admit(a, PeersOf(a, all, o), o).admitted);
  AdmissionDecision db = Admit(b, PeersOf(b, all, o), o);
  EXPECT_FALSE(db.admitted);
  EXPECT_NE(db.message.find("route ns1/a already exposes"), std::string::npos) << db.message;
  AdmissionDecision dc = Admit(c, PeersOf(c, all, o), o);
  EXPECT_FALSE(dc.admitted);
  EXPECT_NE(dc.message.find("wildcard route ns2/b already claims"), std::string::npos)
      << dc.message;
}

// The oldest of several blockers is named: it is the claim that remains.
TEST(AdmitWildcardTest, NamesOldestBlocker) {
  const AdmissionOptions o = Opts();
  const Route w = Wild("a", "w", "www.example.com", 10);
  const Route p_old = Plain("c", "q", "foo.example.com", 15);
  const Route p = Plain("b", "p", "foo.example.com", 20);
  const std::vector<Route> all{w, p_old, p};
  AdmissionDecision d = Admit(p, PeersOf(p, all, o), o);
  EXPECT_FALSE(d.admitted);
  EXPECT_NE(d.message.find("wildcard route a/w already claims"), std::string::npos) << d.message;
  // Younger wildcard: the plain route of ns c is the oldest blocker.
  const Route w_new = Wild("a", "w", "www.example.com", 17);
  d = Admit(p, PeersOf(p, {w_new, p_old, p}, o), o);
  EXPECT_FALSE(d.admitted);
  EXPECT_NE(d.message.find("route c/q already exposes foo.example.com"), std::string::npos)
      << d.message;
}

}  // namespace
}  // namespace routestatus::controller
