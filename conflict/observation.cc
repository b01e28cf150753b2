#include "conflict/observation.h"

namespace routestatus::conflict {

namespace {

// The record as it was: the observation changes nothing.
ObservationEffects KeepRecord(const ObservationFacts& f) { return {f.record}; }

// Another writer's value fought ours, and it counts: the route is
// Contended from now.
ObservationEffects CountContention(RouteRecord r, const ObservationFacts& f) {
  r.state = RouteState::kContended;
  r.at = f.now;
  r.last = f.new_print;
  r.own = false;
  // Why: our rewrite when the block ended was answered: a live fight.
  if (r.probed) r.held = true;
  r.fought = true;
  return {r, /*counted=*/true};
}

ObservationEffects EchoOfOurRemoval(const ObservationFacts& f) {
  // No evidence. Kept only while armed (a router that keeps re-creating
  // what we remove must meet the record again) or while it remembers a
  // fight.
  const RouteRecord& r = *f.record;
  if (r.armed_until <= f.now && !r.held && !r.fought && r.state == RouteState::kCandidate) {
    return {};
  }
  return KeepRecord(f);
}

ObservationEffects ChangedToDesired(const ObservationFacts& f) {
  // What we would write ourselves: not contention. A suspect value was an
  // older view, now replaced: the route is writable again.
  if (!f.record && !f.has_entry) return {};  // nothing of ours to remember
  RouteRecord r = f.record.value_or(RouteRecord{});
  // Why not armed (as our own restore of a suspect route is): another
  // writer set ours, so the suspect value was an older view and nobody
  // disagrees; a peer's write is no considered disagreement of ours.
  // Armed by it, the next lagging namespace watch's view difference counted.
  if (r.state == RouteState::kSuspect) r.state = RouteState::kCandidate;
  if (r.held && !(r.own && r.last == f.new_print)) {
    // Another writer set ours: the fight is over (or was reconfigured).
    r.held = false;
    r.state = RouteState::kCandidate;
  }
  if (r.fought) {  // a peer replica of ours made the probe
    r.fought = false;
    r.probed = true;
  }
  if (r.state == RouteState::kCandidate) r.at = f.now;
  r.last = f.new_print;
  r.own = false;
  return {r, /*counted=*/false, ObservationNote::kDesired};
}

ObservationEffects UnderCutoff(const ObservationFacts& f) {
  // Nothing is counted for the rest of the window, but a value that
  // answers our probe still shows a live fight (see RouteRecord::held).
  if (!f.computes_entry || !f.has_entry || f.view_only) return KeepRecord(f);
  RouteRecord r;
  if (!f.record) {
    // Why a record for a route we never wrote nor saw written: a follower
    // that listed it after its leader wrote it knows it only now, and
    // without the record the fight is forgotten, so the leader's rewrite
    // at the flush is no probe to this replica and the other writer's
    // answer no live fight: it re-probed the route itself when it led, and
    // the fight went on every window. Only when it replaced what we
    // compute, as uncounted.
    if (f.had_entry && !f.old_is_desired) return KeepRecord(f);
    r.at = f.now;
  } else if (f.record->last == f.new_print) {
    return KeepRecord(f);
  } else {
    r = *f.record;
  }
  r.fought = true;
  r.last = f.new_print;
  r.own = false;
  if (r.state == RouteState::kCandidate) r.at = f.now;
  if (r.probed && !r.held) {
    r.held = true;
    r.state = RouteState::kContended;
    r.at = f.now;
  }
  return {r};
}

// Differs only in what other objects decide: Suspect, counted only on a
// route that is Contended or armed.
ObservationEffects ViewDifference(const ObservationFacts& f) {
  RouteRecord r = f.record.value_or(RouteRecord{});
  if (r.state == RouteState::kContended || r.armed_until > f.now) return CountContention(r, f);
  r.state = RouteState::kSuspect;
  r.at = f.now;
  r.suspected = f.now;
  r.armed_until = SteadyTime{};
  r.last = f.new_print;
  r.own = false;
  return {r, /*counted=*/false, ObservationNote::kSuspect};
}

// Differs in what only the route and the configuration decide.
ObservationEffects ConfigurationDifference(const ObservationFacts& f) {
  if (f.record) return CountContention(*f.record, f);
  // Why (unknown route, old entry what we compute): another writer replaced
  // exactly what we compute with something we do not; that is a fight even
  // if this process never wrote the route (e.g. it listed the route after a
  // peer wrote it). An unknown route whose old entry was not ours (a stale
  // entry being replaced) is only a Candidate.
  RouteRecord r;
  if (f.had_entry && !f.old_is_desired) {
    r.at = f.now;
    r.last = f.new_print;
    return {r, /*counted=*/false, ObservationNote::kCandidate};
  }
  return CountContention(r, f);
}

}  // namespace

ObservationEffects InterpretObservation(const ObservationFacts& f) {
  if (!f.has_entry && f.record && f.record->own && f.record->last == 0) {
    return EchoOfOurRemoval(f);
  }
  if (f.new_is_desired) return ChangedToDesired(f);
  if (f.cutoff) return UnderCutoff(f);
  if (!f.computes_entry && f.had_entry && f.has_entry) {
    // Why: we would have no entry (outside our shard in our view); how
    // another writer changes an entry we would not keep tells nothing. A
    // router that keeps an entry we remove shows up as removals and
    // re-creations.
    ObservationEffects effects = KeepRecord(f);
    if (effects.record) effects.record->last = f.new_print;
    return effects;
  }
  // The same value we last wrote or saw (our own write's echo, a relist
  // replaying it): no new evidence.
  if (f.record && f.record->last == f.new_print) return KeepRecord(f);
  // Why a presence difference is a view difference: whether we keep an
  // entry at all depends on namespace labels, which another watch delivers.
  if (f.view_only || !f.has_entry || !f.computes_entry) return ViewDifference(f);
  return ConfigurationDifference(f);
}

}  // namespace routestatus::conflict
