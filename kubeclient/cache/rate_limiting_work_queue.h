#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <queue>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "base/clock.h"
#include "base/token_bucket.h"
#include "kubeclient/cache/work_queue.h"

namespace routestatus::kubeclient::cache {

// Counters of a work queue, for metrics. Value type.
struct WorkQueueStats {
  size_t depth = 0;            // keys ready to be handed out
  size_t delayed = 0;          // keys waiting for their AddAfter time
  size_t processing = 0;       // keys handed out and not yet Done()
  uint64_t adds_total = 0;     // Add() calls that queued a key (after dedupe)
  uint64_t retries_total = 0;  // AddRateLimited() calls
  uint64_t gets_total = 0;
  Duration queue_latency_sum{0};  // queued -> handed out, summed over gets
  Duration queue_latency_max{0};
  Duration work_duration_sum{0};  // handed out -> Done(), summed over dones
  uint64_t dones_total = 0;
};

// Optional per-event hook so metrics code can fill histograms (e.g. with
// prometheus-cpp) without this library depending on Prometheus. Called with
// the queue's lock held: implementations must be quick and must not call
// back into the queue.
class WorkQueueObserver {
 public:
  virtual ~WorkQueueObserver() = default;
  virtual void OnAdd() {}
  virtual void OnRetry() {}
  virtual void OnGet(Duration queue_latency) { (void)queue_latency; }
  virtual void OnDone(Duration work_duration) { (void)work_duration; }
};

// The controller's work queue (see WorkQueueInterface for the promises),
// driven by an injected Clock: delayed keys become ready when the clock
// passes their time, and a blocked Get() wakes through Clock::WaitUntil.
// AddRateLimited delays a key by max(per-key backoff, token bucket): the
// per-key delay is base * 2^(requeues) capped at max_delay; the bucket
// allows `qps` keys per second with bursts of `burst`. Thread-safe.
class RateLimitingWorkQueue final : public WorkQueueInterface {
 public:
  struct Options {
    Duration base_delay = std::chrono::milliseconds(5);
    Duration max_delay = std::chrono::seconds(300);
    double qps = 10.0;  // <= 0 disables the bucket
    int burst = 100;
    WorkQueueObserver* observer = nullptr;  // not owned; may be null
  };

  explicit RateLimitingWorkQueue(const Clock& clock);
  RateLimitingWorkQueue(const Clock& clock, const Options& options);
  ~RateLimitingWorkQueue() override;

  void Add(const std::string& key) override;
  // Adds `key` once `delay` has passed (at the earliest of pending delays).
  void AddAfter(const std::string& key, Duration delay) override;
  void AddRateLimited(const std::string& key) override;
  void Forget(const std::string& key) override;
  int NumRequeues(const std::string& key) const override;
  bool Get(std::string* key) override;
  void Done(const std::string& key) override;
  // Keys ready to be handed out (delayed keys whose time has come count).
  size_t Len() const override;
  // Stops accepting adds; Get() keeps handing out queued keys (and keys
  // re-added while processing) and returns false once none are left.
  // Delayed keys that are not yet due are dropped.
  void ShutDown() override;
  // Stops at once: queued keys are dropped, blocked and later Get()s return
  // false. Done() stays valid for keys being processed.
  void ShutDownNow();
  bool ShuttingDown() const;
  // The delay AddRateLimited would use for `key` now, without using it.
  // Test helper; thread-safe.
  Duration PeekRateLimitDelay(const std::string& key) const;
  WorkQueueStats Stats() const;

 private:
  struct Delayed {
    SteadyTime at;
    uint64_t seq;
    std::string key;
    bool operator>(const Delayed& o) const { return at != o.at ? at > o.at : seq > o.seq; }
  };

  // REQUIRES: mu_ is held.
  void AddLocked(const std::string& key, SteadyTime now);
  void AddAfterLocked(const std::string& key, Duration delay, SteadyTime now);
  void PromoteDueLocked(SteadyTime now) const;
  Duration KeyDelayLocked(const std::string& key) const;
  bool DirtyProcessingLocked() const;

  const Clock& clock_;
  const Options options_;
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  // Why mutable: Len() and Stats() promote due delayed keys so that what
  // they report matches what Get() would do now.
  // Keys ready to be handed out, in order: each is the key of its dirty_
  // node (every queued key is dirty; an unordered_map never moves its
  // nodes). Why not copies: the initial list queues every route, and a
  // copy of each "namespace/name" cost ~56 bytes per route at the start's
  // peak. GUARDED_BY(mu_)
  mutable std::deque<const std::string*> queue_;
  mutable std::unordered_map<std::string, SteadyTime> dirty_;   // queued key -> queued at
  std::unordered_map<std::string, SteadyTime> processing_;     // key -> handed out at
  mutable std::priority_queue<Delayed, std::vector<Delayed>, std::greater<Delayed>> delayed_heap_;
  mutable std::unordered_map<std::string, SteadyTime> delayed_at_;  // earliest due time per key
  uint64_t seq_ = 0;
  std::unordered_map<std::string, int> requeues_;
  TokenBucket bucket_;  // the overall retry rate (thread-safe itself)
  bool shutting_down_ = false;
  bool stopped_now_ = false;
  mutable WorkQueueStats stats_;
};

// The name the rest of the code base uses.
using WorkQueue = RateLimitingWorkQueue;

}  // namespace routestatus::kubeclient::cache
