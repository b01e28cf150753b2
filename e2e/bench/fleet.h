#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "e2e/harness/cluster.h"
#include "e2e/harness/replica.h"
#include "e2e/harness/subprocess.h"

namespace routestatus::e2e::bench {

// What the demo (cmd/demo) and the benchmarks add to the e2e harness: the
// controller flags of their world, a replica numbered like the demo prints
// it, and checks of route status entries on raw JSON. Processes, metrics
// and /proc figures come from the harness (names re-exported here).
using e2e::LocalApiServer;
using e2e::MakeTempDir;
using e2e::ProcStats;
using e2e::ReadProcStats;
using e2e::ReplicaWrites;
using e2e::ServerWrites;
using e2e::ServerWritesFromSamples;
using ApiServerProcess = e2e::LocalApiServer;

// The controller flags every replica of one router name shares.
struct ControllerFlags {
  std::string router_name = "default";
  std::string router_canonical_hostname = "router-default.apps.example.com";
  std::string hostname_template = "${name}-${namespace}.apps.example.com";
  std::string router_domain = "apps.example.com";
  std::string route_labels = "router!=internal";
  std::string namespace_labels = "router!=internal";
  // 0 = not passed: the controller's defaults (--qps=50 --burst=100).
  double qps = 500;
  int burst = 1000;
  std::vector<std::string> extra;  // more --flag=value arguments (they win)
  // Each replica in the deployed pod's limits (deploy/controller: 500m CPU,
  // 144Mi memory), through a cgroup of its own (e2e::PodLimits).
  bool pod_limits = false;
};

// The deployed pod's limits (deploy/controller/deployment.yaml).
constexpr int kPodCpuMillis = 500;
constexpr uint64_t kPodMemoryBytes = 144ull << 20;

// `flags` with the controller's default --qps and --burst (headline
// figures use the product's defaults).
ControllerFlags DefaultRateLimits(ControllerFlags flags);

// The shard and host flags of `flags` as a command line fragment (for
// reports), e.g. "--router-name=default --route-labels='router!=internal'".
std::string DescribeFlags(const ControllerFlags& flags);

// `flags` as harness ReplicaOptions.
ReplicaOptions ToReplicaOptions(const ControllerFlags& flags);

// A harness Replica numbered `index` (log `log_dir`/replica-<index>.log),
// started at construction. Not thread-safe: one owner.
class Replica final : public e2e::Replica {
 public:
  Replica(int index, const std::string& kubeconfig, const ControllerFlags& flags,
          const std::string& log_dir);
  int index() const { return index_; }

 private:
  int index_;
};

// Our router name's entry on one route (from the route's JSON).
struct EntryView {
  bool present = false;
  std::string host;
  std::string admitted;  // "True", "False" or "" (no Admitted condition)
  std::string reason;
};
EntryView FindEntry(const nlohmann::json& route, const std::string& router_name);

// True for routes the demo world's `internal` shard owns (route label
// router=internal or a namespace in `internal_namespaces`).
bool IsInternalShard(const nlohmann::json& route,
                     const std::vector<std::string>& internal_namespaces);

}  // namespace routestatus::e2e::bench
