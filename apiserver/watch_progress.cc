#include "apiserver/watch_progress.h"

#include <algorithm>

namespace routestatus::apiserver {

WatchProgress::WatchProgress(const Clock& clock, Duration progress_notify_interval)
    : clock_(clock), interval_(progress_notify_interval), last_tick_(clock.Now()) {}

void WatchProgress::CatchUp(uint64_t global_rv) {
  if (interval_.count() <= 0) return;
  const SteadyTime now = clock_.Now();
  if (now - last_tick_ < interval_) return;
  const auto ticks = (now - last_tick_) / interval_;
  last_tick_ += ticks * interval_;
  for (auto& [name, resource] : resources_) {
    // Why: etcd elides a watch's notification when it sent events since the
    // last one; a second notification in the same catch-up saw none (every
    // event catches up first), so it reaches the busy ones too.
    if (!resource.busy || ticks >= 2) resource.processed = std::max(resource.processed, global_rv);
    resource.busy = false;
  }
  notified_rv_ = std::max(notified_rv_, global_rv);
}

void WatchProgress::OnEvent(const std::string& resource, uint64_t rv) {
  Resource& r = resources_[resource];
  r.processed = std::max(r.processed, rv);
  r.busy = true;
}

void WatchProgress::Restart(uint64_t global_rv) {
  resources_.clear();
  notified_rv_ = 0;
  start_rv_ = global_rv;
  last_tick_ = clock_.Now();
}

uint64_t WatchProgress::LastProcessed(const std::string& resource) const {
  auto it = resources_.find(resource);
  // Why: a resource without events since the cache started heard only the
  // notifications, which reach every quiet watch.
  return it == resources_.end() ? notified_rv_ : it->second.processed;
}

uint64_t WatchProgress::CacheRv(const std::string& resource) const {
  return std::max(LastProcessed(resource), start_rv_);
}

}  // namespace routestatus::apiserver
