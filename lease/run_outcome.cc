#include "lease/run_outcome.h"

namespace routestatus::lease {

RunEffects InterpretRun(const WorkOutcome& outcome, const RunFacts& facts,
                        const LeaseRules& rules) {
  RunEffects effects;
  effects.apply = outcome.result;
  if (outcome.result == WorkResult::kExtend && facts.others_seen && rules.lead_uncontested) {
    effects.apply = WorkResult::kNone;
  }
  effects.latency_sample =
      facts.started_as != LeaseState::kLeader && outcome.result != WorkResult::kNone;
  effects.new_wait = outcome.result == WorkResult::kNone && outcome.retry &&
                     outcome.failure == Failure::kServer && facts.now_as == LeaseState::kFollower;
  if (facts.newer_work) {
    effects.next = NextRun::kNewer;
  } else if (outcome.retry && !facts.retry_cancelled) {
    effects.next = NextRun::kRetry;
    effects.park = outcome.failure == Failure::kThisKey;
  }
  return effects;
}

}  // namespace routestatus::lease
