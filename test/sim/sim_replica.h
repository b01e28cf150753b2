#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "conflict/contention_tracker.h"
#include "controller/admission.h"
#include "controller/contention_gate.h"
#include "controller/controller.h"
#include "controller/shard.h"
#include "controller/status_stats.h"
#include "controller/status_syncer.h"
#include "controller/tracker_gate.h"
#include "kubeclient/cache/store.h"
#include "kubeclient/cache/work_queue.h"
#include "lease/backoff_write_lease.h"
#include "test/sim/sim_api.h"
#include "test/sim/sim_clock.h"

namespace routestatus::sim {

using RoutePtr = std::shared_ptr<const kubeclient::Route>;

// A replica's informer cache: routes by key with the controller's
// "routes by host" index. The simulation is the informer: it applies list
// and watch events with Upsert/Erase. Not thread-safe.
class SimStore final : public kubeclient::cache::ObjectStore<kubeclient::Route> {
 public:
  explicit SimStore(kubeclient::cache::IndexFunc<kubeclient::Route> by_host)
      : by_host_(std::move(by_host)) {}

  Ptr Get(const std::string& key) const override;
  std::vector<Ptr> List() const override;
  std::vector<Ptr> ByIndex(const std::string& index, const std::string& value) const override;
  bool HasSynced() const override { return synced_; }

  // Returns the previous object (nullptr when new).
  Ptr Upsert(Ptr obj);
  Ptr Erase(const std::string& key);
  void SetSynced() { synced_ = true; }
  const std::map<std::string, Ptr>& objects() const { return objects_; }

 private:
  void Index(const Ptr& obj, bool add);

  kubeclient::cache::IndexFunc<kubeclient::Route> by_host_;
  std::map<std::string, Ptr> objects_;
  std::map<std::string, std::set<std::string>> hosts_;  // host -> keys
  bool synced_ = false;
};

// A FIFO of unique keys that never blocks: Get returns false when empty.
// Delayed adds go through `after`, the simulation's scheduler. Not
// thread-safe.
class SimQueue final : public kubeclient::cache::WorkQueueInterface {
 public:
  using After = std::function<void(kubeclient::Duration, std::function<void()>)>;
  explicit SimQueue(After after) : after_(std::move(after)) {}

  void Add(const std::string& key) override;
  void AddAfter(const std::string& key, kubeclient::Duration delay) override;
  void AddRateLimited(const std::string& key) override { Add(key); }
  void Forget(const std::string&) override {}
  int NumRequeues(const std::string&) const override { return 0; }
  bool Get(std::string* key) override;
  void Done(const std::string&) override {}
  size_t Len() const override { return keys_.size(); }
  void ShutDown() override { shut_down_ = true; }

 private:
  After after_;
  std::deque<std::string> keys_;
  std::set<std::string> queued_;
  bool shut_down_ = false;
};

// Everything one replica's process owns, built fresh at each (re)start.
struct ReplicaSpec {
  int id = 0;        // writer id in the model
  int config = 0;    // which configuration (fights have two)
  controller::AdmissionOptions admission;
  controller::ShardOptions shard;
  lease::WriteLeaseOptions lease;
  conflict::ContentionTrackerOptions tracker;
};

// One router replica running the real controller glue, status syncer,
// BackoffWriteLease and ContentionTracker against the model, with a
// simulated informer and work queue. Not thread-safe.
class Replica {
 public:
  Replica(const SimClock& clock, SimApi& api, ReplicaSpec spec, SimQueue::After after);
  ~Replica();
  Replica(const Replica&) = delete;
  Replica& operator=(const Replica&) = delete;

  // The initial list: fills the cache from `list` and reconciles every key.
  void Start(const std::vector<RoutePtr>& list);
  // One watch event: updates the cache, calls the handlers, reconciles.
  void Deliver(const ModelEvent& event);
  // A periodic resync: reconciles every cached key.
  void Resync();
  // Reconciles queued keys, then runs the lease's due work.
  int Run();
  std::optional<kubeclient::SteadyTime> NextDue() const { return lease_->NextDue(); }

  const ReplicaSpec& spec() const { return spec_; }
  lease::LeaseState LeaseState() const { return lease_->State(); }
  lease::LeaseSnapshot LeaseStats() const { return lease_->Snapshot(); }
  conflict::ContentionSnapshot TrackerStats() const { return tracker_->Snapshot(); }
  const SimStore& store() const { return *store_; }
  const controller::StatusStats& stats() const { return *stats_; }

 private:
  void Drain();

  const SimClock& clock_;
  ReplicaSpec spec_;
  ReplicaClient client_;
  std::unique_ptr<SimStore> store_;
  std::unique_ptr<SimQueue> queue_;
  std::unique_ptr<lease::BackoffWriteLease> lease_;
  std::unique_ptr<conflict::ContentionTracker> tracker_;
  std::unique_ptr<controller::TrackerGate> gate_;
  std::unique_ptr<controller::ShardFilter> shard_;
  std::unique_ptr<controller::StatusStats> stats_;
  std::unique_ptr<controller::StatusSyncer> syncer_;
  std::unique_ptr<controller::Controller> controller_;
};

}  // namespace routestatus::sim
