#pragma once

#include <optional>
#include <string>
#include <vector>

#include "conflict/contention_tracker.h"
#include "controller/contention_gate.h"
#include "kubeclient/route.h"

namespace routestatus::controller {

// Adapts the real conflict::ContentionTracker to the controller's
// ContentionGate: an entry that changed is reported to the tracker with its
// old value, its new value and the entry we compute (all from the call's
// arguments); a created entry as Appeared, a removed one as Removed; a
// deleted route is forgotten.
//
// Thread-safe. The tracker must outlive the gate.
class TrackerGate final : public ContentionGate {
 public:
  explicit TrackerGate(conflict::ContentionTracker& tracker) : tracker_(tracker) {}

  void EntryChanged(const kubeclient::Route& route,
                    const std::optional<kubeclient::RouteIngress>& old_entry,
                    const std::optional<kubeclient::RouteIngress>& new_entry,
                    const std::optional<kubeclient::RouteIngress>& desired) override;
  // Each listed entry that differs from ours is reported to the tracker as
  // Listed, with its newest lastTransitionTime as the time it was written
  // (none: not reported), unless it does not fit the route's current spec:
  // an explicit host or the wildcard policy differs (written for an older
  // spec). An entry of a route without spec.host whose host alone differs
  // is ambiguous: another hostname template, or a spec.host cleared since
  // it was written. So is an entry written just before we started (the
  // tracker's listed_recent): a live router started with us, or a previous
  // configuration of ours. Those are reported only when more than the
  // tracker's limit of them were listed: one or a few are explained by
  // spec changes or a configuration that just stopped, and overwriting them
  // stays within a fight's bound anyway; many at once are a router
  // configured differently.
  void EntriesListed(const std::vector<ListedEntry>& listed) override;
  void Forget(const std::string& uid) override { tracker_.Forget(uid); }
  bool IsChangeContended(const std::string& uid, bool beyond_view) override {
    return tracker_.IsChangeContended(uid, beyond_view);
  }
  bool IsCreationBlocked(const std::string& uid) override {
    return tracker_.IsCreationBlocked(uid);
  }
  Duration RecheckAfter(const std::string& uid) override {
    return tracker_.RecheckAfter(uid);
  }
  Duration RecheckCreationAfter(const std::string& uid) override {
    return tracker_.RecheckCreationAfter(uid);
  }
  void EntryAgrees(const std::string& uid) override { tracker_.Agreed(uid); }
  void SpecChanged(const std::string& uid) override { tracker_.Agreed(uid); }
  void Clear(const std::string& uid,
             const std::optional<kubeclient::RouteIngress>& written) override {
    tracker_.Clear(uid, written);
  }

 private:
  conflict::ContentionTracker& tracker_;
};

}  // namespace routestatus::controller
