#pragma once

#include <cstdint>
#include <optional>

#include "base/clock.h"

namespace routestatus::conflict {

// Where a route stands with the contention tracker (ContentionTracker's
// class comment): a Candidate is written freely, a Suspect is left alone
// for suspect_block, a Contended route for the interval (or while held).
enum class RouteState : uint8_t { kCandidate, kSuspect, kContended };

// The tracker's record of one route. Value type.
// Why a fingerprint of `last`, not the entry: after a cold start every
// route we wrote is a Candidate for 3 x interval; a typed entry per route
// costs ~600 bytes (100,000 routes: ~60 MB), the fingerprint 8. Why the
// times first and one-byte fields last: 40 bytes instead of 56 per route.
struct RouteRecord {
  SteadyTime at{};    // when it entered `state`
  uint64_t last = 0;  // IngressFingerprint of `last` (0: no entry)
  // When the route last became Suspect (zero: never).
  SteadyTime suspected{};
  // Until then a view difference counts: the entry was restored to ours
  // at least suspect_block after the suspicion.
  SteadyTime armed_until{};
  RouteState state = RouteState::kCandidate;
  bool own = false;  // `last` is our own write (Clear)
  // Another writer's value fought ours (a contention, counted or under
  // the cut-off) and our configuration has not rewritten it since.
  bool fought = false;
  // Our configuration (we or a peer replica) rewrote a fought value: the
  // probe made when a block ends. Kept until the record is dropped.
  bool probed = false;
  // Fought again after the probe: the other writer is still there.
  // Blocked until another writer sets the entry we compute, or the route
  // is deleted; never re-queued, not counted, kept across flushes.
  bool held = false;
};

// One watch update of our router name's entry of a route, as plain facts:
// the entry went from old to new (at most one of them absent), we compute
// `desired` (or would have no entry). Value type.
struct ObservationFacts {
  std::optional<RouteRecord> record;  // the route's record before (nullopt: none)
  bool had_entry = false;             // an old entry
  bool has_entry = false;             // a new entry (false: removed)
  bool computes_entry = false;        // we compute an entry (`desired`)
  // The new entry is the one we compute, or both are absent.
  bool new_is_desired = false;
  // Both the old entry and `desired` are there and equal.
  bool old_is_desired = false;
  uint64_t new_print = 0;  // IngressFingerprint of the new entry (0: none)
  // The other writer's value differs from ours only in what other objects
  // decide (ContentionTracker::Difference::kView).
  bool view_only = false;
  bool cutoff = false;  // more contentions than the limit in this window
  SteadyTime now{};
};

// Which per-route decision the tracker notes at VLOG(4) (a counted
// contention has its own note).
enum class ObservationNote { kNone, kDesired, kSuspect, kCandidate };

// What the tracker does about an observation. Value type.
struct ObservationEffects {
  // The route's record afterwards; nullopt: it has none (erased, or never
  // created).
  std::optional<RouteRecord> record;
  // A contention: the tracker counts it, names the route as an example and
  // may warn at once. `record` is then Contended.
  bool counted = false;
  ObservationNote note = ObservationNote::kNone;
};

// The tracker's rules for an observation, as one pure function
// (ContentionTracker::ObserveLocked is its shell;
// test/conflict/observation_test.cc is its table), in this order:
// - the echo of our own removal is no evidence: the record is dropped
//   unless armed or remembering a fight;
// - the entry we compute is never contention: it ends a suspicion (without
//   arming) and a hold our own write did not make, and a peer's rewrite of
//   a fought value is the probe;
// - under the cut-off nothing counts, but a value of the configuration
//   that replaces ours is remembered as fought, and one that answers our
//   probe holds the route;
// - how another writer changes an entry we would not keep tells nothing;
// - the value we last wrote or saw again is no new evidence;
// - a view difference (kView, a removal, or an entry where we would have
//   none) makes the route Suspect, and counts only on a Contended or armed
//   route;
// - a configuration difference counts, unless the route is unknown and
//   its old entry was not ours (a stale entry replaced: a Candidate).
ObservationEffects InterpretObservation(const ObservationFacts& facts);

}  // namespace routestatus::conflict
