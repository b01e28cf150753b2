#include "base/cancellation.h"

#include <utility>
#include <vector>

#include "base/clock.h"

namespace routestatus {

void Cancellation::Cancel() {
  std::map<uint64_t, std::function<void()>> callbacks;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (cancelled_) return;
    cancelled_ = true;
    running_callbacks_ = true;
    callbacks_thread_ = std::this_thread::get_id();
    callbacks.swap(callbacks_);
  }
  cv_.notify_all();
  // Why outside the lock: a callback may cancel a request whose completion
  // handler unregisters from this object.
  for (auto& [id, fn] : callbacks) fn();
  {
    std::lock_guard<std::mutex> l(mu_);
    running_callbacks_ = false;
  }
  cv_.notify_all();
}

bool Cancellation::cancelled() const {
  std::lock_guard<std::mutex> l(mu_);
  return cancelled_;
}

Cancellation::Registration Cancellation::OnCancel(std::function<void()> fn) {
  {
    std::lock_guard<std::mutex> l(mu_);
    if (!cancelled_) {
      uint64_t id = next_id_++;
      callbacks_.emplace(id, std::move(fn));
      return Registration(this, id);
    }
  }
  fn();
  return Registration();
}

void Cancellation::Unregister(uint64_t id) {
  std::unique_lock<std::mutex> l(mu_);
  if (callbacks_.erase(id) > 0) return;
  // Cancel() took it and may be running it now: wait until it is done
  // (unless this is that thread, from inside a callback).
  if (callbacks_thread_ == std::this_thread::get_id()) return;
  cv_.wait(l, [this] { return !running_callbacks_; });
}

Cancellation::Registration& Cancellation::Registration::operator=(Registration&& o) noexcept {
  if (this != &o) {
    Reset();
    owner_ = o.owner_;
    id_ = o.id_;
    o.owner_ = nullptr;
  }
  return *this;
}

void Cancellation::Registration::Reset() {
  if (owner_ != nullptr) owner_->Unregister(id_);
  owner_ = nullptr;
}

bool Clock::SleepUntil(SteadyTime deadline, const Cancellation* cancel) const {
  if (cancel == nullptr) {
    // Why a private condvar: nothing notifies it; WaitUntil returns at the
    // deadline (or, on a fake clock, when time is advanced past it).
    std::mutex mu;
    std::condition_variable cv;
    std::unique_lock<std::mutex> l(mu);
    while (Now() < deadline) WaitUntil(cv, l, deadline);
    return true;
  }
  std::unique_lock<std::mutex> l(cancel->mu_);
  while (!cancel->cancelled_ && Now() < deadline) WaitUntil(cancel->cv_, l, deadline);
  return !cancel->cancelled_;
}

}  // namespace routestatus
