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
  thread_ = std::thread([this] { Loop(); });
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

void PeriodicResync::Loop() {
  std::unique_lock<std::mutex> l(mu_);
  SteadyTime next = clock_.Now() + period_;
  for (;;) {
    while (!stopping_ && clock_.Now() < next) clock_.WaitUntil(cv_, l, next);
    if (stopping_) return;
    l.unlock();
    fn_();
    l.lock();
    ++runs_;
    cv_.notify_all();
    // Why from now: after a long pause (or a big fake-clock jump) run once,
    // not once per missed period.
    next += period_;
    SteadyTime now = clock_.Now();
    if (next <= now) next = now + period_;
  }
}

}  // namespace routestatus::kubeclient::cache
