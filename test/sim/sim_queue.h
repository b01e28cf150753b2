#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <set>
#include <string>

#include "kubeclient/cache/work_queue.h"
#include "test/sim/scheduler.h"

namespace routestatus::sim {

// The controller's work queue in the simulation: the WorkQueueInterface
// promises (dedupe; a key is never handed to two workers at once; a key
// added while processed is queued again at Done) with Get() parking the
// calling fiber until a key is ready. Delayed adds go through the
// scheduler. Not thread-safe (one thread runs at a time).
class SimQueue final : public kubeclient::cache::WorkQueueInterface {
 public:
  explicit SimQueue(Scheduler& scheduler) : scheduler_(scheduler) {}
  ~SimQueue() override { *alive_ = false; }

  void Add(const std::string& key) override;
  void AddAfter(const std::string& key, Duration delay) override;
  void AddRateLimited(const std::string& key) override { Add(key); }
  void Forget(const std::string&) override {}
  int NumRequeues(const std::string&) const override { return 0; }
  bool Get(std::string* key) override;
  void Done(const std::string& key) override;
  size_t Len() const override { return queue_.size(); }
  void ShutDown() override { shut_down_ = true; }

  // Why the delayed adds too: a key re-queued for later (a suspect route's
  // recheck) is work still to come.
  bool Idle() const { return queue_.empty() && processing_.empty() && delayed_ == 0; }
  // Counts the keys handed out while `synced` said false (a worker that
  // reconciles, or spins, before the caches are complete).
  void SetSyncedProbe(std::function<bool()> synced) { synced_ = std::move(synced); }
  int64_t gets() const { return gets_; }
  int64_t gets_before_sync() const { return gets_before_sync_; }

 private:
  Scheduler& scheduler_;
  std::deque<std::string> queue_;
  std::set<std::string> dirty_;
  std::set<std::string> processing_;
  bool shut_down_ = false;
  int delayed_ = 0;  // AddAfter calls not yet due
  std::function<bool()> synced_;
  int64_t gets_ = 0;
  int64_t gets_before_sync_ = 0;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace routestatus::sim
