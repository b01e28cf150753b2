#include "kubeclient/rest/token_bucket.h"

#include <algorithm>
#include <chrono>

namespace routestatus::kubeclient::rest {

TokenBucket::TokenBucket(const Clock& clock, double qps, int burst)
    : clock_(clock),
      qps_(qps),
      burst_(std::max(1, burst)),
      tokens_(std::max(1, burst)),
      last_(clock.Now()) {}

Duration TokenBucket::Reserve() {
  if (qps_ <= 0) return Duration::zero();
  std::lock_guard<std::mutex> l(mu_);
  SteadyTime now = clock_.Now();
  if (now > last_) {
    double elapsed = std::chrono::duration<double>(now - last_).count();
    tokens_ = std::min(burst_, tokens_ + elapsed * qps_);
    last_ = now;
  }
  tokens_ -= 1;
  if (tokens_ >= 0) return Duration::zero();
  return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(-tokens_ / qps_));
}

bool TokenBucket::Acquire(const Cancellation* cancel) {
  Duration wait = Reserve();
  if (wait <= Duration::zero()) return cancel == nullptr || !cancel->cancelled();
  return clock_.SleepFor(wait, cancel);
}

}  // namespace routestatus::kubeclient::rest
