#pragma once

#include <mutex>

#include "base/cancellation.h"
#include "base/clock.h"

namespace routestatus::kubeclient::rest {

// Client-side rate limit: a token bucket refilled at `qps` tokens per second
// holding at most `burst` tokens (like client-go's flowcontrol). qps <= 0
// disables the limit. Thread-safe.
class TokenBucket {
 public:
  TokenBucket(const Clock& clock, double qps, int burst);

  // Takes one token, possibly going into debt, and returns how long the
  // caller must wait before using it (zero when a token was available).
  // Callers that reserve are served in order.
  Duration Reserve();
  // Reserve(), then sleeps on the clock until the token is due. False
  // when `cancel` was cancelled first (the token stays spent).
  bool Acquire(const Cancellation* cancel = nullptr);

 private:
  const Clock& clock_;
  const double qps_;
  const double burst_;
  std::mutex mu_;
  double tokens_;               // GUARDED_BY(mu_); may be negative (debt)
  SteadyTime last_;             // GUARDED_BY(mu_)
};

}  // namespace routestatus::kubeclient::rest
