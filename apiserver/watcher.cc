#include "apiserver/watcher.h"

#include <glog/logging.h>

namespace routestatus::apiserver {

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

bool Watcher::Wait(kubeclient::SteadyTime deadline, std::deque<WatchRecord>* out) {
  std::unique_lock<std::mutex> lock(mu_);
  while (queue_.empty() && !closed_ && clock_.Now() < deadline) {
    clock_.WaitUntil(cv_, lock, deadline);
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
