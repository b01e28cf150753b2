// The lease's outcome rules (lease/run_outcome.h) as a table: each row is
// one finished work item, what the lease saw while it ran, and what the
// lease must do about it.
#include "lease/run_outcome.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace routestatus::lease {
namespace {

using std::chrono::seconds;
constexpr LeaseState E = LeaseState::kElection;
constexpr LeaseState L = LeaseState::kLeader;
constexpr LeaseState F = LeaseState::kFollower;

struct Row {
  std::string behaviour;
  WorkOutcome outcome;
  RunFacts facts;
  RunEffects want;
};

WorkOutcome Retry(Failure failure) { return {WorkResult::kNone, true, seconds(0), failure}; }

const std::vector<Row>& Table() {
  static const std::vector<Row> rows = {
      {"a leader's write keeps it leading, no sample",
       {WorkResult::kExtend, false}, {L, L}, {WorkResult::kExtend, false, false}},
      {"an election write won makes us lead and is a latency sample",
       {WorkResult::kExtend, false}, {E, E}, {WorkResult::kExtend, true, false}},
      {"a takeover won makes us lead and is a latency sample",
       {WorkResult::kExtend, false}, {F, F}, {WorkResult::kExtend, true, false}},
      {"a write won while another writer showed itself changes nothing",
       {WorkResult::kExtend, false}, {F, F, true}, {WorkResult::kNone, true, false}},
      {"a leader that began following meanwhile does not lead again",
       {WorkResult::kExtend, false}, {L, F, true}, {WorkResult::kNone, false, false}},
      {"a write lost makes us follow and is a latency sample when not leading",
       {WorkResult::kRelease, false}, {E, E}, {WorkResult::kRelease, true, false}},
      {"a leader's lost write makes it follow, no sample",
       {WorkResult::kRelease, true}, {L, L}, {WorkResult::kRelease, false, false, NextRun::kRetry}},
      {"nothing to write: nothing changes, nothing runs again",
       {WorkResult::kNone, false}, {F, F}, {WorkResult::kNone, false, false}},
      {"a follower's write the server failed: a new wait, and a retry",
       Retry(Failure::kServer), {F, F}, {WorkResult::kNone, false, true, NextRun::kRetry}},
      {"a leader's write the server failed: no wait (it leads), a retry",
       Retry(Failure::kServer), {L, L}, {WorkResult::kNone, false, false, NextRun::kRetry}},
      {"a key that fails alone is parked, no new wait",
       Retry(Failure::kThisKey), {F, F}, {WorkResult::kNone, false, false, NextRun::kRetry, true}},
      {"a write that learnt nothing: no new wait, a retry",
       Retry(Failure::kNothing), {F, F}, {WorkResult::kNone, false, false, NextRun::kRetry}},
      {"newer work runs next instead of the retry",
       Retry(Failure::kThisKey), {F, F, false, true}, {WorkResult::kNone, false, false, NextRun::kNewer}},
      {"a retry cancelled by Extend or Remove is dropped",
       Retry(Failure::kServer), {L, L, false, false, true}, {WorkResult::kNone, false, false}},
  };
  return rows;
}

TEST(RunOutcomeTest, EachRowIsWhatTheLeaseDoes) {
  for (const Row& row : Table()) {
    const RunEffects got = InterpretRun(row.outcome, row.facts, LeaseRules{});
    EXPECT_EQ(got.apply, row.want.apply) << row.behaviour;
    EXPECT_EQ(got.latency_sample, row.want.latency_sample) << row.behaviour;
    EXPECT_EQ(got.new_wait, row.want.new_wait) << row.behaviour;
    EXPECT_EQ(got.next, row.want.next) << row.behaviour;
    EXPECT_EQ(got.park, row.want.park) << row.behaviour;
  }
}

TEST(RunOutcomeTest, WithoutLeadUncontestedAContestedWinLeads) {
  LeaseRules rules;
  rules.lead_uncontested = false;
  const RunEffects got = InterpretRun({WorkResult::kExtend, false}, {F, F, true}, rules);
  EXPECT_EQ(got.apply, WorkResult::kExtend);
}

}  // namespace
}  // namespace routestatus::lease
