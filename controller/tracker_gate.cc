#include "controller/tracker_gate.h"

#include "controller/desired_status.h"

namespace routestatus::controller {

void TrackerGate::EntryChanged(const kubeclient::Route& route,
                               const std::optional<kubeclient::RouteIngress>& old_entry,
                               const std::optional<kubeclient::RouteIngress>& new_entry,
                               const std::optional<kubeclient::RouteIngress>& desired) {
  const kubeclient::RouteIngress* want = desired ? &*desired : nullptr;
  if (!new_entry) {
    if (old_entry) tracker_.Removed(route.metadata.uid, route.Key(), *old_entry, want);
    return;
  }
  // Why no desired counts as a view difference: "outside our shard" may come
  // from namespace labels our cache has not caught up with yet.
  const auto difference = !desired || DiffersOnlyInView(*desired, *new_entry)
                              ? conflict::ContentionTracker::Difference::kView
                              : conflict::ContentionTracker::Difference::kConfiguration;
  if (old_entry) {
    tracker_.Changed(route.metadata.uid, route.Key(), *old_entry, *new_entry, want, difference);
  } else {
    tracker_.Appeared(route.metadata.uid, route.Key(), *new_entry, want, difference);
  }
}

}  // namespace routestatus::controller
