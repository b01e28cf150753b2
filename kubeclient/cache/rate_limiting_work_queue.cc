#include "kubeclient/cache/rate_limiting_work_queue.h"

#include <algorithm>
#include <cmath>

#include <glog/logging.h>

namespace routestatus::kubeclient::cache {

RateLimitingWorkQueue::RateLimitingWorkQueue(const Clock& clock)
    : RateLimitingWorkQueue(clock, Options()) {}

RateLimitingWorkQueue::RateLimitingWorkQueue(const Clock& clock, const Options& options)
    : clock_(clock), options_(options), bucket_(clock, options.qps, options.burst) {}

RateLimitingWorkQueue::~RateLimitingWorkQueue() { ShutDownNow(); }

void RateLimitingWorkQueue::AddLocked(const std::string& key, SteadyTime now) {
  if (shutting_down_) return;
  auto [it, inserted] = dirty_.emplace(key, now);
  if (!inserted) return;  // already queued (or queued again after Done)
  ++stats_.adds_total;
  if (options_.observer) options_.observer->OnAdd();
  // Why: a key being processed waits in dirty_ and is queued by Done(), so
  // two workers never hold it at once.
  if (!processing_.count(key)) {
    queue_.push_back(&it->first);
    cv_.notify_one();
  }
}

void RateLimitingWorkQueue::PromoteDueLocked(SteadyTime now) const {
  auto* self = const_cast<RateLimitingWorkQueue*>(this);
  while (!delayed_heap_.empty() && delayed_heap_.top().at <= now) {
    Delayed d = delayed_heap_.top();
    delayed_heap_.pop();
    auto it = delayed_at_.find(d.key);
    if (it == delayed_at_.end() || it->second != d.at) continue;  // superseded entry
    delayed_at_.erase(it);
    self->AddLocked(d.key, now);
  }
}

void RateLimitingWorkQueue::Add(const std::string& key) {
  std::lock_guard<std::mutex> l(mu_);
  AddLocked(key, clock_.Now());
}

void RateLimitingWorkQueue::AddAfterLocked(const std::string& key, Duration delay,
                                           SteadyTime now) {
  if (shutting_down_) return;
  if (delay <= Duration::zero()) {
    AddLocked(key, now);
    return;
  }
  SteadyTime at = now + delay;
  auto it = delayed_at_.find(key);
  if (it != delayed_at_.end() && it->second <= at) return;  // an earlier add is pending
  delayed_at_[key] = at;
  delayed_heap_.push(Delayed{at, seq_++, key});
  cv_.notify_all();  // a waiting Get() may need an earlier deadline
}

void RateLimitingWorkQueue::AddAfter(const std::string& key, Duration delay) {
  std::lock_guard<std::mutex> l(mu_);
  AddAfterLocked(key, delay, clock_.Now());
}

Duration RateLimitingWorkQueue::KeyDelayLocked(const std::string& key) const {
  auto it = requeues_.find(key);
  int n = it == requeues_.end() ? 0 : it->second;
  double d = static_cast<double>(options_.base_delay.count()) * std::pow(2.0, std::min(n, 62));
  d = std::min(d, static_cast<double>(options_.max_delay.count()));
  return Duration(static_cast<int64_t>(d));
}

void RateLimitingWorkQueue::AddRateLimited(const std::string& key) {
  std::lock_guard<std::mutex> l(mu_);
  if (shutting_down_) return;
  SteadyTime now = clock_.Now();
  Duration delay = std::max(KeyDelayLocked(key), bucket_.Reserve());
  ++requeues_[key];
  ++stats_.retries_total;
  if (options_.observer) options_.observer->OnRetry();
  AddAfterLocked(key, delay, now);
}

Duration RateLimitingWorkQueue::PeekRateLimitDelay(const std::string& key) const {
  std::lock_guard<std::mutex> l(mu_);
  return std::max(KeyDelayLocked(key), bucket_.Peek());
}

void RateLimitingWorkQueue::Forget(const std::string& key) {
  std::lock_guard<std::mutex> l(mu_);
  requeues_.erase(key);
}

int RateLimitingWorkQueue::NumRequeues(const std::string& key) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = requeues_.find(key);
  return it == requeues_.end() ? 0 : it->second;
}

bool RateLimitingWorkQueue::DirtyProcessingLocked() const {
  for (const auto& [key, at] : processing_) {
    if (dirty_.count(key)) return true;
  }
  return false;
}

bool RateLimitingWorkQueue::Get(std::string* key) {
  std::unique_lock<std::mutex> l(mu_);
  for (;;) {
    if (stopped_now_) return false;
    SteadyTime now = clock_.Now();
    PromoteDueLocked(now);
    if (!queue_.empty()) {
      *key = *queue_.front();
      queue_.pop_front();
      // Why the node moves from dirty_ to processing_: no allocation and no
      // copy of the key per Get (every route at a start).
      auto node = dirty_.extract(*key);
      Duration latency = now - node.mapped();
      node.mapped() = now;
      auto moved = processing_.insert(std::move(node));
      if (!moved.inserted) moved.position->second = now;  // not expected: Done erases first
      ++stats_.gets_total;
      stats_.queue_latency_sum += latency;
      stats_.queue_latency_max = std::max(stats_.queue_latency_max, latency);
      if (options_.observer) options_.observer->OnGet(latency);
      return true;
    }
    if (shutting_down_ && !DirtyProcessingLocked()) return false;
    SteadyTime deadline = delayed_heap_.empty() ? now + std::chrono::hours(24 * 365)
                                                : delayed_heap_.top().at;
    clock_.WaitUntil(cv_, l, deadline);
  }
}

void RateLimitingWorkQueue::Done(const std::string& key) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = processing_.find(key);
  if (it == processing_.end()) {
    LOG(ERROR) << "work queue: Done(" << key << ") for a key that is not being processed";
    return;
  }
  SteadyTime now = clock_.Now();
  Duration took = now - it->second;
  processing_.erase(it);
  ++stats_.dones_total;
  stats_.work_duration_sum += took;
  if (options_.observer) options_.observer->OnDone(took);
  auto dirty = dirty_.find(key);
  if (dirty != dirty_.end() && !stopped_now_) queue_.push_back(&dirty->first);
  // Why notify_all: a draining Get() may be waiting for this key to finish.
  cv_.notify_all();
}

size_t RateLimitingWorkQueue::Len() const {
  std::lock_guard<std::mutex> l(mu_);
  PromoteDueLocked(clock_.Now());
  return queue_.size();
}

void RateLimitingWorkQueue::ShutDown() {
  std::lock_guard<std::mutex> l(mu_);
  shutting_down_ = true;
  delayed_heap_ = {};
  delayed_at_.clear();
  cv_.notify_all();
}

void RateLimitingWorkQueue::ShutDownNow() {
  std::lock_guard<std::mutex> l(mu_);
  shutting_down_ = true;
  stopped_now_ = true;
  queue_.clear();
  dirty_.clear();
  delayed_heap_ = {};
  delayed_at_.clear();
  cv_.notify_all();
}

bool RateLimitingWorkQueue::ShuttingDown() const {
  std::lock_guard<std::mutex> l(mu_);
  return shutting_down_;
}

WorkQueueStats RateLimitingWorkQueue::Stats() const {
  std::lock_guard<std::mutex> l(mu_);
  PromoteDueLocked(clock_.Now());
  WorkQueueStats s = stats_;
  s.depth = queue_.size();
  s.delayed = delayed_at_.size();
  s.processing = processing_.size();
  return s;
}

}  // namespace routestatus::kubeclient::cache
