#include "base/token_bucket.h"

#include <algorithm>
#include <chrono>

namespace routestatus {

TokenBucket::TokenBucket(const Clock& clock, double qps, int burst)
    : clock_(clock),
      qps_(qps),
      burst_(std::max(1, burst)),
      tokens_(std::max(1, burst)),
      last_(clock.Now()) {}

double TokenBucket::TokensAtLocked(SteadyTime now) const {
  if (now <= last_) return tokens_;
  double elapsed = std::chrono::duration<double>(now - last_).count();
  return std::min(burst_, tokens_ + elapsed * qps_);
}

namespace {
// How long until `tokens` (after taking one) is back at zero.
Duration WaitFor(double tokens, double qps) {
  if (tokens >= 0) return Duration::zero();
  return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(-tokens / qps));
}
}  // namespace

Duration TokenBucket::Reserve() {
  if (qps_ <= 0) return Duration::zero();
  std::lock_guard<std::mutex> l(mu_);
  SteadyTime now = clock_.Now();
  tokens_ = TokensAtLocked(now) - 1;
  last_ = std::max(now, last_);
  return WaitFor(tokens_, qps_);
}

Duration TokenBucket::Peek() const {
  if (qps_ <= 0) return Duration::zero();
  std::lock_guard<std::mutex> l(mu_);
  return WaitFor(TokensAtLocked(clock_.Now()) - 1, qps_);
}

bool TokenBucket::Acquire(const Cancellation* cancel) {
  Duration wait = Reserve();
  if (wait <= Duration::zero()) return cancel == nullptr || !cancel->cancelled();
  return clock_.SleepFor(wait, cancel);
}

}  // namespace routestatus
