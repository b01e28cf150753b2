#include "cmd/route-status-controller/controller_app.h"

#include <cstdlib>
#include <exception>
#include <random>

#include <glog/logging.h>
#include <prometheus/family.h>
#include <prometheus/histogram.h>

#include "controller/admission_warnings.h"

namespace routestatus::cmd {
namespace {

kubeclient::cache::InformerOptions Seeded(kubeclient::cache::InformerOptions o) {
  std::random_device rd;
  o.seed = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  return o;
}

prometheus::Histogram::BucketBoundaries LatencyBuckets() {
  return {0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 60};
}

}  // namespace

// Fills the work queue histograms. Called with the queue's lock held:
// Observe() is quick and never calls back.
class ControllerApp::QueueObserver final : public kubeclient::cache::WorkQueueObserver {
 public:
  explicit QueueObserver(prometheus::Registry& registry)
      : wait_(prometheus::BuildHistogram()
                  .Name("routestatus_workqueue_queue_duration_seconds")
                  .Help("Time a route key waited in the work queue before a worker took it, in "
                        "seconds.")
                  .Register(registry)
                  .Add({}, LatencyBuckets())),
        work_(prometheus::BuildHistogram()
                  .Name("routestatus_workqueue_work_duration_seconds")
                  .Help("Time a worker spent reconciling one route key, in seconds.")
                  .Register(registry)
                  .Add({}, LatencyBuckets())) {}

  void OnGet(routestatus::Duration latency) override {
    wait_.Observe(std::chrono::duration<double>(latency).count());
  }
  void OnDone(routestatus::Duration took) override {
    work_.Observe(std::chrono::duration<double>(took).count());
  }

 private:
  prometheus::Histogram& wait_;
  prometheus::Histogram& work_;
};

namespace {
kubeclient::cache::RateLimitingWorkQueue::Options QueueOptions(
    kubeclient::cache::WorkQueueObserver* observer) {
  kubeclient::cache::RateLimitingWorkQueue::Options o;
  o.observer = observer;
  return o;
}
}  // namespace

ControllerApp::ControllerApp(const Options& options, const ComponentOptions& components,
                             std::unique_ptr<kubeclient::KubeClient> client,
                             prometheus::Registry& registry, ApiReachability* api,
                             RouterReadiness* router)
    : options_(options),
      components_(components),
      client_(std::move(client)),
      queue_observer_(std::make_unique<QueueObserver>(registry)),
      routes_(*client_, clock_, Seeded(components.route_informer)),
      namespaces_(*client_, clock_, Seeded(components.namespace_informer)),
      queue_(clock_, QueueOptions(queue_observer_.get())),
      lease_(options.update_status
                 ? std::make_unique<lease::BackoffWriteLease>(
                       clock_, options.write_lease
                                   ? components.lease
                                   : lease::UnleasedWriteLease::PassThroughOptions(components.lease))
                 : nullptr),
      observe_only_(options.update_status ? nullptr : std::make_unique<lease::ObserveOnlyLease>()),
      unleased_(lease_ && !options.write_lease ? std::make_unique<lease::UnleasedWriteLease>(*lease_)
                                               : nullptr),
      router_(router),
      gated_(router && lease_ ? std::make_unique<GatedWriteLease>(
                                    unleased_ ? static_cast<lease::WriteLease&>(*unleased_)
                                              : static_cast<lease::WriteLease&>(*lease_))
                              : nullptr),
      tracker_(clock_, components.tracker),
      gate_(tracker_),
      shard_(components.shard, &namespaces_),
      syncer_(components.admission, shard_, routes_, *client_, StatusLease(), Gate(), clock_,
              stats_),
      controller_(syncer_, routes_, &namespaces_, shard_, queue_, Gate(), clock_) {
  routes_.AddIndex(controller::kRoutesByHostIndex,
                   controller::RoutesByHostIndexFunc(components.admission));
  routes_.AddEventHandler(&controller_.route_handler());
  namespaces_.AddEventHandler(&controller_.namespace_handler());
  if (options.resync_interval.count() > 0) {
    resync_ = std::make_unique<kubeclient::cache::PeriodicResync>(
        clock_, options.resync_interval, [this] {
          try {
            RequeueAllRoutes("resync");
          } catch (const std::exception& e) {
            LOG(FATAL) << "internal thread resync crashed: " << e.what();
          }
        });
  }
  if (api != nullptr) {
    // Why: a replica cut off from the API server cannot see other replicas'
    // writes; it must neither report itself leader nor write as one when it
    // is back (docs/design.md section 7).
    api->SetOutageHandler([this] {
      {
        std::lock_guard<std::mutex> l(cut_off_mu_);
        api_cut_off_ = true;
      }
      UpdateCutOff();
    });
    api->SetRecoveryHandler([this] {
      {
        std::lock_guard<std::mutex> l(cut_off_mu_);
        api_cut_off_ = false;
      }
      UpdateCutOff();
      // Why: a list or watch backoff grown during the outage must not delay
      // the caches now that the server answers (jittered, once per outage).
      routes_.reflector().ServerAnswersAgain();
      namespaces_.reflector().ServerAnswersAgain();
      // Why before the re-queue: a 5xx during the outage put its route in
      // its own backoff, which would make the re-queue skip it.
      syncer_.EndServerErrorBackoffs();
      RequeueAllRoutes("API server back");
    });
  }
  if (router_ != nullptr) {
    {
      std::lock_guard<std::mutex> l(cut_off_mu_);
      router_down_ = true;  // Why: until the first probe says otherwise
    }
    UpdateCutOff();
    router_->SetHandler([this](bool ready) { OnRouterReadiness(ready); });
  } else {
    std::lock_guard<std::mutex> l(cut_off_mu_);
    router_down_ = false;
  }
  MetricsSources sources;
  sources.clock = &clock_;
  sources.router = router_;
  sources.gated = gated_.get();
  sources.status = &stats_;
  sources.lease = lease_.get();
  sources.unleased = unleased_.get();
  sources.observe_only = observe_only_.get();
  // Why: without a lease the tracker is never fed; absent series, not zeros.
  sources.tracker = options.write_lease ? &tracker_ : nullptr;
  sources.queue = &queue_;
  sources.routes = &routes_;
  sources.namespaces = &namespaces_;
  sources.resync = resync_.get();
  sources.api = api;
  sources.router_name = options.router_name;
  sources.version = BuildVersion();
  collector_ = std::make_shared<MetricsCollector>(std::move(sources));
}

void ControllerApp::UpdateCutOff() {
  if (!lease_) return;
  std::lock_guard<std::mutex> l(cut_off_mu_);
  lease_->SetCutOff(api_cut_off_ || router_down_);
}

void ControllerApp::OnRouterReadiness(bool ready) {
  {
    std::lock_guard<std::mutex> l(cut_off_mu_);
    router_down_ = !ready;
  }
  if (gated_) gated_->SetOpen(ready);
  UpdateCutOff();
  // Why: work that came due while the router was down was dropped; each
  // route whose entry differs is written once, the rest skip.
  if (ready) RequeueAllRoutes("router ready");
}

void ControllerApp::RequeueAllRoutes(const char* why) {
  auto keys = routes_.Keys();
  VLOG(1) << why << ": re-queueing " << keys.size() << " routes";
  for (const auto& key : keys) queue_.Add(key);
}

lease::WriteLease& ControllerApp::StatusLease() {
  if (observe_only_) return *observe_only_;
  if (gated_) return *gated_;
  if (unleased_) return *unleased_;
  return *lease_;
}

controller::ContentionGate& ControllerApp::Gate() {
  if (options_.write_lease) return gate_;
  return no_gate_;
}

ControllerApp::~ControllerApp() {
  if (!Stop(options_.shutdown_timeout)) {
    LOG(ERROR) << "threads still busy after " << FormatDuration(options_.shutdown_timeout)
               << " while destroying the controller; exiting";
    google::FlushLogFiles(google::GLOG_INFO);
    std::_Exit(1);
  }
}

void ControllerApp::Spawn(const std::string& name, std::function<void()> body) {
  threads_.emplace_back([this, name, body = std::move(body)] {
    try {
      body();
    } catch (const std::exception& e) {
      LOG(FATAL) << "internal thread " << name << " crashed: " << e.what();
    } catch (...) {
      LOG(FATAL) << "internal thread " << name << " crashed with a non-standard exception";
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (!stopping_) LOG(FATAL) << "internal thread " << name << " ended before shutdown";
    ++exited_;
    cv_.notify_all();
  });
}

void ControllerApp::Start() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    CHECK(!started_) << "Start() twice";
    started_ = true;
  }
  Spawn("informer-routes", [this] { routes_.Run(); });
  Spawn("informer-namespaces", [this] { namespaces_.Run(); });
  for (int i = 0; i < options_.workers; ++i) {
    Spawn("reconcile-" + std::to_string(i), [this] { controller_.RunWorker(); });
  }
  if (lease_) {
    for (int i = 0; i < options_.workers; ++i) {
      Spawn("lease-" + std::to_string(i), [this] {
        while (lease_->RunNext()) {
        }
      });
    }
  }
  if (options_.write_lease) Spawn("contention-flush", [this] { FlushLoop(); });
  if (resync_) resync_->Start();
  LOG(INFO) << "controller started: router " << options_.router_name << ", " << options_.workers
            << " workers, " << (lease_ ? "writing status" : "observe only (--update-status=false)");
  for (const std::string& warning : controller::AdmissionOptionWarnings(components_.admission)) {
    LOG(WARNING) << warning;
  }
  if (!options_.write_lease) {
    LOG(WARNING) << "--write-lease=false: no write lease and no contention tracker; every "
                    "replica writes every change (N PUTs per change with N replicas, and "
                    "differently configured routers sharing a name fight without limit). Use "
                    "it for comparison or with a single replica only.";
  }
}

void ControllerApp::FlushLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    SteadyTime due = tracker_.NextFlush();
    if (clock_.Now() >= due) {
      lock.unlock();
      tracker_.Flush();  // ends the warning window (warnings are logged when they happen)
      lock.lock();
      continue;
    }
    clock_.WaitUntil(cv_, lock, due);
  }
}

Readiness ControllerApp::Ready() const {
  bool r = routes_.HasSynced(), n = namespaces_.HasSynced();
  if (router_ != nullptr && !router_->ready()) {
    RouterReadinessSnapshot s = router_->Snapshot();
    std::string reason = "the router is not ready (" + router_->options().url;
    if (!s.last_error.empty()) reason += ": " + s.last_error;
    if (s.since != SteadyTime{}) {
      reason += ", for " + FormatDuration(std::chrono::duration_cast<Duration>(clock_.Now() - s.since));
    }
    return {false, reason + "); this replica reports nothing for it until it is"};
  }
  if (r && n) return {true, ""};
  std::string reason = "waiting for the caches to sync (reconcile workers start then):";
  auto add = [&reason](const char* name, const kubeclient::cache::InformerStats& s) {
    reason += std::string(" ") + name;
    if (!s.last_list_error.empty()) reason += " (last list failed: " + s.last_list_error + ")";
  };
  if (!r) add("routes", routes_.Stats());
  if (!n) add("namespaces", namespaces_.Stats());
  return {false, reason};
}

bool ControllerApp::Stop(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopped_ || !started_) {
      stopped_ = true;
      stopping_ = true;
      return true;
    }
    stopping_ = true;
    cv_.notify_all();  // the flush loop
  }
  // No new events, no new keys, no new work; running status PUTs may finish
  // in the first half of the time, then the client cancels whatever is
  // still in flight (a slow list, a watch being opened, a rate-limit or
  // Retry-After wait, a write) so that every thread ends in time.
  controller_.Stop();  // workers still waiting for the caches
  routes_.Stop();
  namespaces_.Stop();
  if (resync_) resync_->Stop();
  queue_.ShutDownNow();
  if (lease_) lease_->Shutdown();
  auto all_exited = [this] { return exited_ == threads_.size(); };
  std::unique_lock<std::mutex> lock(mu_);
  bool done = cv_.wait_until(lock, std::chrono::steady_clock::now() + timeout / 2, all_exited);
  if (!done) {
    VLOG(1) << (threads_.size() - exited_) << " internal thread(s) busy; cancelling API requests";
    lock.unlock();
    client_->Shutdown();
    lock.lock();
    done = cv_.wait_until(lock, deadline, all_exited);
  }
  if (!done) {
    LOG(WARNING) << (threads_.size() - exited_) << " internal thread(s) still busy (in-flight "
                 << "API requests) after " << FormatDuration(timeout);
    return false;
  }
  lock.unlock();
  for (auto& t : threads_) t.join();
  threads_.clear();
  lock.lock();
  stopped_ = true;
  return true;
}

}  // namespace routestatus::cmd
