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
  // Each wait's deadline is D + min(jitter x D, max_jitter) x U[0, 1), one
  // draw per wait, so that the followers of a dead leader do not all take
  // over at once (a watch lag, TakeoverTimer::WatchLagged, is part of
  // that stretch). Why 1.0: in the simulator (3,000 seeds per scenario)
  // followers racing each other lost 15% fewer writes than with 0.5.
  double jitter = 1.0;
  // The stretch's cap: without a watch lag the longest wait is
  // D + max_jitter, not 2 x D. Why: a D learnt from two slow samples (one
  // slow answer to our own write, one late watch event) was 1.7 s, and a
  // crash was taken over 3.8 s after the change (issue 23, failover seed
  // 266260724024496); 1 s spreads the followers of a dead leader as widely
  // as the default D of 1 s always did.
  Duration max_jitter = std::chrono::seconds(1);
  // The stretch never takes a wait past `stretch_limit` from its start
  // unless D alone comes within `min_stretch` of it; then the stretch is
  // `min_stretch` (a watch lag still applies in full). Why: with D above
  // 1 s the full stretch put a takeover past the 3 s failover bound (issue
  // 23, outage seed 155396030887619: D 1.72 s learnt from two stalled
  // answers, a late draw and a 325 ms PUT: 3.02 s after the change). With
  // D <= 1 s (the default's range) the longest wait is 2 x D <= 2 s, as
  // before; with D between 1 and 1.75 s it is 2 s; beyond, D + 250 ms,
  // which still spreads the followers of a slow dead leader.
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
// one rare slow answer never sets D (issue 23). Pure; value type; not
// thread-safe.
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
  // `cap`: the largest D (the lease interval); `lost_pause`: how long a
  // lost write pauses takeovers unless another replica's write arrives
  // first (the lease's retry interval).
  TakeoverTimer(TakeoverOptions options, Duration cap,
                Duration lost_pause, uint64_t seed);

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
  // server is not), and our cache of that route is behind. No takeover
  // before `lost_pause` has passed or another replica's write has reached
  // our watch (which then shows at least that write), and in any case not
  // before D (+ jitter).
  // `caught_up`: a write by another replica reached our watch while ours
  // was out (most likely the one that beat it): no pause then.
  void LostWrite(SteadyTime now, bool caught_up);
  // Our watch showed another writer's write of a key after one of ours
  // lost: it has caught up, so the pause of LostWrite ends (the wait it
  // started goes on).
  void WatchCaughtUp() { paused_until_ = SteadyTime{}; }

  // kProgress: our watch showed the write that beat one of ours `lag`
  // after the server refused ours (409): our watch lags behind the
  // server's by at least that. Once two were seen within a minute (the
  // smaller of the two counts; one alone may be a stalled event), and for
  // a minute after the last (renewed by the next), every wait lasts at
  // least that much longer than D, at most D longer, the lag taking the place of as much of the
  // jitter (so a dead leader is still taken over in time): a follower
  // whose watch lags must not take over changes the live leader has
  // already written (issue 23: followers with a slow watch raced the
  // leader on every lagging event, steady seed 46). Lags longer than
  // `lost_pause` are no measure (the winner was no write of our peers, or
  // the watch broke) and are ignored.
  void WatchLagged(SteadyTime now, Duration lag);
  // kProgress: the longest a wait can last before its held work is taken
  // over, D + max(the stretch (Jittered), the watch lag that applies);
  // zero in the other modes.
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
  // How many waits have started (Follow, Hold, ForeignWrite, LostWrite):
  // equal counts mean the same wait goes on.
  uint64_t waits_started() const { return waits_started_; }

 private:
  double Unit();
  // D + lag + U x (span - lag), span = min(jitter x D, max_jitter), cut to
  // stretch_limit - D but not below min(that, min_stretch): the wait's
  // length for a `draw`, at least D + lag, at most D + max(span, lag).
  Duration Jittered(double draw, Duration lag) const;
  // The watch lag that still applies to a wait that started at `start`.
  Duration LagFor(SteadyTime start) const;
  // The one place a wait starts: at `now`, with a fresh jitter draw;
  // `sample`: its end may be a sample.
  void StartWait(SteadyTime now, bool sample);

  const TakeoverOptions options_;
  const Duration lost_pause_;
  DeadlineEstimator estimator_;
  std::mt19937_64 rng_;
  SteadyTime wait_start_{};    // kProgress: start of the current wait
  double draw_ = 0;            // kProgress: its jitter draw
  bool sample_ = false;        // kProgress: its end may be a sample
  SteadyTime paused_until_{};  // kProgress: after a lost write
  SteadyTime not_before_{};    // kPerChange: last Follow or LostWrite
  Duration watch_lag_{};        // kProgress: see WatchLagged
  SteadyTime watch_lag_at_{};   // kProgress: when it was last measured
  Duration last_lag_{};         // kProgress: the last lag reported (one alone counts not)
  SteadyTime last_lag_at_{};    // kProgress: when
  uint64_t waits_started_ = 0;  // see waits_started()
};

}  // namespace routestatus::lease
