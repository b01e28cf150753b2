#include "e2e/harness/route_factory.h"

#include <random>

namespace routestatus::e2e {

using nlohmann::json;

json MakeNamespace(const std::string& name, const std::map<std::string, std::string>& labels) {
  json ns = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", name}}}};
  if (!labels.empty()) ns["metadata"]["labels"] = labels;
  return ns;
}

json MakeRoute(const RouteShape& shape) {
  json route = {{"apiVersion", "route.openshift.io/v1"},
                {"kind", "Route"},
                {"metadata", {{"name", shape.name}, {"namespace", shape.ns}}},
                {"spec", {{"to", {{"kind", "Service"}, {"name", shape.name}, {"weight", 100}}}}}};
  if (!shape.labels.empty()) route["metadata"]["labels"] = shape.labels;
  if (!shape.host.empty()) route["spec"]["host"] = shape.host;
  if (!shape.subdomain.empty()) route["spec"]["subdomain"] = shape.subdomain;
  if (!shape.path.empty()) route["spec"]["path"] = shape.path;
  if (!shape.wildcard_policy.empty()) route["spec"]["wildcardPolicy"] = shape.wildcard_policy;
  return route;
}

DemoWorld MakeDemoWorld(int count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  DemoWorld world;
  const std::vector<std::string> teams = {"shop", "payments", "search", "blog", "admin"};
  for (const auto& t : teams) {
    std::map<std::string, std::string> labels = {{"team", t}};
    if (t == "admin") labels["router"] = "internal";  // served by another shard
    world.namespaces.push_back(MakeNamespace(t, labels));
  }
  for (int i = 0; i < count; ++i) {
    const std::string& ns = teams[static_cast<size_t>(i) % teams.size()];
    RouteShape s;
    s.ns = ns;
    s.name = "app-" + std::to_string(i);
    int kind = static_cast<int>(rng() % 100);
    if (kind < 70) {
      s.host = s.name + "." + ns + ".apps.example.com";
    } else if (kind < 80) {
      // Hosts claimed by several namespaces: the oldest route wins.
      s.host = "www-" + std::to_string(i % 7) + ".example.com";
    } else if (kind < 85) {
      // Upper case: the Route API accepts it (its host pattern), the router
      // rejects it InvalidHost.
      s.host = "Bad-Host-" + std::to_string(i) + ".example.com";
    } else if (kind < 90) {
      s.host = "wild-" + std::to_string(i) + "." + ns + ".apps.example.com";
      s.wildcard_policy = "Subdomain";  // rejected unless wildcards are allowed
    } else if (kind < 95) {
      s.host = "";  // derived from the hostname template, or NoHostValue
    } else {
      s.host = s.name + ".internal.example.com";
      s.labels["router"] = "internal";  // another shard's route
    }
    world.routes.push_back(MakeRoute(s));
  }
  return world;
}

}  // namespace routestatus::e2e
