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

// How a follower that holds work decides that the leader is gone.
enum class TakeoverMode {
  kOff,       // only its lease's expiry (openshift-router's write lease)
  kProgress,  // the leader wrote nothing for the deadline D while we held work
};
const char* TakeoverModeName(TakeoverMode mode);  // "off", "progress"
std::optional<TakeoverMode> ParseTakeoverMode(std::string_view name);

// Tunables of the takeover deadline D. Value type.
struct TakeoverOptions {
  TakeoverMode mode = TakeoverMode::kProgress;
  // D = clamp(factor x quantile of the last `window` samples, min_deadline,
  // the lease interval) (DeadlineEstimator).
  Duration min_deadline = std::chrono::milliseconds(500);
  double factor = 2.0;
  double quantile = 0.95;
  int window = 64;
  // A wait lasts D + span x U[0, 1), one draw per wait, so that the
  // followers of a dead leader do not all take over at once. span =
  // min(jitter x D, max_jitter), cut so that the wait ends at most
  // `stretch_limit` after its start, but never below min(that, min_stretch):
  // with D <= 1 s the longest wait is 2 x D; with D in 1-1.75 s, 2 s;
  // beyond, D + 250 ms (LeaseRules::stretch_caps).
  double jitter = 1.0;
  Duration max_jitter = std::chrono::seconds(1);
  Duration stretch_limit = std::chrono::seconds(2);
  Duration min_stretch = std::chrono::milliseconds(250);
  LeaseRules rules;  // the ablation's switches; all on by default
};

// kInvalid naming the bad field, or OK.
Status ValidateTakeoverOptions(const TakeoverOptions& options);

// The adaptive deadline over the last `window` samples: D = clamp(factor x
// nearest-rank quantile, min_deadline, cap); min_deadline (at most cap)
// without samples. With LeaseRules::sample_guard the largest of two or more
// samples never sets the quantile and one sample alone counts at most as
// min_deadline: one slow answer never sets D. Value type; not thread-safe.
class DeadlineEstimator {
 public:
  DeadlineEstimator(const TakeoverOptions& options, Duration cap);

  void Add(Duration sample);  // negative samples count as zero
  Duration Deadline() const { return deadline_; }
  Duration Quantile() const { return quantile_; }  // zero without samples
  uint64_t total() const { return total_; }        // samples since construction
  Duration last() const { return last_; }          // zero without samples

 private:
  const bool guard_;
  const double factor_;
  const double quantile_rank_;
  const size_t window_;
  const Duration min_;
  const Duration cap_;
  std::vector<Duration> ring_;
  size_t next_ = 0;  // where the next sample goes once the ring is full
  uint64_t total_ = 0;
  Duration last_{};
  Duration quantile_{};
  Duration deadline_{};
};

// The follower's failure detector (docs/design.md section 3, "The takeover
// timer"): it sees the follower's events, keeps one wait and the estimator,
// and answers when held work is due. Times come from the lease's Clock. Not
// thread-safe (the lease calls it under its lock).
//
// A wait starts when we begin following, when we begin holding work (none
// was held), at each peer write, and after each lost or failed write; held
// work is taken over once the wait exceeds D plus its jitter. A sample is
// (a) a wait that ended in a peer write of a key we held, measured from
// when we began holding that key if later, and no longer than D; a wait
// during which we probed, or that a lost write started, is none (its end is
// the write we raced); or (b) the answer time of our own probe or election
// write (the write latency the leader pays too). A wait longer than D that
// (a) would count is a leader slower than we learnt, or another follower's
// takeover of a dead leader, or our watch lagging: when it is within twice
// our last write's answer time (the server is that slow for us too) it
// feeds a second estimator, and D is the larger of the two
// (LeaseRules::late_peer_samples), so it can raise D, never lower it. So a leader that keeps writing is not overrun, a slow
// API server is learnt from our own probe or a peer's late write, and a
// dead leader is taken over about D after the first change we hold.
class TakeoverTimer {
 public:
  // `cap`: the largest D (the lease interval).
  TakeoverTimer(TakeoverOptions options, Duration cap, uint64_t seed);

  bool enabled() const { return options_.mode != TakeoverMode::kOff; }

  void Follow(SteadyTime now);  // we became a follower
  void Hold(SteadyTime now);    // following, held work appeared (none was held)
  // Following, a peer's write reached our watch. `holding`: we held work
  // just before it; `key_held_since`: when we began holding that key.
  void ForeignWrite(SteadyTime now, bool holding, std::optional<SteadyTime> key_held_since);
  void Probe();  // following, we run held work: this wait is no sample
  // The server answered a probe or an election write after `latency`.
  void ProbeAnswered(Duration latency);
  // One of our writes lost or failed: a new wait, no sample.
  void LostWrite(SteadyTime now);
  // The longest a wait can last, D + the whole stretch; zero when off.
  Duration LongestWait() const;
  // When held work is due for takeover; nullopt when off.
  std::optional<SteadyTime> WaitDue() const;

  // D: the estimator's, or the larger of both with late peer samples.
  Duration Deadline() const;
  Duration Quantile() const;  // of the estimator that sets D
  // Every sample but the late peer writes (the rule's "without").
  const DeadlineEstimator& estimator() const { return estimator_; }

 private:
  Duration Jittered(double draw) const;  // the wait's length for `draw`
  void StartWait(SteadyTime now, bool sample);

  const TakeoverOptions options_;
  DeadlineEstimator estimator_;
  // Every sample, and the late peer writes too (LeaseRules::late_peer_samples).
  DeadlineEstimator with_late_;
  Duration own_latency_{};  // our last answered write's (ProbeAnswered)
  std::mt19937_64 rng_;
  SteadyTime wait_start_{};
  double draw_ = 0;      // the current wait's jitter draw
  bool sample_ = false;  // the current wait's end may be a sample
};

}  // namespace routestatus::lease
