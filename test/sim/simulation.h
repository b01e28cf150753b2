#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kubeclient/clock.h"

namespace routestatus::sim {

// What a simulated run exercises. Every scenario starts N replicas of the
// router name "default" on M routes whose entries are missing.
enum class Scenario {
  kSteady,    // random route changes, random watch delays, no crashes
  kChaos,     // plus replica crashes and restarts (relist, new lease/tracker)
  kFailover,  // the leader crashes, then a route changes: time to its write
  kFight,     // a second configuration (other hostname template) joins
};
const char* ScenarioName(Scenario scenario);
std::optional<Scenario> ParseScenario(const std::string& name);
std::vector<Scenario> AllScenarios();

// Knobs of one run. Zero counts are drawn from the seed. Value type.
struct SimOptions {
  Scenario scenario = Scenario::kSteady;
  uint64_t seed = 1;
  int replicas = 0;  // 0: 2..5 (per configuration 1..3 in fights)
  int routes = 0;    // 0: 5..40
  kubeclient::Duration lease_interval = std::chrono::seconds(15);
  kubeclient::Duration lease_retry = std::chrono::seconds(3);
  // Lease settings: what cmd/ uses (election delay 1 s, Election follows
  // Extend) plus the follower delay and second-leader options the
  // simulator recommends (lease/backoff_write_lease.h); the DESIGN.md
  // defaults are --follower-min-delay-ms=0 --follower-delay-jitter=0
  // --leader-follows-foreign-extend=0.
  kubeclient::Duration election_delay = std::chrono::seconds(1);
  bool single_probe = true;
  bool election_follows_extend = true;
  kubeclient::Duration follower_min_delay = std::chrono::milliseconds(500);
  bool follower_delay_jitter = true;
  bool leader_follows_foreign_extend = true;
  int contention_limit = 5;
  kubeclient::Duration contention_interval = std::chrono::minutes(3);
  int max_watch_delay_ms = 0;  // 0: 2..150 ms drawn per run
  bool trace = false;          // print every write, conflict, crash and change
  // Fault injection, to show the checks can fail: each watch event is lost
  // for a replica with this probability (a broken informer).
  double drop_event_probability = 0;
};

// What one run measured and which assertions failed. Value type.
struct SimResult {
  SimOptions options;
  int replicas = 0;
  int routes = 0;
  // Status writes the route changes require: entries missing at start-up,
  // and later changes (create in shard, host change, shard in/out).
  int64_t startup_changes = 0;
  int64_t changes = 0;
  // Status PUTs on the model (all replicas).
  int64_t writes = 0;     // successful
  int64_t puts = 0;       // attempts, including conflicts
  int64_t conflicts = 0;
  // Conflicts by the loser's lease state when its PUT failed (Election,
  // Leader, Follower).
  int64_t conflicts_by_state[3] = {0, 0, 0};
  int64_t startup_writes = 0;  // before the change phase
  int64_t startup_puts = 0;
  int crashes = 0;
  int failovers = 0;  // measured leader crashes
  kubeclient::Duration max_failover_gap = kubeclient::Duration::zero();
  int64_t fight_writes = 0;             // after the second configuration joined
  int64_t fight_max_window_writes = 0;  // most writes in one contention window
  int64_t fight_last_window_writes = 0;
  int64_t fight_bound = 0;  // 2 x limit + M
  kubeclient::Duration simulated = kubeclient::Duration::zero();
  std::vector<std::string> failures;  // empty when every assertion held

  bool ok() const { return failures.empty(); }
};

// Runs one seeded, deterministic simulation: the same options give the
// same result on every platform. Single-threaded; no real time.
SimResult RunSimulation(const SimOptions& options);

// "<binary> --seed=N --scenario=S [non-default knobs]".
std::string ReproCommand(const SimOptions& options, const std::string& binary);

}  // namespace routestatus::sim
