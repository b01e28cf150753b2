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
  // write, then saw the leader write 8 times. The lost write's answer (at
  // once: zero latency) is the deadline's first sample.
  void FollowAtTheCap(BackoffWriteLease& lease) {
    lease.Try("lost", Record("lost", kReleaseOutcome));
    ASSERT_EQ(lease.RunDue(), 1);
    for (int i = 0; i < 8; ++i) lease.Extend("leader-" + std::to_string(i), EntryWriter::kPeer);
    ASSERT_EQ(lease.State(), LeaseState::kFollower);
    ASSERT_EQ(lease.Snapshot().expires, clock_.Now() + seconds(15));
    ran_.clear();
  }
  // A follower at the cap takes `key` over; its write gets a 409 from an
  // owner's update that left our entry alone.
  void TakeOverIntoAnOwnersUpdate(BackoffWriteLease& lease, const std::string& key) {
    FollowAtTheCap(lease);
    const WorkOutcome owner_moved{WorkResult::kNone, true, Duration::zero(), Failure::kNothing};
    lease.Try(key, Record(key, owner_moved));
    ASSERT_EQ(RunAtNextDue(lease), 1);
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
  // The PUT latencies, zero here: the lost write's and the takeover's.
  EXPECT_EQ(s.progress_samples, 2u);
  EXPECT_EQ(s.progress_quantile, Duration::zero());
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
  EXPECT_EQ(s.progress_samples, 1u + 499u);  // the lost write's answer, the waits
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
// budget) and then one every 100 ms (its QPS): each write is progress, so
// the takeover waits (a deadline per held change, learnt from the fast
// writes, overran it: docs/lease-history.md).
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

// After a burst the leader worked through, a dead leader's next change
// waits only the floor: a backlog is progress, not a slow leader.
TEST_F(TakeoverLeaseTest, ABacklogWrittenDoesNotInflateTheDeadline) {
  BackoffWriteLease lease(clock_, Options());
  FollowAtTheCap(lease);
  for (int i = 0; i < 100; ++i) lease.Try("k" + std::to_string(i), Record("k", kExtendOutcome));
  for (int i = 0; i < 100; ++i) {
    clock_.Advance(milliseconds(20));
    lease.Extend("k" + std::to_string(i), EntryWriter::kPeer);
  }
  EXPECT_EQ(lease.Snapshot().takeover_deadline, milliseconds(500));
}

// A slow API server: every write takes about 1 s. The first change: we
// take it over at D = 500 ms (+ jitter); while our PUT is in flight the
// leader's write lands (1 s after the change) and ours loses. One slow
// answer may be a fluke (alone it would double D and slow every failover
// after a crash), so D stays; the second change goes the
// same way, and two slow answers raise D above the leader's 1 s from
// change to write, so the next change is not overrun.
TEST_F(TakeoverLeaseTest, SlowLeaderRaisesTheDeadline) {
  BackoffWriteLease lease(clock_, Options());
  FollowAtTheCap(lease);
  std::vector<Duration> latencies;
  for (const std::string key : {"a", "a2"}) {
    const SteadyTime t0 = clock_.Now();
    lease.Try(key, [&, key, t0] {
      clock_.Advance(t0 + seconds(1) - clock_.Now());
      lease.Extend(key, EntryWriter::kPeer);  // the leader's write reaches our watch
      clock_.Advance(milliseconds(500));
      ran_.push_back(key);
      return kReleaseRetry;  // our PUT: 409
    });
    const SteadyTime sent = *lease.NextDue();
    EXPECT_EQ(RunAtNextDue(lease), 1);
    latencies.push_back(t0 + milliseconds(1500) - sent);
    EXPECT_EQ(lease.Snapshot().pending_keys, 0u);  // the leader's write cancelled our retry
    clock_.Advance(seconds(5));
    if (key == "a") {
      EXPECT_EQ(lease.Snapshot().takeover_deadline, milliseconds(500));
    }
  }
  auto s = lease.Snapshot();
  EXPECT_EQ(s.takeovers[static_cast<int>(WorkResult::kRelease)], 2u);
  EXPECT_EQ(s.progress_samples, 3u);  // FollowAtTheCap's lost write (0 ms), ours
  // Nearest rank of three is the largest; the largest but one counts.
  EXPECT_EQ(s.progress_quantile, std::min(latencies[0], latencies[1]));
  const Duration d = s.takeover_deadline;
  EXPECT_EQ(d, 2 * s.progress_quantile);
  EXPECT_GT(d, seconds(1));

  const SteadyTime queued = clock_.Now();
  lease.Try("b", Record("b", kExtendOutcome));
  EXPECT_GE(*lease.NextDue() - queued, d);
  clock_.Advance(seconds(1));
  EXPECT_EQ(lease.RunDue(), 0);
  lease.Extend("b", EntryWriter::kPeer);
  EXPECT_EQ(lease.RunDue(), 0);
  EXPECT_FALSE(lease.NextDue().has_value());
  EXPECT_EQ(ran_, (std::vector<std::string>{"a", "a2"}));
  s = lease.Snapshot();
  EXPECT_EQ(s.takeovers[static_cast<int>(WorkResult::kRelease)], 2u);
  // The leader's write of "b", 1 s after it arrived and within D, is a
  // sample: the largest but one of four is now the larger answer.
  EXPECT_EQ(s.progress_samples, 4u);
  EXPECT_EQ(s.takeover_deadline, 2 * std::max(latencies[0], latencies[1]));
}

// A lost takeover starts a new wait: the next held key is taken over D
// (+ the stretch) later, not at once and not after a pause.
TEST_F(TakeoverLeaseTest, LostTakeoverStartsANewWait) {
  BackoffWriteLease lease(clock_, Options());
  FollowAtTheCap(lease);
  lease.Try("a", Record("a", kReleaseOutcome));
  lease.Try("b", Record("b", kExtendOutcome));
  EXPECT_EQ(RunAtNextDue(lease), 1);  // "a" lost; "b" is not run at once
  EXPECT_EQ(ran_, std::vector<std::string>{"a"});
  const SteadyTime lost = clock_.Now();
  const Duration d = lease.Snapshot().takeover_deadline;
  EXPECT_EQ(RunAtNextDue(lease), 1);
  EXPECT_GE(Since(lost), d);
  EXPECT_LT(Since(lost), d + d);
  EXPECT_EQ(ran_, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(lease.State(), LeaseState::kLeader);
}

// So does a takeover whose write failed without showing another writer
// (no answer from the API server, 5xx): the held work is not run key after
// key against a server that does not answer; the lease is kept, and the
// failed key waits for its retry interval.
TEST_F(TakeoverLeaseTest, FailedTakeoverStartsANewWait) {
  BackoffWriteLease lease(clock_, Options());
  FollowAtTheCap(lease);
  lease.Try("a", Record("a", WorkOutcome{WorkResult::kNone, true}));
  lease.Try("b", Record("b", kExtendOutcome));
  EXPECT_EQ(RunAtNextDue(lease), 1);
  EXPECT_EQ(ran_, std::vector<std::string>{"a"});
  const SteadyTime failed = clock_.Now();
  const Duration d = lease.Snapshot().takeover_deadline;
  EXPECT_EQ(lease.Snapshot().takeovers[static_cast<int>(WorkResult::kNone)], 1u);
  EXPECT_EQ(lease.State(), LeaseState::kFollower);
  EXPECT_EQ(RunAtNextDue(lease), 1);  // the takeover of "b" wins
  EXPECT_GE(Since(failed), d);
  EXPECT_LT(Since(failed), d + d);
  EXPECT_EQ(lease.State(), LeaseState::kLeader);
  EXPECT_EQ(RunAtNextDue(lease), 1);  // "a"'s retry
  EXPECT_EQ(Since(failed), seconds(3));
  EXPECT_EQ(ran_, (std::vector<std::string>{"a", "b", "a"}));
}

// A takeover whose write gets a 409 because an owner's update moved the
// version (our entry untouched) is no lost race; when the owner's update
// queues the key again after a peer's write reached our watch while ours
// was out, the leader is alive: the change waits D (+ jitter) again.
TEST_F(TakeoverLeaseTest, OwnerUpdateThatBeatATakeoverWaitsAgainAfterProgressDuringIt) {
  BackoffWriteLease lease(clock_, Options());
  FollowAtTheCap(lease);
  const WorkOutcome owner_moved{WorkResult::kNone, true, Duration::zero(), Failure::kNothing};
  lease.Try("a", [this, &lease, owner_moved] {
    ran_.push_back("a");
    clock_.Advance(milliseconds(10));
    lease.Extend("b", EntryWriter::kPeer);  // the leader's write of another key
    return owner_moved;
  });
  EXPECT_EQ(RunAtNextDue(lease), 1);
  // The owner's update reaches the watch after a whole wait has passed
  // since that write: the key's change still waits D (+ jitter) from now.
  clock_.Advance(seconds(2));
  const SteadyTime queued = clock_.Now();
  lease.Try("a", Record("a", kExtendOutcome));
  EXPECT_EQ(lease.RunDue(), 0);
  EXPECT_EQ(RunAtNextDue(lease), 1);
  EXPECT_GE(Since(queued), milliseconds(500));
}

// A takeover of a key the status path holds back (a contention block: no
// request sent) learnt nothing: the next held key is taken over at once,
// not after the retry interval's pause (otherwise a change waits seconds
// behind a route the contention tracker holds back).
TEST_F(TakeoverLeaseTest, TakeoverOfAKeyHeldBackGoesOnWithTheNext) {
  BackoffWriteLease lease(clock_, Options());
  FollowAtTheCap(lease);
  const WorkOutcome held_back{WorkResult::kNone, true, seconds(15), Failure::kNothing};
  lease.Try("a", Record("a", held_back));
  lease.Try("b", Record("b", kExtendOutcome));
  EXPECT_EQ(RunAtNextDue(lease), 2);  // "a" held back, then "b" at once
  EXPECT_EQ(ran_, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(lease.State(), LeaseState::kLeader);
}

// If the leader wrote in between, it is alive: the key's next
// change waits D (+ jitter) again, as any held change.
TEST_F(TakeoverLeaseTest, OwnerUpdateThatBeatATakeoverWaitsAgainAfterLeaderProgress) {
  BackoffWriteLease lease(clock_, Options());
  TakeOverIntoAnOwnersUpdate(lease, "a");
  clock_.Advance(milliseconds(10));
  lease.Extend("b", EntryWriter::kPeer);
  const SteadyTime progress = clock_.Now();
  clock_.Advance(milliseconds(10));
  lease.Try("a", Record("a", kExtendOutcome));
  EXPECT_EQ(lease.RunDue(), 0);
  EXPECT_EQ(RunAtNextDue(lease), 1);
  EXPECT_GE(Since(progress), milliseconds(500));
  EXPECT_EQ(ran_, (std::vector<std::string>{"a", "a"}));
}

// ... unless the winner's write reaches our watch first: then we follow
// the winner as usual (D after its last write). The race we lost teaches D
// nothing (learnt as a slow leader's write, D would grow with every lost
// race).
TEST_F(TakeoverLeaseTest, LostTakeoverResumesWhenTheWinnerShows) {
  BackoffWriteLease lease(clock_, Options());
  FollowAtTheCap(lease);
  lease.Try("a", Record("a", kReleaseOutcome));
  lease.Try("b", Record("b", kExtendOutcome));
  EXPECT_EQ(RunAtNextDue(lease), 1);
  clock_.Advance(milliseconds(30));
  lease.Extend("a", EntryWriter::kPeer);  // the winner's write of "a"
  const SteadyTime seen = clock_.Now();
  const Duration d = lease.Snapshot().takeover_deadline;
  EXPECT_EQ(d, milliseconds(500));
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

// Work waiting for its retry interval is not taken over early, nor held:
// when the interval is over it is held work again, and the leader gets D
// (+ jitter) from then to show progress.
TEST_F(TakeoverLeaseTest, RetryIntervalIsKept) {
  BackoffWriteLease lease(clock_, Options());
  FollowAtTheCap(lease);
  lease.Try("a", Record("a", kReleaseRetry));
  EXPECT_EQ(RunAtNextDue(lease), 1);  // lost; retry in 3 s
  const SteadyTime lost = clock_.Now();
  EXPECT_EQ(RunAtNextDue(lease), 0);  // due again: held from now
  EXPECT_EQ(Since(lost), seconds(3));
  EXPECT_EQ(RunAtNextDue(lease), 1);
  EXPECT_GE(Since(lost), seconds(3) + milliseconds(500));
  EXPECT_LT(Since(lost), seconds(3) + milliseconds(750));
  EXPECT_EQ(ran_, (std::vector<std::string>{"a", "a"}));
}

// A key that keeps failing waits out its own backoff
// (here 5 min) on the follower. That is not held work: a change that
// arrives after a quiet spell starts a new wait (it was taken over at
// once, the wait dating from the last peer write), and the leader's write
// of it is a sample of 100 ms, not of the quiet spell (D went to the cap).
TEST_F(TakeoverLeaseTest, FailingKeyIsNotHeldWorkAndAQuietSpellIsNoSample) {
  BackoffWriteLease lease(clock_, Options());
  FollowAtTheCap(lease);
  lease.Try("bad", Record("bad", WorkOutcome{WorkResult::kNone, true, std::chrono::minutes(5)}));
  EXPECT_EQ(RunAtNextDue(lease), 1);  // taken over once; fails; retried in 5 min
  clock_.Advance(milliseconds(200));
  lease.Extend("x", EntryWriter::kPeer);  // the leader's last write before the quiet spell
  clock_.Advance(seconds(10));
  const SteadyTime change = clock_.Now();
  lease.Try("a", Record("a", kExtendOutcome));
  EXPECT_GE(*lease.NextDue() - change, milliseconds(500));
  clock_.Advance(milliseconds(100));
  EXPECT_EQ(lease.RunDue(), 0);
  lease.Extend("a", EntryWriter::kPeer);  // the live leader writes it
  EXPECT_EQ(ran_, std::vector<std::string>{"bad"});
  auto s = lease.Snapshot();
  EXPECT_EQ(s.takeover_deadline, milliseconds(500));
  EXPECT_LE(s.progress_quantile, milliseconds(100));
  EXPECT_EQ(s.takeovers[static_cast<int>(WorkResult::kRelease)], 0u);
}

// A key whose write fails on its own (Failure::kThisKey) is
// parked on a follower: never taken over nor held. While the leader makes
// progress (elsewhere) it is not retried here at all; the leader retries
// it. Once the follower's lease has expired (a quiet fleet, or a dead
// leader) it runs at its own backoff like any follower work. A new change
// of it is ordinary held work again.
TEST_F(TakeoverLeaseTest, FailingKeyIsParkedWhileFollowing) {
  BackoffWriteLease lease(clock_, Options());
  FollowAtTheCap(lease);
  const WorkOutcome failing{WorkResult::kNone, true, seconds(3), Failure::kThisKey};
  lease.Try("bad", Record("bad", failing));
  EXPECT_EQ(RunAtNextDue(lease), 1);  // the first attempt: a takeover
  for (int i = 0; i < 600; ++i) {     // 10 minutes of the leader's progress elsewhere
    clock_.Advance(seconds(1));
    lease.Extend("other-" + std::to_string(i), EntryWriter::kPeer);
    EXPECT_EQ(lease.RunDue(), 0) << i;
  }
  EXPECT_EQ(lease.Snapshot().pending_keys, 1u);
  // A change of another key: held from now, taken over D later if the
  // leader does not write it; "bad" is not held and not taken over.
  const SteadyTime change = clock_.Now();
  lease.Try("a", Record("a", kNoneOutcome));
  EXPECT_GE(*lease.NextDue() - change, milliseconds(500));
  EXPECT_EQ(RunAtNextDue(lease), 1);
  EXPECT_EQ(ran_, (std::vector<std::string>{"bad", "a"}));
  // The fleet goes quiet: once our lease has expired, "bad" runs (at most
  // at its backoff), as any follower's work.
  clock_.Advance(seconds(14));
  EXPECT_EQ(lease.RunDue(), 0) << "the lease runs 15 s from the leader's last write";
  clock_.Advance(seconds(1));
  EXPECT_EQ(lease.RunDue(), 1);
  EXPECT_EQ(ran_.back(), "bad");
  EXPECT_EQ(lease.State(), LeaseState::kFollower);
  // A new change of "bad" (another desired entry) is held work, taken over
  // D later.
  ran_.clear();
  lease.Extend("z", EntryWriter::kPeer);
  const SteadyTime fixed = clock_.Now();
  lease.Try("bad", Record("bad", kExtendOutcome));
  EXPECT_EQ(RunAtNextDue(lease), 1);
  EXPECT_GE(Since(fixed), milliseconds(500));
  EXPECT_LT(Since(fixed), milliseconds(750));
  EXPECT_EQ(ran_, std::vector<std::string>{"bad"});
  EXPECT_EQ(lease.State(), LeaseState::kLeader);
}

// The followers of dead leaders race, and
// this one loses every race (409 at once, the winner's write 20 ms later).
// D stays at the floor, so every failover stays D (+ jitter) after the
// change.
TEST_F(TakeoverLeaseTest, LostRacesDoNotRaiseTheDeadline) {
  BackoffWriteLease lease(clock_, Options());
  FollowAtTheCap(lease);
  for (int race = 0; race < 6; ++race) {
    const std::string key = "k" + std::to_string(race);
    clock_.Advance(seconds(5));
    const SteadyTime change = clock_.Now();
    lease.Try(key, Record(key, kReleaseRetry));
    EXPECT_EQ(RunAtNextDue(lease), 1) << race;
    EXPECT_LT(Since(change), milliseconds(750)) << race;
    clock_.Advance(milliseconds(20));
    lease.Extend(key, EntryWriter::kPeer);  // the winner's write
  }
  auto s = lease.Snapshot();
  EXPECT_EQ(s.takeovers[static_cast<int>(WorkResult::kRelease)], 6u);
  EXPECT_EQ(s.takeover_deadline, milliseconds(500));
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

// After a quiet spell longer than the lease, the follower's expiry is long past.
// Held work used to run at the follower floor (100 ms here, 0.5-1 s by
// default), racing a leader whose write takes longer than that; the
// leader's silence meant only that nothing needed writing. It now waits
// for the takeover wait, D (+ jitter), as work held before the expiry does.
TEST_F(TakeoverLeaseTest, ExpiredLeaseDoesNotUndercutTheTakeoverWait) {
  WriteLeaseOptions o = Options();
  o.follower_min_delay = milliseconds(100);
  o.follower_delay_jitter = false;
  BackoffWriteLease lease(clock_, o);
  FollowAtTheCap(lease);
  clock_.Advance(seconds(60));
  ASSERT_LT(lease.Snapshot().expires, clock_.Now());
  const SteadyTime queued = clock_.Now();
  lease.Try("a", Record("a", kExtendOutcome));
  clock_.Advance(milliseconds(499));
  EXPECT_EQ(lease.RunDue(), 0) << "ran before the takeover deadline (500 ms)";
  // A leader that is alive writes it meanwhile: nothing of ours runs.
  lease.Extend("a", EntryWriter::kPeer);
  EXPECT_EQ(RunAtNextDue(lease), 0);
  EXPECT_TRUE(ran_.empty());
  // Without a leader, the next change is written D (+ jitter) after it
  // came. (The leader's 499 ms is the largest of two samples, with
  // FollowAtTheCap's 0 ms, so D stays at the floor until a second one.)
  const Duration d = lease.Snapshot().takeover_deadline;
  EXPECT_EQ(lease.Snapshot().progress_samples, 2u);
  EXPECT_EQ(d, milliseconds(500));
  clock_.Advance(seconds(60));
  const SteadyTime second = clock_.Now();
  EXPECT_GT(second, queued);
  lease.Try("b", Record("b", kExtendOutcome));
  // (The first due time may be the follower floor's, where the work is
  // deferred again to the takeover wait's end.)
  int runs = 0;
  for (int i = 0; i < 3 && runs == 0; ++i) runs = RunAtNextDue(lease);
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(ran_, std::vector<std::string>{"b"});
  EXPECT_GE(Since(second), d);
  EXPECT_LT(Since(second), d * 3 / 2);
}

}  // namespace
}  // namespace routestatus::lease

namespace routestatus::lease {
namespace {

// A leader cut off from the API server steps down at once, and
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

// A slow API server: every status PUT takes 1 s.
// At start-up the replicas race for the first route; the loser's answer
// came back after 1 s, the latency the leader pays on every write, so it
// is a sample as a follower's probe's answer is (before: only a
// follower's probes were, and D stayed at 500 ms, below the slow leader's
// 1 s between writes).
TEST_F(TakeoverLeaseTest, LostElectionWriteTeachesTheWriteLatency) {
  BackoffWriteLease lease(clock_, Options());
  ASSERT_EQ(lease.State(), LeaseState::kElection);
  lease.Try("first", [this] {
    clock_.Advance(seconds(1));  // the PUT's answer: a 409
    return kReleaseOutcome;
  });
  ASSERT_EQ(lease.RunDue(), 1);
  auto s = lease.Snapshot();
  EXPECT_EQ(s.state, LeaseState::kFollower);
  EXPECT_EQ(s.progress_samples, 1u);
  // One answer alone counts at most as the floor (it may be one rare slow
  // request): D doubles to 1 s, above the
  // slow leader's 1 s from change to write only with the jitter...
  EXPECT_EQ(s.takeover_deadline, seconds(1));
  // ...and a second slow answer sets D from the write latency.
  lease.Try("second", [this] {
    clock_.Advance(seconds(1));
    return kReleaseOutcome;
  });
  int runs = 0;  // (the floor's due time may come first: deferred again)
  for (int i = 0; i < 3 && runs == 0; ++i) runs = RunAtNextDue(lease);
  ASSERT_EQ(runs, 1);
  s = lease.Snapshot();
  EXPECT_EQ(s.progress_samples, 2u);
  EXPECT_EQ(s.takeover_deadline, seconds(2));
}

// A follower that just lost a race (tick 0) and then sees the
// leader write every 400 ms (within D = 500 ms) holds its work; before,
// each peer write set the expiry to the tick's backoff (80 ms, 320 ms),
// and the held work ran at that expiry, racing the leader.
TEST_F(TakeoverLeaseTest, ShortBackoffDoesNotUndercutTheTakeoverDeadline) {
  BackoffWriteLease lease(clock_, Options());
  lease.Try("lost", Record("lost", kReleaseOutcome));
  ASSERT_EQ(lease.RunDue(), 1);
  ASSERT_EQ(lease.State(), LeaseState::kFollower);
  ran_.clear();
  lease.Try("held", Record("held", kExtendOutcome));
  for (int i = 0; i < 20; ++i) {
    clock_.Advance(milliseconds(400));
    lease.Extend("leader-" + std::to_string(i), EntryWriter::kPeer);
    ASSERT_EQ(lease.RunDue(), 0) << "overran the leader at its write " << i;
    ASSERT_GE(lease.Snapshot().expires - clock_.Now(), milliseconds(750))
        << "the expiry undercuts the takeover's longest wait, D x 1.5";
  }
  EXPECT_TRUE(ran_.empty());
  // The leader stops: the held work is taken over D (+ jitter) later. (The
  // leader wrote other changes than the one we hold: progress, no samples.)
  const Duration d = lease.Snapshot().takeover_deadline;
  EXPECT_EQ(d, milliseconds(500));
  const SteadyTime last = clock_.Now();
  EXPECT_EQ(RunAtNextDue(lease), 1);
  EXPECT_EQ(ran_, std::vector<std::string>{"held"});
  EXPECT_GE(Since(last), d);
  EXPECT_LT(Since(last), d * 3 / 2);
}

}  // namespace
}  // namespace routestatus::lease

namespace routestatus::lease {
namespace {

// Two followers of a leader that stepped down take over two different keys
// at once; each sees the other's write while its own is out. A probe that
// succeeds then keeps us following: both leading raced every next change
// (LeaseRules::lead_uncontested).
TEST_F(TakeoverLeaseTest, ProbeThatSawAnotherWriterDoesNotMakeUsLead) {
  BackoffWriteLease lease(clock_, Options());
  FollowAtTheCap(lease);
  lease.Try("a", [this, &lease] {
    clock_.Advance(milliseconds(300));
    lease.Extend("b", EntryWriter::kPeer);  // the other follower's takeover
    ran_.push_back("a");
    return kExtendOutcome;  // ours succeeded too: first on "a"
  });
  EXPECT_EQ(RunAtNextDue(lease), 1);
  EXPECT_EQ(ran_, std::vector<std::string>{"a"});
  EXPECT_EQ(lease.State(), LeaseState::kFollower);
  // Without such a write, a takeover still makes us lead.
  lease.Try("c", Record("c", kExtendOutcome));
  EXPECT_EQ(RunAtNextDue(lease), 1);
  EXPECT_EQ(lease.State(), LeaseState::kLeader);
}

// A leader with two writes out loses one (409: another replica leads) and
// follows; its other write, sent while it led, then succeeds. That success
// is no evidence that we lead: we stay a follower.
TEST_F(TakeoverLeaseTest, WriteSentBeforeLosingDoesNotMakeUsLeadAgain) {
  BackoffWriteLease lease(clock_, Options());
  lease.Try("a", Record("a", kExtendOutcome));
  ASSERT_EQ(lease.RunDue(), 1);
  ASSERT_EQ(lease.State(), LeaseState::kLeader);
  lease.Try("late", [this, &lease] {
    // While this PUT is out, the other worker's PUT is answered: 409.
    EXPECT_EQ(lease.RunDue(), 1);
    EXPECT_EQ(lease.State(), LeaseState::kFollower);
    ran_.push_back("late");
    return kExtendOutcome;
  });
  lease.Try("lost", Record("lost", kReleaseOutcome));
  ASSERT_EQ(lease.RunDue(), 1);
  EXPECT_EQ(ran_, (std::vector<std::string>{"a", "lost", "late"}));
  EXPECT_EQ(lease.State(), LeaseState::kFollower);
}

}  // namespace
}  // namespace routestatus::lease
