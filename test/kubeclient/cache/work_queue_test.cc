#include "kubeclient/cache/rate_limiting_work_queue.h"

#include <atomic>
#include <future>
#include <set>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "test/testing/fake_clock.h"

namespace routestatus::kubeclient::cache {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

class WorkQueueTest : public ::testing::Test {
 protected:
  // Pops a ready key without blocking (asserts one is ready).
  std::string MustGet(WorkQueue& q) {
    EXPECT_GT(q.Len(), 0u);
    std::string key;
    EXPECT_TRUE(q.Get(&key));
    return key;
  }
  testing::FakeClock clock_;
};

TEST_F(WorkQueueTest, DedupesQueuedKeys) {
  WorkQueue q(clock_);
  q.Add("a");
  q.Add("b");
  q.Add("a");
  EXPECT_EQ(q.Len(), 2u);
  EXPECT_EQ(MustGet(q), "a");
  EXPECT_EQ(MustGet(q), "b");
  EXPECT_EQ(q.Len(), 0u);
  EXPECT_EQ(q.Stats().adds_total, 2u);
}

TEST_F(WorkQueueTest, KeyAddedWhileProcessingIsRequeuedOnlyAfterDone) {
  WorkQueue q(clock_);
  q.Add("a");
  EXPECT_EQ(MustGet(q), "a");
  q.Add("a");
  q.Add("a");
  // Not handed out while a worker holds it.
  EXPECT_EQ(q.Len(), 0u);
  q.Done("a");
  EXPECT_EQ(q.Len(), 1u);
  EXPECT_EQ(MustGet(q), "a");
  q.Done("a");
  EXPECT_EQ(q.Len(), 0u);
}

TEST_F(WorkQueueTest, NeverHandsOneKeyToTwoWorkers) {
  WorkQueue q(clock_);
  constexpr int kWorkers = 4;
  constexpr int kRounds = 2000;
  std::atomic<int> in_flight_a{0};
  std::atomic<bool> overlap{false};
  std::atomic<int> processed{0};
  std::vector<std::thread> workers;
  for (int i = 0; i < kWorkers; ++i) {
    workers.emplace_back([&] {
      std::string key;
      while (q.Get(&key)) {
        if (key == "a") {
          if (in_flight_a.fetch_add(1) != 0) overlap = true;
          q.Add("a");  // re-added while processing
          in_flight_a.fetch_sub(1);
        }
        ++processed;
        q.Done(key);
      }
    });
  }
  for (int i = 0; i < kRounds; ++i) {
    q.Add("a");
    q.Add("k" + std::to_string(i % 50));
  }
  q.ShutDown();
  for (auto& t : workers) t.join();
  EXPECT_FALSE(overlap.load());
  EXPECT_GT(processed.load(), 0);
}

TEST_F(WorkQueueTest, AddAfterBecomesReadyWhenClockPasses) {
  WorkQueue q(clock_);
  q.AddAfter("a", milliseconds(100));
  q.AddAfter("b", milliseconds(50));
  EXPECT_EQ(q.Len(), 0u);
  clock_.Advance(milliseconds(49));
  EXPECT_EQ(q.Len(), 0u);
  clock_.Advance(milliseconds(1));
  EXPECT_EQ(q.Len(), 1u);
  EXPECT_EQ(MustGet(q), "b");
  clock_.Advance(milliseconds(50));
  EXPECT_EQ(MustGet(q), "a");
}

TEST_F(WorkQueueTest, AddAfterKeepsTheEarliestTime) {
  WorkQueue q(clock_);
  q.AddAfter("a", seconds(10));
  q.AddAfter("a", seconds(1));
  q.AddAfter("a", seconds(5));
  clock_.Advance(seconds(1));
  EXPECT_EQ(q.Len(), 1u);
  EXPECT_EQ(MustGet(q), "a");
  q.Done("a");
  clock_.Advance(seconds(10));
  EXPECT_EQ(q.Len(), 0u) << "superseded delays must not add the key again";
}

TEST_F(WorkQueueTest, AddAfterOfQueuedKeyIsDeduped) {
  WorkQueue q(clock_);
  q.Add("a");
  q.AddAfter("a", seconds(1));
  clock_.Advance(seconds(1));
  EXPECT_EQ(q.Len(), 1u);
}

TEST_F(WorkQueueTest, BlockedGetWakesWhenFakeClockReachesDelay) {
  WorkQueue q(clock_);
  q.AddAfter("a", seconds(3));
  std::promise<std::string> got;
  std::thread worker([&] {
    std::string key;
    if (q.Get(&key)) got.set_value(key);
    else got.set_value("<shutdown>");
  });
  auto f = got.get_future();
  // Without time passing the worker stays blocked; advancing wakes it.
  clock_.Advance(seconds(3));
  EXPECT_EQ(f.get(), "a");
  worker.join();
}

TEST_F(WorkQueueTest, PerKeyBackoffDoublesAndIsCapped) {
  WorkQueue::Options o;
  o.base_delay = milliseconds(5);
  o.max_delay = milliseconds(40);
  o.qps = 0;  // bucket off
  WorkQueue q(clock_, o);
  std::vector<Duration> delays;
  for (int i = 0; i < 6; ++i) {
    delays.push_back(q.PeekRateLimitDelay("a"));
    q.AddRateLimited("a");
  }
  EXPECT_EQ(delays, (std::vector<Duration>{milliseconds(5), milliseconds(10), milliseconds(20),
                                            milliseconds(40), milliseconds(40), milliseconds(40)}));
  EXPECT_EQ(q.NumRequeues("a"), 6);
  EXPECT_EQ(q.PeekRateLimitDelay("b"), milliseconds(5)) << "backoff is per key";
}

TEST_F(WorkQueueTest, RateLimitedKeyIsReadyAfterItsBackoff) {
  WorkQueue::Options o;
  o.qps = 0;
  WorkQueue q(clock_, o);
  q.AddRateLimited("a");  // 5 ms
  clock_.Advance(milliseconds(4));
  EXPECT_EQ(q.Len(), 0u);
  clock_.Advance(milliseconds(1));
  EXPECT_EQ(MustGet(q), "a");
  q.Done("a");
  q.AddRateLimited("a");  // 10 ms
  clock_.Advance(milliseconds(9));
  EXPECT_EQ(q.Len(), 0u);
  clock_.Advance(milliseconds(1));
  EXPECT_EQ(q.Len(), 1u);
  EXPECT_EQ(q.Stats().retries_total, 2u);
}

TEST_F(WorkQueueTest, ForgetResetsBackoff) {
  WorkQueue::Options o;
  o.qps = 0;
  WorkQueue q(clock_, o);
  q.AddRateLimited("a");
  q.AddRateLimited("a");
  EXPECT_EQ(q.NumRequeues("a"), 2);
  EXPECT_EQ(q.PeekRateLimitDelay("a"), milliseconds(20));
  q.Forget("a");
  EXPECT_EQ(q.NumRequeues("a"), 0);
  EXPECT_EQ(q.PeekRateLimitDelay("a"), milliseconds(5));
}

TEST_F(WorkQueueTest, TokenBucketLimitsOverallRate) {
  WorkQueue::Options o;
  o.base_delay = Duration::zero();
  o.qps = 10;
  o.burst = 3;
  WorkQueue q(clock_, o);
  // The burst goes at once; then one key per 100 ms.
  for (int i = 0; i < 6; ++i) q.AddRateLimited("k" + std::to_string(i));
  EXPECT_EQ(q.Len(), 3u);
  clock_.Advance(milliseconds(99));
  EXPECT_EQ(q.Len(), 3u);
  clock_.Advance(milliseconds(1));
  EXPECT_EQ(q.Len(), 4u);
  clock_.Advance(milliseconds(100));
  EXPECT_EQ(q.Len(), 5u);
  clock_.Advance(milliseconds(100));
  EXPECT_EQ(q.Len(), 6u);
  // Tokens refill while idle, up to the burst.
  clock_.Advance(seconds(10));
  EXPECT_EQ(q.PeekRateLimitDelay("x"), Duration::zero());
}

TEST_F(WorkQueueTest, ShutDownDrainsQueuedAndRequeuedKeys) {
  WorkQueue q(clock_);
  q.Add("a");
  q.Add("b");
  q.AddAfter("later", seconds(1));
  EXPECT_EQ(MustGet(q), "a");
  q.Add("a");  // re-added while processing
  q.ShutDown();
  EXPECT_TRUE(q.ShuttingDown());
  q.Add("c");  // ignored after shutdown
  std::string key;
  ASSERT_TRUE(q.Get(&key));
  EXPECT_EQ(key, "b");
  q.Done("b");
  // "a" is still being processed and dirty: a waiting Get must get it after Done.
  std::promise<std::string> got;
  std::thread worker([&] {
    std::string k;
    got.set_value(q.Get(&k) ? k : "<shutdown>");
  });
  q.Done("a");
  EXPECT_EQ(got.get_future().get(), "a");
  worker.join();
  q.Done("a");
  clock_.Advance(seconds(2));
  EXPECT_FALSE(q.Get(&key)) << "delayed keys are dropped at shutdown";
}

TEST_F(WorkQueueTest, ShutDownWakesBlockedGet) {
  WorkQueue q(clock_);
  std::promise<bool> result;
  std::thread worker([&] {
    std::string k;
    result.set_value(q.Get(&k));
  });
  q.ShutDown();
  EXPECT_FALSE(result.get_future().get());
  worker.join();
}

TEST_F(WorkQueueTest, ShutDownNowDropsQueuedKeys) {
  WorkQueue q(clock_);
  q.Add("a");
  q.Add("b");
  q.ShutDownNow();
  std::string key;
  EXPECT_FALSE(q.Get(&key));
  EXPECT_EQ(q.Len(), 0u);
}

TEST_F(WorkQueueTest, StatsReportLatencyAndDuration) {
  WorkQueue q(clock_);
  q.Add("a");
  clock_.Advance(milliseconds(30));
  EXPECT_EQ(MustGet(q), "a");
  clock_.Advance(milliseconds(70));
  q.Done("a");
  WorkQueueStats s = q.Stats();
  EXPECT_EQ(s.queue_latency_sum, milliseconds(30));
  EXPECT_EQ(s.queue_latency_max, milliseconds(30));
  EXPECT_EQ(s.work_duration_sum, milliseconds(70));
  EXPECT_EQ(s.gets_total, 1u);
  EXPECT_EQ(s.dones_total, 1u);
  EXPECT_EQ(s.depth, 0u);
}

class CountingObserver : public WorkQueueObserver {
 public:
  void OnAdd() override { ++adds; }
  void OnRetry() override { ++retries; }
  void OnGet(Duration latency) override { latencies.push_back(latency); }
  void OnDone(Duration d) override { durations.push_back(d); }
  int adds = 0, retries = 0;
  std::vector<Duration> latencies, durations;
};

TEST_F(WorkQueueTest, ObserverSeesEveryEvent) {
  CountingObserver obs;
  WorkQueue::Options o;
  o.observer = &obs;
  o.qps = 0;
  WorkQueue q(clock_, o);
  q.Add("a");
  q.Add("a");
  q.AddRateLimited("b");
  clock_.Advance(milliseconds(5));
  EXPECT_EQ(MustGet(q), "a");
  q.Done("a");
  EXPECT_EQ(obs.adds, 2);
  EXPECT_EQ(obs.retries, 1);
  EXPECT_EQ(obs.latencies, std::vector<Duration>{milliseconds(5)});
  EXPECT_EQ(obs.durations, std::vector<Duration>{Duration::zero()});
}

}  // namespace
}  // namespace routestatus::kubeclient::cache
