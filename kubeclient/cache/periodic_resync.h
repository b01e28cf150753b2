#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "base/clock.h"

namespace routestatus::kubeclient::cache {

// Calls `fn` every `period` of Clock time on its own thread, e.g. to
// re-enqueue every cached key:
//   PeriodicResync resync(clock, std::chrono::minutes(30), [&] {
//     for (auto& key : informer.Keys()) queue.Add(key);
//   });
// The first call happens one period after Start(). Thread-safe.
class PeriodicResync {
 public:
  PeriodicResync(const Clock& clock, Duration period, std::function<void()> fn);
  ~PeriodicResync();

  void Start();
  // Returns once the thread has ended (a running `fn` finishes first).
  void Stop();
  // How many times `fn` has run.
  uint64_t runs() const;

 private:
  void Loop(SteadyTime first);

  const Clock& clock_;
  const Duration period_;
  const std::function<void()> fn_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;  // GUARDED_BY(mu_)
  uint64_t runs_ = 0;      // GUARDED_BY(mu_)
  std::thread thread_;
};

}  // namespace routestatus::kubeclient::cache
