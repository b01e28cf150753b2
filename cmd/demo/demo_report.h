#pragma once

#include <sys/types.h>

#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "e2e/bench/fleet.h"

namespace routestatus::demo {

// What the demo learnt about one controller replica.
struct ReplicaFacts {
  int index = 0;
  pid_t pid = 0;
  std::string lease_state;          // from the replica's lease state gauge
  e2e::bench::ReplicaWrites writes;  // from the replica's own metrics
  std::string metrics_url;
};

// Everything the demo report shows. Value type.
struct DemoFacts {
  bool converged = false;
  double converge_seconds = 0;  // replicas started -> every entry in place
  std::string router_name;
  std::string controller_flags;  // DescribeFlags() of the replicas
  std::string server_url;
  pid_t server_pid = 0;
  std::string kubeconfig;
  std::string dir;
  int namespaces = 0;
  std::vector<nlohmann::json> routes;  // the last listing
  std::vector<std::string> internal_namespaces;
  e2e::bench::ServerWrites server_writes;  // apiserver_request_total
  std::vector<ReplicaFacts> replicas;
};

// Prints the demo report (admission by reason, writes per replica vs the
// server's count vs the naive N x changes, lease states, how to look
// around). Pure apart from writing to `out`.
void PrintReport(const DemoFacts& facts, std::ostream& out);

}  // namespace routestatus::demo
