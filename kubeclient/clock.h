#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

namespace routestatus::kubeclient {

using SteadyTime = std::chrono::steady_clock::time_point;
using SystemTime = std::chrono::system_clock::time_point;
using Duration = std::chrono::nanoseconds;

// Time for everything that waits, expires or backs off. Implementations are
// thread-safe. A fake clock (test/testing/fake_clock.h) lets tests advance
// time; advancing it wakes everything blocked in WaitUntil.
class Clock {
 public:
  virtual ~Clock() = default;
  // Monotonic time: deadlines, backoff, lease expiry.
  virtual SteadyTime Now() const = 0;
  // Wall time: lastTransitionTime and log stamps only.
  virtual SystemTime WallNow() const = 0;
  // Blocks on `cv` (with `lock` held on entry and on return) until `cv` is
  // notified, `deadline` has passed on this clock, or spuriously. Callers
  // re-check their condition in a loop, exactly as with
  // std::condition_variable::wait_until.
  virtual void WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                         SteadyTime deadline) const = 0;
};

// The process clock: std::chrono::steady_clock and system_clock.
class RealClock final : public Clock {
 public:
  SteadyTime Now() const override { return std::chrono::steady_clock::now(); }
  SystemTime WallNow() const override { return std::chrono::system_clock::now(); }
  void WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                 SteadyTime deadline) const override {
    cv.wait_until(lock, deadline);
  }
};

}  // namespace routestatus::kubeclient
