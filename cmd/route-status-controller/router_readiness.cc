#include "cmd/route-status-controller/router_readiness.h"

#include <utility>

#include <glog/logging.h>

#include "cmd/route-status-controller/config.h"

namespace routestatus::cmd {

RouterReadiness::RouterReadiness(const Clock& clock, RouterReadinessOptions options,
                                 RouterProbe probe)
    : clock_(clock), options_(std::move(options)), probe_(std::move(probe)) {}

RouterReadiness::~RouterReadiness() { Stop(); }

void RouterReadiness::Probe() {
  const SteadyTime start = clock_.Now();
  const Status outcome = probe_(start + options_.timeout);
  const SteadyTime now = clock_.Now();
  bool changed = false;
  bool ready = outcome.ok();
  {
    std::lock_guard<std::mutex> l(mu_);
    if (ready) {
      ++state_.probes_ready;
    } else {
      ++state_.probes_not_ready;
      state_.last_error = outcome.ToString();
    }
    const bool first = state_.since == SteadyTime{};
    if (first || state_.ready != ready) {
      changed = !first || ready;  // Why: it starts not ready; only ready is news then.
      if (!first) ++state_.transitions;
      state_.ready = ready;
      state_.since = now;
      if (ready && warned_) {
        LOG(INFO) << "the router is ready again (" << options_.url
                  << "): this replica reports for it again";
      }
      if (ready) warned_ = false;
    }
    if (!ready && !warned_ && now - state_.since >= options_.warn_after) {
      warned_ = true;
      LOG(WARNING) << "the router beside this replica has not been ready for "
                   << FormatDuration(std::chrono::duration_cast<std::chrono::milliseconds>(now - state_.since)) << " (" << options_.url
                   << ": latest: " << state_.last_error
                   << "); this replica writes no status and takes over nothing until it is";
    }
  }
  if (changed) {
    VLOG(1) << "router " << (ready ? "ready" : "not ready") << " (" << options_.url << ")"
            << (ready ? std::string() : ": " + outcome.ToString());
    if (handler_) handler_(ready);
  }
}

void RouterReadiness::Start() {
  CHECK(!thread_.joinable()) << "RouterReadiness started twice";
  thread_ = std::thread([this] { Run(); });
}

void RouterReadiness::Stop() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void RouterReadiness::Run() {
  for (;;) {
    const SteadyTime next = clock_.Now() + options_.interval;
    Probe();
    std::unique_lock<std::mutex> l(mu_);
    while (!stopping_ && clock_.Now() < next) clock_.WaitUntil(cv_, l, next);
    if (stopping_) return;
  }
}

bool RouterReadiness::ready() const {
  std::lock_guard<std::mutex> l(mu_);
  return state_.ready;
}

RouterReadinessSnapshot RouterReadiness::Snapshot() const {
  std::lock_guard<std::mutex> l(mu_);
  return state_;
}

}  // namespace routestatus::cmd
