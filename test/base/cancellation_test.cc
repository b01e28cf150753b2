// Clock::SleepUntil with a Cancellation, on the fake and the real clock.
#include "base/cancellation.h"

#include <atomic>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "base/clock.h"
#include "test/testing/fake_clock.h"

namespace routestatus::kubeclient {
namespace {

using std::chrono::hours;
using std::chrono::seconds;

TEST(CancellationTest, FakeClockSleepEndsWhenTimeIsAdvanced) {
  testing::FakeClock clock;
  Cancellation cancel;
  std::atomic<int> result{-1};
  SteadyTime deadline = clock.Now() + seconds(5);
  std::thread t([&] { result = clock.SleepUntil(deadline, &cancel) ? 1 : 0; });
  clock.Advance(seconds(5));
  t.join();
  EXPECT_EQ(result, 1);
}

TEST(CancellationTest, FakeClockSleepEndsWhenCancelled) {
  testing::FakeClock clock;
  Cancellation cancel;
  std::atomic<int> result{-1};
  std::thread t([&] { result = clock.SleepFor(hours(1), &cancel) ? 1 : 0; });
  cancel.Cancel();
  t.join();  // fake time never moved: only the cancellation can end it
  EXPECT_EQ(result, 0);
  EXPECT_FALSE(clock.SleepFor(hours(1), &cancel)) << "an already cancelled sleep returns at once";
}

TEST(CancellationTest, RealClockSleepEndsWhenCancelled) {
  RealClock clock;
  Cancellation cancel;
  std::atomic<int> result{-1};
  std::thread t([&] { result = clock.SleepFor(hours(1), &cancel) ? 1 : 0; });
  cancel.Cancel();
  t.join();
  EXPECT_EQ(result, 0);
}

TEST(CancellationTest, SleepWithoutCancellationEndsAtTheDeadline) {
  testing::FakeClock clock;
  std::atomic<bool> done{false};
  SteadyTime deadline = clock.Now() + seconds(3);
  std::thread t([&] {
    EXPECT_TRUE(clock.SleepUntil(deadline));
    done = true;
  });
  clock.Advance(seconds(3));
  t.join();
  EXPECT_TRUE(done);
}

TEST(CancellationTest, CallbacksRunOnceAndNotAfterTheirRegistrationIsGone) {
  Cancellation cancel;
  int a = 0, b = 0;
  auto reg_a = cancel.OnCancel([&] { ++a; });
  {
    auto reg_b = cancel.OnCancel([&] { ++b; });
  }  // unregistered
  EXPECT_FALSE(cancel.cancelled());
  cancel.Cancel();
  cancel.Cancel();
  EXPECT_TRUE(cancel.cancelled());
  EXPECT_EQ(a, 1);
  EXPECT_EQ(b, 0);
  int c = 0;
  auto reg_c = cancel.OnCancel([&] { ++c; });  // already cancelled: runs now
  EXPECT_EQ(c, 1);
}

TEST(CancellationTest, DestroyingARegistrationWaitsForItsRunningCallback) {
  Cancellation cancel;
  std::atomic<bool> entered{false}, release{false}, finished{false};
  auto reg = std::make_unique<Cancellation::Registration>(cancel.OnCancel([&] {
    entered = true;
    while (!release) std::this_thread::yield();
    finished = true;
  }));
  std::thread canceller([&] { cancel.Cancel(); });
  while (!entered) std::this_thread::yield();
  std::atomic<bool> reset_returned{false};
  std::thread resetter([&] {
    reg.reset();  // must not return while the callback still runs
    EXPECT_TRUE(finished);
    reset_returned = true;
  });
  // A broken Reset() returns during these yields (a slow machine only makes
  // the check weaker, never flaky).
  for (int i = 0; i < 1000 && !reset_returned; ++i) std::this_thread::yield();
  EXPECT_FALSE(reset_returned);
  release = true;
  resetter.join();
  canceller.join();
}

}  // namespace
}  // namespace routestatus::kubeclient
