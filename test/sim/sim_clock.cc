#include "test/sim/sim_clock.h"

#include <glog/logging.h>

#include "test/sim/fiber.h"

namespace routestatus::sim {

namespace {
constexpr int64_t kEpochUnix = 1796565600;  // 2026-12-06T14:00:00Z
}  // namespace

SimClock::SimClock()
    : start_(SteadyTime(std::chrono::hours(24 * 365))), now_(start_) {}

SystemTime SimClock::WallAt(SteadyTime t) const {
  return SystemTime(std::chrono::seconds(kEpochUnix)) +
         std::chrono::duration_cast<SystemTime::duration>(t - start_);
}

void SimClock::WaitUntil(std::condition_variable&, std::unique_lock<std::mutex>& lock,
                         SteadyTime deadline) const {
  Fiber* fiber = Fiber::Current();
  CHECK(fiber != nullptr) << "SimClock: nothing may block on the simulation's main thread";
  WakeGroup* group = fiber->group();
  const uint64_t seen = group->kicks;
  lock.unlock();
  fiber->Park([this, group, seen, deadline]() -> std::optional<SteadyTime> {
    if (group->kicks != seen) return now_;
    return deadline;
  });
  lock.lock();
}

void SimClock::Set(SteadyTime t) {
  CHECK(t >= now_) << "SimClock: time may not go backwards";
  now_ = t;
}

}  // namespace routestatus::sim
