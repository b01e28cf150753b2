#pragma once

#include "lease/lease_rules.h"
#include "lease/write_lease.h"

namespace routestatus::lease {

// What the lease saw while one work item ran.
struct RunFacts {
  LeaseState started_as = LeaseState::kElection;  // state when it started
  LeaseState now_as = LeaseState::kElection;      // state when it ended
  bool others_seen = false;      // we began following, or saw a peer's write, meanwhile
  bool newer_work = false;       // a Try queued newer work for the key meanwhile
  bool retry_cancelled = false;  // Extend, Remove or Shutdown meanwhile
};

// What runs next for the key.
enum class NextRun { kDrop, kNewer, kRetry };

// What the lease does about a finished work item.
struct RunEffects {
  WorkResult apply = WorkResult::kNone;  // the state change to apply
  bool latency_sample = false;  // the write's answer time is a sample of D
  bool new_wait = false;        // a follower's takeover waits anew
  NextRun next = NextRun::kDrop;
  bool park = false;  // with kRetry: the key is parked (Failure::kThisKey)
};

// The outcome rules, as one pure function (BackoffWriteLease::RunPicked is
// its shell; test/lease/run_outcome_test.cc is its table):
// - a write that succeeded makes us lead, unless another writer showed
//   itself while it was out (LeaseRules::lead_uncontested): then it
//   changes nothing, because two leaders would race every next change;
// - a write lost makes us follow;
// - any answered write made while not leading is a sample of D (the leader
//   pays that latency too; LeaseRules::own_write_samples is read by the
//   timer);
// - a write that failed on the server (Failure::kServer) while we follow
//   starts a new takeover wait: taking over the next key at once would
//   only fail again; a key failing alone or a write that learnt nothing
//   does not;
// - newer work runs next; otherwise a retry unless cancelled, parked when
//   the key fails alone.
RunEffects InterpretRun(const WorkOutcome& outcome, const RunFacts& facts,
                        const LeaseRules& rules);

}  // namespace routestatus::lease
