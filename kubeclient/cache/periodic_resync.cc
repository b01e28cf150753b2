#include "kubeclient/cache/periodic_resync.h"

#include <glog/logging.h>

namespace routestatus::kubeclient::cache {

PeriodicResync::PeriodicResync(const Clock& clock, Duration period, std::function<void()> fn)
    : clock_(clock), period_(period), fn_(std::move(fn)) {
  CHECK(period_ > Duration::zero()) << "resync period must be positive";
}

PeriodicResync::~PeriodicResync() { Stop(); }

void PeriodicResync::Start() {
  CHECK(!thread_.joinable()) << "PeriodicResync started twice";
  // Why here, not on the new thread: the period counts from Start().
  SteadyTime first = clock_.Now() + period_;
  thread_ = std::thread([this, first] { Loop(first); });
}

void PeriodicResync::Stop() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stopping_ = true;
    cv_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
}

uint64_t PeriodicResync::runs() const {
  std::lock_guard<std::mutex> l(mu_);
  return runs_;
}

void PeriodicResync::Loop(SteadyTime next) {
  std::unique_lock<std::mutex> l(mu_);
  for (;;) {
    while (!stopping_ && clock_.Now() < next) clock_.WaitUntil(cv_, l, next);
    if (stopping_) return;
    l.unlock();
    fn_();
    l.lock();
    ++runs_;
    cv_.notify_all();
    // Why: after a long pause (or a big fake-clock jump) run once more, not
    // once per missed period.
    next += period_;
    SteadyTime now = clock_.Now();
    if (next + period_ <= now) next = now;
  }
}

}  // namespace routestatus::kubeclient::cache
