// The checker can fail (issue 46): deliberately broken controllers
// (SimOptions::mutant) run over 500 perturbed seeds each, beside the
// unbroken controller on the same seeds. Of the seeds where a mutant
// changes the run at all (and the unbroken controller passes), the checker
// must fail at least 95%. A checker tuned until the controller passes
// would let them through (test/sim/README.md, "Mutation check").

#include <chrono>
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "test/sim/simulation.h"

namespace routestatus::sim {
namespace {

constexpr uint64_t kFirstSeed = 460001;  // a range no other test runs
constexpr uint64_t kSeeds = 500;

// True when the mutant changed nothing the run measures.
bool SameRun(const SimResult& a, const SimResult& b) {
  return a.writes == b.writes && a.puts == b.puts && a.conflicts == b.conflicts &&
         a.simulated == b.simulated && Raw(a.failover) == Raw(b.failover) &&
         a.failures == b.failures;
}

struct Tally {
  int seeds = 0;
  int base_failed = 0;  // the unbroken controller fails: proves nothing
  int changed = 0;      // of the others, the mutant changed the run
  int caught = 0;       // of those, the checker failed the mutant
  // Measured failover figures and probes not received, of every seed.
  std::vector<Duration> base_measured;
  std::vector<Duration> mutant_measured;
  int64_t base_not_received = 0;
  int64_t mutant_not_received = 0;
  std::string first_missed;  // repro of a changed seed the checker passed
};

Tally RunMutant(Scenario scenario, Mutant mutant) {
  Tally t;
  for (uint64_t seed = kFirstSeed; seed < kFirstSeed + kSeeds; ++seed) {
    SimOptions o;
    o.scenario = scenario;
    o.seed = seed;
    o.perturb = true;
    const SimResult base = RunSimulation(o);
    o.mutant = mutant;
    const SimResult broken = RunSimulation(o);
    ++t.seeds;
    for (Duration d : Measured(base.failover)) t.base_measured.push_back(d);
    for (Duration d : Measured(broken.failover)) t.mutant_measured.push_back(d);
    t.base_not_received += base.probes_not_received;
    t.mutant_not_received += broken.probes_not_received;
    if (!base.ok()) {
      ++t.base_failed;
      continue;
    }
    if (SameRun(base, broken)) continue;
    ++t.changed;
    if (!broken.ok()) {
      ++t.caught;
    } else if (t.first_missed.empty()) {
      t.first_missed = ReproCommand(o, "build/test/sim/route-sim");
    }
  }
  const double pct = t.changed > 0 ? 100.0 * t.caught / t.changed : 0;
  std::cout << "mutant " << MutantName(mutant) << " (" << ScenarioName(scenario) << ", "
            << t.seeds << " seeds): changed " << t.changed << ", failed " << t.caught << " ("
            << pct << "%), unbroken controller failing " << t.base_failed
            << (t.first_missed.empty() ? "" : "; first passed: " + t.first_missed) << "\n";
  auto ms = [](Duration d) {
    return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(d).count());
  };
  const FailoverFigures base = Summarize(t.base_measured);
  const FailoverFigures broken = Summarize(t.mutant_measured);
  std::cout << "  measured failover p50 / p99 / max (ms): unbroken " << ms(base.p50) << " / "
            << ms(base.p99) << " / " << ms(base.max) << " (" << base.probes << " probes), mutant "
            << ms(broken.p50) << " / " << ms(broken.p99) << " / " << ms(broken.max) << " ("
            << broken.probes << " probes)\n";
  return t;
}

void ExpectCaught(const Tally& t) {
  ASSERT_GT(t.changed, 0);
  EXPECT_GE(t.caught * 100, t.changed * 95)
      << t.caught << " of " << t.changed << " changed seeds failed; e.g. " << t.first_missed;
}

// A follower that never takes over (nor writes at its lease's expiry):
// after a crash nobody writes the change.
TEST(MutationTest, FollowerThatNeverTakesOverIsCaught) {
  ExpectCaught(RunMutant(Scenario::kFailover, Mutant::kNoTakeover));
}

// Every status write sent twice: twice the PUTs (the second one's 409).
TEST(MutationTest, EveryWriteSentTwiceIsCaught) {
  ExpectCaught(RunMutant(Scenario::kSteady, Mutant::kDoubleWrite));
}

// Every takeover deadline at least 2.5 s, about 2 s more than the unbroken
// controller's usual 0.5 s. One run's probes each stay within 3 s
// while the unbroken takeover writes in about 0.6 s, so the per-run bound
// sees only the slowest; the fleet's target over the 500 seeds (measured
// p99 <= 2 s, CheckFleetFailover) sees every one, and holds for the
// unbroken controller on the same seeds.
TEST(MutationTest, TakeoverTwoSecondsLateIsCaught) {
  const Tally t = RunMutant(Scenario::kFailover, Mutant::kSlowTakeover);
  ASSERT_GT(t.changed, 0);
  EXPECT_EQ(CheckFleetFailover(Scenario::kFailover, t.base_measured, t.base_not_received), "");
  EXPECT_NE(CheckFleetFailover(Scenario::kFailover, t.mutant_measured, t.mutant_not_received), "");
}

}  // namespace
}  // namespace routestatus::sim
