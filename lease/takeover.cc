#include "lease/takeover.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "lease/backoff.h"

namespace routestatus::lease {

const char* TakeoverModeName(TakeoverMode mode) {
  return mode == TakeoverMode::kOff ? "off" : "progress";
}

std::optional<TakeoverMode> ParseTakeoverMode(std::string_view name) {
  for (TakeoverMode mode : {TakeoverMode::kOff, TakeoverMode::kProgress}) {
    if (name == TakeoverModeName(mode)) return mode;
  }
  return std::nullopt;
}

Status ValidateTakeoverOptions(const TakeoverOptions& o) {
  const Duration zero = Duration::zero();
  const std::pair<bool, const char*> checks[] = {
      {o.min_deadline > zero, "takeover min deadline must be > 0"},
      {o.factor > 0.0, "takeover factor must be > 0"},
      {o.quantile > 0.0 && o.quantile <= 1.0, "takeover quantile must be in (0, 1]"},
      {o.window >= 1, "takeover window must be >= 1"},
      {o.jitter >= 0.0, "takeover jitter must be >= 0"},
      {o.max_jitter >= zero, "takeover max jitter must be >= 0"},
      {o.stretch_limit >= zero && o.min_stretch >= zero,
       "takeover stretch limit and min stretch must be >= 0"},
  };
  for (const auto& [ok, message] : checks) {
    if (!ok) return Status(StatusCode::kInvalid, message);
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
  // floor's worth (D at most factor x min_deadline;
  // LeaseRules::sample_guard). Why: with fewer than 1 / (1 - q) samples
  // the nearest rank is the largest, so one request stuck for a second
  // would set D alone until 20 more samples came in. A leader that is
  // slow for real is slow more than once.
  std::vector<Duration> sorted = ring_;
  const size_t n = sorted.size();
  size_t rank = static_cast<size_t>(std::ceil(quantile_rank_ * static_cast<double>(n)));
  rank = std::clamp<size_t>(rank, 1, guard_ && n > 1 ? n - 1 : n) - 1;
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(rank), sorted.end());
  quantile_ = n > 1 || !guard_ ? sorted[rank] : std::min(sorted[rank], min_);
  const Duration scaled(static_cast<int64_t>(factor_ * static_cast<double>(quantile_.count())));
  deadline_ = std::min(cap_, std::max(min_, scaled));
}

TakeoverTimer::TakeoverTimer(TakeoverOptions options, Duration cap, uint64_t seed)
    : options_(options), estimator_(options_, cap), with_late_(options_, cap), rng_(seed) {}

Duration TakeoverTimer::Deadline() const {
  if (!options_.rules.late_peer_samples) return estimator_.Deadline();
  return std::max(estimator_.Deadline(), with_late_.Deadline());
}

Duration TakeoverTimer::Quantile() const {
  return Deadline() > estimator_.Deadline() ? with_late_.Quantile() : estimator_.Quantile();
}

Duration TakeoverTimer::Jittered(double draw) const {
  const Duration d = Deadline();
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
  return d + Duration(static_cast<int64_t>(static_cast<double>(span.count()) * draw));
}

void TakeoverTimer::StartWait(SteadyTime now, bool sample) {
  wait_start_ = now;
  draw_ = UniformUnit(rng_);
  sample_ = sample;
}

void TakeoverTimer::Follow(SteadyTime now) {
  if (enabled()) StartWait(now, true);
}

void TakeoverTimer::Hold(SteadyTime now) {
  if (enabled()) StartWait(now, true);
}

void TakeoverTimer::ForeignWrite(SteadyTime now, bool holding,
                                 std::optional<SteadyTime> key_held_since) {
  if (!enabled()) return;
  // Why only a write of a key we held (LeaseRules::held_key_samples): a
  // change the leader keeps failing on is held by every follower, and the
  // gaps between its writes of other changes, quiet spells included, are
  // no measure of its pace; each up to D, they would let D double.
  const bool held_key = options_.rules.held_key_samples;
  if (holding && sample_ && (key_held_since || !held_key)) {
    const SteadyTime from = held_key ? std::max(wait_start_, *key_held_since) : wait_start_;
    const Duration waited = now - from;
    // Why a longer wait only in with_late_, and only within twice our own
    // write's answer time: it is a leader as slow as the API server is for
    // us, or another follower's takeover of a dead leader (at about its own
    // deadline) or a watch that lags ours; in the estimator every failover
    // observed would make the next one slower.
    if (waited <= estimator_.Deadline()) {
      estimator_.Add(waited);
      with_late_.Add(waited);
    } else if (options_.rules.late_peer_samples && waited <= 2 * own_latency_) {
      with_late_.Add(waited);
    }
  }
  StartWait(now, true);
}

void TakeoverTimer::Probe() { sample_ = false; }

void TakeoverTimer::ProbeAnswered(Duration latency) {
  if (!enabled()) return;
  own_latency_ = latency;
  if (!options_.rules.own_write_samples) return;
  estimator_.Add(latency);
  with_late_.Add(latency);
}

void TakeoverTimer::LostWrite(SteadyTime now) {
  // Why no sample from this wait: the write that beat ours (when it reaches
  // our watch) came at about our own deadline in a failover race.
  if (enabled()) StartWait(now, false);
}

Duration TakeoverTimer::LongestWait() const {
  return enabled() ? Jittered(1.0) : Duration::zero();
}

std::optional<SteadyTime> TakeoverTimer::WaitDue() const {
  if (!enabled()) return std::nullopt;
  return wait_start_ + Jittered(draw_);
}

}  // namespace routestatus::lease
