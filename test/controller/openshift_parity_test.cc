// Every route of openshift-router's admission corpus
// (test/controller/testdata/openshift_router_admission/cases.jsonl;
// its README gives the format) decided by DecideRoute, the one decision of
// the status path, and compared with the outcome and reason openshift-router
// records. Prints agreement per class of option and lists every route that
// disagrees with its case id; the test fails on any disagreement.
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "controller/route_decision.h"
#include "controller/status_syncer.h"
#include "test/controller/fakes.h"

namespace routestatus::controller {
namespace {

using kubeclient::Route;
using nlohmann::json;
using testing::FakeStore;

const std::string kCorpus =
    std::string(ROUTESTATUS_SOURCE_DIR) +
    "/test/controller/testdata/openshift_router_admission/cases.jsonl";

AdmissionOptions OptionsOf(const json& o) {
  AdmissionOptions a;
  a.router_name = "default";
  a.allow_wildcard_routes = o.value("allowWildcardRoutes", false);
  a.disable_namespace_ownership_check = o.value("disableNamespaceOwnershipCheck", false);
  a.allowed_domains = o.value("allowedDomains", std::vector<std::string>{});
  a.denied_domains = o.value("deniedDomains", std::vector<std::string>{});
  a.router_domain = o.value("routerDomain", "");
  a.hostname_template = o.value("hostnameTemplate", "");
  a.override_hostname = o.value("overrideHostname", false);
  return a;
}

Route RouteOf(const json& r) {
  Route route;
  route.metadata.namespace_name = r.at("namespace").get<std::string>();
  route.metadata.name = r.at("name").get<std::string>();
  route.metadata.uid = "uid-" + r.at("namespace").get<std::string>() + "-" +
                       r.at("name").get<std::string>();
  route.metadata.resource_version = "1";
  route.metadata.creation_unix =
      kubeclient::ParseRfc3339(r.at("creationTimestamp").get<std::string>()).value_or(0);
  route.spec.host = r.value("host", "");
  route.spec.subdomain = r.value("subdomain", "");
  route.spec.path = r.value("path", "");
  route.spec.wildcard_policy = r.value("wildcardPolicy", "");
  route.spec.tls_termination = r.value("tls", "");
  return route;
}

// "admitted" or "rejected/<reason>".
std::string Outcome(const json& expected) {
  const std::string outcome = expected.at("outcome").get<std::string>();
  return outcome == "admitted" ? outcome : outcome + "/" + expected.value("reason", "");
}

// The classes of option a case belongs to (one route counts in each).
std::vector<std::string> ClassesOf(const std::string& id, const AdmissionOptions& o,
                                   const json& routes) {
  std::vector<std::string> classes{"all routes",
                                   id.rfind("core-", 0) == 0 ? "core sets" : "random sets"};
  classes.push_back(o.allow_wildcard_routes ? "wildcards allowed" : "wildcards not allowed");
  classes.push_back(o.disable_namespace_ownership_check ? "ownership check off"
                                                        : "ownership check on");
  if (!o.allowed_domains.empty()) classes.push_back("allowed domains set");
  if (!o.denied_domains.empty()) classes.push_back("denied domains set");
  if (!o.router_domain.empty()) classes.push_back("router domain set");
  if (!o.hostname_template.empty()) classes.push_back("hostname template set");
  if (o.override_hostname) classes.push_back("override hostname");
  for (const auto& r : routes) {
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
  std::ifstream in(kCorpus);
  ASSERT_TRUE(in) << "the corpus is missing: " << kCorpus
                  << "";
  std::map<std::string, Tally> tally;
  std::vector<std::string> disagreements;
  int sets = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    const json c = json::parse(line);
    ++sets;
    const std::string id = c.at("id").get<std::string>();
    const AdmissionOptions options = OptionsOf(c.at("options"));
    FakeStore<Route> routes;
    routes.AddIndex(kRoutesByHostIndex, RoutesByHostIndexFunc(options));
    for (const auto& r : c.at("routes")) routes.Set(RouteOf(r));
    FakeStore<kubeclient::Namespace> namespaces;
    const ShardFilter shard(ShardOptions{}, &namespaces);
    const std::vector<std::string> classes = ClassesOf(id, options, c.at("routes"));
    for (const auto& r : c.at("routes")) {
      const std::string key =
          r.at("namespace").get<std::string>() + "/" + r.at("name").get<std::string>();
      const std::string want = Outcome(c.at("expected").at(key));
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
  for (const auto& line : disagreements) std::printf("disagrees: %s\n", line.c_str());
  EXPECT_GT(sets, 0);
  EXPECT_TRUE(disagreements.empty()) << disagreements.size() << " routes disagree";
}

}  // namespace
}  // namespace routestatus::controller
