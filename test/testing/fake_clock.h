#pragma once

#include <chrono>
#include <mutex>

#include "base/clock.h"

namespace routestatus::testing {

// A Clock that only moves when a test calls Advance/Set. Thread-safe.
// Threads blocked in WaitUntil notice an advance within about a millisecond
// of real time (they re-check the fake time in short real-time waits), so
// nothing waiting on this clock can miss a wake-up.
class FakeClock final : public Clock {
 public:
  FakeClock();

  SteadyTime Now() const override;
  SystemTime WallNow() const override;
  void WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                 SteadyTime deadline) const override;

  // Moves both the steady and the wall time forward by `d` (d >= 0).
  void Advance(Duration d);

 private:
  mutable std::mutex mu_;
  SteadyTime steady_;  // GUARDED_BY(mu_)
  SystemTime wall_;    // GUARDED_BY(mu_)
};

}  // namespace routestatus::testing
