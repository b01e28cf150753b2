// Every route of openshift-router's admission corpus
// (test/controller/testdata/openshift_router_admission/cases.jsonl;
// its README gives the format) decided by DecideRoute, the one decision of
// the status path, and compared with the outcome and reason openshift-router
// records. A set's options go through our own configuration as the
// openshift-router environment variables they are (ParseConfig, then
// BuildComponentOptions), and its routes through the route decoder
// (RouteFromJson), spec.tls included. A set openshift-router refuses to
// start with agrees when our configuration check refuses it too, naming
// the same option (an error there is exit 2). Prints agreement per kind of
// set and class of option and lists every disagreement with its case id;
// the test fails on any.
#include <cstdio>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cmd/route-status-controller/component_options.h"
#include "cmd/route-status-controller/config.h"
#include "controller/route_decision.h"
#include "controller/status_syncer.h"
#include "test/controller/fakes.h"
#include "test/testing/admission_corpus.h"

namespace routestatus::controller {
namespace {

using kubeclient::Route;
using nlohmann::json;
using testing::FakeStore;
using ::routestatus::testing::CorpusOutcome;
using ::routestatus::testing::CorpusRouteObject;
using ::routestatus::testing::ReadAdmissionCorpus;

// The corpus's option keys and the environment variable openshift-router
// reads each from (ours takes the same names as aliases).
const std::map<std::string, std::string>& SettingEnv() {
  static const std::map<std::string, std::string> env = {
      {"allowWildcardRoutes", "ROUTER_ALLOW_WILDCARD_ROUTES"},
      {"disableNamespaceOwnershipCheck", "ROUTER_DISABLE_NAMESPACE_OWNERSHIP_CHECK"},
      {"allowedDomains", "ROUTER_ALLOWED_DOMAINS"},
      {"deniedDomains", "ROUTER_DENIED_DOMAINS"},
      {"routerDomain", "ROUTER_DOMAIN"},
      {"hostnameTemplate", "ROUTER_SUBDOMAIN"},
      {"overrideHostname", "ROUTER_OVERRIDE_HOSTNAME"},
      {"extendedValidation", "EXTENDED_VALIDATION"},
  };
  return env;
}

// Keys of operator mistakes that name no setting of openshift-router: it
// starts and ignores them (their sets' outcomes show it). Set as they are,
// as environment variables neither router reads. Any other key fails the
// test: it would be a setting this test does not map.
bool IsUnreadKey(const std::string& key) {
  return key == "futureOption" || key == "routerShardLabel" || key == "ROUTER_FOO";
}

// The environment a set's options give openshift-router: lists joined by
// ',', booleans as "true"/"false". Unknown keys go to `unmapped`.
cmd::EnvMap EnvOf(const json& options, std::vector<std::string>& unmapped) {
  cmd::EnvMap env;
  for (const auto& [key, value] : options.items()) {
    auto it = SettingEnv().find(key);
    if (it == SettingEnv().end() && !IsUnreadKey(key)) {
      unmapped.push_back(key);
      continue;
    }
    const std::string name = it == SettingEnv().end() ? key : it->second;
    if (value.is_array()) {
      std::string joined;
      for (const auto& item : value) joined += (joined.empty() ? "" : ",") + item.get<std::string>();
      if (!joined.empty()) env[name] = joined;
    } else if (value.is_boolean()) {
      env[name] = value.get<bool>() ? "true" : "false";
    } else {
      env[name] = value.get<std::string>();
    }
  }
  return env;
}

// The route as the API server would serve it (CorpusRouteObject plus what
// the server sets), spec.tls with every certificate field the corpus gives.
json RouteJson(const json& r) {
  json object = CorpusRouteObject(r);
  json& meta = object["metadata"];
  meta["uid"] = "uid-" + r.at("namespace").get<std::string>() + "-" + r.at("name").get<std::string>();
  meta["resourceVersion"] = "1";
  meta["creationTimestamp"] = r.at("creationTimestamp");
  return object;
}

// "random", "core" or "tls", from the id ("tls-1003-7").
std::string KindOf(const std::string& id) { return id.substr(0, id.find('-')); }

// The classes of option a case belongs to (one route counts in each).
std::vector<std::string> ClassesOf(const std::string& id, const AdmissionOptions& o,
                                   const json& c) {
  std::vector<std::string> classes{"all routes", KindOf(id) + " sets"};
  classes.push_back(o.allow_wildcard_routes ? "wildcards allowed" : "wildcards not allowed");
  classes.push_back(o.disable_namespace_ownership_check ? "ownership check off"
                                                        : "ownership check on");
  if (!o.allowed_domains.empty()) classes.push_back("allowed domains set");
  if (!o.denied_domains.empty()) classes.push_back("denied domains set");
  if (!o.router_domain.empty()) classes.push_back("router domain set");
  if (!o.hostname_template.empty()) classes.push_back("hostname template set");
  if (o.override_hostname) classes.push_back("override hostname");
  if (!o.extended_validation) classes.push_back("extended validation off");
  for (const auto& [key, value] : c.at("options").items()) {
    if (IsUnreadKey(key)) {
      classes.push_back("unread keys set");
      break;
    }
  }
  for (const auto& r : c.at("routes")) {
    if (!r.value("tls", "").empty()) {
      classes.push_back("sets with TLS routes");
      break;
    }
  }
  return classes;
}

struct Tally {
  int agree = 0;
  int total = 0;
};

TEST(OpenshiftParityTest, EveryCorpusRouteDecidesAsOpenshiftRouter) {
  const std::vector<json> corpus = ReadAdmissionCorpus();
  ASSERT_FALSE(corpus.empty()) << "the corpus is missing (test/controller/testdata)";
  std::map<std::string, Tally> tally;
  Tally refusals;
  int refused_routes = 0;
  std::vector<std::string> disagreements;
  int sets = 0;
  for (const json& c : corpus) {
    ++sets;
    const std::string id = c.at("id").get<std::string>();
    std::vector<std::string> unmapped;
    const cmd::EnvMap env = EnvOf(c.at("options"), unmapped);
    for (const std::string& key : unmapped) {
      disagreements.push_back(id + ": option \"" + key + "\" is not mapped by this test");
    }
    const cmd::ParsedConfig parsed = cmd::ParseConfig({}, env, nullptr);
    std::string errors;
    for (const std::string& e : parsed.errors) errors += (errors.empty() ? "" : "; ") + e;

    if (const std::string refusal = c.value("routerRefusesToStart", ""); !refusal.empty()) {
      // Why the first "--flag" of its message: both routers name options by
      // the same flags (--override-hostname, --hostname-template).
      std::smatch flag;
      const bool named = std::regex_search(refusal, flag, std::regex("--[a-z-]+")) &&
                         errors.find(flag.str()) != std::string::npos;
      refusals.total++;
      refusals.agree += named ? 1 : 0;
      refused_routes += static_cast<int>(c.at("routes").size());
      if (!named) {
        disagreements.push_back(id + ": openshift-router refuses to start (" + refusal +
                                "), we " + (errors.empty() ? "start" : "refuse: " + errors));
      }
      continue;
    }
    if (!errors.empty()) {
      tally[KindOf(id) + " sets"].total += static_cast<int>(c.at("routes").size());
      tally["all routes"].total += static_cast<int>(c.at("routes").size());
      disagreements.push_back(id + ": openshift-router starts, we refuse: " + errors);
      continue;
    }
    StatusOr<cmd::ComponentOptions> components = cmd::BuildComponentOptions(parsed.options, env);
    ASSERT_TRUE(components.ok()) << id << ": " << components.status().message();
    const AdmissionOptions& options = components->admission;
    FakeStore<Route> routes;
    routes.AddIndex(kRoutesByHostIndex, RoutesByHostIndexFunc(options));
    for (const auto& r : c.at("routes")) {
      StatusOr<Route> route = kubeclient::RouteFromJson(RouteJson(r));
      ASSERT_TRUE(route.ok()) << id << ": " << route.status().message();
      routes.Set(std::move(route).value());
    }
    FakeStore<kubeclient::Namespace> namespaces;
    const ShardFilter shard(components->shard, &namespaces);
    const std::vector<std::string> classes = ClassesOf(id, options, c);
    for (const auto& r : c.at("routes")) {
      const std::string key =
          r.at("namespace").get<std::string>() + "/" + r.at("name").get<std::string>();
      const std::string want = CorpusOutcome(c.at("expected").at(key));
      const RouteDecision d =
          DecideRoute(*routes.Get(key), std::nullopt, routes, shard, options, SystemTime{});
      const std::string got =
          d.admission.admitted ? "admitted" : "rejected/" + d.admission.reason;
      const bool agree = got == want;
      for (const auto& cls : classes) {
        tally[cls].total++;
        tally[cls].agree += agree ? 1 : 0;
      }
      if (!agree) {
        disagreements.push_back(id + " " + key + ": openshift-router " + want + ", we " + got +
                                " (rule " + AdmissionRuleName(d.admission.rule) + ")");
      }
    }
  }
  std::printf("openshift-router admission corpus: %d route sets\n", sets);
  std::printf("%-24s %8s %8s %8s\n", "class of option", "agree", "routes", "percent");
  for (const auto& [cls, t] : tally) {
    std::printf("%-24s %8d %8d %7.2f%%\n", cls.c_str(), t.agree, t.total,
                t.total == 0 ? 0.0 : 100.0 * t.agree / t.total);
  }
  std::printf("%-24s %8d %8d   (sets refused, the same option named; %d routes)\n", "refusals",
              refusals.agree, refusals.total, refused_routes);
  for (const auto& line : disagreements) std::printf("disagrees: %s\n", line.c_str());
  EXPECT_GT(sets, 0);
  EXPECT_TRUE(disagreements.empty()) << disagreements.size() << " disagreements";
}

}  // namespace
}  // namespace routestatus::controller
