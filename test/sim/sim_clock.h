#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

#include <glog/logging.h>

#include "kubeclient/clock.h"

namespace routestatus::sim {

// Simulated time: Now() is the time of the event being simulated; only the
// scheduler moves it (Set). Nothing in the simulation may block on it:
// WaitUntil CHECK-fails. Not thread-safe (the simulation is single-threaded).
class SimClock final : public kubeclient::Clock {
 public:
  SimClock();

  kubeclient::SteadyTime Now() const override { return now_; }
  // Wall time = a fixed epoch (2026-12-06T14:00:00Z) + elapsed simulated time.
  kubeclient::SystemTime WallNow() const override;
  void WaitUntil(std::condition_variable&, std::unique_lock<std::mutex>&,
                 kubeclient::SteadyTime) const override {
    LOG(FATAL) << "SimClock: nothing may block in the simulation";
  }

  // Moves time to `t` (never backwards).
  void Set(kubeclient::SteadyTime t);
  kubeclient::SteadyTime start() const { return start_; }
  // Simulated time since the start, for reports.
  kubeclient::Duration Elapsed() const { return now_ - start_; }

 private:
  kubeclient::SteadyTime start_;
  kubeclient::SteadyTime now_;
};

}  // namespace routestatus::sim
