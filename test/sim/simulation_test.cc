// Runs the simulator over fixed seed ranges: every assertion of
// test/sim/simulation.h must hold for every seed. A failure prints the
// route-sim command that reproduces it.
#include <gtest/gtest.h>

#include "test/sim/simulation.h"

namespace routestatus::sim {
namespace {

void RunSeeds(Scenario scenario, uint64_t first, uint64_t count) {
  int failed = 0;
  for (uint64_t seed = first; seed < first + count; ++seed) {
    SimOptions o;
    o.scenario = scenario;
    o.seed = seed;
    SimResult r = RunSimulation(o);
    if (!r.ok() && ++failed <= 5) {
      ADD_FAILURE() << ScenarioName(scenario) << " seed " << seed << ": " << r.failures.front()
                    << " (" << r.failures.size() << " failures)\n  reproduce: "
                    << ReproCommand(o, "build/test/sim/route-sim") << " --trace";
    }
  }
  EXPECT_EQ(failed, 0) << ScenarioName(scenario) << ": failing seeds among " << first << ".."
                       << first + count - 1;
}

TEST(SimulationTest, SteadySeeds) { RunSeeds(Scenario::kSteady, 1, 150); }
TEST(SimulationTest, ChaosSeeds) { RunSeeds(Scenario::kChaos, 1, 150); }
TEST(SimulationTest, FailoverSeeds) { RunSeeds(Scenario::kFailover, 1, 150); }
TEST(SimulationTest, FightSeeds) { RunSeeds(Scenario::kFight, 1, 100); }

// The same options give the same run.
TEST(SimulationTest, Deterministic) {
  for (Scenario s : AllScenarios()) {
    SimOptions o;
    o.scenario = s;
    o.seed = 42;
    SimResult a = RunSimulation(o);
    SimResult b = RunSimulation(o);
    EXPECT_EQ(a.writes, b.writes) << ScenarioName(s);
    EXPECT_EQ(a.puts, b.puts) << ScenarioName(s);
    EXPECT_EQ(a.simulated, b.simulated) << ScenarioName(s);
  }
}

}  // namespace
}  // namespace routestatus::sim
