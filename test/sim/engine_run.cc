// Engine::Run (the scenarios' timelines) and the assertions checked after
// each run.
#include <algorithm>
#include <array>
#include <map>

#include "test/sim/engine.h"

namespace routestatus::sim::internal {

using std::chrono::milliseconds;
using std::chrono::seconds;

SimResult Engine::Run() {
  max_watch_ms_ = o_.max_watch_delay_ms > 0 ? o_.max_watch_delay_ms : Uniform(2, 150);
  api_.SetListener([this](const ModelEvent& e) { OnModelEvent(e); });
  api_.SetWriteObserver([this](int writer, const Route& r) { OnWrite(writer, r); });
  api_.SetConflictObserver([this](int writer, const std::string& key) {
    ++result_.conflicts_by_state[static_cast<int>(slots_[writer].live->LeaseState())];
    Trace("conflict for replica " + std::to_string(writer) + " on " + key + " (" +
          lease::LeaseStateName(slots_[writer].live->LeaseState()) + ")");
  });
  const bool fight = o_.scenario == Scenario::kFight;
  int first = 0;
  int second = 0;
  if (fight) {
    first = o_.replicas > 0 ? std::max(1, o_.replicas / 2) : static_cast<int>(Uniform(1, 3));
    second = o_.replicas > 0 ? std::max(1, o_.replicas - first) : static_cast<int>(Uniform(1, 3));
  } else {
    first = o_.replicas > 0 ? o_.replicas : static_cast<int>(Uniform(2, 5));
  }
  const int routes = o_.routes > 0 ? o_.routes : static_cast<int>(Uniform(5, 40));
  for (int i = 0; i < first; ++i) AddSlot(0);
  for (int i = 0; i < second; ++i) AddSlot(1);
  result_.replicas = static_cast<int>(slots_.size());
  result_.routes = routes;

  // Routes exist before the fleet starts; their entries are missing.
  for (int i = 0; i < routes; ++i) OwnerCreate(fight || Chance(0.85), fight || Chance(0.3));
  for (int i = 0; i < first; ++i) At(T(UniformMs(0, 300)), [this, i] { StartReplica(i); });

  const Duration phase = seconds(20);  // start-up, before any change
  Duration active = phase;
  switch (o_.scenario) {
    case Scenario::kSteady:
    case Scenario::kChaos: {
      const Duration length = UniformMs(30000, 120000);
      ScheduleChanges(phase, length);
      if (o_.scenario == Scenario::kChaos) {
        ScheduleCrashes(phase, length);
        if (Chance(0.5)) ScheduleResyncs(seconds(30), phase + length);
      }
      active = phase + length;
      break;
    }
    case Scenario::kFailover: {
      const int rounds = 3;
      ScheduleFailovers(phase, rounds);
      active = phase + rounds * (2 * o_.lease_interval + o_.lease_retry + seconds(10));
      break;
    }
    case Scenario::kFight: {
      const Duration join = seconds(30);
      At(T(join), [this, first] {
        fight_start_ = clock_.Now();
        Trace("second configuration joins");
        for (size_t i = first; i < slots_.size(); ++i) StartReplica(static_cast<int>(i));
      });
      active = join + 4 * o_.contention_interval;
      ScheduleResyncs(seconds(30), active);
      break;
    }
  }

  RunUntil(T(phase), false);
  const PutCounts startup = api_.TotalPuts();
  result_.startup_writes = startup.success;
  result_.startup_puts = startup.attempts;
  counting_changes_ = true;
  RunUntil(T(active), false);
  for (size_t i = 0; i < slots_.size(); ++i) {
    if (!slots_[i].live) StartReplica(static_cast<int>(i));
  }
  const SteadyTime settle = clock_.Now() + std::chrono::minutes(30);
  RunUntil(settle, true);
  if (clock_.Now() >= settle) Fail("did not settle within 30 minutes after the last change");
  result_.simulated = clock_.Elapsed();

  const PutCounts total = api_.TotalPuts();
  result_.writes = total.success;
  result_.puts = total.attempts;
  result_.conflicts = total.conflicts;
  CheckCaches();
  if (fight) {
    CheckFight();
  } else {
    CheckConvergence();
    CheckBounds();
  }
  return result_;
}

void Engine::CheckCaches() {
  const auto list = api_.List();
  for (size_t i = 0; i < slots_.size(); ++i) {
    const auto& objects = slots_[i].live->store().objects();
    if (objects.size() != list.size()) {
      Fail("replica " + std::to_string(i) + ": cache holds " + std::to_string(objects.size()) +
           " routes, the server " + std::to_string(list.size()));
    }
    for (const auto& r : list) {
      auto it = objects.find(r->Key());
      if (it == objects.end()) {
        Fail("replica " + std::to_string(i) + ": cache misses " + r->Key());
      } else if (it->second->metadata.resource_version != r->metadata.resource_version) {
        Fail("replica " + std::to_string(i) + ": cache has " + r->Key() + " at rv " +
             it->second->metadata.resource_version + ", the server at " +
             r->metadata.resource_version);
      }
    }
  }
}

void Engine::CheckConvergence() {
  for (const auto& r : api_.List()) {
    const Expect e = Expected(r.get(), 0);
    if (Matches(*r, e)) continue;
    const auto entry = r->FindIngress(kRouterName);
    Fail("route " + r->Key() + ": expected " + (e.present ? "host " + e.host : "no entry") +
         ", the server has " +
         (entry ? "host " + entry->host + " (" + entry->conditions.at(0).status + ")"
                : "no entry"));
  }
}

void Engine::CheckBounds() {
  const int64_t changes = result_.startup_changes + result_.changes;
  const int64_t n = result_.replicas;
  // Why the crash term: a restarted replica starts in Election and may
  // spend one PUT before it sees a leader's write; a crashed leader leaves
  // up to N-2 followers whose leases run out together. Writes need none.
  const int64_t crash_puts = static_cast<int64_t>(result_.crashes) * (n - 1);
  if (static_cast<double>(result_.writes) > static_cast<double>(changes) * 1.05 + n) {
    Fail("write bound: " + std::to_string(result_.writes) + " successful status writes for " +
         std::to_string(changes) + " changes with " + std::to_string(n) +
         " replicas (bound changes x 1.05 + N)");
  }
  if (static_cast<double>(result_.puts) > static_cast<double>(changes) * 1.1 + n + crash_puts) {
    Fail("PUT bound: " + std::to_string(result_.puts) + " status PUTs (" +
         std::to_string(result_.conflicts) + " conflicts) for " + std::to_string(changes) +
         " changes with " + std::to_string(n) + " replicas and " +
         std::to_string(result_.crashes) + " crashes (bound changes x 1.1 + N + crashes x (N-1))");
  }
}

void Engine::CheckFight() {
  // Every route carries one of the two configurations' entries.
  for (const auto& r : api_.List()) {
    if (!Matches(*r, Expected(r.get(), 0)) && !Matches(*r, Expected(r.get(), 1))) {
      Fail("fight: route " + r->Key() + " has neither configuration's entry");
    }
  }
  if (!fight_start_) return;
  const Duration window = o_.contention_interval;
  std::map<int64_t, int64_t> per_window;
  std::map<int64_t, std::array<int64_t, 2>> per_side;
  for (const auto& [t, config] : fight_writes_) {
    const int64_t k = (t - *fight_start_) / window;
    ++per_window[k];
    ++per_side[k][config];
  }
  // Within a window at most one configuration writes freely; the other
  // stops once its tracker passed the contention limit.
  for (const auto& [k, sides] : per_side) {
    if (std::min(sides[0], sides[1]) > o_.contention_limit + 1) {
      Fail("fight: both configurations kept writing in contention window " + std::to_string(k) +
           " (" + std::to_string(sides[0]) + " and " + std::to_string(sides[1]) +
           " writes; the loser must stop after limit + 1 = " +
           std::to_string(o_.contention_limit + 1) + ")");
    }
  }
  const int64_t windows = 4;
  result_.fight_writes = static_cast<int64_t>(fight_writes_.size());
  result_.fight_bound = 2 * o_.contention_limit + result_.routes;
  for (const auto& [k, count] : per_window) {
    result_.fight_max_window_writes = std::max(result_.fight_max_window_writes, count);
    if (k >= windows - 1) result_.fight_last_window_writes += count;
    if (count > result_.fight_bound) {
      Fail("fight: " + std::to_string(count) + " status writes in contention window " +
           std::to_string(k) + " (bound 2 x limit + M = " + std::to_string(result_.fight_bound) +
           ")");
    }
  }
}

}  // namespace routestatus::sim::internal
