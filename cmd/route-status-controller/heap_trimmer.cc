#include "cmd/route-status-controller/heap_trimmer.h"

#include <malloc.h>

#include <glog/logging.h>

namespace routestatus::cmd {

HeapTrimmer::Heap HeapTrimmer::GlibcHeap() {
  Heap heap;
  heap.free_bytes = [] { return static_cast<size_t>(mallinfo2().fordblks); };
  heap.trim = [] { malloc_trim(0); };
  return heap;
}

HeapTrimmer::HeapTrimmer(const Clock& clock, Heap heap, Options options)
    : clock_(clock), heap_(std::move(heap)), options_(options) {}

HeapTrimmer::~HeapTrimmer() { Stop(); }

bool HeapTrimmer::RunOnce() {
  const size_t free = heap_.free_bytes();
  if (free <= options_.min_free_bytes) return false;
  heap_.trim();
  VLOG(2) << "heap: returned free pages to the kernel (" << (free >> 20) << " MiB free)";
  std::lock_guard<std::mutex> l(mu_);
  ++trims_;
  return true;
}

int HeapTrimmer::trims() const {
  std::lock_guard<std::mutex> l(mu_);
  return trims_;
}

void HeapTrimmer::Start() {
  // Why the first deadline here and each next one from the last: a check
  // is due every interval of Clock time however long the thread took to
  // start or to trim (a stall only brings the missed checks, each cheap).
  SteadyTime next = clock_.Now() + options_.interval;
  thread_ = std::thread([this, next]() mutable {
    std::unique_lock<std::mutex> l(mu_);
    for (;;) {
      while (!stopping_ && clock_.Now() < next) clock_.WaitUntil(cv_, l, next);
      if (stopping_) return;
      l.unlock();
      RunOnce();
      l.lock();
      next += options_.interval;
    }
  });
}

void HeapTrimmer::Stop() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

}  // namespace routestatus::cmd
