#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "lease/lease_rules.h"

namespace routestatus::lease {

// How a follower that holds work decides that the leader is gone and takes
// the work over before its lease expires.
enum class TakeoverMode {
  kOff,        // never: only lease expiry (openshift-router's write lease)
  kProgress,   // the leader wrote nothing for the deadline while we held work
  kPerChange,  // a change we hold was not written by the leader within the deadline
};
const char* TakeoverModeName(TakeoverMode mode);  // "off", "progress", "per-change"
std::optional<TakeoverMode> ParseTakeoverMode(std::string_view name);

// Tunables of the takeover deadline D. Value type.
struct TakeoverOptions {
  TakeoverMode mode = TakeoverMode::kProgress;
  // D = clamp(factor x quantile of the last `window` waits, min_deadline,
  // the lease interval), the largest sample never counting alone
  // (DeadlineEstimator). A wait ("sample") is how long the leader took to
  // make progress while we held work, as our watch shows it.
  Duration min_deadline = std::chrono::milliseconds(500);
  double factor = 2.0;
  double quantile = 0.95;
  int window = 64;
  // Each wait's deadline is D + span x U[0, 1), one draw per wait, so
  // that the followers of a dead leader do not all take over at once;
  // span = min(jitter x D, max_jitter), cut so that the wait ends no later
  // than `stretch_limit` after its start, but never below `min_stretch`
  // (LeaseRules::stretch_caps). With D <= 1 s the longest wait is 2 x D;
  // with D between 1 and 1.75 s, 2 s; beyond, D + 250 ms. The caps keep a
  // D learnt from a few slow answers from pushing a takeover past the
  // failover bound (docs/lease.md: without them, 3.5x the failing runs).
  double jitter = 1.0;
  Duration max_jitter = std::chrono::seconds(1);
  Duration stretch_limit = std::chrono::seconds(2);
  Duration min_stretch = std::chrono::milliseconds(250);
  // Test only: added to every takeover wait. A deliberately slower takeover
  // that the simulator's checker must fail (test/sim mutation_test.cc,
  // issue 46); zero, as cmd/ leaves it, changes nothing.
  Duration added_wait = Duration::zero();
  // The rules beyond the plain progress deadline, for the ablation (the
  // lease reads its own ones from here too); all on by default.
  LeaseRules rules;
};

// kInvalid naming the bad field, or OK.
Status ValidateTakeoverOptions(const TakeoverOptions& options);

// The adaptive deadline: the last `window` samples, D = clamp(factor x
// nearest-rank quantile, min_deadline, cap); without samples D is
// min_deadline (at most cap). The largest of two or more samples never
// sets the quantile, and one sample alone counts at most as min_deadline:
// one rare slow answer never sets D. Pure; value type; not thread-safe.
class DeadlineEstimator {
 public:
  DeadlineEstimator(const TakeoverOptions& options, Duration cap);

  // Records one sample (negative samples count as zero).
  void Add(Duration sample);
  Duration Deadline() const { return deadline_; }
  // The quantile of the samples in the window; zero without samples.
  Duration Quantile() const { return quantile_; }
  // Samples recorded since construction.
  uint64_t total() const { return total_; }
  // The last sample recorded; zero without samples.
  Duration last() const { return last_; }

 private:
  const bool guard_;  // LeaseRules::sample_guard
  const double factor_;
  const double quantile_rank_;
  const size_t window_;
  const Duration min_;
  const Duration cap_;
  std::vector<Duration> ring_;  // the last `window_` samples
  size_t next_ = 0;                         // where the next sample goes once full
  uint64_t total_ = 0;
  Duration last_{};
  Duration quantile_{};
  Duration deadline_{};
};

// When a follower that holds work takes it over: the failure detector of
// BackoffWriteLease, as a small state machine (docs/design.md section 3,
// "The takeover timer"). It sees the follower's events (times passed in,
// from the lease's Clock), keeps the current wait and the estimator, and
// answers "due at". Not thread-safe (the lease calls it under its lock).
//
// "Held work" is what the lease says it is: queued work deferred because
// we follow (or the running takeover of such work); a key that waits for
// its retry interval or is parked after failing on its own is not held
// (lease/backoff_write_lease.h).
//
// kProgress: a wait starts when we begin following, when we begin holding
// work (nothing was held), at each write by another replica of our router
// name, and after each lost or failed write; held work is taken over once
// the wait exceeds D (+ jitter). So a wait is never older than the held
// work it is for. A sample is a wait that started at a follow, a hold or a
// peer write and ended in a peer write of a change we held (counted from
// when we began holding it, if later), within D (a longer one that we did
// not race is most likely another follower's takeover of a dead leader; a
// write of a change we did not hold is progress but no sample: a change
// the leader keeps failing on is held all along, and the gaps between its
// other writes span quiet spells), plus the latency of each of our own probes
// and election writes that the server answered (won or lost: the write
// latency the leader pays too). A wait during which we probed is no sample: the write that ends it
// is the one we raced, and its time is our own deadline (learnt, it would
// double D at every lost race). So a leader that keeps writing (e.g. works
// through a burst at its QPS) is never overrun, a slow API server is learnt
// from our own probe's answer, and a dead leader is taken over about D
// after the first change that needs a write.
//
// kPerChange (the alternative measured against it): each held change is
// due D (+ its own jitter) after we began holding it (or began following,
// or lost a write); a sample is how long a change we held waited for the
// leader's write of that change.
class TakeoverTimer {
 public:
  // `cap`: the largest D (the lease interval).
  TakeoverTimer(TakeoverOptions options, Duration cap, uint64_t seed);

  bool enabled() const { return options_.mode != TakeoverMode::kOff; }
  TakeoverMode mode() const { return options_.mode; }

  // We became a follower.
  void Follow(SteadyTime now);
  // While following, held work appeared when none was held.
  void Hold(SteadyTime now);
  // While following, a write by another replica of our router name reached
  // our watch. `holding`: we held work just before it; `key_held_since`:
  // when we began holding the written key's work, if we held it.
  void ForeignWrite(SteadyTime now, bool holding,
                    std::optional<SteadyTime> key_held_since);
  // While following, we run held work (a takeover, or after our lease
  // expired): the write that ends this wait may be the one we raced, so
  // this wait is no sample.
  void Probe();
  // The server answered that probe, or a write we made in Election (we won
  // or lost it), `latency` after we sent it: a sample of the write latency
  // the leader pays too.
  void ProbeAnswered(Duration latency);
  // One of our writes lost (409) or failed: someone is alive (or the API
  // server is not). A new wait starts, and it is no sample (the write
  // that beat ours came at about our own deadline).
  void LostWrite(SteadyTime now);
  // kProgress: the longest a wait can last before its held work is taken
  // over, D + the whole stretch (Jittered); zero in the other modes.
  Duration LongestWait() const;
  // kProgress: when the held work is due for takeover; nullopt otherwise.
  std::optional<SteadyTime> WaitDue() const;
  // kPerChange: when a change held since `held_since` (with its own
  // `draw` from Draw()) is due; nullopt otherwise.
  std::optional<SteadyTime> ChangeDue(SteadyTime held_since,
                                                  double draw) const;
  // A U[0, 1) draw from the timer's own generator (the lease's backoff
  // sequence stays as it was without takeover).
  double Draw() { return Unit(); }

  const DeadlineEstimator& estimator() const { return estimator_; }

 private:
  double Unit();
  // D + U x span, span = min(jitter x D, max_jitter), cut to
  // stretch_limit - D but not below min(that, min_stretch): the wait's
  // length for a `draw`.
  Duration Jittered(double draw) const;
  // The one place a wait starts: at `now`, with a fresh jitter draw;
  // `sample`: its end may be a sample.
  void StartWait(SteadyTime now, bool sample);

  const TakeoverOptions options_;
  DeadlineEstimator estimator_;
  std::mt19937_64 rng_;
  SteadyTime wait_start_{};    // kProgress: start of the current wait
  double draw_ = 0;            // kProgress: its jitter draw
  bool sample_ = false;        // kProgress: its end may be a sample
  SteadyTime not_before_{};    // kPerChange: last Follow or LostWrite
};

}  // namespace routestatus::lease
