#include "kubeclient/cache/periodic_resync.h"

#include <condition_variable>
#include <mutex>

#include <gtest/gtest.h>

#include "kubeclient/cache/rate_limiting_work_queue.h"
#include "test/testing/fake_clock.h"

namespace routestatus::kubeclient::cache {
namespace {

TEST(PeriodicResyncTest, RunsOncePerPeriodOfClockTime) {
  ::routestatus::testing::FakeClock clock;
  WorkQueue queue(clock);
  std::mutex mu;
  std::condition_variable cv;
  int runs = 0;
  PeriodicResync resync(clock, std::chrono::minutes(30), [&] {
    queue.Add("ns/a");
    queue.Add("ns/b");
    std::lock_guard<std::mutex> l(mu);
    ++runs;
    cv.notify_all();
  });
  resync.Start();
  clock.Advance(std::chrono::minutes(29));
  EXPECT_EQ(queue.Len(), 0u);
  clock.Advance(std::chrono::minutes(1));
  {
    std::unique_lock<std::mutex> l(mu);
    cv.wait(l, [&] { return runs == 1; });
  }
  EXPECT_EQ(queue.Len(), 2u);
  clock.Advance(std::chrono::minutes(30));
  {
    std::unique_lock<std::mutex> l(mu);
    cv.wait(l, [&] { return runs == 2; });
  }
  resync.Stop();
  EXPECT_EQ(resync.runs(), 2u);
}

TEST(PeriodicResyncTest, StopReturnsWithoutTimePassing) {
  ::routestatus::testing::FakeClock clock;
  int runs = 0;
  PeriodicResync resync(clock, std::chrono::minutes(30), [&] { ++runs; });
  resync.Start();
  resync.Stop();
  EXPECT_EQ(runs, 0);
}

}  // namespace
}  // namespace routestatus::kubeclient::cache
