#pragma once

#include <cstddef>
#include <functional>
#include <mutex>

namespace routestatus::cmd {

// Gives the heap's free pages back to the kernel (glibc malloc_trim) when
// more than `min_free_bytes` of it are free. The binary calls RunOnce every
// second (kubeclient::cache::PeriodicResync).
//
// Why: glibc returns freed memory to the kernel only from the top of the
// heap. A cold start frees a lot in the middle of it (each route's cached
// version is replaced once its status is written, the work queued for
// every route drains), so without trimming the peak RSS holds both the
// before and the after (docs/sizing.md). Thread-safe.
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

  // One check: trims when more than min_free_bytes are free. Returns true
  // when it trimmed.
  bool RunOnce();
  // Trims done so far.
  int trims() const;

 private:
  const Heap heap_;
  const Options options_;
  mutable std::mutex mu_;
  int trims_ = 0;  // GUARDED_BY(mu_)
};

}  // namespace routestatus::cmd
