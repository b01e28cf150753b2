#include "cmd/route-status-controller/metrics_collector.h"

#include <chrono>
#include <utility>

#include <prometheus/client_metric.h>
#include <prometheus/metric_type.h>

#include "controller/admission.h"

#ifndef ROUTESTATUS_VERSION
#define ROUTESTATUS_VERSION "dev"
#endif

namespace routestatus::cmd {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;
using Labels = std::vector<std::pair<std::string, std::string>>;

// Builds one family at a time.
class Families {
 public:
  explicit Families(std::vector<MetricFamily>* out) : out_(out) {}

  void Begin(const std::string& name, const std::string& help, MetricType type) {
    out_->push_back(MetricFamily{name, help, type, {}});
  }
  void Add(double value, const Labels& labels = {}) {
    ClientMetric m;
    for (const auto& [k, v] : labels) m.label.push_back({k, v});
    if (out_->back().type == MetricType::Counter) {
      m.counter.value = value;
    } else {
      m.gauge.value = value;
    }
    out_->back().metric.push_back(std::move(m));
  }
  void Counter(const std::string& name, const std::string& help, double value,
               const Labels& labels = {}) {
    Begin(name, help, MetricType::Counter);
    Add(value, labels);
  }
  void Gauge(const std::string& name, const std::string& help, double value,
             const Labels& labels = {}) {
    Begin(name, help, MetricType::Gauge);
    Add(value, labels);
  }

 private:
  std::vector<MetricFamily>* out_;
};

double Seconds(routestatus::Duration d) { return std::chrono::duration<double>(d).count(); }

void CollectStatus(const controller::StatusStats& s, const lease::ObserveOnlyLease* observe_only,
                   Families& f) {
  f.Begin("routestatus_status_writes_total",
          "Status writes (merge patches of .status) of our route.status.ingress entry, by "
          "result.",
          MetricType::Counter);
  f.Add(s.writes_success.load(), {{"result", "success"}});
  f.Add(s.writes_conflict.load(), {{"result", "conflict"}});
  f.Add(s.writes_not_found.load(), {{"result", "not_found"}});
  f.Add(s.writes_cancelled.load(), {{"result", "cancelled"}});
  f.Add(s.writes_error.load(), {{"result", "error"}});

  f.Begin("routestatus_status_writes_skipped_total",
          "Reconciles or queued work that ended without a status write, by reason.",
          MetricType::Counter);
  f.Add(s.skipped_no_change.load(), {{"reason", "no_change"}});
  f.Add(s.skipped_follower.load(), {{"reason", "follower"}});
  f.Add(s.skipped_own_write.load(), {{"reason", "own_write"}});
  f.Add(s.skipped_contended.load(), {{"reason", "contended"}});
  f.Add(s.skipped_out_of_shard.load(), {{"reason", "out_of_shard"}});
  f.Add(s.skipped_gone.load(), {{"reason", "gone"}});
  f.Add(s.skipped_done.load(), {{"reason", "already_done"}});
  f.Add(s.skipped_relisting.load(), {{"reason", "cache_relisting"}});
  f.Add(s.skipped_backoff.load(), {{"reason", "backoff"}});
  f.Add(observe_only ? observe_only->suppressed() : 0, {{"reason", "observe_only"}});

  f.Begin("routestatus_status_write_errors_total",
          "Status writes the API server answered with an error other than 409/404 (403, 422, 500 "
          "on one object, ...), by reason; the lease is kept.",
          MetricType::Counter);
  for (const auto& [reason, count] : s.WriteErrorsByReason()) {
    f.Add(static_cast<double>(count), {{"reason", reason}});
  }
  f.Gauge("routestatus_status_write_backoff_routes",
          "Routes whose status write the API server keeps failing (4xx other than 409, or a "
          "5xx on that object) and that back off until it succeeds.",
          static_cast<double>(s.backoff_routes.load()));
  f.Gauge("routestatus_status_write_auth_failing",
          "1 while status writes fail for our credentials (401, or a 403 from RBAC) and none "
          "has succeeded since; every route is retried at the lease's retry interval.",
          static_cast<double>(s.auth_failing.load()));

  f.Counter("routestatus_status_work_queued_total",
            "Status changes handed to the write lease (one work item per route).",
            s.queued.load());

  f.Begin("routestatus_routes",
          "Routes in the cache by our admission result (true, false, out_of_shard) and reason.",
          MetricType::Gauge);
  for (const auto& [key, count] : s.AdmissionCounts()) {
    size_t slash = key.find('/');
    std::string result = key.substr(0, slash);
    std::string reason = slash == std::string::npos ? "" : key.substr(slash + 1);
    if (reason.empty() && result == "true") reason = controller::kReasonAdmitted;
    f.Add(static_cast<double>(count), {{"result", result}, {"reason", reason}});
  }
}

// `unleased` is set with --write-lease=false: `lease` is then only its
// queue (always in Election), so the state shown is "disabled" and the
// outcomes are the work's own.
void CollectLease(const lease::BackoffWriteLease& lease, const lease::UnleasedWriteLease* unleased,
                  const Clock& clock, Families& f) {
  lease::LeaseSnapshot s = lease.Snapshot();
  f.Begin("routestatus_lease_state",
          "Write lease state of this replica: 1 for the current state, 0 for the others "
          "(disabled: --write-lease=false).",
          MetricType::Gauge);
  for (auto st : {lease::LeaseState::kElection, lease::LeaseState::kLeader,
                  lease::LeaseState::kFollower}) {
    f.Add(unleased == nullptr && s.state == st ? 1 : 0, {{"state", lease::LeaseStateName(st)}});
  }
  f.Add(unleased != nullptr ? 1 : 0, {{"state", "disabled"}});
  if (unleased != nullptr) {
    for (auto r : {lease::WorkResult::kNone, lease::WorkResult::kExtend,
                   lease::WorkResult::kRelease}) {
      s.outcomes[static_cast<int>(r)] = unleased->outcome(r);
    }
  }
  f.Begin("routestatus_lease_transitions_total", "Write lease state changes by from and to.",
          MetricType::Counter);
  for (const auto& [edge, count] : s.transitions) {
    f.Add(static_cast<double>(count), {{"from", lease::LeaseStateName(edge.first)},
                                       {"to", lease::LeaseStateName(edge.second)}});
  }
  double remaining = 0;
  if (s.state == lease::LeaseState::kFollower) {
    auto now = clock.Now();
    if (s.expires > now) remaining = Seconds(s.expires - now);
  }
  f.Gauge("routestatus_lease_follower_backoff_seconds",
          "Time left before a follower's deferred work may run (0 unless following).", remaining);
  f.Gauge("routestatus_lease_tick", "Follower backoff step (grows each time the leader is seen).",
          s.tick);
  f.Counter("routestatus_lease_follower_deferrals_total",
            "Work items deferred because this replica follows.", s.follower_deferrals);
  f.Begin("routestatus_lease_work_runs_total", "Work items run by the lease, by outcome.",
          MetricType::Counter);
  f.Add(s.outcomes[0], {{"outcome", "none"}});
  f.Add(s.outcomes[1], {{"outcome", "extend"}});
  f.Add(s.outcomes[2], {{"outcome", "release"}});
  f.Counter("routestatus_lease_work_retries_total",
            "Work items requeued after the lease retry interval.", s.retries);
  f.Counter("routestatus_lease_extend_drops_total",
            "Queued work dropped because the entry was already correct and newest.",
            s.extend_drops);
  f.Gauge("routestatus_lease_pending_keys", "Routes with queued or running status work.",
          static_cast<double>(s.pending_keys));
  f.Gauge("routestatus_lease_takeover_deadline_seconds",
          "How long a follower holding work waits for the leader's next write before taking "
          "the work over (factor x quantile of recent waits, at least the floor, at most the "
          "lease interval; each wait adds a random 0..100% of D), in seconds; 0 when takeover is "
          "off.",
          Seconds(s.takeover_deadline));
  f.Begin("routestatus_lease_takeovers_total",
          "Follower work run before the lease expired because the leader wrote nothing within "
          "the takeover deadline, by outcome (won: we wrote and lead; lost: another writer was "
          "alive, a 409; none: nothing written and no other writer seen: nothing to write, or "
          "the write failed).",
          MetricType::Counter);
  f.Add(s.takeovers[static_cast<int>(lease::WorkResult::kExtend)], {{"outcome", "won"}});
  f.Add(s.takeovers[static_cast<int>(lease::WorkResult::kRelease)], {{"outcome", "lost"}});
  f.Add(s.takeovers[static_cast<int>(lease::WorkResult::kNone)], {{"outcome", "none"}});
  f.Counter("routestatus_lease_progress_samples_total",
            "Waits for the leader's progress measured while following with work held (each "
            "ends in another replica's write).",
            static_cast<double>(s.progress_samples));
  f.Gauge("routestatus_lease_progress_wait_seconds",
          "The quantile (0.95) of the recent waits for the leader's progress that the takeover "
          "deadline is computed from, in seconds (0 before the first).",
          Seconds(s.progress_quantile));
}

void CollectTracker(const conflict::ContentionTracker& tracker, Families& f) {
  conflict::ContentionSnapshot s = tracker.Snapshot();
  f.Gauge("routestatus_contentions_current_window",
          "Contention events (our entry changed to a value we did not write) since the last "
          "flush.",
          s.contentions_in_window);
  f.Gauge("routestatus_contentions",
          "The contention count compared with --contention-limit.", s.contentions);
  f.Gauge("routestatus_contended_routes", "Routes whose entry is currently contended.",
          static_cast<double>(s.contended_routes));
  f.Gauge("routestatus_contention_suspect_routes",
          "Routes another writer of our router name changed to an entry that differs from ours "
          "only in what other objects decide (host claims, namespace labels; maybe a slightly "
          "older view): not changed by us for 15 s, then reconciled; not counted as "
          "contention.",
          static_cast<double>(s.suspect_routes));
  f.Gauge("routestatus_contention_cutoff_active",
          "1 while more than --contention-limit contentions stop all changes of existing "
          "entries.",
          s.cutoff_active ? 1 : 0);
  f.Counter("routestatus_contention_warnings_total",
            "Contention warnings logged, at once: the first contention of a window and the one "
            "that engages the cut-off (at most one of each per window).",
            s.warnings);
}

void CollectQueue(const kubeclient::cache::RateLimitingWorkQueue& queue, Families& f) {
  kubeclient::cache::WorkQueueStats s = queue.Stats();
  f.Gauge("routestatus_workqueue_depth", "Route keys ready to be reconciled.",
          static_cast<double>(s.depth));
  f.Gauge("routestatus_workqueue_delayed", "Route keys waiting for a delayed add.",
          static_cast<double>(s.delayed));
  f.Gauge("routestatus_workqueue_processing", "Route keys being reconciled.",
          static_cast<double>(s.processing));
  f.Counter("routestatus_workqueue_adds_total", "Keys queued (after dedupe).", s.adds_total);
  f.Counter("routestatus_workqueue_retries_total", "Rate-limited re-adds of keys.",
            s.retries_total);
}

template <typename T>
void AddInformer(const kubeclient::cache::Informer<T>& informer, const std::string& resource,
                 std::vector<std::pair<std::string, kubeclient::cache::InformerStats>>* out) {
  out->emplace_back(resource, informer.Stats());
}

void CollectInformers(
    const std::vector<std::pair<std::string, kubeclient::cache::InformerStats>>& all,
    Families& f) {
  if (all.empty()) return;
  f.Begin("routestatus_informer_events_total", "Watch events received, by resource and type.",
          MetricType::Counter);
  for (const auto& [res, s] : all) {
    f.Add(s.events_added, {{"resource", res}, {"type", "added"}});
    f.Add(s.events_modified, {{"resource", res}, {"type", "modified"}});
    f.Add(s.events_deleted, {{"resource", res}, {"type", "deleted"}});
    f.Add(s.events_bookmark, {{"resource", res}, {"type", "bookmark"}});
    f.Add(s.events_error, {{"resource", res}, {"type", "error"}});
  }
  f.Begin("routestatus_informer_initial_states_total",
          "Full states the informer obtained (the first and every relist), by resource and "
          "source: streamed (a watch list: the API server streamed its watch cache), "
          "watch_cache (one list its watch cache answered), storage (a list read from etcd, "
          "page by page).",
          MetricType::Counter);
  for (const auto& [res, s] : all) {
    for (size_t i = 0; i < kubeclient::cache::kInitialStateSourceCount; ++i) {
      f.Add(static_cast<double>(s.initial_states[i]),
            {{"resource", res},
             {"source", kubeclient::cache::InitialStateSourceName(
                            static_cast<kubeclient::cache::InitialStateSource>(i))}});
    }
  }
  f.Begin("routestatus_informer_stream_fallbacks_total",
          "Streamed initial states that failed and were replaced by a list, by resource and "
          "reason: refused (400/422: kube 1.26, 1.33), error_event (an ERROR event: kube 1.32+ "
          "over an etcd without RequestWatchProgress), server_error, no_end_bookmark, "
          "stream_ended.",
          MetricType::Counter);
  for (const auto& [res, s] : all) {
    for (size_t i = 0; i < kubeclient::cache::kStreamFallbackCount; ++i) {
      f.Add(static_cast<double>(s.stream_fallbacks[i]),
            {{"resource", res},
             {"reason", kubeclient::cache::StreamFallbackName(
                            static_cast<kubeclient::cache::StreamFallback>(i))}});
    }
  }
  auto per_resource = [&](const std::string& name, const std::string& help, MetricType type,
                          auto get) {
    f.Begin(name, help, type);
    for (const auto& [res, s] : all) f.Add(static_cast<double>(get(s)), {{"resource", res}});
  };
  using S = kubeclient::cache::InformerStats;
  per_resource("routestatus_informer_lists_total", "Successful full lists (the first included).",
               MetricType::Counter, [](const S& s) { return s.lists; });
  per_resource("routestatus_informer_relists_total", "Full lists after the first (e.g. 410 Gone).",
               MetricType::Counter, [](const S& s) { return s.relists; });
  per_resource("routestatus_informer_list_failures_total", "Failed list attempts.",
               MetricType::Counter, [](const S& s) { return s.list_failures; });
  per_resource("routestatus_informer_watch_restarts_total", "Watches opened after the first.",
               MetricType::Counter, [](const S& s) { return s.watch_restarts; });
  per_resource("routestatus_informer_watch_failures_total", "Watch sessions ending in an error.",
               MetricType::Counter, [](const S& s) { return s.watch_failures; });
  per_resource("routestatus_informer_stale_events_total",
               "Watch events repeating a version already applied (opaque versions are matched, "
               "never compared), ignored.",
               MetricType::Counter,
               [](const S& s) { return s.stale_events_ignored; });
  per_resource("routestatus_informer_decode_errors_total", "Objects that failed to decode.",
               MetricType::Counter, [](const S& s) { return s.decode_errors; });
  per_resource("routestatus_informer_streaming_paused",
               "1 while relists list instead of streaming, for 10 min after a failed streamed "
               "initial state, else 0.",
               MetricType::Gauge, [](const S& s) { return s.streaming_paused ? 1 : 0; });
  per_resource("routestatus_informer_objects", "Objects in the cache.", MetricType::Gauge,
               [](const S& s) { return s.objects; });
  per_resource("routestatus_informer_synced",
               "1 once the cache holds its first full list (reconcile workers start when every "
               "cache the shard needs has synced), else 0.",
               MetricType::Gauge, [](const S& s) { return s.synced ? 1 : 0; });
  per_resource("routestatus_informer_last_sync_timestamp_seconds",
               "Wall time of the last successful full list, in seconds since the epoch (0 = "
               "never).",
               MetricType::Gauge, [](const S& s) {
                 if (s.last_sync == SystemTime{}) return 0.0;
                 return std::chrono::duration<double>(s.last_sync.time_since_epoch()).count();
               });
}

void CollectApi(const ApiReachability& api, Families& f) {
  ApiReachabilitySnapshot s = api.Snapshot();
  f.Gauge("routestatus_api_reachable",
          "0 during an API server outage (requests failing without an answer or with 5xx for "
          "over a second, logged once), else 1.",
          s.reachable ? 1 : 0);
  f.Gauge("routestatus_api_last_success_timestamp_seconds",
          "Wall time of the last request or watch event the API server answered, in seconds "
          "since the epoch (0 = never).",
          s.last_success == SystemTime{}
              ? 0.0
              : std::chrono::duration<double>(s.last_success.time_since_epoch()).count());
  f.Counter("routestatus_api_outages_total",
            "API server outages (each logged as one WARNING, and one INFO when it answers again).",
            static_cast<double>(s.outages));
  f.Begin("routestatus_api_request_failures_total",
          "API requests and watch reads that got no usable answer, by class (connection_refused, "
          "connection_reset, timeout, connection_error, server_error = 5xx, throttled = 429).",
          MetricType::Counter);
  for (int c = 1; c < kFailureClassCount; ++c) {
    f.Add(static_cast<double>(s.failures[static_cast<size_t>(c)]),
          {{"class", FailureClassName(static_cast<FailureClass>(c))}});
  }
}

void CollectRouter(const RouterReadiness& router, const GatedWriteLease* gated, const Clock& clock,
                   Families& f) {
  RouterReadinessSnapshot s = router.Snapshot();
  f.Gauge("routestatus_router_ready",
          "1 while the router beside this replica answers its readiness URL (--router-ready-url) "
          "with 2xx, else 0: the replica writes status and takes over only while it is 1.",
          s.ready ? 1 : 0);
  const double not_ready_for =
      s.ready || s.since == SteadyTime{}
          ? 0
          : std::chrono::duration<double>(clock.Now() - s.since).count();
  f.Gauge("routestatus_router_not_ready_seconds",
          "How long the router has not been ready, in seconds (0 while it is; one WARNING past a "
          "minute).",
          not_ready_for);
  f.Begin("routestatus_router_readiness_probes_total",
          "Probes of the router's readiness URL, by result: ready (2xx) or not_ready (another "
          "answer, or none within --router-ready-timeout).",
          MetricType::Counter);
  f.Add(static_cast<double>(s.probes_ready), {{"result", "ready"}});
  f.Add(static_cast<double>(s.probes_not_ready), {{"result", "not_ready"}});
  if (gated != nullptr) {
    f.Counter("routestatus_status_writes_withheld_total",
              "Status writes that came due while the router was not ready and were not made (the "
              "routes are re-queued when it is ready again).",
              static_cast<double>(gated->withheld()));
  }
}

}  // namespace

const char* BuildVersion() { return ROUTESTATUS_VERSION; }

std::vector<MetricFamily> MetricsCollector::Collect() const {
  std::vector<MetricFamily> out;
  Families f(&out);
  f.Gauge("routestatus_build_info", "Build and configuration of this process (always 1).", 1,
          {{"version", s_.version}, {"router_name", s_.router_name},
           {"update_status", s_.observe_only ? "false" : "true"},
           {"write_lease", s_.unleased ? "false" : "true"}});
  if (s_.status) CollectStatus(*s_.status, s_.observe_only, f);
  if (s_.lease && s_.clock) CollectLease(*s_.lease, s_.unleased, *s_.clock, f);
  if (s_.tracker) CollectTracker(*s_.tracker, f);
  if (s_.queue) CollectQueue(*s_.queue, f);
  std::vector<std::pair<std::string, kubeclient::cache::InformerStats>> informers;
  if (s_.routes) AddInformer(*s_.routes, "routes", &informers);
  if (s_.namespaces) AddInformer(*s_.namespaces, "namespaces", &informers);
  CollectInformers(informers, f);
  if (s_.api) CollectApi(*s_.api, f);
  if (s_.router && s_.clock) CollectRouter(*s_.router, s_.gated, *s_.clock, f);
  if (s_.resync) {
    f.Counter("routestatus_resyncs_total", "Periodic resyncs (every cached route re-queued).",
              static_cast<double>(s_.resync->runs()));
  }
  return out;
}

}  // namespace routestatus::cmd
