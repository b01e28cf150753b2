// Runs the simulator over fixed seed ranges: every assertion of
// test/sim/simulation.h must hold for every seed. A failure prints the
// route-sim command that reproduces it.
#include <array>
#include <iostream>
#include <string>

#include <gtest/gtest.h>

#include "test/sim/simulation.h"

namespace routestatus::sim {
namespace {


// The sanitizer tree runs every ROUTESTATUS_SIM_SEED_DIVISOR-th seed of
// each range (test/sim/CMakeLists.txt): a run takes about 20 times longer
// there, and the optimised tree runs them all.
#ifndef ROUTESTATUS_SIM_SEED_DIVISOR
#define ROUTESTATUS_SIM_SEED_DIVISOR 1
#endif
constexpr uint64_t kSeedDivisor = ROUTESTATUS_SIM_SEED_DIVISOR;

// Seeds of the fixed ranges that break an absolute bound today: open
// defects of issue 23, each with its failure and repro in
// test/sim/README.md ("Known failing seeds"). They are run like every other
// seed, not skipped: each must still fail, and with the bound named here
// (a different failure is a new defect), and a seed that passes fails the
// test until it is taken off this list. The bounds are not widened for them.
struct KnownFailure {
  Scenario scenario;
  uint64_t seed;
  const char* failure;  // the start of its first failure message
};
// Issue 23 fixed steady 46 and 91, outage 48, claims 33, slow-leader 5,
// 39, 40 and 23; add {scenario, seed, "bound"} entries here when a new one
// is found and cannot be fixed at once. Outage 37 and slow-leader 2, which
// issue 46's failover figure (from the change) failed, pass under issue
// 59's (from the last writer's death; the slow leader's 6 s).
constexpr std::array<KnownFailure, 0> kKnownFailures{};

const KnownFailure* FindKnownFailure(Scenario scenario, uint64_t seed) {
  for (const KnownFailure& k : kKnownFailures) {
    if (k.scenario == scenario && k.seed == seed) return &k;
  }
  return nullptr;
}

// Checks one run: every assertion holds, or the seed is a known failure
// that still fails with its known bound. Returns false on an unexpected
// result (already reported when `report`).
bool CheckRun(const SimOptions& o, const SimResult& r, bool report) {
  const KnownFailure* known = FindKnownFailure(o.scenario, o.seed);
  const std::string repro = ReproCommand(o, "build/test/sim/route-sim") + " --trace";
  if (known == nullptr) {
    if (r.ok()) return true;
    if (report) {
      ADD_FAILURE() << ScenarioName(o.scenario) << " seed " << o.seed << ": "
                    << r.failures.front() << " (" << r.failures.size()
                    << " failures)\n  reproduce: " << repro;
    }
    return false;
  }
  if (r.ok()) {
    ADD_FAILURE() << ScenarioName(o.scenario) << " seed " << o.seed
                  << " passes now: take it off kKnownFailures and test/sim/README.md";
    return false;
  }
  if (r.failures.size() != 1 || r.failures.front().rfind(known->failure, 0) != 0) {
    ADD_FAILURE() << ScenarioName(o.scenario) << " seed " << o.seed << " is a known '"
                  << known->failure << "' failure but now fails otherwise: "
                  << r.failures.front() << " (" << r.failures.size()
                  << " failures)\n  reproduce: " << repro;
    return false;
  }
  std::cout << "known failure: " << ScenarioName(o.scenario) << " seed " << o.seed
            << ": " << r.failures.front() << "\n";
  return true;
}

void RunSeeds(Scenario scenario, uint64_t first, uint64_t count) {
  int failed = 0;
  for (uint64_t seed = first; seed < first + count; seed += kSeedDivisor) {
    SimOptions o;
    o.scenario = scenario;
    o.seed = seed;
    o.perturb = true;  // test/sim/README.md, "Perturbations"
    if (!CheckRun(o, RunSimulation(o), failed < 5)) ++failed;
  }
  EXPECT_EQ(failed, 0) << ScenarioName(scenario) << ": failing seeds among " << first << ".."
                       << first + count - 1;
}

// 550 seeds in all (a tenth of them in the sanitizer tree).
TEST(SimulationTest, SteadySeeds) { RunSeeds(Scenario::kSteady, 1, 101); }
TEST(SimulationTest, ChaosSeeds) { RunSeeds(Scenario::kChaos, 1, 100); }
TEST(SimulationTest, FailoverSeeds) { RunSeeds(Scenario::kFailover, 1, 100); }
TEST(SimulationTest, FightSeeds) { RunSeeds(Scenario::kFight, 1, 100); }
TEST(SimulationTest, ClaimsSeeds) { RunSeeds(Scenario::kClaims, 1, 100); }
TEST(SimulationTest, OutageSeeds) { RunSeeds(Scenario::kOutage, 1, 50); }

// Issue 12: a leader that is alive but slow (every status PUT takes 1 s)
// is not overrun: every assertion, the per-seed PUT bound (changes x 1.2 +
// N) included, holds in every run, and over the seeds PUTs per required
// change stay at the accepted figure. Issue 12's goal for that figure is
// 1.2; it is missed and open: with the fleet as deployed (4 workers a
// replica) it was 1.220 over 2,000 perturbed seeds (800000..801999) before
// issue 47's ablation and 1.223 after (1.198 and 1.204 over these 40), so
// the guard is the accepted 1.23, not the goal (docs/lease.md).
TEST(SimulationTest, SlowLeaderIsNotOverrun) {
  int64_t puts = 0, changes = 0;
  int failed = 0;
  for (uint64_t seed = 1; seed <= 40; seed += kSeedDivisor) {
    SimOptions o;
    o.scenario = Scenario::kSlowLeader;
    o.seed = seed;
    o.perturb = true;
    SimResult r = RunSimulation(o);
    if (!CheckRun(o, r, failed < 5)) ++failed;
    puts += r.puts;
    changes += r.startup_changes + r.changes;
  }
  EXPECT_EQ(failed, 0);
  // The ratio is a figure over all 40 seeds; the sanitizer tree's tenth of
  // them checks the per-seed assertions only.
  if (kSeedDivisor == 1) {
    EXPECT_LE(static_cast<double>(puts), 1.23 * static_cast<double>(changes))
        << puts << " PUTs for " << changes << " changes";
  }
}

// With the takeover a dead leader's next change is written within 3 s
// (asserted per run in every failover seed); without it, within lease
// expiry. The gap tells them apart. Why perturbed: the partition probe
// comes 100 ms after the leader goes silent; a crash round's probe comes
// U[0, 22.5 s) after the crash, often when the followers' leases have run
// out anyway (unperturbed seeds 1..10 all did with 4 workers: 1.5 s).
TEST(SimulationTest, TakeoverShortensTheFailoverGap) {
  Duration with = Duration::zero(), without = Duration::zero();
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    SimOptions o;
    o.scenario = Scenario::kFailover;
    o.seed = seed;
    o.perturb = true;
    SimResult r = RunSimulation(o);
    EXPECT_TRUE(r.ok()) << seed << ": " << (r.ok() ? "" : r.failures.front());
    with = std::max(with, r.max_failover_gap);
    o.takeover = lease::TakeoverMode::kOff;
    r = RunSimulation(o);
    EXPECT_TRUE(r.ok()) << seed << " (off): " << (r.ok() ? "" : r.failures.front());
    without = std::max(without, r.max_failover_gap);
  }
  EXPECT_LT(with, std::chrono::seconds(3));
  EXPECT_GT(without, std::chrono::seconds(5));
}

// Why the simulator's lease settings differ from docs/design.md section 3: with
// a 40 ms follower deferral and no floor after a lost write, followers whose
// lease ran out between sparse changes race the leader once watch skew
// exceeds 40 ms. This seed breaks the PUT bound that way (and holds it with
// the recommended settings).
TEST(SimulationTest, DesignFollowerDelayBreaksThePutBound) {
  SimOptions o;
  o.scenario = Scenario::kSteady;
  // Why without takeover: since issue 23 a follower's expired work waits
  // for the takeover wait in progress mode, so the follower deferral
  // matters only with takeover off (as openshift-router runs).
  o.takeover = lease::TakeoverMode::kOff;
  o.seed = 8;  // 12 on the correctness branch; the takeover changes which runs race
  EXPECT_TRUE(RunSimulation(o).ok());
  o.follower_min_delay = Duration::zero();
  o.follower_delay_jitter = false;
  o.leader_follows_foreign_extend = false;
  SimResult r = RunSimulation(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.failures.front().find("PUT bound"), std::string::npos) << r.failures.front();
}

// A probe's clock starts at the latest of its change, its delivery to a
// live, synced replica and the last writer's death before its write (issue
// 59), and the raw figure beside it counts from the change. In this
// perturbed seed the first crash round's probe (ns-0/r16) met a lost race
// 0.81 s after its change: the survivor's takeover of another key was
// beaten by a racing peer that died at once, so the probe, written 2.53 s
// after its change, measures 1.72 s from that death. In the second round a
// racing peer wins the takeover of the probe's own key: its write ends the
// probe at its commit, counted from the change's delivery, not from its
// own death.
TEST(SimulationTest, FailoverClockStartsAtTheLastWritersDeath) {
  SimOptions o;
  o.scenario = Scenario::kFailover;
  o.perturb = true;
  o.seed = 99;
  SimResult r = RunSimulation(o);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.failures.front());
  ASSERT_EQ(r.failover.size(), 4u);
  const ProbeFigure& raced = r.failover[0];
  EXPECT_EQ(raced.start, ClockStart::kDeath);
  EXPECT_GT(raced.raw, std::chrono::milliseconds(2500));
  EXPECT_EQ(raced.measured, raced.raw - raced.moved);  // no injected delay on that write
  EXPECT_GT(raced.moved, std::chrono::milliseconds(800));
  const ProbeFigure& won = r.failover[1];
  EXPECT_EQ(won.start, ClockStart::kDelivery);
  EXPECT_GT(won.measured, std::chrono::milliseconds(900));
}

// Two configurations under one router name: the second one's writes are
// bounded per contention window, and the first stops writing back.
TEST(SimulationTest, FightIsBoundedPerWindow) {
  SimOptions o;
  o.scenario = Scenario::kFight;
  o.seed = 13;
  SimResult r = RunSimulation(o);
  EXPECT_TRUE(r.ok()) << (r.failures.empty() ? "" : r.failures.front());
  EXPECT_GT(r.fight_writes, 0);
  EXPECT_LE(r.fight_max_window_writes, r.fight_bound);
}

// A replica that misses watch events (a broken informer) is caught: its
// cache disagrees with the server, or routes end with the wrong entry.
TEST(SimulationTest, LostWatchEventsAreCaught) {
  int caught = 0, runs = 0;
  // Why all 20 seeds under the sanitizers too: with their 2 runs, one run
  // whose dropped events happened not to matter failed the test (seen when
  // issue 25's cache changes moved the runs' paths).
  for (uint64_t seed = 1; seed <= 20; ++seed, ++runs) {
    SimOptions o;
    o.scenario = Scenario::kSteady;
    o.seed = seed;
    o.drop_event_probability = 0.05;
    SimResult r = RunSimulation(o);
    if (!r.ok()) ++caught;
  }
  EXPECT_GE(caught, runs - runs / 10);  // 18 of 20
}

// The same options give the same run, perturbed or not.
TEST(SimulationTest, Deterministic) {
  for (bool perturb : {false, true}) {
    for (Scenario s : AllScenarios()) {
      SimOptions o;
      o.scenario = s;
      o.seed = 42;
      o.perturb = perturb;
      SimResult a = RunSimulation(o);
      SimResult b = RunSimulation(o);
      EXPECT_EQ(a.writes, b.writes) << ScenarioName(s);
      EXPECT_EQ(a.puts, b.puts) << ScenarioName(s);
      EXPECT_EQ(a.simulated, b.simulated) << ScenarioName(s);
      EXPECT_EQ(a.perturbations, b.perturbations) << ScenarioName(s);
    }
  }
}

// Each perturbation is drawn per seed: over a few seeds every one occurs,
// and runs without --perturb get none.
TEST(SimulationTest, PerturbationsAreDrawnPerSeed) {
  int broken = 0, skew = 0, coalesce = 0;
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    SimOptions o;
    o.scenario = Scenario::kFailover;
    o.seed = seed;
    EXPECT_EQ(RunSimulation(o).perturbations, "none");
    o.perturb = true;
    const std::string p = RunSimulation(o).perturbations;
    broken += p.find("broken-route") != std::string::npos;
    skew += p.find("skew") != std::string::npos;
    coalesce += p.find("coalesce") != std::string::npos;
  }
  EXPECT_GT(broken, 0);
  EXPECT_GT(skew, 0);
  EXPECT_GT(coalesce, 0);
}

}  // namespace
}  // namespace routestatus::sim
