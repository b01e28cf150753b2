#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kubeclient/route.h"

namespace routestatus::controller {

// The start-up report's decisions (Controller::ReportListedEntries) for the
// routes whose entry of ours was already the one we compute, kept so that
// the first reconcile of each such route reuses the decision instead of
// deciding the route a second time. Why: a restart with every status
// correct decided every route twice (the report, then the reconcile), ~20%
// of its CPU.
//
// A decision is reused only while it is exactly what deciding again would
// give: for the very cached object it was made for (the route unchanged),
// and while neither cache changed since the report read them (the decision
// also reads the other routes' host claims and, with a namespace selector,
// namespace labels). Every route or namespace event calls Invalidate()
// before its handler queues anything, which forgets every decision; a
// report that raced with an event installs nothing. The time does not
// matter: only entries equal to the decision's (lastTransitionTime aside)
// are kept. Each decision is taken once; the table is freed when the last
// is taken or on the first event.
//
// Thread-safe.
class ListedDecisions {
 private:
  // Compact: a pointer and two small numbers per route (~24 bytes).
  struct Kept {
    // The route object the decision was made for; held, so that its
    // address is not reused while the decision is kept.
    std::shared_ptr<const kubeclient::Route> route;
    uint16_t reason = 0;  // index into the reasons
    bool admitted = false;
    bool taken = false;
  };

 public:
  // The decisions of one report, built up route by route. Value type.
  class Batch {
   public:
    // `route`'s decision: admitted, or rejected with `reason`
    // (AdmissionDecision::reason).
    void Add(std::shared_ptr<const kubeclient::Route> route, bool admitted,
             std::string_view reason);
    size_t size() const { return kept_.size(); }
    // Room for `n` decisions. Why: growing by doubling held up to twice
    // the table (and a copy while it moved) at the restart's peak.
    void Reserve(size_t n) { kept_.reserve(n); }

   private:
    friend class ListedDecisions;
    std::vector<Kept> kept_;
    std::vector<std::string> reasons_;  // the distinct reasons
  };

  // What Take returns.
  struct Taken {
    bool admitted = false;
    std::string reason;
  };

  // The count Install compares; read it before reading the caches.
  uint64_t generation() const;
  // A cache changed: forgets every kept decision.
  void Invalidate();
  // Keeps `batch`, made from caches read after generation() returned
  // `generation`; does nothing when an Invalidate() came in between.
  void Install(uint64_t generation, Batch batch);
  // The kept decision for `route` (the object now cached), once; nullopt
  // when there is none (not reported, already taken, or invalidated).
  std::optional<Taken> Take(const kubeclient::Route* route);
  // Decisions kept and not yet taken (tests).
  size_t size() const;

 private:
  void ClearLocked();  // REQUIRES: mu_ is held

  mutable std::mutex mu_;
  uint64_t generation_ = 0;          // GUARDED_BY(mu_)
  std::vector<Kept> kept_;           // sorted by route.get(); GUARDED_BY(mu_)
  std::vector<std::string> reasons_; // the distinct reasons; GUARDED_BY(mu_)
  size_t left_ = 0;                  // kept_ not yet taken; GUARDED_BY(mu_)
  // left_ > 0, readable without mu_. Why: once the start-up decisions are
  // used up, every later reconcile would otherwise take the lock for
  // nothing (a missed reuse only means deciding again).
  std::atomic<bool> any_{false};
};

}  // namespace routestatus::controller
