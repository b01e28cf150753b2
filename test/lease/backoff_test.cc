#include "lease/backoff.h"

#include <algorithm>
#include <chrono>
#include <random>

#include <gtest/gtest.h>

namespace routestatus::lease {
namespace {

using std::chrono::milliseconds;

struct TickBounds {
  int tick;
  milliseconds min;  // inclusive
  milliseconds max;  // inclusive
};

// docs/design.md section 3: base 20 ms, x4 per tick, jitter +[0, 50%) per step,
// cap 15 s, tick > 5 gives the cap. Tick t lies in [20 * 4^t, 20 * 6^t).
TEST(BackoffTest, BoundsPerTickOverManySeeds) {
  const TickBounds table[] = {
      {0, milliseconds(20), milliseconds(20)},        {1, milliseconds(80), milliseconds(120)},
      {2, milliseconds(320), milliseconds(720)},      {3, milliseconds(1280), milliseconds(4320)},
      {4, milliseconds(5120), milliseconds(15000)},   {5, milliseconds(15000), milliseconds(15000)},
      {6, milliseconds(15000), milliseconds(15000)},  {9, milliseconds(15000), milliseconds(15000)},
      {100, milliseconds(15000), milliseconds(15000)},
  };
  const BackoffPolicy policy;
  const auto cap = std::chrono::seconds(15);
  for (const auto& row : table) {
    Duration lo = Duration::max(), hi = Duration::min();
    for (uint64_t seed = 1; seed <= 3000; ++seed) {
      std::mt19937_64 rng(seed);
      auto d = Backoff(policy, row.tick, cap, rng);
      lo = std::min(lo, d);
      hi = std::max(hi, d);
      ASSERT_GE(d, row.min) << "tick " << row.tick << " seed " << seed;
      ASSERT_LE(d, row.max) << "tick " << row.tick << " seed " << seed;
    }
    if (row.tick >= 1 && row.tick <= 3) {
      // The jitter is really used: the spread covers most of the range.
      const auto width = row.max - row.min;
      EXPECT_LT(lo - row.min, width / 20) << "tick " << row.tick;
      EXPECT_LT(row.max - hi, width / 5) << "tick " << row.tick;
    }
    if (row.tick == 4) {
      EXPECT_EQ(hi, cap);  // 20 ms * 6^4 > 15 s: sometimes capped
    }
  }
}

TEST(BackoffTest, SameSeedSameSequence) {
  const BackoffPolicy policy;
  std::mt19937_64 a(42), b(42);
  for (int tick = 0; tick < 6; ++tick) {
    EXPECT_EQ(Backoff(policy, tick, std::chrono::seconds(15), a),
              Backoff(policy, tick, std::chrono::seconds(15), b));
  }
}

TEST(BackoffTest, CapBelowBaseStepsAndCustomPolicy) {
  BackoffPolicy policy;
  policy.base = milliseconds(100);
  policy.factor = 2;
  policy.jitter = 0;
  policy.steps = 3;
  std::mt19937_64 rng(1);
  EXPECT_EQ(Backoff(policy, 0, std::chrono::seconds(1), rng), milliseconds(100));
  EXPECT_EQ(Backoff(policy, 2, std::chrono::seconds(1), rng), milliseconds(400));
  EXPECT_EQ(Backoff(policy, 3, milliseconds(500), rng), milliseconds(500));
  EXPECT_EQ(Backoff(policy, 4, std::chrono::seconds(1), rng), std::chrono::seconds(1));
}

TEST(BackoffTest, UniformUnitInRange) {
  std::mt19937_64 rng(7);
  double lo = 1, hi = 0;
  for (int i = 0; i < 10000; ++i) {
    double u = UniformUnit(rng);
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    lo = std::min(lo, u);
    hi = std::max(hi, u);
  }
  EXPECT_LT(lo, 0.01);
  EXPECT_GT(hi, 0.99);
}

}  // namespace
}  // namespace routestatus::lease
