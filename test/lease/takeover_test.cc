// The takeover deadline (lease/takeover.h): the estimator as table tests,
// the timer with explicit times.
#include "lease/takeover.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace routestatus::lease {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TakeoverOptions Options(TakeoverMode mode = TakeoverMode::kProgress) {
  TakeoverOptions o;
  o.mode = mode;
  o.min_deadline = milliseconds(500);
  o.factor = 2.0;
  o.quantile = 0.95;
  o.window = 64;
  o.jitter = 0.5;
  return o;
}

std::vector<Duration> Repeat(Duration d, int n) { return std::vector<Duration>(n, d); }

std::vector<Duration> Concat(std::vector<std::vector<Duration>> parts) {
  std::vector<Duration> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

struct EstimatorCase {
  std::string name;
  std::vector<Duration> samples;
  Duration cap;
  Duration quantile;
  Duration deadline;
};

TEST(DeadlineEstimatorTest, Table) {
  const std::vector<EstimatorCase> cases = {
      {"no samples: the floor", {}, seconds(15), Duration::zero(), milliseconds(500)},
      {"no samples, cap below the floor: the cap", {}, milliseconds(200), Duration::zero(),
       milliseconds(200)},
      {"fast leader: the floor", Repeat(milliseconds(10), 20), seconds(15), milliseconds(10),
       milliseconds(500)},
      {"1 s leader: factor x 1 s", Repeat(seconds(1), 5), seconds(15), seconds(1), seconds(2)},
      {"slow samples above the cap: the cap", Repeat(seconds(20), 3), seconds(15), seconds(20),
       seconds(15)},
      {"negative samples count as zero", Repeat(milliseconds(-5), 3), seconds(15),
       Duration::zero(), milliseconds(500)},
      // 64 in the window, rank ceil(0.95 x 64) = 61: three outliers are ignored...
      {"three outliers of 64 ignored",
       Concat({Repeat(seconds(1), 61), Repeat(seconds(10), 3)}), seconds(15), seconds(1),
       seconds(2)},
      // ...a fourth is not.
      {"four outliers of 64 count", Concat({Repeat(seconds(1), 60), Repeat(seconds(10), 4)}),
       seconds(15), seconds(10), seconds(15)},
      // A leader with 4 parallel 1 s PUTs: one 1 s wait, three near zero.
      {"one wait of four is long",
       Concat({Repeat(seconds(1), 1), Repeat(milliseconds(1), 3), Repeat(seconds(1), 1),
               Repeat(milliseconds(1), 3)}),
       seconds(15), seconds(1), seconds(2)},
      // One rare slow answer never sets D, however few samples there are
      // (a 945 ms answer, then a dozen fast waits, would double D to 1.9 s).
      {"one slow sample among fast ones is ignored",
       Concat({Repeat(milliseconds(945), 1), Repeat(milliseconds(30), 12)}), seconds(15),
       milliseconds(30), milliseconds(500)},
      // ...and alone it counts at most as the floor.
      {"one sample alone counts at most as the floor", Repeat(milliseconds(1410), 1),
       seconds(15), milliseconds(500), seconds(1)},
      {"one fast sample alone counts as itself", Repeat(milliseconds(300), 1), seconds(15),
       milliseconds(300), milliseconds(600)},
      // A second slow one is evidence: a leader slow for real.
      {"two slow samples set D", Concat({Repeat(seconds(1), 2), Repeat(milliseconds(30), 3)}),
       seconds(15), seconds(1), seconds(2)},
      // The window keeps the last 64: old slow samples are forgotten.
      {"window forgets", Concat({Repeat(seconds(1), 10), Repeat(milliseconds(20), 64)}),
       seconds(15), milliseconds(20), milliseconds(500)},
  };
  for (const auto& c : cases) {
    DeadlineEstimator e(Options(), c.cap);
    for (Duration s : c.samples) e.Add(s);
    EXPECT_EQ(e.Quantile(), c.quantile) << c.name;
    EXPECT_EQ(e.Deadline(), c.deadline) << c.name;
    EXPECT_EQ(e.total(), c.samples.size()) << c.name;
  }
}

// Quantile 1 is the largest sample but one: the largest alone never sets D.
TEST(DeadlineEstimatorTest, QuantileOneIsTheLargestButOne) {
  TakeoverOptions o = Options();
  o.quantile = 1.0;
  o.factor = 1.5;
  DeadlineEstimator e(o, seconds(15));
  for (int i = 1; i <= 10; ++i) e.Add(milliseconds(100 * i));
  EXPECT_EQ(e.Quantile(), milliseconds(900));
  EXPECT_EQ(e.Deadline(), milliseconds(1350));
}

TEST(TakeoverOptionsTest, Validation) {
  EXPECT_TRUE(ValidateTakeoverOptions(TakeoverOptions()).ok());
  auto bad = [](auto mutate) {
    TakeoverOptions o;
    mutate(o);
    return !ValidateTakeoverOptions(o).ok();
  };
  EXPECT_TRUE(bad([](TakeoverOptions& o) { o.min_deadline = Duration::zero(); }));
  EXPECT_TRUE(bad([](TakeoverOptions& o) { o.factor = 0; }));
  EXPECT_TRUE(bad([](TakeoverOptions& o) { o.quantile = 0; }));
  EXPECT_TRUE(bad([](TakeoverOptions& o) { o.quantile = 1.01; }));
  EXPECT_TRUE(bad([](TakeoverOptions& o) { o.window = 0; }));
  EXPECT_TRUE(bad([](TakeoverOptions& o) { o.jitter = -0.1; }));
  EXPECT_TRUE(bad([](TakeoverOptions& o) { o.max_jitter = milliseconds(-1); }));
  EXPECT_TRUE(bad([](TakeoverOptions& o) { o.stretch_limit = milliseconds(-1); }));
  EXPECT_TRUE(bad([](TakeoverOptions& o) { o.min_stretch = milliseconds(-1); }));
}

TEST(TakeoverModeTest, NamesRoundTrip) {
  for (TakeoverMode m : {TakeoverMode::kOff, TakeoverMode::kProgress}) {
    EXPECT_EQ(ParseTakeoverMode(TakeoverModeName(m)), m);
  }
  EXPECT_FALSE(ParseTakeoverMode("expiry").has_value());
  EXPECT_FALSE(ParseTakeoverMode("per-change").has_value());  // removed
}

class TakeoverTimerTest : public ::testing::Test {
 protected:
  SteadyTime At(int ms) { return t0_ + milliseconds(ms); }
  // True if `due` is D after `start` plus jitter in [0, D/2).
  static bool InWindow(SteadyTime due, SteadyTime start, Duration d) {
    return due >= start + d && due < start + d + d / 2;
  }
  const SteadyTime t0_ = SteadyTime() + seconds(1000);
};

TEST_F(TakeoverTimerTest, ProgressWaitStartsAtFollowAndHold) {
  TakeoverTimer t(Options(), seconds(15), 1);
  t.Follow(At(0));
  EXPECT_TRUE(InWindow(*t.WaitDue(), At(0), milliseconds(500)));
  t.Hold(At(2000));  // first work after a quiet period
  EXPECT_TRUE(InWindow(*t.WaitDue(), At(2000), milliseconds(500)));
  EXPECT_EQ(t.estimator().total(), 0u);
}

TEST_F(TakeoverTimerTest, ProgressWhileHoldingIsASampleAndRestartsTheWait) {
  TakeoverTimer t(Options(), seconds(15), 1);
  t.Follow(At(0));
  t.Hold(At(100));
  t.ForeignWrite(At(500), /*holding=*/true, At(100));  // within D: a sample
  EXPECT_EQ(t.estimator().Quantile(), milliseconds(400));
  EXPECT_EQ(t.estimator().Deadline(), milliseconds(800));
  EXPECT_TRUE(InWindow(*t.WaitDue(), At(500), milliseconds(800)));
  t.Probe();  // our takeover raced a slow API server, which answered in 1 s
  t.ProbeAnswered(seconds(1));
  t.ForeignWrite(At(1500), /*holding=*/true, At(500));  // raced: no sample
  EXPECT_EQ(t.estimator().total(), 2u);
  // One slow answer is the largest of two: it does not count yet.
  EXPECT_EQ(t.estimator().Deadline(), milliseconds(800));
  t.Probe();  // again: the server is slow for real
  t.ProbeAnswered(seconds(1));
  t.ForeignWrite(At(2500), /*holding=*/true, At(1500));
  EXPECT_EQ(t.estimator().total(), 3u);
  EXPECT_EQ(t.estimator().Quantile(), seconds(1));
  EXPECT_EQ(t.estimator().Deadline(), seconds(2));
  EXPECT_TRUE(InWindow(*t.WaitDue(), At(2500), seconds(2)));
  // A burst: the leader writes every 20 ms; each write restarts the wait,
  // and once the two slow answers are under 5% of the window they no
  // longer count (the next largest, 400 ms, does).
  // (Each write is of a change we held since before the burst.)
  for (int i = 1; i <= 36; ++i) t.ForeignWrite(At(2500 + 20 * i), true, At(2400));
  EXPECT_TRUE(InWindow(*t.WaitDue(), At(3220), seconds(2)));  // 2 of 39: still count
  t.ForeignWrite(At(3240), true, At(2400));
  EXPECT_TRUE(InWindow(*t.WaitDue(), At(3240), milliseconds(800)));  // 2 of 40: ignored
  EXPECT_EQ(t.estimator().total(), 40u);
}

// A wait longer than D that ends in a write we did not race is most likely
// another follower taking over from a dead leader: no sample, or each
// failover would make the next one slower. Nor is a wait we raced: the
// write that ends it came at about our own deadline. What we learn from a
// race is how long the server took to answer our write.
TEST_F(TakeoverTimerTest, LongWaitWithoutOurWriteIsNoSample) {
  TakeoverTimer t(Options(), seconds(15), 1);
  t.Follow(At(0));
  t.Hold(At(0));
  t.ForeignWrite(At(700), /*holding=*/true, At(0));
  EXPECT_EQ(t.estimator().total(), 0u);
  EXPECT_EQ(t.estimator().Deadline(), milliseconds(500));
  t.Hold(At(1000));
  t.Probe();
  t.ForeignWrite(At(1700), /*holding=*/true, At(1000));
  EXPECT_EQ(t.estimator().total(), 0u);
  t.ProbeAnswered(milliseconds(700));
  EXPECT_EQ(t.estimator().total(), 1u);
  EXPECT_EQ(t.estimator().Deadline(), seconds(1));  // alone: at most the floor
  t.ProbeAnswered(milliseconds(700));
  EXPECT_EQ(t.estimator().Deadline(), milliseconds(1400));
}

// A restarted replica follows a leader whose writes take about 1 s: its
// election write was answered in 1 s (one sample: D of 1 s), and each of
// the leader's writes of a change it held comes later than that D. Those
// late writes, within twice our own answer time, raise D as samples would
// (issue 59), and never lower it: the estimator without them stays as it
// was, and D is the larger of both. With the rule off they teach nothing.
TEST_F(TakeoverTimerTest, LatePeerWritesRaiseTheDeadlineNeverLowerIt) {
  for (bool rule : {true, false}) {
    TakeoverOptions o = Options();
    o.rules.late_peer_samples = rule;
    TakeoverTimer t(o, seconds(15), 1);
    t.ProbeAnswered(seconds(1));  // the lost election write
    t.Follow(At(0));
    EXPECT_EQ(t.Deadline(), seconds(1)) << rule;  // one sample: at most the floor, doubled
    t.Hold(At(0));
    t.ForeignWrite(At(1050), /*holding=*/true, At(0));
    t.Hold(At(2000));
    t.ForeignWrite(At(3100), true, At(2000));
    EXPECT_EQ(t.estimator().total(), 1u) << rule;  // today's rule: no sample
    EXPECT_EQ(t.estimator().Deadline(), seconds(1)) << rule;
    // Of 1000, 1050 and 1100 ms, the largest never counts: 1050, doubled.
    EXPECT_EQ(t.Deadline(), rule ? milliseconds(2100) : seconds(1)) << rule;
    EXPECT_TRUE(InWindow(*t.WaitDue(), At(3100), t.Deadline())) << rule;
    // Fast samples afterwards never take D below the estimator's.
    for (int i = 0; i < 40; ++i) t.ProbeAnswered(milliseconds(900));
    EXPECT_EQ(t.estimator().Deadline(), milliseconds(1800)) << rule;
    EXPECT_GE(t.Deadline(), t.estimator().Deadline()) << rule;
  }
}

// In a fast fleet our own writes are answered in milliseconds; a peer's
// write that comes later than D is then another follower's takeover of a
// dead leader (or our watch lagging), not the leader's pace: no sample, or
// each failover observed would make the next one slower.
TEST_F(TakeoverTimerTest, LatePeerWriteBeyondTwiceOurOwnAnswerTeachesNothing) {
  TakeoverTimer t(Options(), seconds(15), 1);
  t.ProbeAnswered(milliseconds(30));
  t.Follow(At(0));
  for (int round = 0; round < 4; ++round) {
    t.Hold(At(10000 * round));
    t.ForeignWrite(At(10000 * round + 750), /*holding=*/true, At(10000 * round));
  }
  EXPECT_EQ(t.Deadline(), milliseconds(500));
}

// The followers of a dead leader race; the loser sees
// the winner's write at about its own deadline. Learnt as a "slow leader"
// sample, each lost race doubled D (1077 -> 2388 -> 5152 -> 11838 ms).
TEST_F(TakeoverTimerTest, LostRacesDoNotRaiseTheDeadline) {
  TakeoverTimer t(Options(), seconds(15), 1);
  t.Follow(At(0));
  int now = 0;
  for (int race = 0; race < 6; ++race) {
    t.Hold(At(now));
    const int due = static_cast<int>((*t.WaitDue() - At(0)) / milliseconds(1));
    EXPECT_LT(due - now, 750) << "race " << race;
    t.Probe();
    t.LostWrite(At(due + 5));  // 409 at once
    t.ForeignWrite(At(due + 20), true, At(now));  // the winner's write
    now = due + 5000;
  }
  EXPECT_EQ(t.estimator().total(), 0u);
  EXPECT_EQ(t.estimator().Deadline(), milliseconds(500));
}

// A change the leader does not write (it fails for the leader,
// which retries it on its own backoff) is held by a follower that never
// tried it. The leader's writes of other changes are its progress (each
// restarts the wait) but no sample: the gaps between them span quiet
// spells, and each sample up to D let D double from sample to sample.
// A write of a change we held is a sample from when we began holding it.
TEST_F(TakeoverTimerTest, OnlyAWriteOfAHeldChangeIsASample) {
  TakeoverTimer t(Options(), seconds(15), 1);
  t.Follow(At(0));
  t.Hold(At(0));  // the change the leader keeps failing on
  for (int i = 1; i <= 5; ++i) {
    t.ForeignWrite(At(450 * i), /*holding=*/true, std::nullopt);  // other changes
    EXPECT_TRUE(InWindow(*t.WaitDue(), At(450 * i), milliseconds(500)));
  }
  EXPECT_EQ(t.estimator().total(), 0u);
  // A change we began holding at 2400 ms, written at 2500 ms: 100 ms.
  t.ForeignWrite(At(2500), true, At(2400));
  EXPECT_EQ(t.estimator().total(), 1u);
  EXPECT_EQ(t.estimator().Quantile(), milliseconds(100));
}

TEST_F(TakeoverTimerTest, ProgressWithoutHeldWorkIsNoSample) {
  TakeoverTimer t(Options(), seconds(15), 1);
  t.Follow(At(0));
  t.ForeignWrite(At(5000), /*holding=*/false, std::nullopt);
  EXPECT_EQ(t.estimator().total(), 0u);
}

// A lost write starts a new wait at once (no pause: the ablation found
// none paid, docs/lease.md), and the write that beat ours is no sample.
TEST_F(TakeoverTimerTest, LostWriteStartsAWaitThatIsNoSample) {
  TakeoverTimer t(Options(), seconds(15), 1);
  t.Follow(At(0));
  t.Hold(At(0));
  t.LostWrite(At(700));
  EXPECT_TRUE(InWindow(*t.WaitDue(), At(700), milliseconds(500)));
  t.ForeignWrite(At(900), true, At(0));  // the winner's write
  EXPECT_TRUE(InWindow(*t.WaitDue(), At(900), milliseconds(500)));
  EXPECT_EQ(t.estimator().total(), 0u);
}

// D learnt from two slow samples is 1.7 s; the jitter's stretch is at
// most max_jitter (1 s) and ends 2 s after the wait's start, so the
// longest wait is 2 s, not D + 1 s nor 2 x D, and the followers still
// spread over what is left.
TEST_F(TakeoverTimerTest, JitterIsOneBoundedStretch) {
  TakeoverOptions o = Options();
  o.jitter = 1.0;
  o.max_jitter = seconds(1);
  TakeoverTimer t(o, seconds(15), 7);
  t.Follow(At(0));
  t.ProbeAnswered(milliseconds(951));
  t.ProbeAnswered(milliseconds(851));
  ASSERT_EQ(t.estimator().Deadline(), milliseconds(1702));
  EXPECT_EQ(t.LongestWait(), milliseconds(2000)) << "2 s, not D + 1 s nor 2 x D";
  Duration lo = Duration::max(), hi = Duration::zero();
  for (int i = 0; i < 200; ++i) {
    t.Hold(At(10000 * (i + 1)));
    const Duration wait = *t.WaitDue() - At(10000 * (i + 1));
    lo = std::min(lo, wait);
    hi = std::max(hi, wait);
  }
  EXPECT_GE(lo, milliseconds(1702));
  EXPECT_LT(hi, milliseconds(2000));
  EXPECT_GT(hi - lo, milliseconds(250)) << "the followers still spread";
}

// The stretch's cut: up to D = 1 s the longest wait is 2 x D (jitter 1.0),
// as it always was; a D at or beyond the stretch limit less min_stretch
// keeps min_stretch, so the followers of a slow leader still spread.
TEST_F(TakeoverTimerTest, StretchIsCutAtTheLimitButKeepsItsFloor) {
  TakeoverOptions o = Options();
  o.jitter = 1.0;
  auto longest = [&](int slow_ms) {
    TakeoverTimer t(o, seconds(15), 7);
    t.Follow(At(0));
    t.ProbeAnswered(milliseconds(slow_ms + 100));
    t.ProbeAnswered(milliseconds(slow_ms));
    return std::make_pair(t.estimator().Deadline(), t.LongestWait());
  };
  EXPECT_EQ(longest(400), std::make_pair(Duration(milliseconds(800)), Duration(milliseconds(1600))));
  EXPECT_EQ(longest(500), std::make_pair(Duration(milliseconds(1000)), Duration(milliseconds(2000))));
  EXPECT_EQ(longest(800), std::make_pair(Duration(milliseconds(1600)), Duration(milliseconds(2000))));
  EXPECT_EQ(longest(900), std::make_pair(Duration(milliseconds(1800)), Duration(milliseconds(2050))));
  EXPECT_EQ(longest(2000), std::make_pair(Duration(milliseconds(4000)), Duration(milliseconds(4250))));
}

TEST_F(TakeoverTimerTest, JitterDrawsDifferPerWait) {
  TakeoverTimer t(Options(), seconds(15), 3);
  std::vector<Duration> offsets;
  for (int i = 0; i < 40; ++i) {
    t.Hold(At(1000 * i));
    offsets.push_back(*t.WaitDue() - At(1000 * i));
  }
  Duration lo = offsets[0], hi = offsets[0];
  for (Duration d : offsets) {
    lo = std::min(lo, d);
    hi = std::max(hi, d);
  }
  EXPECT_GE(lo, milliseconds(500));
  EXPECT_LT(hi, milliseconds(750));
  EXPECT_GT(hi - lo, milliseconds(150));
}

TEST_F(TakeoverTimerTest, OffNeverTakesOver) {
  TakeoverTimer t(Options(TakeoverMode::kOff), seconds(15), 1);
  t.Follow(At(0));
  t.Hold(At(0));
  t.ForeignWrite(At(1000), true, At(0));
  EXPECT_FALSE(t.enabled());
  EXPECT_FALSE(t.WaitDue().has_value());
  EXPECT_EQ(t.LongestWait(), Duration::zero());
  EXPECT_EQ(t.estimator().total(), 0u);
}

}  // namespace
}  // namespace routestatus::lease
