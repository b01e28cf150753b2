// ExplainRoute and its renderings: one table case per decision rule (every
// rejection Admit can produce and every shard exclusion), then the stored
// entry comparison, duplicates, other routers, the JSON shape and the text.
#include "controller/explain.h"

#include <chrono>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "controller/status_syncer.h"
#include "test/controller/fakes.h"

namespace routestatus::controller {
namespace {

using kubeclient::Namespace;
using kubeclient::Route;
using kubeclient::RouteCondition;
using kubeclient::RouteIngress;
using ::testing::HasSubstr;
using testing::FakeStore;

constexpr int64_t kNow = 1'800'000'000;

SystemTime WallAt(int64_t unix_seconds) { return SystemTime(std::chrono::seconds(unix_seconds)); }

Route NewRoute(const std::string& key, const std::string& host, int64_t created,
                const std::string& wildcard = "", const std::string& path = "",
                kubeclient::Labels labels = {}, const std::string& tls = "") {
  Route r;
  const size_t slash = key.find('/');
  r.metadata.namespace_name = key.substr(0, slash);
  r.metadata.name = key.substr(slash + 1);
  r.metadata.uid = "uid-" + r.metadata.name;
  r.metadata.creation_unix = created;
  r.metadata.resource_version = "7";
  r.metadata.labels = std::move(labels);
  r.spec.host = host;
  r.spec.wildcard_policy = wildcard;
  r.spec.path = path;
  r.spec.tls_termination = tls;
  return r;
}

Namespace NewNamespace(const std::string& name, kubeclient::Labels labels) {
  Namespace n;
  n.metadata.name = name;
  n.metadata.labels = std::move(labels);
  return n;
}

AdmissionOptions RouterAdmission() {
  AdmissionOptions o;
  o.router_name = "default";
  o.canonical_hostname = "router-default.apps.example.com";
  return o;
}

// A router configuration and the world it sees; Explain("ns/name") runs
// ExplainRoute as `explain` does.
struct World {
  AdmissionOptions admission = RouterAdmission();
  ShardOptions shard;
  std::vector<Route> routes;
  std::vector<Namespace> namespaces;

  Explanation Explain(const std::string& key) const {
    store = std::make_shared<FakeStore<Route>>();
    ns_store = std::make_shared<FakeStore<Namespace>>();
    store->AddIndex(kRoutesByHostIndex, RoutesByHostIndexFunc(admission));
    for (const Route& r : routes) store->Set(r);
    for (const Namespace& n : namespaces) ns_store->Set(n);
    filter = std::make_shared<ShardFilter>(shard, ns_store.get());
    auto route = store->Get(key);
    EXPECT_TRUE(route) << key;
    return ExplainRoute(route, *store, ns_store.get(), *filter, admission, WallAt(kNow));
  }

  mutable std::shared_ptr<FakeStore<Route>> store;
  mutable std::shared_ptr<FakeStore<Namespace>> ns_store;
  mutable std::shared_ptr<ShardFilter> filter;
};

kubeclient::LabelSelector ParseSelector(const std::string& text) {
  return kubeclient::LabelSelector::Parse(text).value();
}

struct RuleCase {
  const char* name;
  World world;
  std::string key;          // the route explained
  std::string result;       // Admitted | Rejected | OutOfShard
  std::string reason;       // the condition reason ("" when admitted / out of shard)
  std::string rule;         // decision.rule in the JSON output
  std::string holder;       // host.holder "ns/name" ("" = null)
  std::string detail_json;  // a JSON pointer that must hold `detail_value` ("" = none)
  nlohmann::json detail_value;
};

World With(std::vector<Route> routes, std::function<void(World&)> tweak = nullptr) {
  World w;
  w.routes = std::move(routes);
  if (tweak) tweak(w);
  return w;
}

std::vector<RuleCase> RuleCases() {
  const std::string h = "www.example.com";
  return {
      {"admitted, holds its host", With({NewRoute("a/r", h, 100)}), "a/r", "Admitted", "",
       "admitted", "a/r", "/host/peers", nlohmann::json::array()},
      {"admitted, younger peer listed", With({NewRoute("a/r", h, 100), NewRoute("b/y", h, 200)}),
       "a/r", "Admitted", "", "admitted", "a/r", "/host/peers/0/older", false},
      {"no host", With({NewRoute("a/r", "", 100)}), "a/r", "Rejected", kReasonNoHostValue,
       "no-host", "", "/host/host", ""},
      {"invalid host", With({NewRoute("a/r", "bad..example.com", 100)}), "a/r", "Rejected",
       kReasonInvalidHost, "invalid-host", "", "/host/problem",
       "host has an empty label (a leading, trailing or double dot)"},
      {"unknown wildcard policy", With({NewRoute("a/r", h, 100, "Everything")}), "a/r",
       "Rejected", kReasonRouteNotAdmitted, "unknown-wildcard-policy", "", "/host/wildcardPolicy",
       "Everything"},
      {"wildcards not allowed", With({NewRoute("a/r", h, 100, "Subdomain")}), "a/r", "Rejected",
       kReasonRouteNotAdmitted, "wildcards-not-allowed", "", "/router/allowWildcardRoutes", false},
      {"passthrough shares a host with another TLS route",
       With({NewRoute("a/edge", h, 100, "", "/foo", {}, "edge"),
             NewRoute("a/r", h, 200, "", "", {}, "passthrough")}),
       "a/r", "Rejected", kReasonHostAlreadyClaimed, "passthrough-shares-host", "a/edge",
       "/host/holder/name", "edge"},
      {"extended validation failed",
       With({NewRoute("a/r", h, 100, "", "", {}, "passthrough")},
            [](World& w) {
              kubeclient::RouteTlsMaterial m;
              m.insecure_edge_termination_policy = "Allow";
              w.routes[0].spec.tls_material =
                  std::make_shared<const kubeclient::RouteTlsMaterial>(m);
            }),
       "a/r", "Rejected", kReasonExtendedValidationFailed, "extended-validation-failed", "",
       "/host/problem",
       "spec.tls.insecureEdgeTerminationPolicy: invalid value \"Allow\"; acceptable values "
       "are None, Redirect, or empty"},
      {"a rejected route holds no claim",
       With({NewRoute("a/old", h, 100, "", "/"), NewRoute("b/mid", h, 150, "", "/x"),
             NewRoute("a/r", h, 200, "", "/x")}),
       "a/r", "Admitted", "", "admitted", "a/r", "/host/peers/1/name", "mid"},
      {"denied domain",
       With({NewRoute("a/r", "a.bad.example.com", 100)},
            [](World& w) { w.admission.denied_domains = {"x.io", "bad.example.com"}; }),
       "a/r", "Rejected", kReasonRouteNotAdmitted, "denied-domain", "", "/host/deniedDomain",
       "bad.example.com"},
      {"not in allowed domains",
       With({NewRoute("a/r", "a.example.org", 100)},
            [](World& w) { w.admission.allowed_domains = {"apps.example.com"}; }),
       "a/r", "Rejected", kReasonRouteNotAdmitted, "not-in-allowed-domains", "",
       "/host/allowedDomain", nullptr},
      {"allowed domain matched",
       With({NewRoute("a/r", "a.apps.example.com", 100)},
            [](World& w) { w.admission.allowed_domains = {"x.io", "apps.example.com"}; }),
       "a/r", "Admitted", "", "admitted", "a/r", "/host/allowedDomain", "apps.example.com"},
      {"host owned by another namespace",
       With({NewRoute("a/old", h, 100, "", "/x"), NewRoute("b/r", h, 200)}), "b/r", "Rejected",
       kReasonHostAlreadyClaimed, "host-owned-by-other-namespace", "a/old",
       "/host/holder/creationTimestamp", kubeclient::FormatRfc3339(100)},
      {"same host and path in the same namespace",
       With({NewRoute("a/old", h, 100, "", "/api"), NewRoute("a/r", h, 200, "", "/api")}),
       "a/r", "Rejected", kReasonHostAlreadyClaimed, "host-and-path-claimed", "a/old",
       "/host/holder/ageSeconds", kNow - 100},
      {"same second: the smaller uid is older",
       With({NewRoute("a/p", h, 100), NewRoute("b/r", h, 100)}), "b/r", "Rejected",
       kReasonHostAlreadyClaimed, "host-owned-by-other-namespace", "a/p",
       "/host/holder/sameSecond", true},
      {"host inside an older wildcard",
       With({NewRoute("a/w", h, 100, "Subdomain"), NewRoute("b/r", "foo.example.com", 200)},
            [](World& w) { w.admission.allow_wildcard_routes = true; }),
       "b/r", "Rejected", kReasonHostAlreadyClaimed, "host-inside-older-wildcard", "a/w",
       "/host/holder/name", "w"},
      {"wildcard over an older host",
       With({NewRoute("a/p", "foo.example.com", 100), NewRoute("b/w", h, 200, "Subdomain")},
            [](World& w) { w.admission.allow_wildcard_routes = true; }),
       "b/w", "Rejected", kReasonHostAlreadyClaimed, "wildcard-covers-older-host", "a/p",
       "/host/holder/namespace", "a"},
      {"older route of another shard does not block",
       With({NewRoute("a/old", h, 100, "", "", {{"router", "internal"}}),
             NewRoute("b/r", h, 200)},
            [](World& w) { w.shard.route_selector = ParseSelector("router!=internal"); }),
       "b/r", "Admitted", "", "admitted", "b/r", "/host/peers", nlohmann::json::array()},
      {"route labels exclude it",
       With({NewRoute("a/r", h, 100, "", "", {{"router", "internal"}})},
            [](World& w) { w.shard.route_selector = ParseSelector("router!=internal"); }),
       "a/r", "OutOfShard", "", "route-labels", "", "/shard/routeSelector", "router!=internal"},
      {"namespace list excludes it",
       With({NewRoute("a/r", h, 100)}, [](World& w) { w.shard.namespaces = {"b", "c"}; }), "a/r",
       "OutOfShard", "", "namespace-list", "", "/shard/namespaces", nlohmann::json({"b", "c"})},
      {"namespace labels exclude it",
       With({NewRoute("a/r", h, 100)},
            [](World& w) {
              w.shard.namespace_selector = ParseSelector("router!=internal");
              w.namespaces = {NewNamespace("a", {{"router", "internal"}})};
            }),
       "a/r", "OutOfShard", "", "namespace-labels", "", "/shard/namespaceLabels/router",
       "internal"},
      {"namespace not listed",
       With({NewRoute("a/r", h, 100)},
            [](World& w) { w.shard.namespace_selector = ParseSelector("team"); }),
       "a/r", "OutOfShard", "", "namespace-not-found", "", "/shard/namespaceLabels", nullptr},
      {"namespace labels match",
       With({NewRoute("a/r", h, 100)},
            [](World& w) {
              w.shard.namespace_selector = ParseSelector("team");
              w.namespaces = {NewNamespace("a", {{"team", "shop"}})};
            }),
       "a/r", "Admitted", "", "admitted", "a/r", "/shard/rule", "in-shard"},
  };
}

TEST(ExplainTest, EveryRuleIsExplained) {
  std::set<std::string> rules_seen;
  for (const RuleCase& c : RuleCases()) {
    SCOPED_TRACE(c.name);
    Explanation e = c.world.Explain(c.key);
    nlohmann::json j = ExplanationJson(e);
    EXPECT_EQ(j["decision"]["result"], c.result);
    EXPECT_EQ(j["decision"]["reason"], c.reason);
    EXPECT_EQ(j["decision"]["rule"], c.rule);
    rules_seen.insert(c.rule);
    if (c.holder.empty()) {
      EXPECT_TRUE(j["host"].is_null() || j["host"]["holder"].is_null()) << j.dump(2);
    } else {
      EXPECT_EQ(j["host"]["holder"]["namespace"].get<std::string>() + "/" +
                    j["host"]["holder"]["name"].get<std::string>(),
                c.holder);
    }
    if (!c.detail_json.empty()) {
      EXPECT_EQ(j.at(nlohmann::json::json_pointer(c.detail_json)), c.detail_value) << j.dump(2);
    }
    // The entry is the one DesiredEntry writes for this decision.
    if (c.result == "OutOfShard") {
      EXPECT_TRUE(j["desiredEntry"].is_null());
      EXPECT_FALSE(j["shard"]["inShard"].get<bool>());
    } else {
      const auto& cond = j["desiredEntry"]["conditions"][0];
      EXPECT_EQ(cond["status"], c.result == "Admitted" ? "True" : "False");
      EXPECT_EQ(cond.value("reason", ""), c.reason);
      EXPECT_EQ(cond.value("message", ""), j["decision"]["message"].get<std::string>());
      EXPECT_EQ(cond["lastTransitionTime"], kubeclient::FormatRfc3339(kNow));
      EXPECT_EQ(j["desiredEntry"]["routerName"], "default");
      EXPECT_EQ(j["entry"]["state"], "no-entry");
    }
    // The text names the rule and, for rejections, the reason and message.
    std::string text = ExplanationText(e);
    EXPECT_THAT(text, HasSubstr("rule:      " + c.rule));
    if (c.result == "Rejected") {
      EXPECT_THAT(text, HasSubstr("rejected: " + c.reason));
      EXPECT_THAT(text, HasSubstr(e.decision.admission.message));
    }
    if (!c.holder.empty() && c.holder != c.key) {
      EXPECT_THAT(text, HasSubstr("held by route " + c.holder));
    }
  }
  // Every admission rule and every shard exclusion has a case.
  std::set<std::string> all;
  for (int r = 0; r <= static_cast<int>(AdmissionRule::kExtendedValidation); ++r) {
    all.insert(AdmissionRuleName(static_cast<AdmissionRule>(r)));
  }
  for (int r = 1; r <= static_cast<int>(ShardRule::kNamespaceNotFound); ++r) {
    all.insert(ShardRuleName(static_cast<ShardRule>(r)));
  }
  EXPECT_EQ(rules_seen, all);
}

// The route `key` of `w` with status.ingress set to `entries`.
void SetEntries(World& w, const std::string& key, const std::vector<RouteIngress>& entries) {
  for (Route& r : w.routes) {
    if (r.Key() == key) r.SetIngress(entries);
  }
}

RouteIngress StoredEntry(const std::string& router, const std::string& host, const std::string& status,
                   const std::string& reason = "", const std::string& message = "") {
  RouteIngress e;
  e.router_name = router;
  e.host = host;
  e.router_canonical_hostname = "router-default.apps.example.com";
  e.wildcard_policy = "None";
  e.conditions.push_back(RouteCondition{"Admitted", status, reason, message, "2026-01-01T00:00:00Z"});
  return e;
}

TEST(ExplainTest, StoredEntryUpToDateKeepsItsTime) {
  World w = With({NewRoute("a/r", "www.example.com", 100)});
  SetEntries(w, "a/r", {StoredEntry("default", "www.example.com", "True")});
  Explanation e = w.Explain("a/r");
  EXPECT_EQ(e.state, EntryState::kUpToDate);
  EXPECT_TRUE(e.differences.empty());
  EXPECT_EQ(e.decision.entry->conditions[0].last_transition_time, "2026-01-01T00:00:00Z");
  EXPECT_THAT(ExplanationText(e), HasSubstr("stored entry: up to date"));
}

TEST(ExplainTest, StoredEntryDiffersFieldByField) {
  World w = With({NewRoute("a/old", "www.example.com", 100),
                  NewRoute("b/r", "www.example.com", 200)});
  RouteIngress stale = StoredEntry("default", "old.example.com", "True");
  stale.router_canonical_hostname = "";
  SetEntries(w, "b/r", {StoredEntry("internal", "x", "True"), stale});
  Explanation e = w.Explain("b/r");
  ASSERT_EQ(e.state, EntryState::kDiffers);
  std::map<std::string, std::pair<std::string, std::string>> got;
  for (const auto& f : e.differences) got[f.field] = {f.stored, f.desired};
  EXPECT_EQ(got["host"], std::make_pair(std::string("old.example.com"),
                                        std::string("www.example.com")));
  EXPECT_EQ(got["routerCanonicalHostname"].second, "router-default.apps.example.com");
  EXPECT_EQ(got["conditions[Admitted].status"], std::make_pair(std::string("True"),
                                                               std::string("False")));
  EXPECT_EQ(got["conditions[Admitted].reason"].second, kReasonHostAlreadyClaimed);
  EXPECT_EQ(got.count("conditions[Admitted].message"), 1u);
  EXPECT_EQ(got.size(), 5u);
  EXPECT_EQ(e.other_routers, std::vector<std::string>{"internal"});
  nlohmann::json j = ExplanationJson(e);
  EXPECT_EQ(j["entry"]["state"], "differs");
  EXPECT_EQ(j["entry"]["otherRouters"], nlohmann::json({"internal"}));
  EXPECT_EQ(j["storedEntry"]["host"], "old.example.com");
  std::string text = ExplanationText(e);
  EXPECT_THAT(text, HasSubstr("host: \"old.example.com\" -> \"www.example.com\""));
  EXPECT_THAT(text, HasSubstr("other routers' entries: internal"));
}

TEST(ExplainTest, DuplicatesOfOursAreCounted) {
  World w = With({NewRoute("a/r", "www.example.com", 100)});
  SetEntries(w, "a/r",
             {StoredEntry("default", "www.example.com", "True"), StoredEntry("default", "other", "False")});
  Explanation e = w.Explain("a/r");
  EXPECT_EQ(e.entries_of_ours, 2);
  EXPECT_EQ(e.state, EntryState::kUpToDate);  // the first one counts, as in the status path
  EXPECT_EQ(ExplanationJson(e)["entry"]["entriesOfOurs"], 2);
  EXPECT_THAT(ExplanationText(e), HasSubstr("duplicates: 2 entries carry routerName default"));
}

TEST(ExplainTest, OutOfShardWithOurEntryIsRemoved) {
  World w = With({NewRoute("a/r", "www.example.com", 100)},
                 [](World& w) { w.shard.namespaces = {"b"}; });
  SetEntries(w, "a/r", {StoredEntry("default", "www.example.com", "True")});
  Explanation e = w.Explain("a/r");
  EXPECT_EQ(e.state, EntryState::kExtra);
  EXPECT_EQ(ExplanationJson(e)["entry"]["state"], "remove");
  EXPECT_THAT(ExplanationText(e), HasSubstr("present, and a replica removes it"));
  SetEntries(w, "a/r", {});
  EXPECT_EQ(w.Explain("a/r").state, EntryState::kNone);
}

TEST(ExplainTest, JsonShapeIsStable) {
  World w = With({NewRoute("a/r", "www.example.com", 100)});
  nlohmann::json j = ExplanationJson(w.Explain("a/r"));
  EXPECT_EQ(j["apiVersion"], "routestatus.explain/v1");
  for (const char* key : {"route", "router", "decision", "shard", "host", "desiredEntry",
                          "storedEntry", "entry"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j["route"]["ageSeconds"], kNow - 100);
  EXPECT_EQ(j["route"]["resourceVersion"], "7");
  EXPECT_EQ(j["router"]["name"], "default");
  EXPECT_TRUE(j["router"]["namespaceOwnershipCheck"].get<bool>());
}

TEST(ExplainTest, DecisionIsTheStatusPathsDecision) {
  // Why: explain must print what a replica writes; both call DecideRoute.
  World w = With({NewRoute("a/old", "www.example.com", 100),
                  NewRoute("b/r", "www.example.com", 200)});
  Explanation e = w.Explain("b/r");
  RouteDecision d = DecideRoute(*w.store->Get("b/r"), std::nullopt, *w.store, *w.filter,
                                w.admission, WallAt(kNow));
  ASSERT_TRUE(d.entry && e.decision.entry);
  EXPECT_TRUE(kubeclient::IngressEqual(*d.entry, *e.decision.entry));
  EXPECT_EQ(d.admission.blocker, e.holder);
}

TEST(ExplainTest, PeersOldestFirst) {
  // Why these ages: the fake store lists by key; the order must come from age.
  World w = With({NewRoute("c/r", "www.example.com", 300), NewRoute("b/y", "www.example.com", 100),
                  NewRoute("a/x", "www.example.com", 200), NewRoute("d/z", "www.example.com", 50)});
  Explanation e = w.Explain("c/r");
  std::vector<std::string> keys;
  for (const auto& p : e.decision.peers) keys.push_back(p->Key());
  EXPECT_EQ(keys, (std::vector<std::string>{"d/z", "b/y", "a/x"}));
  EXPECT_EQ(e.holder->Key(), "d/z");
}

TEST(FormatAgeTest, TwoUnitsAtMost) {
  EXPECT_EQ(FormatAge(0), "0s");
  EXPECT_EQ(FormatAge(-5), "0s");
  EXPECT_EQ(FormatAge(59), "59s");
  EXPECT_EQ(FormatAge(60), "1m");
  EXPECT_EQ(FormatAge(65), "1m5s");
  EXPECT_EQ(FormatAge(3600 + 120 + 7), "1h2m");
  EXPECT_EQ(FormatAge(86400 * 3 + 3600 * 4 + 5), "3d4h");
  EXPECT_EQ(FormatAge(86400), "1d");
}

}  // namespace
}  // namespace routestatus::controller
