#pragma once

#include <functional>
#include <string>
#include <vector>

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include "base/clock.h"
#include "cmd/route-status-controller/api_reachability.h"
#include "cmd/route-status-controller/gated_write_lease.h"
#include "cmd/route-status-controller/router_readiness.h"
#include "conflict/contention_tracker.h"
#include "controller/status_stats.h"
#include "kubeclient/cache/informer.h"
#include "kubeclient/cache/periodic_resync.h"
#include "kubeclient/cache/rate_limiting_work_queue.h"
#include "lease/backoff_write_lease.h"
#include "lease/observe_only_lease.h"
#include "lease/unleased_write_lease.h"

namespace routestatus::cmd {

// What the collector reads. Pointers may be null (that part is not
// exported); everything pointed to must outlive the collector's use.
struct MetricsSources {
  const Clock* clock = nullptr;
  const controller::StatusStats* status = nullptr;
  const lease::BackoffWriteLease* lease = nullptr;
  const lease::ObserveOnlyLease* observe_only = nullptr;
  // Set with --write-lease=false (`lease` is then its queue).
  const lease::UnleasedWriteLease* unleased = nullptr;
  const conflict::ContentionTracker* tracker = nullptr;
  const kubeclient::cache::RateLimitingWorkQueue* queue = nullptr;
  const kubeclient::cache::RouteInformer* routes = nullptr;
  const kubeclient::cache::NamespaceInformer* namespaces = nullptr;
  const kubeclient::cache::PeriodicResync* resync = nullptr;
  const ApiReachability* api = nullptr;
  // Set with --router-ready-url (`gated` when the replica writes status).
  const RouterReadiness* router = nullptr;
  const GatedWriteLease* gated = nullptr;
  std::string router_name;
  std::string version;
};

// A prometheus::Collectable that reads the components' snapshots at scrape
// time, so the libraries stay free of Prometheus. Names and meanings are
// listed in METRICS.md. Thread-safe (every source is).
class MetricsCollector final : public prometheus::Collectable {
 public:
  explicit MetricsCollector(MetricsSources sources) : s_(std::move(sources)) {}
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  const MetricsSources s_;
};

// The version string of this build ("dev" unless ROUTESTATUS_VERSION is set
// at compile time).
const char* BuildVersion();

}  // namespace routestatus::cmd
