// BackoffWriteLease with takeover (lease/takeover.h): a follower holding
// work takes it over when the leader makes no progress within the
// deadline, and waits while the leader keeps writing. Fake clock; RunDue
// and NextDue step the lease.
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


class TakeoverLeaseTest : public ::testing::Test {
 protected:
  // The library defaults (route-status-controller's), seeded, without the
  // election delay, and with the takeover tunables these tests assume.
  WriteLeaseOptions Options(TakeoverMode mode = TakeoverMode::kProgress) {
    WriteLeaseOptions o;
    o.name = "test";
    o.seed = 11;
    o.election_delay = Duration::zero();
    o.takeover.mode = mode;
    o.takeover.min_deadline = milliseconds(500);
    o.takeover.factor = 2.0;
    o.takeover.quantile = 0.95;
    o.takeover.window = 64;
    o.takeover.jitter = 0.5;  // due in [D, 1.5 D)
    return o;
  }
  Work Record(const std::string& name, WorkOutcome outcome) {
    return [this, name, outcome] {
      ran_.push_back(name);
      return outcome;
    };
  }
  // Makes `lease` a Follower whose lease runs to the 15 s cap: it lost a
  // write, then saw the leader write 8 times.
  void FollowAtTheCap(BackoffWriteLease& lease) {
    lease.Try("lost", Record("lost", kReleaseOutcome));
    ASSERT_EQ(lease.RunDue(), 1);
    for (int i = 0; i < 8; ++i) lease.Extend("leader-" + std::to_string(i), EntryWriter::kPeer);
    ASSERT_EQ(lease.State(), LeaseState::kFollower);
    ASSERT_EQ(lease.Snapshot().expires, clock_.Now() + seconds(15));
    ran_.clear();
  }
  // Advances the clock to the lease's NextDue and runs what is due.
  int RunAtNextDue(BackoffWriteLease& lease) {
    auto next = lease.NextDue();
    if (!next) return 0;
    if (*next > clock_.Now()) clock_.Advance(*next - clock_.Now());
    return lease.RunDue();
  }
  Duration Since(SteadyTime t) { return clock_.Now() - t; }

  FakeClock clock_;
  std::vector<std::string> ran_;
};

// The failover: the leader is dead, one change arrives; the
// follower writes it D (+ jitter) later although its lease runs 15 s.
TEST_F(TakeoverLeaseTest, DeadLeaderIsTakenOverAfterTheDeadline) {
  BackoffWriteLease lease(clock_, Options());
  FollowAtTheCap(lease);
  const SteadyTime queued = clock_.Now();
  lease.Try("a", Record("a", kExtendOutcome));
  const SteadyTime due = *lease.NextDue();
  EXPECT_GE(due - queued, milliseconds(500));
  EXPECT_LT(due - queued, milliseconds(750));
  clock_.Advance(due - queued - milliseconds(1));
  EXPECT_EQ(lease.RunDue(), 0);
  clock_.Advance(milliseconds(1));
  EXPECT_EQ(lease.RunDue(), 1);
  EXPECT_EQ(ran_, std::vector<std::string>{"a"});
  auto s = lease.Snapshot();
  EXPECT_EQ(s.state, LeaseState::kLeader);
  EXPECT_EQ(s.takeovers[static_cast<int>(WorkResult::kExtend)], 1u);
  EXPECT_EQ(s.takeover_deadline, milliseconds(500));
}

// The echo of our own takeover write can reach the watch before the PUT's
// answer (the status syncer then says Extend(key, kUs) while we still
// follow). It is not the leader's progress: taken for a sample, every
// takeover would teach D its own wait (500-750 ms here) and the next
// failover would be slower.
TEST_F(TakeoverLeaseTest, EchoOfOurTakeoverIsNoSample) {
  BackoffWriteLease lease(clock_, Options());
  FollowAtTheCap(lease);
  lease.Try("a", [this, &lease] {
    ran_.push_back("a");
    lease.Extend("a", EntryWriter::kUs);  // the watch beats the answer
    return kExtendOutcome;
  });
  EXPECT_EQ(RunAtNextDue(lease), 1);
  EXPECT_EQ(ran_, std::vector<std::string>{"a"});
  auto s = lease.Snapshot();
  EXPECT_EQ(s.state, LeaseState::kLeader);
  EXPECT_EQ(s.progress_samples, 0u);
  EXPECT_EQ(s.takeover_deadline, milliseconds(500));
}

// A leader working through a burst (one write every 20 ms for 10 s) is not
// overrun, however long the follower has held the burst's work.
TEST_F(TakeoverLeaseTest, LeaderWorkingThroughABurstIsNotOverrun) {
  BackoffWriteLease lease(clock_, Options());
  FollowAtTheCap(lease);
  for (int i = 0; i < 500; ++i) lease.Try("k" + std::to_string(i), Record("k", kExtendOutcome));
  for (int i = 0; i < 499; ++i) {
    clock_.Advance(milliseconds(20));
    lease.Extend("k" + std::to_string(i), EntryWriter::kPeer);
    ASSERT_EQ(lease.RunDue(), 0) << "overran the leader at write " << i;
  }
  EXPECT_TRUE(ran_.empty());
  auto s = lease.Snapshot();
  EXPECT_EQ(s.pending_keys, 1u);
  EXPECT_EQ(s.progress_samples, 499u);
  EXPECT_EQ(s.progress_quantile, milliseconds(20));
  EXPECT_EQ(s.takeover_deadline, milliseconds(500));
  // The leader dies with one key left: taken over D (+ jitter) after its
  // last write.
  const SteadyTime last = clock_.Now();
  EXPECT_EQ(RunAtNextDue(lease), 1);
  EXPECT_GE(Since(last), milliseconds(500));
  EXPECT_LT(Since(last), milliseconds(750));
  EXPECT_EQ(lease.State(), LeaseState::kLeader);
}

// A leader that writes its first 50 held keys fast (its client's burst
// budget) and then one every 100 ms (its QPS). Progress-based takeover
// waits; per-change deadlines, learnt from the fast writes, overrun it.
int OverrunsOfALeaderThatSlowsDown(FakeClock& clock, BackoffWriteLease& lease) {
  for (int i = 0; i < 100; ++i) {
    lease.Try("k" + std::to_string(i), [] { return WorkOutcome{WorkResult::kRelease, false}; });
  }
  int overruns = 0;
  for (int i = 0; i < 100; ++i) {
    clock.Advance(i < 50 ? milliseconds(1) : milliseconds(100));
    overruns += lease.RunDue();
    lease.Extend("k" + std::to_string(i), EntryWriter::kPeer);
  }
  return overruns;
}

TEST_F(TakeoverLeaseTest, ProgressTakeoverWaitsForALeaderThatSlowsDown) {
  BackoffWriteLease lease(clock_, Options());
  FollowAtTheCap(lease);
  EXPECT_EQ(OverrunsOfALeaderThatSlowsDown(clock_, lease), 0);
  for (uint64_t n : lease.Snapshot().takeovers) EXPECT_EQ(n, 0u);
}

TEST_F(TakeoverLeaseTest, PerChangeDeadlineOverrunsALeaderThatSlowsDown) {
  BackoffWriteLease lease(clock_, Options(TakeoverMode::kPerChange));
  FollowAtTheCap(lease);
  EXPECT_GT(OverrunsOfALeaderThatSlowsDown(clock_, lease), 0);
  EXPECT_GT(lease.Snapshot().takeovers[static_cast<int>(WorkResult::kRelease)], 0u);
}

// Per-change deadlines grow with a backlog: after a burst, a dead leader's
// next change waits seconds (progress-based: the floor).
TEST_F(TakeoverLeaseTest, PerChangeDeadlineIsInflatedByABacklog) {
  for (TakeoverMode mode : {TakeoverMode::kProgress, TakeoverMode::kPerChange}) {
    BackoffWriteLease lease(clock_, Options(mode));
    FollowAtTheCap(lease);
    for (int i = 0; i < 100; ++i) lease.Try("k" + std::to_string(i), Record("k", kExtendOutcome));
    for (int i = 0; i < 100; ++i) {
      clock_.Advance(milliseconds(20));
      lease.Extend("k" + std::to_string(i), EntryWriter::kPeer);
    }
    const Duration d = lease.Snapshot().takeover_deadline;
    if (mode == TakeoverMode::kProgress) {
      EXPECT_EQ(d, milliseconds(500));
    } else {
      EXPECT_GT(d, seconds(3));
    }
  }
}

// A leader that takes 1 s per write. The first change: we take it over at
// D = 500 ms (+ jitter); while our PUT is in flight the leader's write
// lands (1 s after the change) and ours loses. That wait (1 s) raises D to
// 2 s, so the next change, written 1 s after it arrived, is not overrun.
TEST_F(TakeoverLeaseTest, SlowLeaderRaisesTheDeadline) {
  BackoffWriteLease lease(clock_, Options());
  FollowAtTheCap(lease);
  const SteadyTime t0 = clock_.Now();
  lease.Try("a", [&] {
    clock_.Advance(t0 + seconds(1) - clock_.Now());
    lease.Extend("a", EntryWriter::kPeer);  // the leader's write reaches our watch
    clock_.Advance(milliseconds(500));
    ran_.push_back("a");
    return kReleaseRetry;  // our PUT: 409
  });
  EXPECT_EQ(RunAtNextDue(lease), 1);
  auto s = lease.Snapshot();
  EXPECT_EQ(s.takeovers[static_cast<int>(WorkResult::kRelease)], 1u);
  EXPECT_EQ(s.progress_samples, 1u);
  EXPECT_EQ(s.progress_quantile, seconds(1));
  EXPECT_EQ(s.takeover_deadline, seconds(2));
  EXPECT_EQ(s.pending_keys, 0u);  // the leader's write cancelled our retry

  clock_.Advance(seconds(5));
  const SteadyTime queued = clock_.Now();
  lease.Try("b", Record("b", kExtendOutcome));
  EXPECT_GE(*lease.NextDue() - queued, seconds(2));
  clock_.Advance(seconds(1));
  EXPECT_EQ(lease.RunDue(), 0);
  lease.Extend("b", EntryWriter::kPeer);
  EXPECT_EQ(lease.RunDue(), 0);
  EXPECT_FALSE(lease.NextDue().has_value());
  EXPECT_EQ(ran_, std::vector<std::string>{"a"});
  s = lease.Snapshot();
  EXPECT_EQ(s.takeovers[static_cast<int>(WorkResult::kRelease)], 1u);
  EXPECT_EQ(s.takeover_deadline, seconds(2));
}

// A lost takeover says our cache is behind (a lagging watch shows no
// progress): the next takeover waits for the retry interval...
TEST_F(TakeoverLeaseTest, LostTakeoverPausesTakeovers) {
  BackoffWriteLease lease(clock_, Options());
  FollowAtTheCap(lease);
  lease.Try("a", Record("a", kReleaseOutcome));
  lease.Try("b", Record("b", kExtendOutcome));
  EXPECT_EQ(RunAtNextDue(lease), 1);  // "a" lost; "b" is not run at once
  EXPECT_EQ(ran_, std::vector<std::string>{"a"});
  const SteadyTime lost = clock_.Now();
  EXPECT_EQ(RunAtNextDue(lease), 1);
  EXPECT_EQ(Since(lost), seconds(3));
  EXPECT_EQ(ran_, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(lease.State(), LeaseState::kLeader);
}

// So does a takeover whose write failed without showing another writer
// (no answer from the API server, 5xx): the held work is not run key after
// key against a server that does not answer; the lease is kept.
TEST_F(TakeoverLeaseTest, FailedTakeoverPausesTakeovers) {
  BackoffWriteLease lease(clock_, Options());
  FollowAtTheCap(lease);
  lease.Try("a", Record("a", WorkOutcome{WorkResult::kNone, true}));
  lease.Try("b", Record("b", kExtendOutcome));
  EXPECT_EQ(RunAtNextDue(lease), 1);
  EXPECT_EQ(ran_, std::vector<std::string>{"a"});
  const SteadyTime failed = clock_.Now();
  EXPECT_EQ(lease.Snapshot().takeovers[static_cast<int>(WorkResult::kNone)], 1u);
  EXPECT_EQ(lease.State(), LeaseState::kFollower);
  // The takeover of "b" wins; "a"'s retry, due at the same time, follows.
  EXPECT_EQ(RunAtNextDue(lease), 2);
  EXPECT_EQ(Since(failed), seconds(3));
  EXPECT_EQ(ran_, (std::vector<std::string>{"a", "b", "a"}));
  EXPECT_EQ(lease.State(), LeaseState::kLeader);
}

// ... unless the winner's write reaches our watch first: then we follow
// the winner as usual (D after its last write).
TEST_F(TakeoverLeaseTest, LostTakeoverResumesWhenTheWinnerShows) {
  BackoffWriteLease lease(clock_, Options());
  FollowAtTheCap(lease);
  lease.Try("a", Record("a", kReleaseOutcome));
  lease.Try("b", Record("b", kExtendOutcome));
  EXPECT_EQ(RunAtNextDue(lease), 1);
  clock_.Advance(milliseconds(30));
  lease.Extend("a", EntryWriter::kPeer);  // the winner's write of "a" (a sample: D grows)
  const SteadyTime seen = clock_.Now();
  const Duration d = lease.Snapshot().takeover_deadline;
  EXPECT_GT(d, milliseconds(1000));
  EXPECT_EQ(RunAtNextDue(lease), 1);
  EXPECT_GE(Since(seen), d);
  EXPECT_LT(Since(seen), d + d / 2);
  EXPECT_EQ(ran_, (std::vector<std::string>{"a", "b"}));
}

// Winning a takeover makes us Leader: every deferred key runs at once.
TEST_F(TakeoverLeaseTest, WonTakeoverPromotesTheRest) {
  BackoffWriteLease lease(clock_, Options());
  FollowAtTheCap(lease);
  lease.Try("a", Record("a", kExtendOutcome));
  lease.Try("b", Record("b", kExtendOutcome));
  lease.Try("c", Record("c", kExtendOutcome));
  EXPECT_EQ(RunAtNextDue(lease), 3);
  EXPECT_EQ(lease.Snapshot().takeovers[static_cast<int>(WorkResult::kExtend)], 1u);
}

// Work waiting for its retry interval is not taken over early.
TEST_F(TakeoverLeaseTest, RetryIntervalIsKept) {
  BackoffWriteLease lease(clock_, Options());
  FollowAtTheCap(lease);
  lease.Try("a", Record("a", kReleaseRetry));
  EXPECT_EQ(RunAtNextDue(lease), 1);  // lost; retry in 3 s
  const SteadyTime lost = clock_.Now();
  // The takeover wait (D after the lost write) ends long before the retry
  // interval; the key runs again only once that is over.
  EXPECT_EQ(RunAtNextDue(lease), 1);
  EXPECT_EQ(Since(lost), seconds(3));
  EXPECT_EQ(ran_, (std::vector<std::string>{"a", "a"}));
}

// Takeover only concerns followers: the openshift-like preset (no
// takeover) waits for its lease to expire.
TEST_F(TakeoverLeaseTest, OffWaitsForTheLeaseToExpire) {
  WriteLeaseOptions o = OpenshiftLikeLeaseOptions();
  o.seed = 11;
  BackoffWriteLease lease(clock_, o);
  lease.Try("lost", Record("lost", kReleaseOutcome));
  ASSERT_EQ(lease.RunDue(), 1);
  for (int i = 0; i < 8; ++i) lease.Extend("leader-" + std::to_string(i), EntryWriter::kPeer);
  const SteadyTime queued = clock_.Now();
  lease.Try("a", Record("a", kExtendOutcome));
  EXPECT_EQ(*lease.NextDue(), queued + seconds(60));
  EXPECT_EQ(RunAtNextDue(lease), 1);
  EXPECT_EQ(Since(queued), seconds(60));
  EXPECT_EQ(lease.Snapshot().takeover_deadline, Duration::zero());
}

// Election is not following: its work runs at once, there is nothing to
// take over; and a Leader's work is never deferred.
TEST_F(TakeoverLeaseTest, NoTakeoverOutsideFollower) {
  BackoffWriteLease lease(clock_, Options());
  lease.Try("a", Record("a", kNoneOutcome));
  EXPECT_EQ(lease.RunDue(), 1);
  lease.Try("b", Record("b", kExtendOutcome));
  EXPECT_EQ(lease.RunDue(), 1);
  lease.Try("c", Record("c", kExtendOutcome));
  EXPECT_EQ(lease.RunDue(), 1);
  auto s = lease.Snapshot();
  EXPECT_EQ(s.state, LeaseState::kLeader);
  for (uint64_t n : s.takeovers) EXPECT_EQ(n, 0u);
}

// An expired lease runs held work as before (at the follower floor),
// whichever comes first.
TEST_F(TakeoverLeaseTest, ExpiredLeaseStillRunsAtTheFollowerFloor) {
  WriteLeaseOptions o = Options();
  o.follower_min_delay = milliseconds(100);
  o.follower_delay_jitter = false;
  BackoffWriteLease lease(clock_, o);
  FollowAtTheCap(lease);
  clock_.Advance(seconds(60));
  lease.Try("a", Record("a", kExtendOutcome));
  EXPECT_EQ(*lease.NextDue(), clock_.Now() + milliseconds(100));
  EXPECT_EQ(RunAtNextDue(lease), 1);
  EXPECT_EQ(lease.Snapshot().takeovers[static_cast<int>(WorkResult::kExtend)], 0u);
}

}  // namespace
}  // namespace routestatus::lease

namespace routestatus::lease {
namespace {

// Issue 24: a leader cut off from the API server steps down at once, and
// when it answers again no held write runs before the follower floor, so
// the watch can bring in the new leader's writes first (which drop it).
TEST_F(TakeoverLeaseTest, CutOffLeaderStepsDownAndHoldsWritesUntilItsWatchCatchesUp) {
  std::vector<LeaseTransition> seen;
  WriteLeaseOptions o = Options();
  o.on_transition = [&](const LeaseTransition& t) { seen.push_back(t); };
  BackoffWriteLease lease(clock_, o);
  lease.Try("a", Record("a", kExtendOutcome));
  ASSERT_EQ(lease.RunDue(), 1);
  ASSERT_EQ(lease.State(), LeaseState::kLeader);

  lease.SetCutOff(true);
  EXPECT_EQ(lease.State(), LeaseState::kFollower);
  ASSERT_FALSE(seen.empty());
  EXPECT_STREQ(seen.back().cause, "cut-off");
  lease.SetCutOff(true);  // idempotent
  // Its writes fail without an answer meanwhile (kNone, retried).
  lease.Try("b", Record("b", WorkOutcome{WorkResult::kNone, true}));
  for (int i = 0; i < 30; ++i) RunAtNextDue(lease);
  EXPECT_EQ(lease.State(), LeaseState::kFollower);
  ran_.clear();

  // It answers again 100 ms before b's retry is due.
  ASSERT_TRUE(lease.NextDue().has_value());
  clock_.Advance(*lease.NextDue() - clock_.Now() - milliseconds(100));
  lease.SetCutOff(false);
  clock_.Advance(milliseconds(450));
  EXPECT_EQ(lease.RunDue(), 0) << "a held write raced the watch";
  // The watch brings the new leader's write of "b": nothing left to write.
  lease.Extend("b", EntryWriter::kPeer);
  clock_.Advance(seconds(20));
  EXPECT_EQ(lease.RunDue(), 0);
  EXPECT_TRUE(ran_.empty());
  EXPECT_EQ(lease.State(), LeaseState::kFollower);
}

}  // namespace
}  // namespace routestatus::lease
