#include "lease/backoff.h"

#include <algorithm>

namespace routestatus::lease {

double UniformUnit(std::mt19937_64& rng) {
  // Why: 53 random bits scaled exactly; std::uniform_real_distribution is
  // implementation-defined, and seeds must reproduce everywhere.
  return static_cast<double>(rng() >> 11) * (1.0 / 9007199254740992.0);
}

Duration Backoff(const BackoffPolicy& policy, int tick, Duration cap,
                             std::mt19937_64& rng) {
  if (tick > policy.steps) return cap;
  double nanos = static_cast<double>(policy.base.count());
  const double cap_nanos = static_cast<double>(cap.count());
  for (int i = 0; i < tick && nanos < cap_nanos; ++i) {
    nanos *= policy.factor * (1.0 + policy.jitter * UniformUnit(rng));
  }
  if (nanos >= cap_nanos) return cap;
  return std::min(cap, Duration(static_cast<int64_t>(nanos)));
}

}  // namespace routestatus::lease
