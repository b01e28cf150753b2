#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

namespace routestatus {

class Clock;

// A one-shot stop signal: a shutdown calls Cancel(), and everything that
// waits with it (Clock::SleepUntil, a REST request, an exec plugin) stops
// promptly. Callbacks registered with OnCancel() run once, on the thread
// that cancels. Thread-safe; not copyable. Must outlive every wait and
// registration that uses it.
class Cancellation {
 public:
  Cancellation() = default;
  Cancellation(const Cancellation&) = delete;
  Cancellation& operator=(const Cancellation&) = delete;

  // Trips the signal: wakes every Clock::SleepUntil on it and runs the
  // registered callbacks. Idempotent.
  void Cancel();
  bool cancelled() const;

  // Runs `fn` when Cancel() is called (at once, on this thread, when it
  // already was) until the returned Registration is destroyed. Destroying
  // it while `fn` runs on another thread waits for `fn` to finish, so `fn`
  // may use whatever the registration's owner owns.
  class Registration {
   public:
    Registration() = default;
    Registration(Registration&& o) noexcept : owner_(o.owner_), id_(o.id_) { o.owner_ = nullptr; }
    Registration& operator=(Registration&& o) noexcept;
    Registration(const Registration&) = delete;
    Registration& operator=(const Registration&) = delete;
    ~Registration() { Reset(); }
    void Reset();

   private:
    friend class Cancellation;
    Registration(Cancellation* owner, uint64_t id) : owner_(owner), id_(id) {}
    Cancellation* owner_ = nullptr;
    uint64_t id_ = 0;
  };
  [[nodiscard]] Registration OnCancel(std::function<void()> fn);

 private:
  friend class Clock;
  void Unregister(uint64_t id);

  mutable std::mutex mu_;
  mutable std::condition_variable cv_;  // notified by Cancel(): wakes sleepers
  bool cancelled_ = false;              // GUARDED_BY(mu_)
  bool running_callbacks_ = false;      // GUARDED_BY(mu_): Cancel() is running them
  std::thread::id callbacks_thread_;    // GUARDED_BY(mu_): the thread running them
  uint64_t next_id_ = 1;                                  // GUARDED_BY(mu_)
  std::map<uint64_t, std::function<void()>> callbacks_;  // GUARDED_BY(mu_)
};

}  // namespace routestatus
