#include "controller/tracker_gate.h"

namespace routestatus::controller {

void TrackerGate::EntryChanged(const kubeclient::Route& route,
                               const std::optional<kubeclient::RouteIngress>& old_entry,
                               const kubeclient::RouteIngress& new_entry,
                               const std::optional<kubeclient::RouteIngress>& desired) {
  const kubeclient::RouteIngress* want = desired ? &*desired : nullptr;
  if (old_entry) {
    tracker_.Changed(route.metadata.uid, route.Key(), *old_entry, new_entry, want);
  } else {
    tracker_.Appeared(route.metadata.uid, route.Key(), new_entry, want);
  }
}

}  // namespace routestatus::controller
