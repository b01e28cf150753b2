#include "kubeclient/cache/backoff.h"

#include <algorithm>
#include <cmath>

namespace routestatus::kubeclient::cache {

Backoff::Backoff(const Options& options, uint64_t seed) : options_(options), rng_(seed) {}

Duration Backoff::Next() {
  double base = static_cast<double>(options_.initial.count()) *
                std::pow(options_.factor, std::min(attempt_, 62));
  double cap = static_cast<double>(options_.max.count());
  base = std::min(base, cap);
  if (attempt_ < 1000) ++attempt_;
  std::uniform_real_distribution<double> dist(0.0, std::max(0.0, options_.jitter));
  double d = std::min(base * (1.0 + dist(rng_)), cap);
  return Duration(static_cast<int64_t>(d));
}

}  // namespace routestatus::kubeclient::cache
