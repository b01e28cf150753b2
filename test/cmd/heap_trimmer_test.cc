#include "cmd/route-status-controller/heap_trimmer.h"

#include <atomic>

#include <gtest/gtest.h>


namespace routestatus::cmd {
namespace {

// Like glibc's: a trim gives pages back but leaves the free bytes counted.
struct FakeHeap {
  std::atomic<size_t> free{0};
  std::atomic<int> trims{0};
  HeapTrimmer::Heap heap() {
    return {[this] { return free.load(); }, [this] { ++trims; }};
  }
};

TEST(HeapTrimmerTest, TrimsOnlyWhenTheFreeBytesGrewPastTheThreshold) {
  FakeHeap heap;
  HeapTrimmer::Options options;
  options.min_free_bytes = 1000;
  HeapTrimmer trimmer(heap.heap(), options);
  heap.free = 1000;
  EXPECT_FALSE(trimmer.RunOnce());
  heap.free = 1001;
  EXPECT_TRUE(trimmer.RunOnce());
  EXPECT_EQ(heap.trims, 1);
  EXPECT_FALSE(trimmer.RunOnce()) << "nothing freed since: no second trim of the same heap";
  heap.free = 2001;
  EXPECT_FALSE(trimmer.RunOnce()) << "grew by exactly the threshold";
  heap.free = 2002;
  EXPECT_TRUE(trimmer.RunOnce());
  heap.free = 500;  // reused
  EXPECT_FALSE(trimmer.RunOnce());
  heap.free = 1501;
  EXPECT_TRUE(trimmer.RunOnce()) << "growth counts from the lowest point since the last trim";
  EXPECT_EQ(heap.trims, 3);
  EXPECT_EQ(trimmer.trims(), 3);
}

}  // namespace
}  // namespace routestatus::cmd
