#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <prometheus/collectable.h>
#include <prometheus/registry.h>

#include "base/clock.h"
#include "cmd/route-status-controller/component_options.h"
#include "cmd/route-status-controller/config.h"
#include "cmd/route-status-controller/gated_write_lease.h"
#include "cmd/route-status-controller/http_endpoint.h"
#include "cmd/route-status-controller/metrics_collector.h"
#include "cmd/route-status-controller/router_readiness.h"
#include "conflict/contention_tracker.h"
#include "controller/controller.h"
#include "controller/shard.h"
#include "controller/status_stats.h"
#include "controller/status_syncer.h"
#include "controller/tracker_gate.h"
#include "kubeclient/cache/informer.h"
#include "kubeclient/cache/periodic_resync.h"
#include "kubeclient/cache/rate_limiting_work_queue.h"
#include "kubeclient/kube_client.h"
#include "lease/backoff_write_lease.h"
#include "lease/observe_only_lease.h"
#include "lease/unleased_write_lease.h"

namespace routestatus::cmd {

// The running controller of one router name: route and namespace informers
// -> work queue -> N reconcile workers (controller::Controller) -> write
// lease (N lease workers run the status PUTs) with the contention tracker
// (flushed by a timer thread at NextFlush()) and a periodic resync. With
// options.update_status false the lease is lease::ObserveOnlyLease: decisions are
// computed and counted, nothing is written. With options.write_lease false
// the lease is lease::UnleasedWriteLease and the tracker is not consulted
// (controller::NoContentionGate): every replica writes what differs.
//
// Every internal thread is wrapped: an escaping exception, or a thread that
// ends before Stop(), is LOG(FATAL) with the thread's name (never a silent
// hang). Thread-safe: Start/Stop from one thread, Ready/collector from any.
class ControllerApp {
 public:
  // Builds every component on `client` (owned). Nothing runs until Start().
  // `registry` (histograms of the work queue) must outlive the app, and so
  // must `api` when set: the client's reachability, exported as metrics;
  // when the API server answers again after an outage every cached route is
  // re-queued once (status writes that failed meanwhile wait for their retry
  // interval otherwise; correct entries are not written). With `router`
  // (--router-ready-url; it must outlive the app, and its caller starts and
  // stops it) the replica reports only while the router is ready: closed,
  // it writes nothing and takes over nothing (GatedWriteLease), follows,
  // and /readyz says why; when the router is ready again every cached route
  // is re-queued (only those whose entry differs are written).
  ControllerApp(const Options& options, const ComponentOptions& components,
                std::unique_ptr<kubeclient::KubeClient> client, prometheus::Registry& registry,
                ApiReachability* api = nullptr, RouterReadiness* router = nullptr);
  // Stops (bounded by options.shutdown_timeout) if still running. If a
  // thread did not end in time this aborts the process after logging
  // (prefer calling Stop() and handling its result).
  ~ControllerApp();
  ControllerApp(const ControllerApp&) = delete;
  ControllerApp& operator=(const ControllerApp&) = delete;

  void Start();
  // Ready once both informers have synced and the router (when probed) is
  // ready.
  Readiness Ready() const;
  // Stops taking work (informers, resync, queue, lease), gives running
  // status writes half of `timeout` to finish, then shuts the client down
  // (KubeClient::Shutdown: every request and wait in it ends), and joins
  // every thread, within `timeout`. Returns false when some thread was
  // still busy at the deadline (it is then left running; the caller should
  // exit the process). Idempotent.
  bool Stop(std::chrono::milliseconds timeout);

  // Reads every component's stats at scrape time (routestatus_* metrics,
  // see METRICS.md). Stays valid while the app lives.
  std::shared_ptr<prometheus::Collectable> collector() const { return collector_; }

  const controller::StatusStats& stats() const { return stats_; }

 private:
  class QueueObserver;
  // The lease and gate the status path uses (see the class comment).
  lease::WriteLease& StatusLease();
  controller::ContentionGate& Gate();
  void Spawn(const std::string& name, std::function<void()> body);
  // Queues every cached route for a reconcile (`why` for the log).
  void RequeueAllRoutes(const char* why);
  void FlushLoop();
  // Follows (lease cut off) while the API server is unreachable or the
  // router is not ready.
  void UpdateCutOff();
  void OnRouterReadiness(bool ready);

  const Options options_;
  const ComponentOptions components_;
  RealClock clock_;
  std::unique_ptr<kubeclient::KubeClient> client_;
  std::unique_ptr<QueueObserver> queue_observer_;
  kubeclient::cache::RouteInformer routes_;
  kubeclient::cache::NamespaceInformer namespaces_;
  kubeclient::cache::RateLimitingWorkQueue queue_;
  std::unique_ptr<lease::BackoffWriteLease> lease_;  // null when observe-only
  std::unique_ptr<lease::ObserveOnlyLease> observe_only_;   // null when writing
  std::unique_ptr<lease::UnleasedWriteLease> unleased_;     // set with --write-lease=false
  RouterReadiness* const router_;                           // null without --router-ready-url
  std::unique_ptr<GatedWriteLease> gated_;                  // set with router_ and a lease
  conflict::ContentionTracker tracker_;
  controller::TrackerGate gate_;
  controller::NoContentionGate no_gate_;  // used instead of gate_ without a lease
  controller::StatusStats stats_;
  controller::ShardFilter shard_;
  controller::StatusSyncer syncer_;
  controller::Controller controller_;
  std::unique_ptr<kubeclient::cache::PeriodicResync> resync_;
  std::shared_ptr<MetricsCollector> collector_;

  std::mutex mu_;
  std::condition_variable cv_;
  bool started_ = false;   // GUARDED_BY(mu_)
  bool stopping_ = false;  // GUARDED_BY(mu_)
  bool stopped_ = false;   // GUARDED_BY(mu_)
  size_t exited_ = 0;      // GUARDED_BY(mu_): threads whose body returned
  bool api_cut_off_ = false;   // GUARDED_BY(cut_off_mu_)
  bool router_down_ = true;    // GUARDED_BY(cut_off_mu_)
  std::mutex cut_off_mu_;
  std::vector<std::thread> threads_;
};

}  // namespace routestatus::cmd
