#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "kubeclient/route.h"

namespace routestatus::controller {

// What the status path needs from the contention tracker (conflict/,
// docs/design.md section 4); TrackerGate adapts the real tracker to it. The
// controller hands over everything a call needs as arguments: no
// implementation may keep "the update being delivered" for a later call
// (which would depend on the order of event handlers and on how a relist
// batches its updates). Implementations must be thread-safe: the informer
// thread calls EntryChanged and Forget, workers call the rest.
class ContentionGate {
 public:
  virtual ~ContentionGate() = default;
  // A watch update (or a relist's update) of `route` changed our router
  // name's entry from `old_entry` to `new_entry` (nullopt: none; not both);
  // the route's UID is the same before and after. `desired` is the entry we
  // compute for `route` now (nullopt: none, the route is outside our
  // shard). Never called for the initial list.
  virtual void EntryChanged(const kubeclient::Route& route,
                            const std::optional<kubeclient::RouteIngress>& old_entry,
                            const std::optional<kubeclient::RouteIngress>& new_entry,
                            const std::optional<kubeclient::RouteIngress>& desired) = 0;
  // A route that already carried our router name's entry when the caches
  // synced (the initial list), with the entry we compute for it now, which
  // differs from it.
  struct ListedEntry {
    std::shared_ptr<const kubeclient::Route> route;
    kubeclient::RouteIngress entry;
    std::optional<kubeclient::RouteIngress> desired;  // set, and not equal to `entry`
  };
  // Once, when the caches have synced and before any reconcile, every such
  // route (none on a restart with every status correct: routes whose entry
  // is what we compute, or that we would have no entry for, tell nothing
  // and are not listed). Lets the gate notice a differently configured
  // router that wrote every route before we listed.
  virtual void EntriesListed(const std::vector<ListedEntry>& listed) { (void)listed; }
  // The route with this UID was deleted.
  virtual void Forget(const std::string& uid) = 0;
  // True when we must not change our existing entry of `uid` now. Not asked
  // when our entry is absent (see IsCreationBlocked). `beyond_view`: the
  // entry we would write differs from the existing one in more than what
  // other objects decide (the host, a rejection of the route's own; its
  // spec changed since the entry was written), so no older view explains
  // keeping the existing one and a block for a view difference does not
  // hold it.
  virtual bool IsChangeContended(const std::string& uid, bool beyond_view) = 0;
  // True when we must not create our entry of `uid` (absent now) yet: the
  // route itself is blocked (another writer removed our entry, a view
  // difference or a fight). The cut-off never blocks a creation, so a new
  // route is always admitted.
  virtual bool IsCreationBlocked(const std::string& uid) {
    (void)uid;
    return false;
  }
  // While a change of `uid` is blocked (IsChangeContended): how long until
  // the block may end and the route should be reconciled again, so that
  // every route a block held is reconciled when it ends; zero when nothing
  // blocks it.
  virtual Duration RecheckAfter(const std::string& uid) {
    (void)uid;
    return Duration::zero();
  }
  // As RecheckAfter, for a creation blocked by IsCreationBlocked: the end
  // of the route's own block (never the cut-off's flush).
  virtual Duration RecheckCreationAfter(const std::string& uid) {
    (void)uid;
    return Duration::zero();
  }
  // A reconcile found our entry of `uid` already what we compute (or none,
  // and we would have none): nothing of ours disagrees with it now.
  virtual void EntryAgrees(const std::string& uid) { (void)uid; }
  // The route's spec changed what an entry states (its host or wildcard
  // policy): a suspicion about its entry (a view difference) was about the
  // old spec and ends, so the new spec's entry is written (or re-created)
  // at once. Counted suspicions and contentions stay.
  virtual void SpecChanged(const std::string& uid) { (void)uid; }
  // After our successful write: `written` is the entry we wrote, or nullopt
  // when we removed it.
  virtual void Clear(const std::string& uid,
                     const std::optional<kubeclient::RouteIngress>& written) = 0;
};

// A gate that never blocks (no tracker). Thread-safe.
class NoContentionGate final : public ContentionGate {
 public:
  void EntryChanged(const kubeclient::Route&, const std::optional<kubeclient::RouteIngress>&,
                    const std::optional<kubeclient::RouteIngress>&,
                    const std::optional<kubeclient::RouteIngress>&) override {}
  void Forget(const std::string&) override {}
  bool IsChangeContended(const std::string&, bool) override { return false; }
  void Clear(const std::string&, const std::optional<kubeclient::RouteIngress>&) override {}
};

}  // namespace routestatus::controller
