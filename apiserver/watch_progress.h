#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "base/clock.h"

namespace routestatus::apiserver {

// How far kube-apiserver's watch cache of each resource type has got: the
// version its bookmarks carry (k8s.io/apiserver pkg/storage/cacher:
// dispatchEvents' lastProcessedResourceVersion) and the version a watch
// from "0" starts at (watchCache.resourceVersion). Both move with that
// resource's own events only, and with etcd's progress notifications,
// which bring them to etcd's current revision: every
// `progress_notify_interval` (etcd's default: 10 minutes), to every
// resource whose etcd watch had no event since the previous notification
// (etcd elides the notification of a watch that just sent events).
// Progress notifications are computed when asked, from the clock: no thread.
// Not thread-safe: the ObjectStore calls it under its lock.
class WatchProgress {
 public:
  // `progress_notify_interval` zero: never a progress notification.
  WatchProgress(const Clock& clock, Duration progress_notify_interval);

  // Delivers the progress notifications due by now, given etcd's current
  // revision `global_rv`. Call before OnEvent and before reading, so that
  // each notification sees the revision of its own moment.
  void CatchUp(uint64_t global_rv);
  // An event of `resource` (its GroupResource) at `rv` reached the watchers.
  void OnEvent(const std::string& resource, uint64_t rv);
  // A fresh watch cache over etcd at `global_rv` (kube-apiserver restarted):
  // nothing processed, no bookmark until an event or a notification, whose
  // interval starts again now.
  void Restart(uint64_t global_rv);

  // The version a bookmark of `resource` carries now; 0 = none yet (kube
  // sends no bookmark before the cache processed an event or notification).
  uint64_t LastProcessed(const std::string& resource) const;
  // The version of the watch cache's state of `resource`: what initial
  // events of a watch from "0" are stamped with.
  uint64_t CacheRv(const std::string& resource) const;

 private:
  struct Resource {
    uint64_t processed = 0;
    bool busy = false;  // an event since the last notification
  };

  const Clock& clock_;
  const Duration interval_;
  std::map<std::string, Resource> resources_;
  SteadyTime last_tick_;
  uint64_t notified_rv_ = 0;  // revision at the last notification; 0 = none
  uint64_t start_rv_ = 0;     // revision the cache was filled at
};

}  // namespace routestatus::apiserver
