#include "test/sim/sim_clock.h"

namespace routestatus::sim {

namespace {
constexpr int64_t kEpochUnix = 1796565600;  // 2026-12-06T14:00:00Z
}  // namespace

SimClock::SimClock()
    : start_(kubeclient::SteadyTime(std::chrono::hours(24 * 365))), now_(start_) {}

kubeclient::SystemTime SimClock::WallNow() const {
  return kubeclient::SystemTime(std::chrono::seconds(kEpochUnix)) +
         std::chrono::duration_cast<kubeclient::SystemTime::duration>(now_ - start_);
}

void SimClock::Set(kubeclient::SteadyTime t) {
  CHECK(t >= now_) << "SimClock: time may not go backwards";
  now_ = t;
}

}  // namespace routestatus::sim
