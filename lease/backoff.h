#pragma once

#include <chrono>
#include <cstdint>
#include <random>

#include "base/clock.h"

namespace routestatus::lease {

// The follower backoff of docs/design.md section 3: base 20 ms, x4 per tick,
// jitter +[0, 50%) per step (compounding), capped by the caller; a tick past
// `steps` gives the cap. Value type. (The informer's reconnect backoff,
// kubeclient/cache/backoff.h, jitters once per delay: a different rule.)
struct BackoffPolicy {
  Duration base = std::chrono::milliseconds(20);
  double factor = 4.0;
  double jitter = 0.5;  // each step multiplies by factor * (1 + U[0, jitter))
  int steps = 5;        // tick > steps returns the cap
};

// A uniform double in [0, 1) from `rng`, the same on every platform (unlike
// std::uniform_real_distribution). Not thread-safe (uses `rng`).
double UniformUnit(std::mt19937_64& rng);

// The backoff for `tick` (>= 0): tick 0 is exactly `policy.base`; tick t is
// base * prod_{i<t} factor * (1 + U_i[0, jitter)), i.e. in
// [base * factor^t, base * (factor * (1 + jitter))^t); the result never
// exceeds `cap`, and tick > policy.steps returns `cap`. Not thread-safe
// (draws from `rng`, once per step).
Duration Backoff(const BackoffPolicy& policy, int tick, Duration cap,
                             std::mt19937_64& rng);

}  // namespace routestatus::lease
