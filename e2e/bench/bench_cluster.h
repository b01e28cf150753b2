#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "apiserver/server.h"
#include "base/clock.h"
#include "e2e/bench/fleet.h"
#include "e2e/harness/etcd_server.h"
#include "e2e/harness/pod_limits.h"
#include "kubeclient/kube_client.h"

namespace routestatus::e2e::bench {

// The benchmarks' world: the embedded API server in this process (so
// 100,000 routes can be seeded without HTTP), a REST client for the
// changes the benchmarks make, and N controller replicas as child
// processes. Writes are counted by the server (apiserver_request_total).
// Not thread-safe except client(), which is.
class BenchCluster {
 public:
  // Starts the server and writes a kubeconfig into a fresh temp folder.
  // Dies (CHECK) if the server cannot start.
  explicit BenchCluster(const std::string& name);
  ~BenchCluster();

  kubeclient::KubeClient& client() { return *client_; }
  apiserver::Server& server() { return *server_; }
  const std::string& dir() const { return dir_; }
  const std::string& kubeconfig() const { return kubeconfig_; }
  ServerWrites Writes() const;

  // Creates namespaces (no labels) through the store.
  void SeedNamespaces(const std::vector<std::string>& names);
  // Creates a route through the store, keeping any .status (no HTTP).
  void SeedRoute(const nlohmann::json& route);
  // Creates routes number `from` .. `to` - 1 without status through the
  // store: "r-<i>" in namespace "scale-<i % 10>" with host
  // "r-<i>.scale-<i % 10>.bench.example.com" (the namespaces too when
  // `from` is 0).
  void SeedPlainRoutes(int from, int to);
  // Every route as stored (parsed JSON).
  std::vector<nlohmann::json> ListRoutes() const;
  // One route ("namespace/name") as stored, or nullopt.
  std::optional<nlohmann::json> GetRoute(const std::string& key) const;
  // Routes whose stored JSON carries an entry of `router_name` (cheap: no
  // JSON parsing).
  size_t CountRoutesWithEntry(const std::string& router_name) const;
  size_t RouteCount() const;

  // Starts `n` replicas with `flags` ("replica-<i>", i continuing across
  // calls). Call StopReplicas() first if some are running.
  void StartReplicas(int n, const ControllerFlags& flags);
  // The running replicas (empty before StartReplicas).
  ReplicaSet& replicas() { return *replicas_; }
  // Waits until every replica answers /readyz 200; false on timeout or if
  // one exited.
  bool WaitReady(std::chrono::milliseconds timeout);
  // Stops every replica (SIGTERM, in parallel) and forgets them.
  void StopReplicas();
  // The replicas together: CPU seconds summed, peak and current RSS the
  // largest of any replica.
  ProcStats ReplicaStats();
  // With ControllerFlags::pod_limits: the largest peak memory of any
  // replica's cgroup (MiB, as the kubelet's limit counts it) and the OOM
  // kills in them; 0 without.
  double PodPeakMemoryMiB() const;
  uint64_t PodOomKills() const;
  // Starts a real etcd (EtcdServer, in dir()) and makes it the server's
  // storage (Server::UseEtcd: every object loaded, then storage lists read
  // etcd). Returns a line saying what storage reads go to from now on: etcd
  // with its version and load time, or (no etcd binary, or it failed) the
  // server's memory and why. Call while no replica runs.
  std::string UseRealEtcd();
  // etcd range requests made by storage lists so far (0 without etcd).
  uint64_t EtcdRangeReads() const;

 private:
  std::string dir_;
  std::string kubeconfig_;
  RealClock clock_;
  // Why before server_: stopped after it.
  std::unique_ptr<EtcdServer> etcd_;
  std::unique_ptr<apiserver::Server> server_;
  std::unique_ptr<kubeclient::KubeClient> client_;
  std::unique_ptr<ReplicaSet> replicas_;
  std::vector<std::unique_ptr<PodLimits>> pods_;  // with pod_limits, one per replica
  int next_index_ = 1;
};

// The route the benchmarks create: namespace `ns`, name, host (valid and
// unique per name), optional labels.
nlohmann::json BenchRoute(const std::string& ns, const std::string& name, const std::string& host,
                          const std::map<std::string, std::string>& labels = {});


}  // namespace routestatus::e2e::bench
