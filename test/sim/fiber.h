#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "base/clock.h"

namespace routestatus::sim {

// Replicas' threads wake on these; a bump is a (possibly spurious) wake-up
// of every fiber of the group parked in SimClock::WaitUntil. Why: production
// code notifies condition variables the simulation cannot see, so whatever
// may have changed a waiter's condition (lease work queued or finished, a
// stop) bumps the group instead. Not thread-safe (see Fiber).
struct WakeGroup {
  uint64_t kicks = 0;
  void Kick() { ++kicks; }
};

// A cooperative thread (a coroutine on its own stack, switched with
// swapcontext): production code that blocks (an informer's Run(), the write
// lease's RunNext(), a reconcile worker) runs on a fiber, but only while the
// simulation's main context has handed control to it, and the main context
// continues when it parks again. So exactly one piece of code runs at a time
// (all on one OS thread) and every run is deterministic. A fiber parks only
// inside the simulated API (a watch with no event due, a list page or status
// PUT on its way), the simulated clock's WaitUntil and the simulated work
// queue; it never holds a lock while parked. Under AddressSanitizer the
// stack switches are announced to it.
//
// Not thread-safe: Resume() from the main context only; Park() from the
// fiber itself.
class Fiber {
 public:
  // When a parked fiber is ready to run again: a time (at or before now =
  // ready now), or nullopt (not until something else changes). Evaluated in
  // the main context while the fiber is parked.
  using WakeAt = std::function<std::optional<SteadyTime>()>;

  // Starts parked and ready (wake time: the epoch).
  Fiber(std::string name, WakeGroup* group, std::function<void()> body);
  // REQUIRES: finished().
  ~Fiber();
  Fiber(const Fiber&) = delete;
  Fiber& operator=(const Fiber&) = delete;

  // Main context: runs the fiber until it parks or its body returns.
  void Resume();
  bool finished() const { return finished_; }
  // Main context, while parked: when the fiber wants to run again.
  std::optional<SteadyTime> WakeTime() const;
  const std::string& name() const { return name_; }
  WakeGroup* group() const { return group_; }

  // The fiber running now, or nullptr (the main context).
  static Fiber* Current();
  // Fiber: hands control back to the main context until it resumes this
  // fiber, which it does once `wake` says so.
  void Park(WakeAt wake);

 private:
  struct Context;
  static void Entry(unsigned hi, unsigned lo);

  const std::string name_;
  WakeGroup* const group_;
  std::function<void()> body_;
  std::unique_ptr<Context> context_;
  bool finished_ = false;
  WakeAt wake_;
};

}  // namespace routestatus::sim
