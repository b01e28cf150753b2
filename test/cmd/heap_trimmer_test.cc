#include "cmd/route-status-controller/heap_trimmer.h"

#include <atomic>

#include <gtest/gtest.h>


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
  FakeHeap heap;
  HeapTrimmer::Options options;
  options.min_free_bytes = 1000;
  HeapTrimmer trimmer(heap.heap(), options);
  heap.free = 1000;
  EXPECT_FALSE(trimmer.RunOnce());
  EXPECT_EQ(heap.trims, 0);
  heap.free = 1001;
  EXPECT_TRUE(trimmer.RunOnce());
  EXPECT_EQ(heap.trims, 1);
  EXPECT_EQ(trimmer.trims(), 1);
  EXPECT_FALSE(trimmer.RunOnce()) << "nothing freed since";
}

}  // namespace
}  // namespace routestatus::cmd
