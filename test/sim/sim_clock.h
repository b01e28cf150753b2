#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "base/clock.h"

namespace routestatus::sim {

// Simulated time: Now() is the time of the event being simulated; only the
// scheduler moves it (Set). WaitUntil may be called only on a fiber (see
// fiber.h): it parks the fiber until `deadline` or until its wake group is
// kicked (a spurious wake-up, which every caller tolerates); on the main
// thread it CHECK-fails (nothing may block there). Not thread-safe: one
// thread runs at a time.
class SimClock final : public Clock {
 public:
  SimClock();

  SteadyTime Now() const override { return now_; }
  // Wall time = a fixed epoch (2026-12-06T14:00:00Z) + elapsed simulated time.
  SystemTime WallNow() const override { return WallAt(now_); }
  // The wall time that WallNow() returned (or will return) at `t`.
  SystemTime WallAt(SteadyTime t) const;
  void WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                 SteadyTime deadline) const override;

  // Moves time to `t` (never backwards).
  void Set(SteadyTime t);
  SteadyTime start() const { return start_; }
  // Simulated time since the start, for reports.
  Duration Elapsed() const { return now_ - start_; }

 private:
  SteadyTime start_;
  SteadyTime now_;
};

// One replica's view of a SimClock: the same steady time and waits, its
// wall clock `skew` off (a node clock set wrong), which is what it writes
// into lastTransitionTime. Not thread-safe, as SimClock.
class SkewedClock final : public Clock {
 public:
  SkewedClock(const Clock& base, Duration skew) : base_(base), skew_(skew) {}

  SteadyTime Now() const override { return base_.Now(); }
  SystemTime WallNow() const override {
    return base_.WallNow() + std::chrono::duration_cast<SystemTime::duration>(skew_);
  }
  void WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                 SteadyTime deadline) const override {
    base_.WaitUntil(cv, lock, deadline);
  }

 private:
  const Clock& base_;
  const Duration skew_;
};

}  // namespace routestatus::sim
