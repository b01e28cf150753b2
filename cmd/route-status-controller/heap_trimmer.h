#pragma once

#include <cstddef>
#include <functional>
#include <mutex>

namespace routestatus::cmd {

// Gives the heap's free pages back to the kernel (glibc malloc_trim) when
// the heap's free bytes grew by more than `min_free_bytes` since the last
// trim (or since their lowest point after it). The binary checks every 10
// seconds (kubeclient::cache::PeriodicResync).
//
// Why: glibc returns freed memory to the kernel only from the top of the
// heap. A cold start frees a lot in the middle of it (each route's cached
// version is replaced once its status is written, the work queued for
// every route drains); trimmed, a replica's RSS after a 100,000-route cold
// start is ~100 MB instead of ~150 (docs/sizing.md). Why on growth, not on
// a level: a trim does not lower the free bytes malloc reports, and with
// ~200,000 free chunks (a fragmented 150 MB heap) mallinfo2 and malloc_trim
// take ~25 ms each, holding malloc's locks. Thread-safe.
class HeapTrimmer {
 public:
  // The heap, injected so tests fake it.
  struct Heap {
    std::function<size_t()> free_bytes;  // free bytes held by malloc
    std::function<void()> trim;          // give free pages back
  };
  struct Options {
    size_t min_free_bytes = size_t{8} << 20;
  };

  // glibc's malloc: mallinfo2().fordblks and malloc_trim(0).
  static Heap GlibcHeap();

  HeapTrimmer(Heap heap, Options options);

  // One check: trims when the free bytes exceed the last trim's (lowered
  // to the lowest seen since) by more than min_free_bytes. Returns true
  // when it trimmed.
  bool RunOnce();
  // Trims done so far.
  int trims() const;

 private:
  const Heap heap_;
  const Options options_;
  mutable std::mutex mu_;
  int trims_ = 0;  // GUARDED_BY(mu_)
  size_t baseline_ = 0;  // GUARDED_BY(mu_): free bytes at the last trim, or lower since
};

}  // namespace routestatus::cmd
