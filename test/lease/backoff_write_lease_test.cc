#include "lease/backoff_write_lease.h"

#include <atomic>
#include <future>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "lease/lease_presets.h"
#include "test/lease/outcomes.h"
#include "test/testing/fake_clock.h"

namespace routestatus::lease {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::FakeClock;


class LeaseTest : public ::testing::Test {
 protected:
  // The plain lease these tests were written for (no election delay,
  // Election ignores Extend, 40 ms follower floor, no takeover): the
  // openshift-like preset with a 15 s interval.
  WriteLeaseOptions Options() {
    WriteLeaseOptions o = OpenshiftLikeLeaseOptions();
    o.interval = seconds(15);
    o.name = "test";
    o.seed = 1;
    o.on_transition = [this](const LeaseTransition& t) { seen_.push_back(t); };
    return o;
  }
  // Work that records its name in ran_ and returns `outcome`.
  Work Record(const std::string& name, WorkOutcome outcome) {
    return [this, name, outcome] {
      ran_.push_back(name);
      return outcome;
    };
  }
  // Runs one piece of work for a throwaway key with `outcome`.
  void Drive(BackoffWriteLease& lease, WorkOutcome outcome) {
    lease.Try("drive", Record("drive", outcome));
    clock_.Advance(seconds(20));  // past any follower deferral
    ASSERT_EQ(lease.RunDue(), 1);
  }
  SteadyTime Now() { return clock_.Now(); }

  FakeClock clock_;
  std::vector<std::string> ran_;
  std::vector<LeaseTransition> seen_;
};

TEST_F(LeaseTest, StartsInElectionAndNoneKeepsIt) {
  BackoffWriteLease lease(clock_, Options());
  EXPECT_EQ(lease.State(), LeaseState::kElection);
  lease.Try("a", Record("a", kNoneOutcome));
  EXPECT_EQ(lease.NextDue(), Now());  // Election: due now
  EXPECT_EQ(lease.RunDue(), 1);
  EXPECT_EQ(ran_, std::vector<std::string>{"a"});
  EXPECT_EQ(lease.State(), LeaseState::kElection);
  EXPECT_TRUE(seen_.empty());
  EXPECT_EQ(lease.Snapshot().outcomes[0], 1u);
}

TEST_F(LeaseTest, ElectionToLeaderOnExtend) {
  BackoffWriteLease lease(clock_, Options());
  lease.Try("a", Record("a", kExtendOutcome));
  EXPECT_EQ(lease.RunDue(), 1);
  auto s = lease.Snapshot();
  EXPECT_EQ(s.state, LeaseState::kLeader);
  EXPECT_EQ(s.tick, 0);
  EXPECT_EQ(s.expires, Now() + seconds(15));
  EXPECT_EQ((s.transitions[{LeaseState::kElection, LeaseState::kLeader}]), 1u);
  ASSERT_EQ(seen_.size(), 1u);
  EXPECT_EQ(seen_[0].from, LeaseState::kElection);
  EXPECT_EQ(seen_[0].to, LeaseState::kLeader);
  EXPECT_STREQ(seen_[0].cause, "work:extend");
}

TEST_F(LeaseTest, ElectionToFollowerOnRelease) {
  BackoffWriteLease lease(clock_, Options());
  lease.Try("a", Record("a", kReleaseOutcome));
  EXPECT_EQ(lease.RunDue(), 1);
  auto s = lease.Snapshot();
  EXPECT_EQ(s.state, LeaseState::kFollower);
  EXPECT_EQ(s.tick, 0);
  EXPECT_EQ(s.expires, Now() + milliseconds(20));  // backoff(0) has no jitter
  EXPECT_EQ((s.transitions[{LeaseState::kElection, LeaseState::kFollower}]), 1u);
}

TEST_F(LeaseTest, LeaderStaysLeaderAndRenewsOnExtend) {
  BackoffWriteLease lease(clock_, Options());
  Drive(lease, kExtendOutcome);
  lease.Try("a", Record("a", kExtendOutcome));
  EXPECT_EQ(lease.NextDue(), Now());  // Leader: due now
  EXPECT_EQ(lease.RunDue(), 1);
  auto s = lease.Snapshot();
  EXPECT_EQ(s.state, LeaseState::kLeader);
  EXPECT_EQ(s.expires, Now() + seconds(15));
  EXPECT_EQ(seen_.size(), 1u);  // no self-transition reported
}

TEST_F(LeaseTest, LeaderToFollowerOnRelease) {
  BackoffWriteLease lease(clock_, Options());
  Drive(lease, kExtendOutcome);
  Drive(lease, kReleaseOutcome);
  auto s = lease.Snapshot();
  EXPECT_EQ(s.state, LeaseState::kFollower);
  EXPECT_EQ(s.tick, 0);
  EXPECT_EQ(s.expires, Now() + milliseconds(20));
  EXPECT_EQ((s.transitions[{LeaseState::kLeader, LeaseState::kFollower}]), 1u);
}

TEST_F(LeaseTest, FollowerReleaseIncrementsTick) {
  BackoffWriteLease lease(clock_, Options());
  Drive(lease, kReleaseOutcome);  // follower, tick 0
  Drive(lease, kReleaseOutcome);  // tick 1
  auto s = lease.Snapshot();
  EXPECT_EQ(s.state, LeaseState::kFollower);
  EXPECT_EQ(s.tick, 1);
  EXPECT_GE(s.expires, Now() + milliseconds(80));
  EXPECT_LT(s.expires, Now() + milliseconds(120));
  Drive(lease, kReleaseOutcome);
  EXPECT_EQ(lease.Snapshot().tick, 2);
  EXPECT_EQ(seen_.size(), 1u);
}

TEST_F(LeaseTest, FollowerToLeaderOnExtendResetsTick) {
  BackoffWriteLease lease(clock_, Options());
  Drive(lease, kReleaseOutcome);
  Drive(lease, kReleaseOutcome);
  Drive(lease, kExtendOutcome);
  auto s = lease.Snapshot();
  EXPECT_EQ(s.state, LeaseState::kLeader);
  EXPECT_EQ(s.tick, 0);
  EXPECT_EQ(s.expires, Now() + seconds(15));
  EXPECT_EQ((s.transitions[{LeaseState::kFollower, LeaseState::kLeader}]), 1u);
}

TEST_F(LeaseTest, FollowerExtendDropsWorkAndBacksOff) {
  BackoffWriteLease lease(clock_, Options());
  Drive(lease, kReleaseOutcome);
  lease.Try("a", Record("a", kExtendOutcome));
  lease.Extend("a", EntryWriter::kPeer);
  auto s = lease.Snapshot();
  EXPECT_EQ(s.tick, 1);
  EXPECT_GE(s.expires, Now() + milliseconds(80));
  EXPECT_LT(s.expires, Now() + milliseconds(120));
  EXPECT_EQ(s.extend_drops, 1u);
  EXPECT_EQ(s.pending_keys, 0u);
  EXPECT_FALSE(lease.NextDue().has_value());
  clock_.Advance(seconds(30));
  EXPECT_EQ(lease.RunDue(), 0);
  EXPECT_EQ(ran_, std::vector<std::string>{"drive"});
  // Six more observed leader writes: the backoff reaches the cap.
  for (int i = 0; i < 6; ++i) lease.Extend("x", EntryWriter::kPeer);
  EXPECT_EQ(lease.Snapshot().expires, Now() + seconds(15));
}

TEST_F(LeaseTest, LeaderExtendDropsWorkOnly) {
  BackoffWriteLease lease(clock_, Options());
  Drive(lease, kExtendOutcome);
  lease.Try("a", Record("a", kExtendOutcome));
  lease.Extend("a", EntryWriter::kUs);
  EXPECT_EQ(lease.RunDue(), 0);
  EXPECT_EQ(lease.State(), LeaseState::kLeader);
  EXPECT_EQ(lease.Snapshot().tick, 0);
}

TEST_F(LeaseTest, ElectionExtendKeepsElectionByDefault) {
  BackoffWriteLease lease(clock_, Options());
  lease.Try("a", Record("a", kExtendOutcome));
  lease.Extend("a", EntryWriter::kPeer);
  EXPECT_EQ(lease.State(), LeaseState::kElection);
  EXPECT_EQ(lease.RunDue(), 0);
}

TEST_F(LeaseTest, ElectionExtendFollowsWhenEnabled) {
  auto o = Options();
  o.election_follows_extend = true;
  BackoffWriteLease lease(clock_, o);
  lease.Try("b", Record("b", kExtendOutcome));
  lease.Extend("a", EntryWriter::kUs);  // our own echo proves nothing about a leader
  EXPECT_EQ(lease.State(), LeaseState::kElection);
  lease.Extend("a", EntryWriter::kPeer);
  auto s = lease.Snapshot();
  EXPECT_EQ(s.state, LeaseState::kFollower);
  EXPECT_EQ(s.expires, Now() + milliseconds(20));
  ASSERT_EQ(seen_.size(), 1u);
  EXPECT_STREQ(seen_[0].cause, "extend");
  // "b" was queued as due now; it is re-deferred to the expiry at run time.
  EXPECT_EQ(lease.RunDue(), 0);
  EXPECT_EQ(lease.NextDue(), Now() + milliseconds(20));
  EXPECT_EQ(lease.Snapshot().follower_deferrals, 1u);
}

TEST_F(LeaseTest, FollowerDefersTryToExpiry) {
  BackoffWriteLease lease(clock_, Options());
  Drive(lease, kReleaseOutcome);
  Drive(lease, kReleaseOutcome);
  Drive(lease, kReleaseOutcome);  // tick 2: 320..720 ms
  const auto expires = lease.Snapshot().expires;
  ASSERT_GT(expires, Now() + milliseconds(300));
  lease.Try("a", Record("a", kExtendOutcome));
  EXPECT_EQ(lease.NextDue(), expires);
  clock_.Advance(expires - Now() - milliseconds(1));
  EXPECT_EQ(lease.RunDue(), 0);
  clock_.Advance(milliseconds(1));
  EXPECT_EQ(lease.RunDue(), 1);
  EXPECT_EQ(lease.State(), LeaseState::kLeader);
}

TEST_F(LeaseTest, ExpiredFollowerStillWaitsTwoBaseSteps) {
  BackoffWriteLease lease(clock_, Options());
  Drive(lease, kReleaseOutcome);
  clock_.Advance(seconds(60));  // long past the expiry
  lease.Try("a", Record("a", kExtendOutcome));
  EXPECT_EQ(lease.NextDue(), Now() + milliseconds(40));
  EXPECT_EQ(lease.RunDue(), 0);
  clock_.Advance(milliseconds(40));
  EXPECT_EQ(lease.RunDue(), 1);
}

TEST_F(LeaseTest, FollowerWorkIsRedeferredWhenLeaseExtendedMeanwhile) {
  BackoffWriteLease lease(clock_, Options());
  Drive(lease, kReleaseOutcome);
  lease.Try("a", Record("a", kExtendOutcome));  // due in 40 ms
  for (int i = 0; i < 3; ++i) lease.Extend("other", EntryWriter::kPeer);  // tick 3: >= 1.28 s
  const auto expires = lease.Snapshot().expires;
  clock_.Advance(milliseconds(40));
  EXPECT_EQ(lease.RunDue(), 0);
  EXPECT_EQ(lease.NextDue(), expires);
  clock_.Advance(expires - Now());
  EXPECT_EQ(lease.RunDue(), 1);
  EXPECT_EQ(ran_.back(), "a");
}

TEST_F(LeaseTest, LatestWorkReplacesOlder) {
  BackoffWriteLease lease(clock_, Options());
  lease.Try("a", Record("a1", kNoneOutcome));
  lease.Try("a", Record("a2", kNoneOutcome));
  EXPECT_EQ(lease.Snapshot().pending_keys, 1u);
  EXPECT_EQ(lease.RunDue(), 1);
  EXPECT_EQ(ran_, std::vector<std::string>{"a2"});
}

TEST_F(LeaseTest, RetryRerunsSameWorkAfterRetryInterval) {
  BackoffWriteLease lease(clock_, Options());
  Drive(lease, kExtendOutcome);
  int runs = 0;
  lease.Try("a", [&] { return ++runs == 1 ? kReleaseRetry : kExtendOutcome; });
  EXPECT_EQ(lease.RunDue(), 1);
  EXPECT_EQ(lease.State(), LeaseState::kFollower);
  EXPECT_EQ(lease.NextDue(), Now() + seconds(3));
  clock_.Advance(seconds(3) - milliseconds(1));
  EXPECT_EQ(lease.RunDue(), 0);
  clock_.Advance(milliseconds(1));
  EXPECT_EQ(lease.RunDue(), 1);
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(lease.Snapshot().retries, 1u);
  EXPECT_EQ(lease.State(), LeaseState::kLeader);
}

TEST_F(LeaseTest, RetryKeepsWorkQueuedWhileRunning) {
  BackoffWriteLease lease(clock_, Options());
  Drive(lease, kExtendOutcome);
  lease.Try("a", [&] {
    ran_.push_back("a1");
    lease.Try("a", Record("a2", kExtendOutcome));  // arrives while a1 runs
    return kReleaseRetry;
  });
  EXPECT_EQ(lease.RunDue(), 1);  // each key at most once per call
  EXPECT_EQ(lease.Snapshot().pending_keys, 1u);
  clock_.Advance(seconds(3));
  EXPECT_EQ(lease.RunDue(), 1);
  EXPECT_EQ(ran_, (std::vector<std::string>{"drive", "a1", "a2"}));
  EXPECT_EQ(lease.Snapshot().pending_keys, 0u);
}

TEST_F(LeaseTest, NewWorkAfterRetryDoesNotWaitForRetry) {
  BackoffWriteLease lease(clock_, Options());
  Drive(lease, kExtendOutcome);
  lease.Try("a", Record("a1", WorkOutcome{WorkResult::kNone, true}));
  EXPECT_EQ(lease.RunDue(), 1);
  EXPECT_EQ(lease.NextDue(), Now() + seconds(3));
  lease.Try("a", Record("a2", kNoneOutcome));  // leader: due now, never later
  EXPECT_EQ(lease.NextDue(), Now());
  EXPECT_EQ(lease.RunDue(), 1);
  EXPECT_EQ(ran_.back(), "a2");
  EXPECT_FALSE(lease.NextDue().has_value());
}

TEST_F(LeaseTest, ReplacingWorkWhileRunningNeverPostponesIt) {
  auto o = Options();
  o.election_follows_extend = true;
  BackoffWriteLease lease(clock_, o);
  lease.Try("a", [&] {
    lease.Try("a", Record("a2", kNoneOutcome));  // Election: due now
    lease.Extend("other", EntryWriter::kPeer);    // -> Follower
    lease.Try("a", Record("a3", kNoneOutcome));  // Follower: due in 40 ms
    return kNoneOutcome;
  });
  EXPECT_EQ(lease.RunDue(), 1);
  EXPECT_EQ(lease.State(), LeaseState::kFollower);
  EXPECT_EQ(lease.NextDue(), Now());  // a3 keeps a2's earlier due time
  EXPECT_EQ(lease.RunDue(), 0);       // but the follower check defers it
  clock_.Advance(milliseconds(20));
  EXPECT_EQ(lease.RunDue(), 1);
  EXPECT_EQ(ran_, std::vector<std::string>{"a3"});
}

TEST_F(LeaseTest, ExtendWhileRunningCancelsRetry) {
  BackoffWriteLease lease(clock_, Options());
  Drive(lease, kExtendOutcome);
  lease.Try("a", [&] {
    lease.Extend("a", EntryWriter::kPeer);  // the watch shows the entry correct meanwhile
    return kReleaseRetry;
  });
  EXPECT_EQ(lease.RunDue(), 1);
  EXPECT_FALSE(lease.NextDue().has_value());
}

TEST_F(LeaseTest, RemoveDropsQueuedWorkAndRetry) {
  BackoffWriteLease lease(clock_, Options());
  lease.Try("a", Record("a", kExtendOutcome));
  lease.Remove("a");
  EXPECT_EQ(lease.RunDue(), 0);
  EXPECT_EQ(lease.Snapshot().pending_keys, 0u);
  lease.Try("b", [&] {
    lease.Remove("b");  // deleted while its write ran
    return WorkOutcome{WorkResult::kNone, true};
  });
  EXPECT_EQ(lease.RunDue(), 1);
  clock_.Advance(seconds(10));
  EXPECT_EQ(lease.RunDue(), 0);
  lease.Remove("never-seen");
}

TEST_F(LeaseTest, TryAfterRemoveWhileRunningIsKept) {
  BackoffWriteLease lease(clock_, Options());
  lease.Try("b", [&] {
    lease.Remove("b");
    lease.Try("b", Record("b2", kNoneOutcome));  // re-created
    return WorkOutcome{WorkResult::kNone, true};
  });
  EXPECT_EQ(lease.RunDue(), 1);
  EXPECT_EQ(lease.RunDue(), 1);
  EXPECT_EQ(ran_, std::vector<std::string>{"b2"});
}

TEST_F(LeaseTest, BecomingLeaderRunsDeferredWorkAtOnce) {
  BackoffWriteLease lease(clock_, Options());
  Drive(lease, kReleaseOutcome);
  for (int i = 0; i < 4; ++i) lease.Extend("x", EntryWriter::kPeer);  // tick 4: >= 5 s
  lease.Try("a", Record("a", kNoneOutcome));
  lease.Try("b", Record("b", WorkOutcome{WorkResult::kNone, true}));
  clock_.Advance(lease.Snapshot().expires - Now());
  EXPECT_EQ(lease.RunDue(), 2);  // a: None; b: None + retry at +3 s
  lease.Try("c", Record("c", kExtendOutcome));  // deferred >= 40 ms
  lease.Try("d", Record("d", kNoneOutcome));
  clock_.Advance(milliseconds(40));
  // c wins: d (lease-deferred) runs at once; b keeps its retry delay.
  EXPECT_EQ(lease.RunDue(), 2);
  EXPECT_EQ(ran_, (std::vector<std::string>{"drive", "a", "b", "c", "d"}));
  EXPECT_EQ(lease.NextDue(), Now() + seconds(3) - milliseconds(40));
}

TEST_F(LeaseTest, ElectionDelayHoldsFirstWork) {
  auto o = Options();
  o.election_delay = seconds(1);
  std::set<SteadyTime> gates;
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    o.seed = seed;
    BackoffWriteLease lease(clock_, o);
    lease.Try("a", Record("a", kExtendOutcome));
    auto due = lease.NextDue();
    ASSERT_TRUE(due.has_value());
    // Why the floor: a replica joining a fleet meets its first change
    // together with the live leader, whose write of it must reach our watch
    // first.
    EXPECT_GE(*due, Now() + milliseconds(100)) << "seed " << seed;
    EXPECT_LT(*due, Now() + milliseconds(1100));
    gates.insert(*due);
  }
  EXPECT_GT(gates.size(), 45u);  // seeds spread the replicas
  o.seed = 3;
  BackoffWriteLease lease(clock_, o);
  lease.Try("a", Record("a", kExtendOutcome));
  const auto due = *lease.NextDue();
  clock_.Advance(due - Now() - milliseconds(1));
  EXPECT_EQ(lease.RunDue(), 0);
  clock_.Advance(milliseconds(1));
  EXPECT_EQ(lease.RunDue(), 1);
}

// A replica whose first work comes long after it started (it joined a
// converged fleet; or its cache synced late) still gives a live leader its
// election delay to write the change first, instead of racing it at once.
TEST_F(LeaseTest, ElectionDelayCountsFromTheFirstWork) {
  auto o = Options();
  o.election_delay = seconds(1);
  o.seed = 3;
  Duration offset;
  {
    BackoffWriteLease lease(clock_, o);
    lease.Try("a", Record("a", kExtendOutcome));
    offset = *lease.NextDue() - Now();
    ASSERT_GT(offset, milliseconds(100));
  }
  BackoffWriteLease lease(clock_, o);
  clock_.Advance(seconds(30));
  lease.Try("a", Record("a", kExtendOutcome));
  EXPECT_EQ(*lease.NextDue(), Now() + offset);
  EXPECT_EQ(lease.RunDue(), 0);
  lease.Extend("a", EntryWriter::kPeer);  // the leader wrote it meanwhile
  clock_.Advance(offset);
  EXPECT_EQ(lease.RunDue(), 0);
  // Later work in Election is not delayed again.
  clock_.Advance(seconds(5));
  lease.Try("b", Record("b", kExtendOutcome));
  EXPECT_EQ(*lease.NextDue(), Now());
}

TEST_F(LeaseTest, ThrowingWorkIsRetried) {
  BackoffWriteLease lease(clock_, Options());
  int runs = 0;
  lease.Try("a", [&]() -> WorkOutcome {
    if (++runs == 1) throw std::runtime_error("boom");
    return kExtendOutcome;
  });
  EXPECT_EQ(lease.RunDue(), 1);
  clock_.Advance(seconds(3));
  EXPECT_EQ(lease.RunDue(), 1);
  EXPECT_EQ(runs, 2);
}

TEST_F(LeaseTest, ShutdownStopsRunNextAndDropsWork) {
  BackoffWriteLease lease(clock_, Options());
  lease.Try("a", Record("a", kNoneOutcome));
  EXPECT_TRUE(lease.RunNext());
  auto waiter = std::async(std::launch::async, [&] { return lease.RunNext(); });
  lease.Try("b", Record("b", kNoneOutcome));
  EXPECT_TRUE(waiter.get());  // ran b
  auto blocked = std::async(std::launch::async, [&] { return lease.RunNext(); });
  lease.Shutdown();
  EXPECT_FALSE(blocked.get());
  lease.Try("c", Record("c", kNoneOutcome));
  EXPECT_FALSE(lease.RunNext());
  EXPECT_EQ(lease.RunDue(), 0);
  EXPECT_EQ(ran_, (std::vector<std::string>{"a", "b"}));
  lease.Shutdown();  // idempotent
}

TEST_F(LeaseTest, RunNextWaitsForTheClock) {
  BackoffWriteLease lease(clock_, Options());
  Drive(lease, kReleaseOutcome);
  lease.Try("a", Record("a", kExtendOutcome));  // due in 40 ms of fake time
  auto worker = std::async(std::launch::async, [&] { return lease.RunNext(); });
  clock_.Advance(milliseconds(39));
  EXPECT_EQ(lease.RunDue(), 0);
  EXPECT_EQ(lease.Snapshot().runs, 1u);  // only "drive" so far
  clock_.Advance(milliseconds(1));
  EXPECT_TRUE(worker.get());
  EXPECT_EQ(ran_.back(), "a");
}

// Blocks the work that calls Wait() until Open() is called.
class Gate {
 public:
  void Open() { open_.set_value(); }
  void Wait() { opened_.wait(); }

 private:
  std::promise<void> open_;
  std::shared_future<void> opened_ = open_.get_future().share();
};

TEST_F(LeaseTest, TwoWorkersNeverRunOneKeyAtOnce) {
  BackoffWriteLease lease(clock_, Options());
  Drive(lease, kExtendOutcome);  // leader: no single-probe limit
  std::atomic<int> a_running{0}, a_max{0};
  std::promise<void> a1_started;
  Gate release_a1;
  auto a_work = [&](std::string name, bool block) {
    return [&, name, block] {
      int n = ++a_running;
      a_max = std::max(a_max.load(), n);
      if (block) {
        a1_started.set_value();
        release_a1.Wait();
      }
      --a_running;
      return kExtendOutcome;
    };
  };
  lease.Try("a", a_work("a1", true));
  auto w1 = std::async(std::launch::async, [&] { return lease.RunNext(); });
  a1_started.get_future().wait();
  // a1 runs on w1. New work for "a" and for "b" arrive; "a" is queued first.
  lease.Try("a", a_work("a2", false));
  std::promise<void> b_done;
  lease.Try("b", [&] {
    b_done.set_value();
    return kExtendOutcome;
  });
  auto w2 = std::async(std::launch::async, [&] { return lease.RunNext(); });
  // w2 must skip busy "a" and run "b" (a bounded wait, so a bug fails
  // instead of hanging).
  EXPECT_EQ(b_done.get_future().wait_for(seconds(30)), std::future_status::ready);
  if (a_max.load() > 1) release_a1.Open();
  EXPECT_TRUE(w2.get());
  if (a_max.load() > 1) {
    (void)w1.get();
    FAIL() << "key a ran on two threads at once";
  }
  EXPECT_EQ(lease.RunDue(), 0);  // "a" is still busy
  EXPECT_EQ(lease.Snapshot().running_keys, 1u);
  release_a1.Open();
  EXPECT_TRUE(w1.get());
  EXPECT_EQ(lease.RunDue(), 1);  // a2 now
  EXPECT_EQ(a_max.load(), 1);
  EXPECT_EQ(lease.Snapshot().pending_keys, 0u);
}

TEST_F(LeaseTest, SingleProbeWhileNotLeader) {
  BackoffWriteLease lease(clock_, Options());
  std::promise<void> started;
  Gate release;
  lease.Try("a", [&] {
    started.set_value();
    release.Wait();
    return kExtendOutcome;
  });
  lease.Try("b", Record("b", kExtendOutcome));
  auto w1 = std::async(std::launch::async, [&] { return lease.RunNext(); });
  started.get_future().wait();
  EXPECT_EQ(lease.RunDue(), 0);  // Election: one probe at a time
  release.Open();
  EXPECT_TRUE(w1.get());
  EXPECT_EQ(lease.State(), LeaseState::kLeader);
  EXPECT_EQ(lease.RunDue(), 1);
}

TEST_F(LeaseTest, ParallelProbesWhenSingleProbeOff) {
  auto o = Options();
  o.single_probe = false;
  BackoffWriteLease lease(clock_, o);
  std::promise<void> started;
  Gate release;
  lease.Try("a", [&] {
    started.set_value();
    release.Wait();
    return kExtendOutcome;
  });
  lease.Try("b", Record("b", kExtendOutcome));
  auto w1 = std::async(std::launch::async, [&] { return lease.RunNext(); });
  started.get_future().wait();
  EXPECT_EQ(lease.RunDue(), 1);
  release.Open();
  EXPECT_TRUE(w1.get());
}

TEST_F(LeaseTest, SnapshotCounts) {
  BackoffWriteLease lease(clock_, Options());
  lease.Try("a", Record("a", kReleaseOutcome));
  lease.Try("b", Record("b", kExtendOutcome));
  EXPECT_EQ(lease.Snapshot().pending_keys, 2u);
  EXPECT_EQ(lease.RunDue(), 1);  // a: follower; b re-deferred
  auto s = lease.Snapshot();
  EXPECT_EQ(s.runs, 1u);
  EXPECT_EQ(s.outcomes[2], 1u);
  EXPECT_EQ(s.follower_deferrals, 1u);
  EXPECT_EQ(s.pending_keys, 1u);
  EXPECT_EQ(s.running_keys, 0u);
}

TEST(WriteLeaseOptionsTest, Validation) {
  WriteLeaseOptions o;
  EXPECT_TRUE(ValidateWriteLeaseOptions(o).ok());
  o.retry = Duration::zero();
  EXPECT_FALSE(ValidateWriteLeaseOptions(o).ok());
  o = WriteLeaseOptions();
  o.backoff.factor = 0.5;
  EXPECT_FALSE(ValidateWriteLeaseOptions(o).ok());
  o = WriteLeaseOptions();
  o.election_delay = -seconds(1);
  EXPECT_FALSE(ValidateWriteLeaseOptions(o).ok());
  o = WriteLeaseOptions();
  o.takeover.window = 0;
  EXPECT_FALSE(ValidateWriteLeaseOptions(o).ok());
  EXPECT_TRUE(ValidateWriteLeaseOptions(OpenshiftLikeLeaseOptions()).ok());
  EXPECT_STREQ(LeaseStateName(LeaseState::kFollower), "follower");
}

// The durations are checked against each other: the interval caps every
// deferral and D, so a retry, a follower floor or a minimum D beyond it
// is refused, not silently clamped.
TEST(WriteLeaseOptionsTest, DurationsMustFitInTheInterval) {
  WriteLeaseOptions o;
  o.interval = seconds(1);
  o.retry = std::chrono::hours(1);
  EXPECT_FALSE(ValidateWriteLeaseOptions(o).ok());
  o.retry = seconds(1);
  EXPECT_TRUE(ValidateWriteLeaseOptions(o).ok());
  o.takeover.min_deadline = seconds(2);
  EXPECT_FALSE(ValidateWriteLeaseOptions(o).ok());
  o.takeover.mode = TakeoverMode::kOff;  // no D to cap
  EXPECT_TRUE(ValidateWriteLeaseOptions(o).ok());
  o = WriteLeaseOptions();
  o.follower_min_delay = seconds(20);
  EXPECT_FALSE(ValidateWriteLeaseOptions(o).ok());
}

}  // namespace
}  // namespace routestatus::lease
