#include "base/token_bucket.h"

#include <atomic>
#include <limits>
#include <thread>

#include <gtest/gtest.h>

#include "test/testing/fake_clock.h"

namespace routestatus {
namespace {

using std::chrono::milliseconds;

TEST(TokenBucketTest, BurstThenQps) {
  testing::FakeClock clock;
  TokenBucket b(clock, /*qps=*/10, /*burst=*/3);
  EXPECT_EQ(b.Reserve(), Duration::zero());
  EXPECT_EQ(b.Reserve(), Duration::zero());
  EXPECT_EQ(b.Reserve(), Duration::zero());
  EXPECT_EQ(std::chrono::duration_cast<milliseconds>(b.Reserve()), milliseconds(100));
  EXPECT_EQ(std::chrono::duration_cast<milliseconds>(b.Reserve()), milliseconds(200));
  clock.Advance(milliseconds(200));  // debt of 2 repaid
  EXPECT_EQ(std::chrono::duration_cast<milliseconds>(b.Reserve()), milliseconds(100));
}

TEST(TokenBucketTest, RefillIsCappedAtBurst) {
  testing::FakeClock clock;
  TokenBucket b(clock, 1, 2);
  clock.Advance(std::chrono::hours(1));
  EXPECT_EQ(b.Reserve(), Duration::zero());
  EXPECT_EQ(b.Reserve(), Duration::zero());
  EXPECT_GT(b.Reserve(), Duration::zero());
}

TEST(TokenBucketTest, ZeroQpsIsUnlimited) {
  testing::FakeClock clock;
  TokenBucket b(clock, 0, 1);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(b.Reserve(), Duration::zero());
}

TEST(TokenBucketTest, PeekTakesNothing) {
  testing::FakeClock clock;
  TokenBucket b(clock, 10, 1);
  EXPECT_EQ(b.Peek(), Duration::zero());
  EXPECT_EQ(b.Peek(), Duration::zero());
  EXPECT_EQ(b.Reserve(), Duration::zero());
  EXPECT_EQ(std::chrono::duration_cast<milliseconds>(b.Peek()), milliseconds(100));
  EXPECT_EQ(std::chrono::duration_cast<milliseconds>(b.Peek()), milliseconds(100));
  clock.Advance(milliseconds(100));
  EXPECT_EQ(b.Peek(), Duration::zero());
}

// Burst 1 spaces requests evenly (what `clear` uses for its PUT rate).
TEST(TokenBucketTest, BurstOneSpacesSlots) {
  testing::FakeClock clock;
  TokenBucket limiter(clock, 10, 1);
  const SteadyTime t0 = clock.Now();
  EXPECT_EQ(clock.Now() + limiter.Reserve(), t0);
  EXPECT_EQ(clock.Now() + limiter.Reserve(), t0 + milliseconds(100));
  EXPECT_EQ(clock.Now() + limiter.Reserve(), t0 + milliseconds(200));
  clock.Advance(std::chrono::seconds(10));
  EXPECT_EQ(clock.Now() + limiter.Reserve(), clock.Now()) << "idle time is not banked";
  EXPECT_GT(limiter.Reserve(), Duration::zero()) << "idle time is not banked";
  TokenBucket unlimited(clock, 0, 1);
  EXPECT_EQ(unlimited.Reserve(), Duration::zero());
  EXPECT_EQ(unlimited.Reserve(), Duration::zero());
}

TEST(TokenBucketTest, AcquireWaitsForTheClock) {
  testing::FakeClock clock;
  TokenBucket b(clock, 1, 1);
  b.Acquire();  // the burst token
  std::atomic<bool> done{false};
  std::thread t([&] {
    b.Acquire();
    done = true;
  });
  // Not done before the fake time moves (a real-time pause only makes this
  // check weaker, never flaky).
  std::this_thread::sleep_for(milliseconds(20));
  EXPECT_FALSE(done);
  clock.Advance(std::chrono::seconds(1));
  t.join();
  EXPECT_TRUE(done);
}

TEST(TokenBucketTest, AcquireEndsWhenCancelled) {
  testing::FakeClock clock;
  TokenBucket b(clock, 1, 1);
  EXPECT_TRUE(b.Acquire());  // the burst token
  Cancellation cancel;
  std::atomic<int> result{-1};
  std::thread t([&] { result = b.Acquire(&cancel) ? 1 : 0; });
  cancel.Cancel();  // fake time never moves: only this ends the wait
  t.join();
  EXPECT_EQ(result, 0);
}

// A rate so small that the wait does not fit in a Duration: the double to
// int64 conversion overflowed (undefined behaviour; in practice a negative
// wait, so the limit was off). Now the wait is capped and stays a wait.
TEST(TokenBucketTest, TinyRatesWaitTheCapNeverOverflow) {
  for (double qps : {1e-9, 1e-10, 1e-300, 5e-324}) {
    testing::FakeClock clock;
    TokenBucket b(clock, qps, 1);
    EXPECT_EQ(b.Reserve(), Duration::zero()) << qps;
    for (int i = 0; i < 3; ++i) {
      Duration wait = b.Reserve();
      EXPECT_GT(wait, Duration::zero()) << qps;
      EXPECT_LE(wait, TokenBucket::kMaxWait) << qps;
      EXPECT_LE(b.Peek(), TokenBucket::kMaxWait) << qps;
    }
  }
  testing::FakeClock clock;
  EXPECT_EQ(TokenBucket(clock, 1e-10, 1).Reserve(), Duration::zero());
  TokenBucket b(clock, 1e-10, 1);
  (void)b.Reserve();
  EXPECT_EQ(b.Reserve(), TokenBucket::kMaxWait);
}

// Rates that are not a number of tokens per second disable the limit, as
// 0 does, rather than computing with NaN.
TEST(TokenBucketTest, NonFiniteRatesAreUnlimited) {
  testing::FakeClock clock;
  for (double qps : {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                     -std::numeric_limits<double>::infinity()}) {
    TokenBucket b(clock, qps, 1);
    for (int i = 0; i < 10; ++i) ASSERT_EQ(b.Reserve(), Duration::zero()) << qps;
  }
}

}  // namespace
}  // namespace routestatus
