#pragma once

#include <chrono>
#include <cstdint>
#include <random>

#include "base/clock.h"

namespace routestatus::kubeclient::cache {

// Capped exponential backoff with jitter: delay n is
// min(initial * factor^n, max) stretched by a random factor in
// [1, 1 + jitter), never above `max`. Randomness comes from a seeded
// generator so tests are reproducible. Not thread-safe.
// Not lease::Backoff: that one compounds a fresh jitter into every step
// (followers must drift apart) and is a function of the tick; this one
// jitters the capped delay once and counts attempts itself, as client
// reconnect backoff does.
class Backoff {
 public:
  struct Options {
    Duration initial = std::chrono::milliseconds(200);
    Duration max = std::chrono::seconds(30);
    double factor = 2.0;
    double jitter = 0.5;
  };

  Backoff(const Options& options, uint64_t seed);

  // The next delay; each call grows the following one.
  Duration Next();
  // Back to the initial delay (after a success).
  void Reset() { attempt_ = 0; }
  int attempts() const { return attempt_; }

 private:
  Options options_;
  std::mt19937_64 rng_;
  int attempt_ = 0;
};

}  // namespace routestatus::kubeclient::cache
