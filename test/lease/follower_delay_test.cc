// The follower-delay and second-leader options of BackoffWriteLease
// (follower_min_delay, follower_delay_jitter, leader_follows_foreign_extend),
// added after the simulator (test/sim) showed the PUT bound failing with the
// docs/design.md section 3 defaults.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "lease/backoff_write_lease.h"
#include "lease/lease_presets.h"
#include "test/lease/outcomes.h"
#include "test/testing/fake_clock.h"

namespace routestatus::lease {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::FakeClock;


class FollowerDelayTest : public ::testing::Test {
 protected:
  // The plain lease (see backoff_write_lease_test.cc); each test turns on
  // the option it is about.
  WriteLeaseOptions Options() {
    WriteLeaseOptions o = OpenshiftLikeLeaseOptions();
    o.interval = seconds(15);
    o.name = "test";
    o.seed = 7;
    return o;
  }
  Work Returning(WorkOutcome outcome) {
    return [this, outcome] {
      ++runs_;
      return outcome;
    };
  }
  // One work item with `outcome`, run after any deferral.
  void Drive(BackoffWriteLease& lease, WorkOutcome outcome) {
    lease.Try("drive", Returning(outcome));
    clock_.Advance(seconds(20));
    ASSERT_EQ(lease.RunDue(), 1);
  }

  FakeClock clock_;
  int runs_ = 0;
};

TEST_F(FollowerDelayTest, ExpiredFollowerWaitsTheMinimumDelay) {
  auto o = Options();
  o.follower_min_delay = milliseconds(500);
  BackoffWriteLease lease(clock_, o);
  Drive(lease, kReleaseOutcome);  // Follower; its lease expires in 20 ms
  clock_.Advance(seconds(60));
  lease.Try("a", Returning(kExtendOutcome));
  EXPECT_EQ(lease.NextDue(), clock_.Now() + milliseconds(500));
  clock_.Advance(milliseconds(499));
  EXPECT_EQ(lease.RunDue(), 0);
  clock_.Advance(milliseconds(1));
  EXPECT_EQ(lease.RunDue(), 1);
}

TEST_F(FollowerDelayTest, LostWriteKeepsTheLeaseAtLeastTheMinimumDelay) {
  auto o = Options();
  o.follower_min_delay = milliseconds(500);
  BackoffWriteLease lease(clock_, o);
  lease.Try("a", Returning(kReleaseOutcome));  // Election: runs now, loses
  ASSERT_EQ(lease.RunDue(), 1);
  auto s = lease.Snapshot();
  EXPECT_EQ(s.state, LeaseState::kFollower);
  EXPECT_EQ(s.tick, 0);
  EXPECT_EQ(s.expires, clock_.Now() + milliseconds(500));  // not 20 ms
  lease.Try("b", Returning(kReleaseOutcome));  // Follower, tick 1 after this
  clock_.Advance(milliseconds(500));
  ASSERT_EQ(lease.RunDue(), 1);
  s = lease.Snapshot();
  EXPECT_EQ(s.tick, 1);
  EXPECT_GE(s.expires, clock_.Now() + milliseconds(500));  // backoff(1) ~ 100 ms
}

TEST_F(FollowerDelayTest, LostWriteUsesTheBackoffWhenNoMinimumIsSet) {
  BackoffWriteLease lease(clock_, Options());
  lease.Try("a", Returning(kReleaseOutcome));
  ASSERT_EQ(lease.RunDue(), 1);
  EXPECT_EQ(lease.Snapshot().expires, clock_.Now() + milliseconds(20));
}

TEST_F(FollowerDelayTest, ZeroMeansTwoBaseSteps) {
  BackoffWriteLease lease(clock_, Options());
  Drive(lease, kReleaseOutcome);
  clock_.Advance(seconds(60));
  lease.Try("a", Returning(kExtendOutcome));
  EXPECT_EQ(lease.NextDue(), clock_.Now() + milliseconds(40));
}

TEST_F(FollowerDelayTest, JitterSpreadsOverMinToTwiceMin) {
  auto o = Options();
  o.follower_min_delay = milliseconds(500);
  o.follower_delay_jitter = true;
  BackoffWriteLease lease(clock_, o);
  Drive(lease, kReleaseOutcome);
  clock_.Advance(seconds(60));
  std::vector<Duration> delays;
  for (int i = 0; i < 50; ++i) {
    const std::string key = "k" + std::to_string(i);
    lease.Try(key, Returning(kReleaseOutcome));
    delays.push_back(*lease.NextDue() - clock_.Now());
    lease.Remove(key);
  }
  Duration lo = delays[0], hi = delays[0];
  for (auto d : delays) {
    EXPECT_GE(d, milliseconds(500));
    EXPECT_LT(d, milliseconds(1000));
    lo = std::min(lo, d);
    hi = std::max(hi, d);
  }
  EXPECT_GT(hi - lo, milliseconds(200));  // actually spread
}

TEST_F(FollowerDelayTest, NegativeMinimumIsInvalid) {
  auto o = Options();
  o.follower_min_delay = milliseconds(-1);
  EXPECT_FALSE(ValidateWriteLeaseOptions(o).ok());
}

TEST_F(FollowerDelayTest, LeaderFollowsAnotherWritersExtend) {
  auto o = Options();
  o.leader_follows_foreign_extend = true;
  BackoffWriteLease lease(clock_, o);
  lease.Try("a", Returning(kExtendOutcome));
  ASSERT_EQ(lease.RunDue(), 1);
  ASSERT_EQ(lease.State(), LeaseState::kLeader);
  lease.Extend("a", EntryWriter::kUs);  // the watch echoes our own write of a: still Leader
  EXPECT_EQ(lease.State(), LeaseState::kLeader);
  lease.Extend("b", EntryWriter::kPeer);  // someone else of our router name wrote b
  auto s = lease.Snapshot();
  EXPECT_EQ(s.state, LeaseState::kFollower);
  EXPECT_EQ(s.tick, 0);
  EXPECT_EQ(s.foreign_extends, 1u);
  EXPECT_EQ((s.transitions[{LeaseState::kLeader, LeaseState::kFollower}]), 1u);
}

// Who wrote is the caller's to say (the status syncer records its own
// writes): the lease keeps no count of its own, so a key it wrote moments
// ago and a peer writes now is a peer's write.
TEST_F(FollowerDelayTest, PeerWriteOfAKeyWeWroteIsForeign) {
  auto o = Options();
  o.leader_follows_foreign_extend = true;
  BackoffWriteLease lease(clock_, o);
  lease.Try("a", Returning(kExtendOutcome));
  ASSERT_EQ(lease.RunDue(), 1);
  lease.Extend("a", EntryWriter::kPeer);
  EXPECT_EQ(lease.State(), LeaseState::kFollower);
}

TEST_F(FollowerDelayTest, LeaderKeepsLeadingByDefault) {
  BackoffWriteLease lease(clock_, Options());
  lease.Try("a", Returning(kExtendOutcome));
  ASSERT_EQ(lease.RunDue(), 1);
  lease.Extend("b", EntryWriter::kPeer);
  EXPECT_EQ(lease.State(), LeaseState::kLeader);
  EXPECT_EQ(lease.Snapshot().foreign_extends, 0u);
}

}  // namespace
}  // namespace routestatus::lease
