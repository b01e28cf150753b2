#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

namespace routestatus {

class Cancellation;

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

  // Sleeps until `deadline` on this clock, or until `cancel` (when not
  // null) is cancelled, whichever comes first; false when cancelled (also
  // when it already was). The one way to wait out a delay (rate limits,
  // Retry-After, backoff without a condition of one's own). Built on
  // WaitUntil, so a fake clock's Advance wakes it too. Thread-safe.
  bool SleepUntil(SteadyTime deadline, const Cancellation* cancel = nullptr) const;
  bool SleepFor(Duration d, const Cancellation* cancel = nullptr) const {
    return SleepUntil(Now() + d, cancel);
  }
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

}  // namespace routestatus
