#include "base/token_bucket.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace routestatus {

TokenBucket::TokenBucket(const Clock& clock, double qps, int burst)
    : clock_(clock),
      // Why: NaN and infinities would compute with NaN; "no limit" as for 0.
      qps_(std::isfinite(qps) && qps > 0 ? qps : 0),
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
  double seconds = -tokens / qps;
  // Why compare in double first: converting a value beyond int64 is undefined.
  if (!(seconds < std::chrono::duration<double>(TokenBucket::kMaxWait).count())) {
    return TokenBucket::kMaxWait;
  }
  return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(seconds));
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
