#include "test/sim/sim_queue.h"

#include <glog/logging.h>

#include "test/sim/fiber.h"

namespace routestatus::sim {

void SimQueue::Add(const std::string& key) {
  if (shut_down_ || !dirty_.insert(key).second) return;
  if (processing_.count(key) > 0) return;  // queued again at Done
  queue_.push_back(key);
}

void SimQueue::AddAfter(const std::string& key, Duration delay) {
  ++delayed_;
  scheduler_.After(delay, [this, alive = alive_, key] {
    if (!*alive) return;
    --delayed_;
    Add(key);
  });
}

bool SimQueue::Get(std::string* key) {
  while (queue_.empty() && !shut_down_) {
    Fiber* fiber = Fiber::Current();
    CHECK(fiber != nullptr) << "SimQueue::Get waits on a fiber";
    fiber->Park([this]() -> std::optional<SteadyTime> {
      if (!queue_.empty() || shut_down_) return SteadyTime{};
      return std::nullopt;
    });
  }
  if (shut_down_) return false;
  *key = std::move(queue_.front());
  queue_.pop_front();
  dirty_.erase(*key);
  processing_.insert(*key);
  ++gets_;
  if (synced_ && !synced_()) ++gets_before_sync_;
  return true;
}

void SimQueue::Done(const std::string& key) {
  processing_.erase(key);
  if (dirty_.count(key) > 0 && !shut_down_) queue_.push_back(key);
}

}  // namespace routestatus::sim
