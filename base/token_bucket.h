#pragma once

#include <mutex>

#include "base/cancellation.h"
#include "base/clock.h"

namespace routestatus {

// A token bucket refilled at `qps` tokens per second holding at most `burst`
// tokens (like client-go's flowcontrol): the REST client's QPS limit, the
// work queue's overall retry rate and `clear`'s PUT rate (burst 1: evenly
// spaced slots). qps <= 0 (or not finite) disables the limit. Thread-safe.
class TokenBucket {
 public:
  // The longest wait Reserve() returns. Why: at a tiny rate (1e-10 qps) the
  // wait in nanoseconds does not fit in an int64 and the conversion is
  // undefined; a day is "never" for every caller.
  static constexpr Duration kMaxWait = std::chrono::hours(24);

  TokenBucket(const Clock& clock, double qps, int burst);

  // Takes one token, possibly going into debt, and returns how long the
  // caller must wait before using it (zero when a token was available).
  // Callers that reserve are served in order.
  Duration Reserve();
  // What Reserve() would return now, without taking a token.
  Duration Peek() const;
  // Reserve(), then sleeps on the clock until the token is due. False
  // when `cancel` was cancelled first (the token stays spent).
  bool Acquire(const Cancellation* cancel = nullptr);

 private:
  const Clock& clock_;
  const double qps_;
  const double burst_;
  // REQUIRES: mu_ held. Tokens at `now` (refilled, capped at burst).
  double TokensAtLocked(SteadyTime now) const;

  mutable std::mutex mu_;
  double tokens_;    // GUARDED_BY(mu_); may be negative (debt)
  SteadyTime last_;  // GUARDED_BY(mu_)
};

}  // namespace routestatus
