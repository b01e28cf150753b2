#include "cmd/route-status-controller/heap_trimmer.h"

#include <malloc.h>

#include <algorithm>

#include <glog/logging.h>

namespace routestatus::cmd {

HeapTrimmer::Heap HeapTrimmer::GlibcHeap() {
  Heap heap;
  heap.free_bytes = [] { return static_cast<size_t>(mallinfo2().fordblks); };
  heap.trim = [] { malloc_trim(0); };
  return heap;
}

HeapTrimmer::HeapTrimmer(Heap heap, Options options)
    : heap_(std::move(heap)), options_(options) {}

bool HeapTrimmer::RunOnce() {
  std::lock_guard<std::mutex> l(mu_);
  const size_t free = heap_.free_bytes();
  baseline_ = std::min(baseline_, free);
  if (free <= baseline_ + options_.min_free_bytes) return false;
  heap_.trim();
  baseline_ = free;
  ++trims_;
  VLOG(2) << "heap: returned free pages to the kernel (" << (free >> 20) << " MiB free)";
  return true;
}

int HeapTrimmer::trims() const {
  std::lock_guard<std::mutex> l(mu_);
  return trims_;
}

}  // namespace routestatus::cmd
