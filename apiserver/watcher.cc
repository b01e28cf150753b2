#include "apiserver/watcher.h"

#include <glog/logging.h>

namespace routestatus::apiserver {

namespace {
constexpr size_t kBatch = 64;
}  // namespace

void Watcher::Push(WatchRecord record) {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return;
  if (queue_.size() >= capacity_) {
    LOG(WARNING) << "watch of " << resource_.resource << " fell behind (" << capacity_
                 << " events queued); closing it";
    closed_ = true;
    queue_.clear();
  } else {
    queue_.push_back(std::move(record));
    // Why: wake the reader only when it has something new to do; a
    // lingering reader is woken once a full batch is ready.
    if (queue_.size() != 1 && queue_.size() != kBatch) return;
  }
  cv_.notify_all();
}

void Watcher::Close() {
  std::lock_guard<std::mutex> lock(mu_);
  closed_ = true;
  cv_.notify_all();
}

bool Watcher::closed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return closed_;
}

bool Watcher::Empty() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.empty();
}

bool Watcher::Wait(SteadyTime deadline, std::deque<WatchRecord>* out) {
  std::unique_lock<std::mutex> lock(mu_);
  while (queue_.empty() && !closed_ && clock_.Now() < deadline) {
    clock_.WaitUntil(cv_, lock, deadline);
  }
  if (!queue_.empty() && linger_.count() > 0 && !closed_) {
    // Why: real time on purpose: lingering is a batching optimisation of a
    // few milliseconds, and must not stall under a fake clock.
    cv_.wait_for(lock, linger_, [this] { return queue_.size() >= kBatch || closed_; });
  }
  if (!queue_.empty()) {
    while (!queue_.empty()) {
      out->push_back(std::move(queue_.front()));
      queue_.pop_front();
    }
    return true;
  }
  return !closed_;
}

}  // namespace routestatus::apiserver
