#pragma once

#include <sys/types.h>

#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cmd/demo/demo_prometheus.h"
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

// The naive baseline the demo measured first: the same world on its own
// API server, every replica started with `flags`. Value type.
struct NaiveFacts {
  bool measured = false;    // it ran and converged, twice
  std::string flags;        // e.g. "--write-lease=false"
  double startup_puts = 0;  // status PUTs until converged
  double change_puts = -1;  // status PUTs for the host changes (-1: none)
  int entries_changed = 0;  // our entries those changes changed
};

// Everything the demo report shows. Value type.
struct DemoFacts {
  bool converged = false;
  double converge_seconds = 0;  // replicas started -> every entry in place
  double changes_converge_seconds = 0;  // host changes made -> our entries show them
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
  double startup_puts = 0;  // status PUTs until converged (server's count)
  int changes = 0;          // host changes made after convergence
  double change_puts = -1;  // status PUTs for them (-1: not converged)
  int entries_changed = 0;  // our entries they changed (a freed host admits a waiting route)
  NaiveFacts naive;         // not measured: the report says so
  PrometheusFacts prometheus;  // Prometheus beside the fleet, when installed
};

// Prints the demo report (admission by reason, writes per replica vs the
// server's count vs the measured naive baseline, lease states, how to look
// around). Pure apart from writing to `out`.
void PrintReport(const DemoFacts& facts, std::ostream& out);

}  // namespace routestatus::demo
