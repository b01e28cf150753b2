#include "cmd/route-status-controller/heap_trimmer.h"

#include <atomic>

#include <gtest/gtest.h>

#include "test/testing/fake_clock.h"

namespace routestatus::cmd {
namespace {

struct FakeHeap {
  std::atomic<size_t> free{0};
  std::atomic<int> trims{0};
  HeapTrimmer::Heap heap() {
    return {[this] { return free.load(); }, [this] { free = 0; ++trims; }};
  }
};

TEST(HeapTrimmerTest, TrimsOnlyAboveTheFreeThreshold) {
  testing::FakeClock clock;
  FakeHeap heap;
  HeapTrimmer::Options options;
  options.min_free_bytes = 1000;
  HeapTrimmer trimmer(clock, heap.heap(), options);
  heap.free = 1000;
  EXPECT_FALSE(trimmer.RunOnce());
  EXPECT_EQ(heap.trims, 0);
  heap.free = 1001;
  EXPECT_TRUE(trimmer.RunOnce());
  EXPECT_EQ(heap.trims, 1);
  EXPECT_EQ(trimmer.trims(), 1);
  EXPECT_FALSE(trimmer.RunOnce()) << "nothing freed since";
}

TEST(HeapTrimmerTest, StopEndsTheWaitingThreadWithoutACheck) {
  testing::FakeClock clock;
  FakeHeap heap;
  heap.free = 10;
  HeapTrimmer::Options options;
  options.min_free_bytes = 0;
  HeapTrimmer trimmer(clock, heap.heap(), options);
  trimmer.Start();
  trimmer.Stop();  // hangs if Stop() does not wake the thread
  clock.Advance(std::chrono::seconds(5));
  EXPECT_EQ(heap.trims, 0) << "no check before the interval, none after Stop()";
}

}  // namespace
}  // namespace routestatus::cmd
