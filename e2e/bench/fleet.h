#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "e2e/harness/prom_text.h"
#include "e2e/harness/subprocess.h"

namespace routestatus::e2e::bench {

// Small process-level helpers shared by the demo (cmd/demo) and the
// benchmarks: controller replicas and local-apiserver as child processes,
// their metrics, /proc figures, and checks of route status entries.

// Absolute paths of the binaries built next to the caller (set at build time).
std::string ControllerBinary();
std::string ApiServerBinary();

// A fresh folder under $TMPDIR (or /tmp) named prefix-XXXXXX. Dies on failure.
std::string MakeTempDir(const std::string& prefix);

// CPU time and memory of a process, from /proc/PID/stat and /proc/PID/status.
struct ProcStats {
  double cpu_seconds = 0;  // utime + stime
  long vm_hwm_kb = 0;      // peak resident set
  long vm_rss_kb = 0;      // current resident set
  bool ok = false;
};
ProcStats ReadProcStats(pid_t pid);

// The controller flags every replica of one router name shares.
struct ControllerFlags {
  std::string router_name = "default";
  std::string router_canonical_hostname = "router-default.apps.example.com";
  std::string hostname_template = "${name}-${namespace}.apps.example.com";
  std::string router_domain = "apps.example.com";
  std::string route_labels = "router!=internal";
  std::string namespace_labels = "router!=internal";
  double qps = 500;
  int burst = 1000;
  std::vector<std::string> extra;  // more --flag=value arguments
};

// The shard and host flags of `flags` as a command line fragment (for
// reports), e.g. "--router-name=default --route-labels='router!=internal'".
std::string DescribeFlags(const ControllerFlags& flags);

// Status write counters of one controller replica, read from its /metrics.
struct ReplicaWrites {
  double success = 0;
  double conflict = 0;
  double other = 0;  // not_found + error
  double attempts() const { return success + conflict + other; }
};

// One route-status-controller child process with its own metrics port.
// Not thread-safe: one owner. The destructor kills it if still running.
class Replica {
 public:
  // Starts the controller against `kubeconfig`; its log goes to
  // `log_dir`/replica-<index>.log.
  Replica(int index, const std::string& kubeconfig, const ControllerFlags& flags,
          const std::string& log_dir);

  int index() const { return index_; }
  int metrics_port() const { return metrics_port_; }
  pid_t pid() const { return process_->pid(); }
  bool Running() { return process_->Running(); }
  const std::string& log_path() const { return process_->log_path(); }
  std::string MetricsUrl() const;
  // /readyz answers 200.
  bool Ready() const;
  // Parsed /metrics (empty when unreachable).
  std::vector<PromSample> Scrape() const;
  ReplicaWrites Writes() const;
  // "leader", "follower", "election" or "?" from the lease state gauge.
  std::string LeaseState() const;
  ProcStats Stats() const { return ReadProcStats(process_->pid()); }
  // If the process exited because its metrics port was taken meanwhile
  // (PickFreePort races with other sockets), starts it again on a new port
  // and returns true.
  bool RestartIfPortTaken();
  // SIGTERM, then SIGKILL after `grace`; the exit code.
  int Stop(std::chrono::milliseconds grace = std::chrono::seconds(5)) {
    return process_->Stop(grace);
  }

 private:
  void Start();

  int index_;
  int metrics_port_;
  std::string kubeconfig_;
  ControllerFlags flags_;
  std::string log_dir_;
  std::unique_ptr<Subprocess> process_;
};

// Writes counted by the API server's apiserver_request_total.
struct ServerWrites {
  double status_ok = 0;        // UPDATE routes/status 2xx
  double status_conflict = 0;  // UPDATE routes/status 409
  double status_other = 0;     // UPDATE routes/status other codes
  double other_writes = 0;     // every other write verb (CREATE/UPDATE/PATCH/DELETE of anything)
  double status_attempts() const { return status_ok + status_conflict + status_other; }
};
ServerWrites ServerWritesFromSamples(const std::vector<PromSample>& samples);

// local-apiserver as a child process on a free loopback port, with a
// kubeconfig written into `dir`. Not thread-safe: one owner.
class ApiServerProcess {
 public:
  explicit ApiServerProcess(const std::string& dir);
  // False (with a message in *error) if it did not come up in time.
  bool WaitStarted(std::chrono::milliseconds timeout, std::string* error);
  const std::string& url() const { return url_; }
  int port() const { return port_; }
  const std::string& kubeconfig() const { return kubeconfig_; }
  ServerWrites Writes() const;
  pid_t pid() const { return process_->pid(); }
  int Stop() { return process_->Stop(); }

 private:
  std::string kubeconfig_;
  std::string url_;
  int port_ = 0;
  std::unique_ptr<Subprocess> process_;
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
