#include "lease/takeover.h"

#include <algorithm>
#include <cmath>

#include "lease/backoff.h"

namespace routestatus::lease {


const char* TakeoverModeName(TakeoverMode mode) {
  switch (mode) {
    case TakeoverMode::kOff:
      return "off";
    case TakeoverMode::kProgress:
      return "progress";
    case TakeoverMode::kPerChange:
      return "per-change";
  }
  return "unknown";
}

std::optional<TakeoverMode> ParseTakeoverMode(std::string_view name) {
  for (TakeoverMode mode :
       {TakeoverMode::kOff, TakeoverMode::kProgress, TakeoverMode::kPerChange}) {
    if (name == TakeoverModeName(mode)) return mode;
  }
  return std::nullopt;
}

Status ValidateTakeoverOptions(const TakeoverOptions& o) {
  if (o.min_deadline <= Duration::zero()) {
    return Status(StatusCode::kInvalid, "takeover min deadline must be > 0");
  }
  if (!(o.factor > 0.0)) return Status(StatusCode::kInvalid, "takeover factor must be > 0");
  if (!(o.quantile > 0.0 && o.quantile <= 1.0)) {
    return Status(StatusCode::kInvalid, "takeover quantile must be in (0, 1]");
  }
  if (o.window < 1) return Status(StatusCode::kInvalid, "takeover window must be >= 1");
  if (!(o.jitter >= 0.0)) return Status(StatusCode::kInvalid, "takeover jitter must be >= 0");
  if (o.max_jitter < Duration::zero()) {
    return Status(StatusCode::kInvalid, "takeover max jitter must be >= 0");
  }
  if (o.added_wait < Duration::zero()) {
    return Status(StatusCode::kInvalid, "takeover added wait must be >= 0");
  }
  if (o.stretch_limit < Duration::zero() || o.min_stretch < Duration::zero()) {
    return Status(StatusCode::kInvalid, "takeover stretch limit and min stretch must be >= 0");
  }
  return Status::Ok();
}

DeadlineEstimator::DeadlineEstimator(const TakeoverOptions& options, Duration cap)
    : guard_(options.rules.sample_guard),
      factor_(options.factor),
      quantile_rank_(options.quantile),
      window_(static_cast<size_t>(std::max(1, options.window))),
      min_(options.min_deadline),
      cap_(cap),
      deadline_(std::min(options.min_deadline, cap)) {
  ring_.reserve(window_);
}

void DeadlineEstimator::Add(Duration sample) {
  sample = std::max(sample, Duration::zero());
  last_ = sample;
  if (ring_.size() < window_) {
    ring_.push_back(sample);
  } else {
    ring_[next_] = sample;
    next_ = (next_ + 1) % window_;
  }
  ++total_;
  // Nearest rank: the ceil(q x n)-th smallest sample, but never the
  // largest of two or more, and one sample alone counts at most as the
  // floor's worth (D at most factor x min_deadline).
  // Why: with fewer than 1 / (1 - q) samples the nearest rank is the
  // largest, so one rare slow write (a request stuck for a second) set D
  // alone and doubled it until 20 more samples came in; a crash then was
  // taken over after up to 2 x D (issue 23: the simulator's failover seeds
  // over 3 s, e.g. 5872, whose survivor's first sample was a 945 ms answer
  // among a dozen of 0-51 ms, and 5499, whose only sample was 1410 ms). A
  // leader that is slow for real is slow more than once.
  std::vector<Duration> sorted = ring_;
  const size_t n = sorted.size();
  size_t rank = static_cast<size_t>(std::ceil(quantile_rank_ * static_cast<double>(n)));
  rank = std::clamp<size_t>(rank, 1, guard_ && n > 1 ? n - 1 : n) - 1;
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(rank), sorted.end());
  quantile_ = n > 1 || !guard_ ? sorted[rank] : std::min(sorted[rank], min_);
  const Duration scaled(static_cast<int64_t>(factor_ * static_cast<double>(quantile_.count())));
  deadline_ = std::min(cap_, std::max(min_, scaled));
}

TakeoverTimer::TakeoverTimer(TakeoverOptions options, Duration cap, Duration lost_pause,
                             uint64_t seed)
    : options_(options), lost_pause_(lost_pause), estimator_(options_, cap), rng_(seed) {}

double TakeoverTimer::Unit() { return UniformUnit(rng_); }

Duration TakeoverTimer::Jittered(double draw, Duration lag) const {
  const Duration d = estimator_.Deadline();
  const Duration full = std::min(
      options_.max_jitter,
      Duration(static_cast<int64_t>(static_cast<double>(d.count()) * options_.jitter)));
  // Why cut (TakeoverOptions::stretch_limit): a D above 1 s is mostly
  // learnt from a few stalled answers, and the full stretch on top of it
  // missed the failover bound; the floor keeps a slow leader's followers
  // apart.
  const Duration span =
      !options_.rules.stretch_caps
          ? Duration(static_cast<int64_t>(static_cast<double>(d.count()) * options_.jitter))
          : std::max(std::min(full, options_.stretch_limit - d),
                     std::min(full, options_.min_stretch));
  // Why the lag shares the span: both stretch the wait beyond D, and added
  // up they made the longest wait D + 2 x min(D, 1 s) (issue 23: failover
  // seed 136608159394788, D 1682 ms from two slow answers to our own
  // writes, a watch lag of 752 ms and a late draw: 3.43 s). The wait is
  // still never shorter than D + lag, so a lagging watch still does not
  // race a live leader.
  const Duration spread = std::max(Duration::zero(), span - lag);
  return d + lag + Duration(static_cast<int64_t>(static_cast<double>(spread.count()) * draw)) +
         options_.added_wait;
}

void TakeoverTimer::StartWait(SteadyTime now, bool sample) {
  ++waits_started_;
  wait_start_ = now;
  draw_ = Unit();
  sample_ = sample;
}

void TakeoverTimer::Follow(SteadyTime now) {
  if (!enabled()) return;
  StartWait(now, true);
  not_before_ = now;
}

void TakeoverTimer::Hold(SteadyTime now) {
  if (options_.mode != TakeoverMode::kProgress) return;
  StartWait(now, true);
}

void TakeoverTimer::ForeignWrite(SteadyTime now, bool holding,
                                 std::optional<SteadyTime> key_held_since) {
  switch (options_.mode) {
    case TakeoverMode::kOff:
      return;
    case TakeoverMode::kProgress:
      // Why: the wait that just ended is how long this leader may go
      // without visible progress while we hold work. Only a write of a key
      // we held ends a sample, measured from when we began holding it if
      // that was later. Why: a change the leader does not write (it fails
      // for the leader, which retries it on its own backoff: the outage
      // scenario's rejected route, issue 23 item 1) is held by every
      // follower that never tried it, so the gaps between the leader's
      // writes of *other* changes, quiet spells included, were samples; each
      // may be up to D, so D doubled from sample to sample (to 2.5 s in a
      // partitioned outage seed, 20453: failover 4.9 s).
      if (holding && sample_ && (key_held_since || !options_.rules.held_key_samples)) {
        const SteadyTime from = options_.rules.held_key_samples
                                    ? std::max(wait_start_, *key_held_since)
                                    : wait_start_;
        const Duration waited = now - from;
        if (waited <= estimator_.Deadline()) estimator_.Add(waited);
      }
      StartWait(now, true);
      paused_until_ = SteadyTime{};
      return;
    case TakeoverMode::kPerChange:
      if (key_held_since) estimator_.Add(now - std::max(*key_held_since, not_before_));
      return;
  }
}

void TakeoverTimer::Probe() { sample_ = false; }

void TakeoverTimer::ProbeAnswered(Duration latency) {
  if (options_.mode != TakeoverMode::kProgress || !options_.rules.own_write_samples) return;
  estimator_.Add(latency);
}

void TakeoverTimer::LostWrite(SteadyTime now, bool caught_up) {
  if (!enabled()) return;
  // Why no sample from this wait: the write that beat ours (when it reaches
  // our watch) came at about our own deadline in a failover race.
  StartWait(now, false);
  not_before_ = now;
  // Why: a watch that lags (the 409 says ours does) shows no progress
  // until it catches up; taking over meanwhile only loses again.
  paused_until_ =
      caught_up || !options_.rules.lost_write_pause ? SteadyTime{} : now + lost_pause_;
}

namespace {

// Why a minute: a watch that lagged once is likely to lag again soon (a
// busy node, a slow network path), but a replica that lagged an hour ago
// must take over a dead leader as fast as any other.
constexpr Duration kLagMemory = std::chrono::minutes(1);

}  // namespace

void TakeoverTimer::WatchLagged(SteadyTime now, Duration lag) {
  if (options_.mode != TakeoverMode::kProgress || lag > lost_pause_ ||
      !options_.rules.watch_lag) {
    return;
  }
  // Why at most D: a wait then lasts at most 2 x D plus the jitter, so a
  // replica whose watch lags still takes over a dead leader in time (issue
  // 23: uncapped, a survivor that had measured a 1.8 s lag at start-up
  // took over 3.9 s after a crash; capped, 2.6 s; the conflicts saved are
  // the same within 1%, seeds 30000..31499).
  lag = std::min(lag, estimator_.Deadline());
  // Why two within a minute, and the smaller of them: a watch that lags
  // does so again; one late event (a network stall of the winner's write
  // event) is no measure, as one slow answer never sets D. Learnt from one
  // event, it stretched every wait for a minute, and after a lost race a
  // dead leader was taken over 3.1-3.4 s after the change (issue 23's
  // soaks of 2026-12-03: claims seeds 259641688195048, one lag of 1104 ms,
  // and 13403556098452, 887 ms; failover seed 73752794829321, 1619 ms).
  const bool second = last_lag_at_ != SteadyTime{} && now - last_lag_at_ <= kLagMemory;
  const Duration previous = last_lag_;
  last_lag_ = lag;
  last_lag_at_ = now;
  if (!second) return;
  const Duration measured = std::min(previous, lag);
  // Why the largest while it lasts: the lags of one slow watch vary from
  // event to event; the next loss renews or raises it.
  watch_lag_ = LagFor(now) > Duration::zero() ? std::max(watch_lag_, measured) : measured;
  watch_lag_at_ = now;
}

Duration TakeoverTimer::LagFor(SteadyTime start) const {
  if (watch_lag_ == Duration::zero() || start - watch_lag_at_ > kLagMemory) {
    return Duration::zero();
  }
  return watch_lag_;
}

Duration TakeoverTimer::LongestWait() const {
  if (options_.mode != TakeoverMode::kProgress) return Duration::zero();
  return Jittered(1.0, LagFor(wait_start_));
}

std::optional<SteadyTime> TakeoverTimer::WaitDue() const {
  if (options_.mode != TakeoverMode::kProgress) return std::nullopt;
  return std::max(wait_start_ + Jittered(draw_, LagFor(wait_start_)), paused_until_);
}

std::optional<SteadyTime> TakeoverTimer::ChangeDue(SteadyTime held_since, double draw) const {
  if (options_.mode != TakeoverMode::kPerChange) return std::nullopt;
  return std::max(held_since, not_before_) + Jittered(draw, Duration::zero());
}

}  // namespace routestatus::lease
