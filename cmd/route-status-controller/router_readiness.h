#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "base/clock.h"
#include "base/status.h"

namespace routestatus::cmd {

// Tunables of RouterReadiness. Value type.
struct RouterReadinessOptions {
  std::string url;  // the router's own readiness endpoint, e.g. http://127.0.0.1:1936/healthz/ready
  // Why routestatus::Duration spelt out: config.h declares a cmd::Duration
  // (milliseconds), and a file that includes both must see one definition.
  routestatus::Duration interval = std::chrono::seconds(1);  // between the starts of two probes
  routestatus::Duration timeout = std::chrono::seconds(1);   // no 2xx by then: the probe fails
  // One WARNING when the router has not been ready for this long.
  routestatus::Duration warn_after = std::chrono::minutes(1);
};

// One probe of the URL: OK for a 2xx answer by `deadline`, else why not.
using RouterProbe = std::function<Status(SteadyTime deadline)>;

// A point-in-time copy of RouterReadiness, for /readyz and metrics.
struct RouterReadinessSnapshot {
  bool ready = false;             // the last probe answered 2xx
  SteadyTime since{};             // when the current state began (epoch: no probe yet)
  std::string last_error;         // the last failed probe's reason
  uint64_t probes_ready = 0;
  uint64_t probes_not_ready = 0;
  uint64_t transitions = 0;       // changes of `ready`
};

// Whether the router this replica reports for serves: its readiness URL,
// probed every `interval`. A replica reports (writes status, takes over)
// only while the router is ready: an Admitted=True entry from a replica
// whose router is down would claim routes nothing serves. It starts not
// ready, probes at once, and calls the handler on every change. After
// `warn_after` not ready it logs one WARNING; when the router is ready
// again after that, one INFO. Thread-safe; Probe() runs on the caller's
// thread (the probe thread, or a test).
class RouterReadiness {
 public:
  // `clock` must outlive this object.
  RouterReadiness(const Clock& clock, RouterReadinessOptions options, RouterProbe probe);
  ~RouterReadiness();
  RouterReadiness(const RouterReadiness&) = delete;
  RouterReadiness& operator=(const RouterReadiness&) = delete;

  // Called with the new state after each change, on the probing thread
  // (must be quick). Set before Start().
  void SetHandler(std::function<void(bool ready)> handler) { handler_ = std::move(handler); }
  // One probe now: updates the state (and may call the handler or log).
  void Probe();
  // Probes on a thread of its own every `interval` until Stop().
  void Start();
  void Stop();

  bool ready() const;
  RouterReadinessSnapshot Snapshot() const;
  const RouterReadinessOptions& options() const { return options_; }

 private:
  void Run();

  const Clock& clock_;
  const RouterReadinessOptions options_;
  const RouterProbe probe_;
  std::function<void(bool)> handler_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  RouterReadinessSnapshot state_;  // GUARDED_BY(mu_)
  bool warned_ = false;            // GUARDED_BY(mu_): this not-ready streak was logged
  bool stopping_ = false;          // GUARDED_BY(mu_)
  std::thread thread_;
};

}  // namespace routestatus::cmd
