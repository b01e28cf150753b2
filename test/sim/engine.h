#pragma once

// Internals of the simulator (test/sim/simulation.h): the engine that runs
// one seeded simulation. Not a public interface.

#include <array>
#include <chrono>
#include <cmath>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kubeclient/route.h"
#include "lease/backoff.h"
#include "test/sim/sim_api.h"
#include "test/sim/sim_clock.h"
#include "test/sim/sim_replica.h"
#include "test/sim/simulation.h"

namespace routestatus::sim::internal {

using kubeclient::Duration;
using kubeclient::Route;
using kubeclient::SteadyTime;

inline constexpr char kRouterName[] = "default";
inline constexpr char kShardLabel[] = "shard";
inline constexpr char kExcluded[] = "excluded";
// Hostname templates of configuration 0 and 1 (fights use both).
inline constexpr const char* kTemplates[] = {"${name}-${namespace}.apps.example.com",
                                             "${name}-${namespace}.b.example.com"};

// What a correct fleet of configuration `config` writes for a route: our
// entry present (in shard) with this host, admitted. Hosts in the
// simulation are unique, so no route is ever rejected.
struct Expect {
  bool present = false;
  std::string host;
  bool operator==(const Expect& o) const { return present == o.present && host == o.host; }
};

// `tmpl` with ${name} and ${namespace} of `r` (written independently of the
// controller's expansion, which the simulation checks).
std::string Expand(std::string tmpl, const Route& r);
// The entry configuration `config` must end with for `r` (nullptr: none).
Expect Expected(const Route* r, int config);
// True when `r` carries exactly the expected entry of ours.
bool Matches(const Route& r, const Expect& e);
// "123ms".
std::string Ms(Duration d);

// One simulated run. Not thread-safe.
class Engine {
 public:
  explicit Engine(const SimOptions& options) : o_(options), rng_(options.seed), api_(clock_) {
    result_.options = options;
  }

  SimResult Run();

 private:
  struct Slot {
    ReplicaSpec spec;
    std::unique_ptr<Replica> live;
    int generation = 0;
    SteadyTime last_delivery{};
    Duration extra_lag = Duration::zero();  // a slow watch
    SteadyTime last_write{};
    int64_t writes = 0;
  };
  struct Probe {
    std::string key;
    Expect expect;
    SteadyTime changed{};
  };

  // Randomness: one generator for the whole run.
  int64_t Uniform(int64_t lo, int64_t hi) {  // inclusive
    return lo + static_cast<int64_t>(rng_() % static_cast<uint64_t>(hi - lo + 1));
  }
  double Unit() { return lease::UniformUnit(rng_); }
  bool Chance(double p) { return Unit() < p; }
  Duration UniformMs(int64_t lo, int64_t hi) {
    return std::chrono::milliseconds(Uniform(lo, hi));
  }
  Duration Exponential(Duration mean) {
    return Duration(static_cast<int64_t>(-std::log(1.0 - Unit()) * mean.count()));
  }

  void At(SteadyTime t, std::function<void()> fn) {
    events_.emplace(std::make_pair(std::max(t, clock_.Now()), seq_++), std::move(fn));
  }
  void After(Duration d, std::function<void()> fn) { At(clock_.Now() + d, std::move(fn)); }
  SteadyTime T(Duration since_start) const { return clock_.start() + since_start; }
  void Trace(const std::string& what) {
    if (o_.trace) std::cout << "[" << Ms(clock_.Elapsed()) << "] " << what << "\n";
  }
  void Fail(const std::string& what) { result_.failures.push_back(what); }

  void Setup();
  void AddSlot(int config);
  void StartReplica(int i);
  void CrashReplica(int i);
  void OnModelEvent(const ModelEvent& event);
  void OnWrite(int writer, const Route& written);
  // Runs events and due lease work up to `end`; with `until_quiet`, stops
  // earlier once nothing is scheduled and no lease has work.
  void RunUntil(SteadyTime end, bool until_quiet);

  // Route owner operations (counting the writes they require).
  void OwnerCreate(bool in_shard, bool templated);
  void OwnerRandomChange();
  void Owner(const std::string& key, const std::function<void()>& op);
  std::string PickRoute(bool in_shard_only);
  std::string NewHost() { return "h" + std::to_string(next_host_++) + ".example.com"; }

  void ScheduleChanges(Duration from, Duration length);
  void ScheduleCrashes(Duration from, Duration length);
  void ScheduleFailovers(Duration from, int rounds);
  void ScheduleResyncs(Duration period, Duration until);
  int LeaderSlot() const;

  void CheckConvergence();
  void CheckCaches();
  void CheckBounds();
  void CheckFight();

  const SimOptions o_;
  std::mt19937_64 rng_;
  SimClock clock_;
  SimApi api_;
  std::vector<Slot> slots_;
  std::map<std::pair<SteadyTime, uint64_t>, std::function<void()>> events_;
  uint64_t seq_ = 0;
  int max_watch_ms_ = 50;
  int next_route_ = 0;
  int next_host_ = 0;
  bool counting_changes_ = false;
  std::optional<Probe> probe_;
  std::optional<SteadyTime> fight_start_;
  std::vector<std::pair<SteadyTime, int>> fight_writes_;  // (time, config)
  SimResult result_;
};

}  // namespace routestatus::sim::internal
