#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "e2e/harness/cluster.h"
#include "kubeclient/kube_client.h"
#include "kubeclient/route.h"

namespace routestatus::e2e {

// Watches the routes of the cluster's namespaces itself (independently of
// the controllers) and records, per route key, every change of one router
// name's status.ingress entry (appear, change by IngressEqual, disappear)
// with the time it was seen. The initial list is the baseline (no change).
// Resumes dropped watches from the last version; after 410 it relists and
// diffs (changes that happened and reverted while compacted are missed).
// Thread-safe.
class RouteWatcher {
 public:
  using Clock = std::chrono::steady_clock;

  // One route's history.
  struct History {
    std::optional<kubeclient::RouteIngress> entry;  // current entry, if any
    std::string uid;
    bool deleted = false;
    int changes = 0;                        // entry changes seen
    std::vector<Clock::time_point> change_times;
  };

  RouteWatcher(TestCluster& cluster, std::string router_name);
  ~RouteWatcher();
  RouteWatcher(const RouteWatcher&) = delete;
  RouteWatcher& operator=(const RouteWatcher&) = delete;

  // Lists (baseline) and starts the watch thread; returns once listed.
  void Start();
  void Stop();

  std::map<std::string, History> Snapshot() const;
  // Changes of `key`'s entry seen so far (0 for unknown keys).
  int Changes(const std::string& key) const;
  // Waits until `key`'s current entry satisfies `pred` (nullopt = absent);
  // returns when that state was first seen, or nullopt on timeout.
  std::optional<Clock::time_point> WaitForEntry(
      const std::string& key,
      const std::function<bool(const std::optional<kubeclient::RouteIngress>&)>& pred,
      std::chrono::milliseconds timeout);
  // Watch restarts and relists the watcher itself went through.
  int restarts() const { return restarts_.load(); }
  int relists() const { return relists_.load(); }

 private:
  void Run();
  // Lists everything; diffs against the known state. Returns the list's
  // resourceVersion, "" on failure.
  std::string Relist(bool baseline);
  void Observe(const kubeclient::Route& route, Clock::time_point at);
  void ObserveDelete(const std::string& key);

  TestCluster& cluster_;
  const std::string router_name_;
  std::set<std::string> namespaces_;
  mutable std::mutex mu_;
  std::condition_variable changed_;
  std::map<std::string, History> routes_;           // guarded by mu_
  std::unique_ptr<kubeclient::WatchStream> stream_;  // guarded by mu_
  std::map<std::string, Clock::time_point> since_;  // key -> when its state began; mu_
  bool stopping_ = false;                            // guarded by mu_
  std::atomic<int> restarts_{0};
  std::atomic<int> relists_{0};
  std::thread thread_;
};

}  // namespace routestatus::e2e
