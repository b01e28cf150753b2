#pragma once

#include <chrono>
#include <random>
#include <string>

#include "base/clock.h"
#include "lease/backoff.h"

namespace routestatus::sim {

// A latency distribution: base + U[0, jitter), plus, with probability
// `slow_probability`, an extra U[0, slow) (a slow request or a lagging
// watch). Value type; a zero Delay is instant.
struct Delay {
  Duration base = Duration::zero();
  Duration jitter = Duration::zero();
  double slow_probability = 0;
  Duration slow = Duration::zero();

  // `slow_part`, when given: the extra delay drawn (zero when none).
  Duration Sample(std::mt19937_64& rng, Duration* slow_part = nullptr) const {
    auto uniform = [&rng](Duration d) {
      return Duration(
          static_cast<int64_t>(static_cast<double>(d.count()) * lease::UniformUnit(rng)));
    };
    Duration d = base + uniform(jitter);
    Duration extra = Duration::zero();
    if (slow_probability > 0 && lease::UniformUnit(rng) < slow_probability) extra = uniform(slow);
    if (slow_part != nullptr) *slow_part = extra;
    return d + extra;
  }
  // "5ms+U[0,20ms) +U[0,2000ms)@10%".
  std::string ToString() const {
    auto ms = [](Duration d) {
      return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(d).count()) +
             "ms";
    };
    std::string out = ms(base) + "+U[0," + ms(jitter) + ")";
    if (slow_probability > 0) {
      out += " +U[0," + ms(slow) + ")@" + std::to_string(static_cast<int>(slow_probability * 100)) +
             "%";
    }
    return out;
  }
};

}  // namespace routestatus::sim
