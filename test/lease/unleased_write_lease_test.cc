// UnleasedWriteLease, the lease of --write-lease=false: every change runs at
// once, lost writes never defer other work, conflicts retry after the retry
// interval unless the entry is already correct.
#include "lease/unleased_write_lease.h"

#include <chrono>

#include <gtest/gtest.h>

#include "lease/backoff_write_lease.h"
#include "test/testing/fake_clock.h"

namespace routestatus::lease {
namespace {

WriteLeaseOptions SeededLeaseOptions() {
  WriteLeaseOptions o;
  o.retry = std::chrono::seconds(3);
  o.election_delay = routestatus::Duration::zero();
  o.seed = 7;
  return o;
}

class UnleasedWriteLeaseTest : public ::testing::Test {
 protected:
  UnleasedWriteLeaseTest()
      : queue_(clock_, UnleasedWriteLease::PassThroughOptions(SeededLeaseOptions())),
        unleased_(queue_) {}
  // Work that counts its runs and returns `result` (kRelease = a 409).
  Work Counted(WorkResult result, bool retry = false) {
    return [this, result, retry] {
      ++runs_;
      return WorkOutcome{result, retry};
    };
  }
  testing::FakeClock clock_;
  BackoffWriteLease queue_;
  UnleasedWriteLease unleased_;
  int runs_ = 0;
};

// With a lease, a lost write (Release) makes the replica follow: its next
// change waits. Without one, every change runs at once, whatever happened.
TEST_F(UnleasedWriteLeaseTest, LostWritesNeverDeferOtherWork) {
  unleased_.Try("a", Counted(WorkResult::kRelease));
  EXPECT_EQ(queue_.RunDue(), 1);
  unleased_.Try("b", Counted(WorkResult::kExtend));  // we wrote
  unleased_.Try("c", Counted(WorkResult::kRelease));
  EXPECT_EQ(queue_.RunDue(), 2);  // both at once: no follower deferral
  EXPECT_EQ(runs_, 3);
  EXPECT_EQ(unleased_.State(), LeaseState::kElection);
  EXPECT_EQ(queue_.State(), LeaseState::kElection);  // never leads, never follows
  EXPECT_EQ(unleased_.outcome(WorkResult::kRelease), 2u);
  EXPECT_EQ(unleased_.outcome(WorkResult::kExtend), 1u);
  LeaseSnapshot s = queue_.Snapshot();
  EXPECT_EQ(s.follower_deferrals, 0u);
  EXPECT_TRUE(s.transitions.empty());

  // The same sequence on the real lease defers "c" (the contrast that makes
  // the benchmark's naive baseline a real one).
  WriteLeaseOptions real = SeededLeaseOptions();
  real.follower_min_delay = std::chrono::milliseconds(500);
  BackoffWriteLease leased(clock_, real);
  leased.Try("a", Counted(WorkResult::kRelease));
  EXPECT_EQ(leased.RunDue(), 1);
  leased.Try("c", Counted(WorkResult::kRelease));
  EXPECT_EQ(leased.RunDue(), 0);
  EXPECT_EQ(leased.State(), LeaseState::kFollower);
}

TEST_F(UnleasedWriteLeaseTest, ConflictRetriesAfterTheRetryIntervalUnlessAlreadyCorrect) {
  unleased_.Try("a", Counted(WorkResult::kRelease, true));
  unleased_.Try("b", Counted(WorkResult::kRelease, true));
  EXPECT_EQ(queue_.RunDue(), 2);
  clock_.Advance(std::chrono::milliseconds(2999));
  EXPECT_EQ(queue_.RunDue(), 0);
  // The watch shows "a" already correct: its retry is dropped; "b" retries.
  unleased_.Extend("a", EntryWriter::kPeer);
  clock_.Advance(std::chrono::milliseconds(1));
  EXPECT_EQ(queue_.RunDue(), 1);
  EXPECT_EQ(runs_, 3);
  unleased_.Remove("b");
  clock_.Advance(std::chrono::seconds(10));
  EXPECT_EQ(queue_.RunDue(), 0);
}

}  // namespace
}  // namespace routestatus::lease
