#pragma once

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>

#include "base/clock.h"

namespace routestatus::cmd {

// Gives the heap's free pages back to the kernel (glibc malloc_trim) when
// more than `min_free_bytes` of it are free, checked every `interval`.
//
// Why: glibc returns freed memory to the kernel only from the top of the
// heap. A cold start frees a lot in the middle of it (each route's cached
// version is replaced once its status is written, the work queued for
// every route drains), so without trimming the peak RSS holds both the
// before and the after (docs/sizing.md). Thread-safe; Stop() (or the
// destructor) joins the thread.
class HeapTrimmer {
 public:
  // The heap, injected so tests fake it.
  struct Heap {
    std::function<size_t()> free_bytes;  // free bytes held by malloc
    std::function<void()> trim;          // give free pages back
  };
  struct Options {
    Duration interval = std::chrono::seconds(1);
    size_t min_free_bytes = size_t{8} << 20;
  };

  // glibc's malloc: mallinfo2().fordblks and malloc_trim(0).
  static Heap GlibcHeap();

  HeapTrimmer(const Clock& clock, Heap heap, Options options);
  ~HeapTrimmer();

  // Checks every interval on a thread of its own until Stop().
  void Start();
  void Stop();
  // One check: trims when more than min_free_bytes are free. Returns true
  // when it trimmed.
  bool RunOnce();
  // Trims done so far.
  int trims() const;

 private:
  const Clock& clock_;
  const Heap heap_;
  const Options options_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;  // GUARDED_BY(mu_)
  int trims_ = 0;          // GUARDED_BY(mu_)
  std::thread thread_;
};

}  // namespace routestatus::cmd
