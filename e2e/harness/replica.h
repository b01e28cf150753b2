#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "e2e/harness/cluster.h"
#include "e2e/harness/prom_text.h"
#include "e2e/harness/subprocess.h"

namespace routestatus::e2e {

// How to run one route-status-controller process. `flags` maps a flag name
// (without "--") to its value and overrides the test defaults:
//   lease-interval=2s lease-retry-interval=500ms contention-interval=10s
//   lease-election-delay=500ms v=2
// Value type.
struct ReplicaOptions {
  std::string router_name = "default";
  std::map<std::string, std::string> flags;
  std::vector<std::string> args;  // extra positional args (e.g. "clear")
  // Put before the controller's argv (e.g. PodLimits::LaunchPrefix()).
  std::vector<std::string> launch_prefix;
};

// The test defaults of ReplicaOptions::flags, with `router_name` set.
ReplicaOptions TestReplicaOptions(const std::string& router_name,
                                  const std::map<std::string, std::string>& overrides = {});

// Where a Replica runs without a TestCluster (e.g. against the benchmarks'
// in-process API server). Value type.
struct ReplicaTarget {
  std::string controller_binary;  // "" = E2eEnvFromProcess().controller_binary
  std::string kubeconfig;
  std::string log_dir;                  // the log is log_dir/<id>.log
  std::vector<std::string> namespaces;  // --namespaces unless the flags set it; empty = all
};

// Status write counters of one replica, from its own
// routestatus_status_writes_total. Value type.
struct ReplicaWrites {
  double success = 0;
  double conflict = 0;
  double other = 0;  // not_found + error
  double attempts() const { return success + conflict + other; }
};

// One route-status-controller process pointed at a TestCluster (or a
// ReplicaTarget), with its metrics on a port picked at start, its log in the
// cluster's temp dir. On a real cluster it is limited to the cluster's
// namespaces (--namespaces) unless the options say otherwise; create
// namespaces before Start(). Not thread-safe: one owner.
class Replica {
 public:
  Replica(TestCluster& cluster, std::string id, ReplicaOptions options);
  Replica(ReplicaTarget target, std::string id, ReplicaOptions options);
  virtual ~Replica();
  Replica(const Replica&) = delete;
  Replica& operator=(const Replica&) = delete;

  // (Re)starts the process on a new metrics port; log appended to.
  void Start();
  // SIGKILL, and wait for the exit.
  void Kill();
  // SIGTERM, then SIGKILL after `grace`; returns the exit code.
  int Stop(std::chrono::milliseconds grace = std::chrono::seconds(5));
  // If the process exited because its metrics port was taken meanwhile
  // (PickFreePort races with other sockets), starts it again on a new port
  // and returns true.
  bool RestartIfPortTaken();
  void Restart() { Kill(); Start(); }
  bool Running();
  // Waits for the process to exit (one-shot commands such as `clear`);
  // returns its exit code, -1 on timeout.
  int WaitExit(std::chrono::milliseconds timeout);

  const std::string& id() const { return id_; }
  int metrics_port() const { return metrics_port_; }
  std::string MetricsUrl() const;
  // The process id (-1 before Start()).
  pid_t pid() const;
  ProcStats Stats() const { return ReadProcStats(pid()); }
  const ReplicaOptions& options() const { return options_; }
  std::string Log() const;
  const std::string& log_path() const { return log_path_; }

  // GET /metrics of this replica.
  StatusOr<std::vector<PromSample>> Scrape();
  // True once /readyz answers 200.
  bool Ready();
  // Its status writes by result (zeros when unreachable).
  ReplicaWrites Writes();
  // The lease state this replica reports through its lease-state gauge
  // ("leader", "follower", "election", "disabled"), "" if the metric is
  // missing.
  std::string LeaseState();

 private:
  TestCluster* cluster_ = nullptr;  // null when started from a ReplicaTarget
  ReplicaTarget target_;
  std::string id_;
  ReplicaOptions options_;
  std::string log_path_;
  size_t log_offset_ = 0;  // log size when the current process started
  int metrics_port_ = 0;
  std::unique_ptr<Subprocess> process_;
};

// N replicas of one configuration ("<prefix>-0" .. "<prefix>-N-1").
// Not thread-safe.
class ReplicaSet {
 public:
  ReplicaSet(TestCluster& cluster, const std::string& prefix, int n, const ReplicaOptions& options);
  // An empty set whose replicas run against `target`; Add() them.
  explicit ReplicaSet(ReplicaTarget target);
  // Adds one replica with its own options (e.g. another hostname template).
  Replica& Add(const std::string& id, const ReplicaOptions& options);

  // Starts every replica and waits (bounded) until each answers /healthz;
  // one that exited at once because its metrics port was taken meanwhile is
  // restarted on a new port.
  void StartAll();
  // True once every running replica is ready (bounded).
  bool WaitReady(std::chrono::milliseconds timeout);
  // SIGTERM to every replica at once (they stop in parallel), then waits
  // for each (SIGKILL after `grace`).
  void StopAll(std::chrono::milliseconds grace = std::chrono::seconds(5));
  int size() const { return static_cast<int>(replicas_.size()); }
  Replica& at(int i) { return *replicas_.at(static_cast<size_t>(i)); }

  // Index of the replica whose lease-state gauge says leader (the first
  // one if several; -1 if none).
  int FindLeader();
  // Sum over running replicas of a metric (SumSamples semantics).
  double SumMetric(const std::string& name, const std::map<std::string, std::string>& match = {});
  // The last `tail_bytes` of every replica's log, headed by its id.
  std::string LogTails(size_t tail_bytes = 6000) const;
  // Lines of every log containing `needle`.
  std::vector<std::string> GrepLogs(const std::string& needle) const;

 private:
  TestCluster* cluster_ = nullptr;  // null: replicas run against target_
  ReplicaTarget target_;
  std::vector<std::unique_ptr<Replica>> replicas_;
};

}  // namespace routestatus::e2e
