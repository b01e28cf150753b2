#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace routestatus::e2e {

// Builds Route and Namespace objects (JSON, as a client would POST them) for
// the demo, the e2e suite and the benchmarks. Pure functions.

// A namespace with labels.
nlohmann::json MakeNamespace(const std::string& name,
                             const std::map<std::string, std::string>& labels = {});

// What a route should look like.
struct RouteShape {
  std::string ns;
  std::string name;
  std::string host;       // "" = no spec.host
  std::string subdomain;  // spec.subdomain, optional
  std::string path;
  std::string wildcard_policy;  // "" = omitted
  std::map<std::string, std::string> labels;
};

nlohmann::json MakeRoute(const RouteShape& shape);

// The demo's realistic mix: namespaces (some labelled for another shard) and
// `count` routes, among them conflicting hosts across namespaces, invalid
// hosts, wildcard routes, routes without a host, and routes labelled for
// another shard. Deterministic for a given seed.
struct DemoWorld {
  std::vector<nlohmann::json> namespaces;
  std::vector<nlohmann::json> routes;
};
DemoWorld MakeDemoWorld(int count, uint64_t seed);

}  // namespace routestatus::e2e
