#include "test/sim/sim_replica.h"

#include <glog/logging.h>

namespace routestatus::sim {

using kubeclient::Route;

// The lease as the status path sees it: every call that may give a lease
// worker something to do wakes the replica's parked fibers (production code
// notifies a condition variable the simulation cannot see).
class Replica::KickingLease final : public lease::WriteLease {
 public:
  KickingLease(lease::BackoffWriteLease& lease, WakeGroup& group) : lease_(lease), group_(group) {}
  void Try(const std::string& key, lease::Work work) override {
    lease_.Try(key, std::move(work));
    group_.Kick();
  }
  void Extend(const std::string& key, lease::EntryWriter writer) override {
    lease_.Extend(key, writer);
    group_.Kick();
  }
  void Remove(const std::string& key) override {
    lease_.Remove(key);
    group_.Kick();
  }
  lease::LeaseState State() const override { return lease_.State(); }

 private:
  lease::BackoffWriteLease& lease_;
  WakeGroup& group_;
};

Replica::Replica(Scheduler& scheduler, SimApi& api, std::mt19937_64& rng, ReplicaSpec spec)
    : scheduler_(scheduler), spec_(std::move(spec)) {
  clock_ = std::make_unique<SkewedClock>(scheduler_.clock(), spec_.wall_skew);
  const Clock& clock = *clock_;
  auto sim_client = std::make_unique<SimClient>(scheduler_, api, rng, spec_.id, spec_.delays);
  client_ = sim_client.get();
  client_->set_send_writes_twice(spec_.send_writes_twice);
  registry_ = std::make_unique<prometheus::Registry>();
  reachability_ = std::make_unique<cmd::ApiReachability>(
      clock, cmd::ApiReachability::Options{"simulated API server"});
  api_client_ = std::make_unique<cmd::InstrumentedKubeClient>(std::move(sim_client), *registry_,
                                                              reachability_.get());
  routes_ = std::make_unique<kubeclient::cache::RouteInformer>(*api_client_, clock,
                                                               spec_.route_informer);
  namespaces_ = std::make_unique<kubeclient::cache::NamespaceInformer>(*api_client_, clock,
                                                                       spec_.namespace_informer);
  queue_ = std::make_unique<SimQueue>(scheduler_);
  lease_ = std::make_unique<lease::BackoffWriteLease>(clock, spec_.lease);
  lease_view_ = std::make_unique<KickingLease>(*lease_, group_);
  tracker_ = std::make_unique<conflict::ContentionTracker>(clock, spec_.tracker);
  gate_ = std::make_unique<controller::TrackerGate>(*tracker_);
  shard_ = std::make_unique<controller::ShardFilter>(spec_.shard, namespaces_.get());
  stats_ = std::make_unique<controller::StatusStats>();
  syncer_ = std::make_unique<controller::StatusSyncer>(spec_.admission, *shard_, *routes_, *api_client_,
                                                       *lease_view_, *gate_, clock, *stats_);
  controller_ = std::make_unique<controller::Controller>(*syncer_, *routes_, namespaces_.get(),
                                                         *shard_, *queue_, *gate_, clock);
  // The wiring of cmd/route-status-controller/controller_app.cc.
  routes_->AddIndex(controller::kRoutesByHostIndex,
                    controller::RoutesByHostIndexFunc(spec_.admission));
  routes_->AddEventHandler(&controller_->route_handler());
  namespaces_->AddEventHandler(&controller_->namespace_handler());
  queue_->SetSyncedProbe([this] { return Synced(); });
  // As controller_app.cc: cut off from the API server (no answer for the
  // grace, 1 s), a leader follows; when it answers again the follower
  // waits anew, the informers' backoffs end, 5xx backoffs end and every
  // route is re-queued.
  reachability_->SetOutageHandler([this] {
    lease_->SetCutOff(true);
    group_.Kick();
  });
  reachability_->SetRecoveryHandler([this] {
    lease_->SetCutOff(false);
    routes_->reflector().ServerAnswersAgain();
    namespaces_->reflector().ServerAnswersAgain();
    syncer_->EndServerErrorBackoffs();
    Resync();
    group_.Kick();
  });

  const std::string name = "replica-" + std::to_string(spec_.id);
  fibers_.push_back(std::make_unique<Fiber>(name + "/informer-routes", &group_,
                                            [this] { routes_->Run(); }));
  fibers_.push_back(std::make_unique<Fiber>(name + "/informer-namespaces", &group_,
                                            [this] { namespaces_->Run(); }));
  for (int i = 0; i < spec_.reconcile_workers; ++i) {
    fibers_.push_back(std::make_unique<Fiber>(name + "/reconcile-" + std::to_string(i), &group_,
                                              [this] { controller_->RunWorker(); }));
  }
  for (int i = 0; i < spec_.lease_workers; ++i) {
    fibers_.push_back(std::make_unique<Fiber>(name + "/lease-" + std::to_string(i), &group_, [this] {
      while (lease_->RunNext()) group_.Kick();  // another worker may wait on this one
    }));
  }
}

Replica::~Replica() { Stop(); }

void Replica::Stop() {
  if (stopped_) return;
  stopped_ = true;
  client_->Close();
  controller_->Stop();
  routes_->Stop();
  namespaces_->Stop();
  queue_->ShutDown();
  lease_->Shutdown();
  group_.Kick();
  // Every fiber is now ready (closed calls fail, waits are kicked): let
  // each reach its end.
  for (int round = 0;; ++round) {
    CHECK(round < 1000) << "replica " << spec_.id << ": threads did not stop";
    bool running = false;
    for (auto& f : fibers_) {
      if (f->finished()) continue;
      running = true;
      auto at = f->WakeTime();
      if (at && *at <= scheduler_.clock().Now()) f->Resume();
    }
    if (!running) break;
    group_.Kick();
  }
  fibers_.clear();
}

void Replica::Resync() {
  if (stopped_) return;
  for (const auto& key : routes_->Keys()) queue_->Add(key);
}

std::vector<Fiber*> Replica::fibers() {
  std::vector<Fiber*> out;
  for (auto& f : fibers_) {
    if (!f->finished()) out.push_back(f.get());
  }
  return out;
}

bool Replica::Synced() const { return routes_->HasSynced() && namespaces_->HasSynced(); }

bool Replica::Quiet() const {
  if (stopped_) return true;
  const lease::LeaseSnapshot s = lease_->Snapshot();
  // Why StartupReported: between the sync and the start-up report (a
  // worker's next poll) the queue is empty although every listed route
  // still waits for its first decision.
  return Synced() && controller_->StartupReported() && queue_->Idle() && s.pending_keys == 0 && s.running_keys == 0 &&
         !client_->InFlight();
}

std::map<std::string, std::string> Replica::CachedVersions(Kind kind) const {
  std::map<std::string, std::string> out;
  if (kind == Kind::kRoute) {
    for (const auto& r : routes_->List()) out[r->Key()] = r->metadata.resource_version;
  } else {
    for (const auto& n : namespaces_->List()) out[n->Key()] = n->metadata.resource_version;
  }
  return out;
}

}  // namespace routestatus::sim
