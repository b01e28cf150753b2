#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "base/status.h"

namespace routestatus::cmd {

// A point-in-time copy of ApiReachability, for metrics and tests. Value type.
struct ApiReachabilitySnapshot {
  bool reachable = true;             // false during a reported outage
  SystemTime last_success{};  // wall time of the last answer (epoch = never)
  uint64_t outages = 0;              // outages reported (one WARNING each)
  // Failed requests by FailureClass (index 0, kAnswered, unused).
  std::array<uint64_t, kFailureClassCount> failures{};
};

// Whether the Kubernetes API server answers this process, from the outcome
// of every request and watch event (InstrumentedKubeClient feeds it). When
// requests have failed without an answer or with 5xx for `grace` with no
// answer in between (a failed request counts from when it was sent: a
// handshake that timed out after 2 s is 2 s without an answer), it logs one
// WARNING (with the latest error and how long ago the last answer came);
// when the server answers again, one INFO with the outage's length (also
// from the last answer before it). So an operator
// sees two lines per outage at the default verbosity, however many
// informers, workers and retries there are. 429 neither starts nor ends an
// outage (the server answered, but not with what we asked), and neither do
// 5xx answers that all concern one object (e.g. `500 etcdserver: request
// is too large` for one route's status): that is the object's problem, and
// the status path backs that route off alone. Thread-safe.
class ApiReachability {
 public:
  struct Options {
    std::string server;  // the API server's URL, for the log lines
    // How long failures must go on before they are an outage: a single
    // reset connection that the next request gets past is not one.
    routestatus::Duration grace = std::chrono::seconds(1);
  };

  // `clock` must outlive this object.
  ApiReachability(const Clock& clock, Options options);

  // Called after the INFO line, on the thread that recorded the answer
  // (must be quick): e.g. re-queue work whose retries failed meanwhile. Set
  // before the first Record().
  void SetRecoveryHandler(std::function<void()> handler) { on_recovered_ = std::move(handler); }
  // Called after the WARNING, on the thread that recorded the failure (must
  // be quick): e.g. stop acting as leader while cut off. Set before the
  // first Record().
  void SetOutageHandler(std::function<void()> handler) { on_outage_ = std::move(handler); }

  // The outcome of one request, or of one watch event read (OK). Cancelled
  // requests and normally closed watches say nothing and are ignored.
  // `object`: "namespace/name" when the request concerned one object (a
  // GET, PUT or DELETE of it), empty for lists, watches and events.
  // `waited_since`: when the failed request was sent (default: now); the
  // server has not answered it since then.
  void Record(const Status& outcome, std::string_view object = {},
              std::optional<SteadyTime> waited_since = std::nullopt);

  const Clock& clock() const { return clock_; }

  ApiReachabilitySnapshot Snapshot() const;

 private:
  const Clock& clock_;
  const Options options_;
  std::function<void()> on_recovered_;
  std::function<void()> on_outage_;
  // Fast path for answers while nothing is wrong: no lock.
  std::atomic<bool> troubled_{false};  // a failure streak or outage is on
  std::atomic<int64_t> last_success_ns_{0};  // wall time since the epoch
  static constexpr int64_t kNever = std::numeric_limits<int64_t>::min();
  std::atomic<int64_t> last_answer_steady_ns_{kNever};  // Clock::Now() of the last answer

  mutable std::mutex mu_;
  // GUARDED_BY(mu_): since when the failures of this streak went
  // unanswered (the first one's send time, not before the last answer).
  SteadyTime streak_start_{};
  SteadyTime outage_since_{};  // GUARDED_BY(mu_): the last answer before the outage
  uint64_t streak_failures_ = 0;           // GUARDED_BY(mu_)
  // The streak so far is 5xx answers about this one object only: no outage.
  std::string streak_object_;              // GUARDED_BY(mu_); empty: not so
  bool outage_ = false;                    // GUARDED_BY(mu_): the WARNING was logged
  uint64_t outages_ = 0;                   // GUARDED_BY(mu_)
  std::array<uint64_t, kFailureClassCount> failures_{};  // GUARDED_BY(mu_)
};

}  // namespace routestatus::cmd
