#include "test/testing/fake_clock.h"

#include <glog/logging.h>

namespace routestatus::testing {

FakeClock::FakeClock()
    // Why: a fixed, non-zero start keeps logs and RFC 3339 stamps
    // reproducible (2026-01-01T00:00:00Z).
    : steady_(SteadyTime(std::chrono::hours(1000))),
      wall_(SystemTime(std::chrono::seconds(1767225600))) {}

SteadyTime FakeClock::Now() const {
  std::lock_guard<std::mutex> l(mu_);
  return steady_;
}

SystemTime FakeClock::WallNow() const {
  std::lock_guard<std::mutex> l(mu_);
  return wall_;
}

void FakeClock::WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                          SteadyTime deadline) const {
  if (Now() >= deadline) return;
  // A bounded real-time wait is a permitted spurious wake-up; the caller
  // re-checks, and sees any Advance that happened meanwhile.
  cv.wait_for(lock, std::chrono::milliseconds(1));
}

void FakeClock::Advance(Duration d) {
  CHECK(d.count() >= 0) << "FakeClock cannot go backwards";
  std::lock_guard<std::mutex> l(mu_);
  steady_ += d;
  wall_ += std::chrono::duration_cast<SystemTime::duration>(d);
}

}  // namespace routestatus::testing
