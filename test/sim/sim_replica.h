#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <prometheus/registry.h>

#include "cmd/route-status-controller/api_metrics.h"
#include "cmd/route-status-controller/api_reachability.h"
#include "conflict/contention_tracker.h"
#include "controller/admission.h"
#include "controller/controller.h"
#include "controller/shard.h"
#include "controller/status_stats.h"
#include "controller/status_syncer.h"
#include "controller/tracker_gate.h"
#include "kubeclient/cache/informer.h"
#include "lease/backoff_write_lease.h"
#include "test/sim/fiber.h"
#include "test/sim/scheduler.h"
#include "test/sim/sim_api.h"
#include "test/sim/sim_clock.h"
#include "test/sim/sim_queue.h"

namespace routestatus::sim {

// Everything one replica's process is configured with, fixed across its
// restarts (each restart gets fresh seeds).
struct ReplicaSpec {
  int id = 0;      // writer id in the model
  int config = 0;  // which configuration (fights have two)
  controller::AdmissionOptions admission;
  controller::ShardOptions shard;
  lease::WriteLeaseOptions lease;
  conflict::ContentionTrackerOptions tracker;
  kubeclient::cache::InformerOptions route_informer;
  kubeclient::cache::InformerOptions namespace_informer;
  int reconcile_workers = 1;
  int lease_workers = 2;
  ClientDelays delays;
  // How far this replica's wall clock is off (perturbation; 0: exact).
  Duration wall_skew = Duration::zero();
  // Mutation (test only, SimOptions::mutant): every status write is sent
  // twice (SimClient::set_send_writes_twice).
  bool send_writes_twice = false;
};

// One router replica: the real informers (Reflector, IndexedStore) on the
// simulated API, the real Controller, StatusSyncer, BackoffWriteLease,
// ContentionTracker and TrackerGate wired as cmd/ wires them, with their
// threads (informers, reconcile workers, lease workers) as fibers that the
// simulation's scheduler resumes. Only the work queue is the simulation's
// (SimQueue). Not thread-safe: the main thread drives it.
class Replica {
 public:
  Replica(Scheduler& scheduler, SimApi& api, std::mt19937_64& rng, ReplicaSpec spec);
  // Stops (a crash) if still running.
  ~Replica();
  Replica(const Replica&) = delete;
  Replica& operator=(const Replica&) = delete;

  // A crash: closes the connection (PUTs already sent are still applied),
  // stops every thread and lets the fibers end.
  void Stop();
  // A periodic resync: re-queues every cached route.
  void Resync();
  // A network partition until `until` (SimClient::Partition): the replica
  // runs on, and nothing it sends is answered meanwhile.
  void Partition(SteadyTime until) { client_->Partition(until); }

  // The fibers to schedule (empty once stopped).
  std::vector<Fiber*> fibers();
  // Nothing queued, running or in flight, and both caches synced.
  bool Quiet() const;
  bool Synced() const;

  const ReplicaSpec& spec() const { return spec_; }
  lease::LeaseState LeaseState() const { return lease_->State(); }
  lease::LeaseSnapshot LeaseStats() const { return lease_->Snapshot(); }
  conflict::ContentionSnapshot TrackerStats() const { return tracker_->Snapshot(); }
  const controller::StatusStats& stats() const { return *stats_; }
  // The status syncer's record of writes whose echo is not seen yet.
  size_t OwnWriteRecords() const { return syncer_->own_write_records(); }
  const SimQueue& queue() const { return *queue_; }
  kubeclient::cache::InformerStats InformerStats(Kind kind) const {
    return kind == Kind::kRoute ? routes_->Stats() : namespaces_->Stats();
  }
  // Key -> resourceVersion of every cached object.
  std::map<std::string, std::string> CachedVersions(Kind kind) const;

 private:
  class KickingLease;

  Scheduler& scheduler_;
  ReplicaSpec spec_;
  WakeGroup group_;
  std::unique_ptr<SkewedClock> clock_;  // before everything that uses it
  // The binary's client stack: the simulated connection inside cmd/'s
  // InstrumentedKubeClient, which feeds ApiReachability (the cut-off and
  // recovery wiring of controller_app.cc).
  std::unique_ptr<prometheus::Registry> registry_;
  std::unique_ptr<cmd::ApiReachability> reachability_;
  std::unique_ptr<cmd::InstrumentedKubeClient> api_client_;
  SimClient* client_ = nullptr;  // owned by api_client_
  std::unique_ptr<kubeclient::cache::RouteInformer> routes_;
  std::unique_ptr<kubeclient::cache::NamespaceInformer> namespaces_;
  std::unique_ptr<SimQueue> queue_;
  std::unique_ptr<lease::BackoffWriteLease> lease_;
  std::unique_ptr<KickingLease> lease_view_;
  std::unique_ptr<conflict::ContentionTracker> tracker_;
  std::unique_ptr<controller::TrackerGate> gate_;
  std::unique_ptr<controller::ShardFilter> shard_;
  std::unique_ptr<controller::StatusStats> stats_;
  std::unique_ptr<controller::StatusSyncer> syncer_;
  std::unique_ptr<controller::Controller> controller_;
  std::vector<std::unique_ptr<Fiber>> fibers_;
  bool stopped_ = false;
};

}  // namespace routestatus::sim
