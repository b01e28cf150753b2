#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <utility>

#include "base/clock.h"
#include "test/sim/sim_clock.h"

namespace routestatus::sim {

// The simulation's event list: functions to run on the main thread at a
// simulated time, in (time, insertion) order. Not thread-safe: only the
// main thread (or a fiber while the main thread waits for it) calls it.
class Scheduler {
 public:
  using Fn = std::function<void()>;
  explicit Scheduler(SimClock& clock) : clock_(clock) {}

  // Runs `fn` at `t` (or now, if `t` has passed).
  void At(SteadyTime t, Fn fn) {
    events_.emplace(std::make_pair(std::max(t, clock_.Now()), seq_++), std::move(fn));
  }
  void After(Duration d, Fn fn) { At(clock_.Now() + d, std::move(fn)); }

  // Time of the earliest event, if any.
  std::optional<SteadyTime> Next() const {
    if (events_.empty()) return std::nullopt;
    return events_.begin()->first.first;
  }
  // Runs every event due at the current time (events they add for "now"
  // run too); returns how many ran.
  int RunDue() {
    int n = 0;
    while (!events_.empty() && events_.begin()->first.first <= clock_.Now()) {
      Fn fn = std::move(events_.begin()->second);
      events_.erase(events_.begin());
      fn();
      ++n;
    }
    return n;
  }
  SimClock& clock() { return clock_; }

 private:
  SimClock& clock_;
  std::map<std::pair<SteadyTime, uint64_t>, Fn> events_;
  uint64_t seq_ = 0;
};

}  // namespace routestatus::sim
