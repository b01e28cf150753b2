#pragma once

#include <mutex>
#include <optional>
#include <string>

#include "conflict/contention_tracker.h"
#include "controller/contention_gate.h"
#include "controller/status_syncer.h"
#include "kubeclient/cache/store.h"
#include "kubeclient/route.h"

namespace routestatus::controller {

// Adapts the real conflict::ContentionTracker to the controller's
// ContentionGate. The gate's Changed(uid, entry) carries neither the old
// entry nor the entry we would write now, which the tracker needs; so this
// class is also a route EventHandler that must be registered with the route
// informer *before* the controller's handler: it remembers the update being
// delivered (handlers run one at a time, in registration order, on the
// informer thread), and Changed() reads the old entry and computes `desired`
// from it. Deletes make the tracker forget the UID.
//
// Thread-safe. The tracker (and the syncer passed to SetSyncer) must outlive
// the gate.
class TrackerGate final : public ContentionGate,
                          public kubeclient::cache::EventHandler<kubeclient::Route> {
 public:
  TrackerGate(conflict::ContentionTracker& tracker, std::string router_name);
  // The syncer computes `desired`; without one, only the tracker's `last`
  // tells our writes from theirs. Call before the informer starts.
  void SetSyncer(const StatusSyncer* syncer) { syncer_ = syncer; }

  // EventHandler<Route> (register first).
  void OnAdd(const Ptr& obj, bool initial_list) override;
  void OnUpdate(const Ptr& old_obj, const Ptr& new_obj) override;
  void OnDelete(const Ptr& last) override;

  // ContentionGate.
  void Changed(const std::string& uid, const kubeclient::RouteIngress& entry) override;
  void Appeared(const std::string& uid, const kubeclient::RouteIngress& entry) override;
  bool IsChangeContended(const std::string& uid) override;
  void Clear(const std::string& uid,
             const std::optional<kubeclient::RouteIngress>& written) override;

 private:
  conflict::ContentionTracker& tracker_;
  const std::string router_name_;
  const StatusSyncer* syncer_ = nullptr;
  std::mutex mu_;
  Ptr old_;  // GUARDED_BY(mu_): the update being delivered
  Ptr new_;  // GUARDED_BY(mu_)
};

}  // namespace routestatus::controller
