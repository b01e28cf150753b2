#include "cmd/route-status-controller/api_reachability.h"

#include <cstdio>

#include <glog/logging.h>

namespace routestatus::cmd {


namespace {

std::string Seconds(routestatus::Duration d) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f s", std::chrono::duration<double>(d).count());
  return buf;
}

}  // namespace

ApiReachability::ApiReachability(const Clock& clock, Options options)
    : clock_(clock), options_(std::move(options)) {}

void ApiReachability::Record(const Status& outcome, std::string_view object,
                             std::optional<SteadyTime> waited_since) {
  if (outcome.code() == StatusCode::kCancelled || outcome.code() == StatusCode::kClosed) return;
  const FailureClass c = FailureClassOf(outcome);
  if (c == FailureClass::kAnswered) {
    last_success_ns_.store(std::chrono::duration_cast<std::chrono::nanoseconds>(
                               clock_.WallNow().time_since_epoch())
                               .count(),
                           std::memory_order_relaxed);
    last_answer_steady_ns_.store(
        std::chrono::duration_cast<std::chrono::nanoseconds>(clock_.Now().time_since_epoch())
            .count(),
        std::memory_order_relaxed);
    if (!troubled_.load(std::memory_order_acquire)) return;
    bool was_outage;
    routestatus::Duration length;
    uint64_t failed;
    {
      std::lock_guard<std::mutex> l(mu_);
      if (!troubled_.load(std::memory_order_relaxed)) return;
      was_outage = outage_;
      length = clock_.Now() - outage_since_;
      failed = streak_failures_;
      outage_ = false;
      streak_failures_ = 0;
      troubled_.store(false, std::memory_order_release);
    }
    if (was_outage) {
      LOG(INFO) << "Kubernetes API server " << options_.server << " answers again after "
                << Seconds(length) << " unreachable (" << failed << " failed requests)";
      if (on_recovered_) on_recovered_();
    }
    return;
  }
  std::string warning;
  {
    std::lock_guard<std::mutex> l(mu_);
    ++failures_[static_cast<size_t>(c)];
    // Why: a 429 is an answer (the server is up), just not the one we wanted.
    if (c == FailureClass::kThrottled) return;
    const SteadyTime now = clock_.Now();
    const bool one_object = c == FailureClass::kServerError && !object.empty();
    const int64_t answered = last_answer_steady_ns_.load(std::memory_order_relaxed);
    const std::optional<SteadyTime> last_answer =
        answered == kNever ? std::nullopt
                           : std::optional<SteadyTime>(SteadyTime(
                                 std::chrono::duration_cast<SteadyTime::duration>(
                                     std::chrono::nanoseconds(answered))));
    if (!troubled_.load(std::memory_order_relaxed)) {
      // Why the send time: a request that waited 2 s for a handshake is
      // 2 s without an answer, not a failure of the moment it gave up.
      streak_start_ = std::min(waited_since.value_or(now), now);
      if (last_answer) streak_start_ = std::max(streak_start_, *last_answer);
      streak_failures_ = 0;
      streak_object_ = one_object ? std::string(object) : std::string();
      troubled_.store(true, std::memory_order_release);
    } else if (!streak_object_.empty() && !(one_object && object == streak_object_)) {
      // Why restart: until now only one object failed, which is no outage;
      // a failure of another kind starts the outage's clock.
      streak_start_ = now;
      streak_failures_ = 0;
      streak_object_.clear();
    }
    ++streak_failures_;
    if (!outage_ && streak_object_.empty() && now - streak_start_ >= options_.grace) {
      outage_ = true;
      ++outages_;
      // Why from the last answer: that is what the operator needs (how long
      // this replica has been blind), not when it first noticed.
      outage_since_ = last_answer ? std::min(*last_answer, streak_start_) : streak_start_;
      warning = "Kubernetes API server " + options_.server + " unreachable for " +
                Seconds(now - outage_since_) +
                (last_answer ? " since its last answer" : "") + " (" +
                std::to_string(streak_failures_) +
                " failed requests; latest: " + outcome.ToString() +
                "); the caches keep their last state and every request is retried; one line "
                "follows when it answers again";
    }
  }
  if (!warning.empty()) {
    LOG(WARNING) << warning;
    if (on_outage_) on_outage_();
  }
}

ApiReachabilitySnapshot ApiReachability::Snapshot() const {
  ApiReachabilitySnapshot s;
  s.last_success = SystemTime(std::chrono::duration_cast<SystemTime::duration>(
      std::chrono::nanoseconds(last_success_ns_.load(std::memory_order_relaxed))));
  std::lock_guard<std::mutex> l(mu_);
  s.reachable = !outage_;
  s.outages = outages_;
  s.failures = failures_;
  return s;
}

}  // namespace routestatus::cmd
