#include "lease/backoff_write_lease.h"

#include <algorithm>
#include <exception>
#include <tuple>
#include <utility>

#include <glog/logging.h>

namespace routestatus::lease {
namespace {

// Why: tick only matters up to steps + 1 (the cap); saturating keeps it from
// overflowing after years of Extend calls.
constexpr int kMaxTick = 1 << 16;

// How long an idle RunNext waits before re-checking (a notify wakes it
// earlier); avoids time_point::max() arithmetic in clocks.
constexpr auto kIdleWait = std::chrono::hours(1);

Duration FollowerMinDelay(const WriteLeaseOptions& options) {
  return options.follower_min_delay > Duration::zero() ? options.follower_min_delay
                                                       : 2 * options.backoff.base;
}

uint64_t SeedFrom(const WriteLeaseOptions& options) {
  if (options.seed) return *options.seed;
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd();
}

// Why a generator of its own: the backoff and jitter sequence of a seeded
// lease stays what it was without takeover.
uint64_t TakeoverSeedFrom(const WriteLeaseOptions& options) {
  return SeedFrom(options) ^ 0x9e3779b97f4a7c15ULL;
}

int64_t Ms(Duration d) { return std::chrono::duration_cast<std::chrono::milliseconds>(d).count(); }

// Runs `work`; a work that throws is logged and retried.
WorkOutcome RunGuarded(const std::string& name, const std::string& key, const Work& work) {
  try {
    return work();
  } catch (const std::exception& e) {
    LOG(ERROR) << name << ": work for " << key << " threw: " << e.what() << "; retrying";
    return {WorkResult::kNone, true};
  }
}

}  // namespace

Status ValidateWriteLeaseOptions(const WriteLeaseOptions& o) {
  const Duration zero = Duration::zero();
  // The last three are the timing relations, as client-go's leader elector
  // checks its durations against each other: the interval caps every
  // follower's deferral and D, so nothing that must fit in it may exceed it.
  const std::pair<bool, const char*> checks[] = {
      {o.interval > zero, "lease interval must be > 0"},
      {o.retry > zero, "lease retry must be > 0"},
      {o.backoff.base > zero, "lease backoff base must be > 0"},
      {o.backoff.factor >= 1.0, "lease backoff factor must be >= 1"},
      {o.backoff.jitter >= 0.0, "lease backoff jitter must be >= 0"},
      {o.backoff.steps >= 0, "lease backoff steps must be >= 0"},
      {o.follower_min_delay >= zero, "lease follower min delay must be >= 0"},
      {o.election_delay >= zero, "lease election delay must be >= 0"},
      {o.retry <= o.interval,
       "lease retry must not exceed the lease interval (a failed write would wait longer than "
       "a follower defers)"},
      {o.follower_min_delay <= o.interval, "lease follower min delay must not exceed the interval"},
      {o.takeover.mode == TakeoverMode::kOff || o.takeover.min_deadline <= o.interval,
       "takeover min deadline must not exceed the lease interval (which caps D)"},
  };
  for (const auto& [ok, message] : checks) {
    if (!ok) return Status(StatusCode::kInvalid, message);
  }
  return ValidateTakeoverOptions(o.takeover);
}

BackoffWriteLease::BackoffWriteLease(const Clock& clock, WriteLeaseOptions options)
    : clock_(clock),
      options_(std::move(options)),
      rng_(SeedFrom(options_)),
      takeover_(options_.takeover, options_.interval, TakeoverSeedFrom(options_)) {
  auto status = ValidateWriteLeaseOptions(options_);
  CHECK(status.ok()) << options_.name << ": " << status.ToString();
  const SteadyTime now = clock_.Now();
  expires_ = now;
  // Why the floor: a replica joining a converged fleet meets its first
  // change together with the live leader; with a draw near 0 it raced the
  // leader's write of that change (one 409).
  election_offset_ = Duration(static_cast<int64_t>(
      static_cast<double>(options_.election_delay.count()) * (0.1 + UniformUnit(rng_))));
}

BackoffWriteLease::~BackoffWriteLease() { Shutdown(); }

void BackoffWriteLease::ScheduleLocked(const std::string& key, Slot& slot, SteadyTime due,
                                       bool lease_deferred) {
  if (slot.queued) {
    // Why: replacing work never postpones it (a delaying queue keeps the
    // earliest time); the run-time follower check still applies. New work
    // deferred because we follow is held even if an older retry is due first.
    if (slot.due <= due) {
      slot.lease_deferred = slot.lease_deferred || lease_deferred;
      return;
    }
    due_.erase(DueEntry(slot.due, slot.seq, key));
  }
  slot.due = due;
  slot.seq = next_seq_++;
  slot.queued = true;
  slot.lease_deferred = lease_deferred;
  due_.emplace(slot.due, slot.seq, key);
}

void BackoffWriteLease::UnscheduleLocked(const std::string& key, Slot& slot) {
  if (!slot.queued) return;
  due_.erase(DueEntry(slot.due, slot.seq, key));
  slot.queued = false;
  slot.lease_deferred = false;
}

bool BackoffWriteLease::HeldLocked(const Slot& slot) {
  return slot.taking_over || (slot.work && slot.lease_deferred && !slot.parked);
}

void BackoffWriteLease::UpdateHeldLocked(Slot& slot, SteadyTime now) {
  const bool held = HeldLocked(slot);
  if (held == slot.held) return;
  slot.held = held;
  if (!held) {
    --held_;
    return;
  }
  slot.held_since = now;
  // Why only from nothing held: while work is held, the leader's progress
  // (or its absence) is already being timed.
  if (held_++ == 0 && state_ == LeaseState::kFollower) takeover_.Hold(now);
}

void BackoffWriteLease::EraseSlotLocked(std::unordered_map<std::string, Slot>::iterator it) {
  CHECK(!it->second.running) << options_.name << ": erasing running key " << it->first;
  if (it->second.held) --held_;
  slots_.erase(it);
}

void BackoffWriteLease::Try(const std::string& key, Work work) {
  CHECK(work) << "empty work for " << key;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (shutdown_) return;
    const SteadyTime now = clock_.Now();
    Slot& slot = slots_[key];
    const bool had_work = static_cast<bool>(slot.work);
    slot.work = std::move(work);
    slot.cancel_retry = false;
    // Why: a new change of a parked key is not known to fail.
    slot.parked = false;
    SteadyTime due = now;
    bool deferred = false;
    switch (state_) {
      case LeaseState::kLeader:
        break;
      case LeaseState::kElection:
        // Why from the first work, not from start-up: a replica that joins a
        // converged fleet (or whose cache synced late) meets its first
        // change long after it started, and must not race the live leader.
        if (!election_gate_) election_gate_ = now + election_offset_;
        if (*election_gate_ > now) {
          due = *election_gate_;
          deferred = true;
        }
        break;
      case LeaseState::kFollower:
        // Why: at least two base steps, so the last leader keeps its edge
        // after a quiet period (its work runs at once, ours later).
        due = std::max(expires_, now + FollowerDelayLocked());
        deferred = true;
        ++stats_.follower_deferrals;
        break;
    }
    if (slot.running) {
      // Queued when the running work finishes; never later than the work
      // it replaces.
      if (!had_work || due < slot.due) {
        slot.due = due;
        slot.lease_deferred = deferred;
      }
    } else {
      ScheduleLocked(key, slot, due, deferred);
    }
    UpdateHeldLocked(slot, now);
    VLOG(4) << options_.name << ": queued " << key << " (" << LeaseStateName(state_)
            << ", due in " << Ms(due - now) << "ms)";
  }
  cv_.notify_all();
}

std::pair<bool, std::optional<SteadyTime>> BackoffWriteLease::DropWorkLocked(
    const std::string& key, SteadyTime now) {
  auto it = slots_.find(key);
  if (it == slots_.end()) return {false, std::nullopt};
  Slot& slot = it->second;
  const bool had_work = static_cast<bool>(slot.work);
  std::optional<SteadyTime> held_since;
  if (slot.held) held_since = slot.held_since;
  UnscheduleLocked(key, slot);
  slot.work = nullptr;
  if (slot.running) {
    slot.cancel_retry = true;
    UpdateHeldLocked(slot, now);
  } else {
    EraseSlotLocked(it);
  }
  return {had_work, held_since};
}

void BackoffWriteLease::Extend(const std::string& key, EntryWriter writer) {
  Fired fired;
  {
    std::lock_guard<std::mutex> l(mu_);
    const SteadyTime now = clock_.Now();
    const bool holding = held_ > 0;
    const auto [had_work, key_held_since] = DropWorkLocked(key, now);
    if (had_work) ++stats_.extend_drops;
    // Why the caller says who wrote: only the status path knows which
    // writes were ours (it records them).
    const bool peer = writer == EntryWriter::kPeer;
    if (state_ == LeaseState::kFollower) {
      // Why only a peer's write is progress: our own write's echo would
      // teach the deadline our own wait.
      if (peer) {
        ++others_seen_;
        takeover_.ForeignWrite(now, holding, key_held_since);
        VLOG(3) << options_.name << ": leader wrote " << key << "; deadline "
                << Ms(takeover_.Deadline()) << "ms";
      }
      FollowLocked(std::min(tick_ + 1, kMaxTick), now);
    } else if (peer && state_ == LeaseState::kLeader && options_.leader_follows_foreign_extend) {
      ++stats_.foreign_extends;
      FollowLocked(0, now);
      TransitionLocked(LeaseState::kFollower, "extend:foreign", &fired);
    } else if (peer && state_ == LeaseState::kElection && options_.election_follows_extend) {
      FollowLocked(0, now);
      TransitionLocked(LeaseState::kFollower, "extend", &fired);
    }
  }
  Notify(fired);
}

void BackoffWriteLease::SetCutOff(bool cut_off) {
  Fired fired;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (cut_off_ == cut_off) return;
    cut_off_ = cut_off;
    const SteadyTime now = clock_.Now();
    if (cut_off) {
      if (state_ == LeaseState::kLeader) {
        FollowLocked(0, now);
        TransitionLocked(LeaseState::kFollower, "cut-off", &fired);
      }
    } else if (state_ == LeaseState::kFollower) {
      // Why: the waits for the leader's progress measured our blindness,
      // not the leader; start them again from what the watch shows now.
      expires_ = std::max(expires_, now + FollowerDelayLocked());
      takeover_.Follow(now);
    }
  }
  cv_.notify_all();
  Notify(fired);
}

void BackoffWriteLease::Remove(const std::string& key) {
  std::lock_guard<std::mutex> l(mu_);
  DropWorkLocked(key, clock_.Now());
}

LeaseState BackoffWriteLease::State() const {
  std::lock_guard<std::mutex> l(mu_);
  return state_;
}

Duration BackoffWriteLease::FollowerDelayLocked() {
  const Duration min = FollowerMinDelay(options_);
  if (!options_.follower_delay_jitter) return min;
  // Why: followers whose leases expired together (e.g. all at the cap after
  // the leader died) would all probe at once; spreading them over
  // [min, 2 x min) lets the first one's write reach the others' watches.
  return min + Duration(static_cast<int64_t>(static_cast<double>(min.count()) * UniformUnit(rng_)));
}

SteadyTime BackoffWriteLease::ProgressTakeoverDueLocked(const Slot& slot) const {
  // Why: after a quiet spell longer than the lease, a follower's expiry is
  // long past; the leader's silence meant only that nothing needed
  // writing, and work run at the floor (0.5-1 s) races a leader whose
  // write takes longer. The takeover wait is the failure detector in
  // progress mode; an expired lease is no faster one.
  if (state_ != LeaseState::kFollower || slot.parked ||
      !options_.takeover.rules.expiry_waits_for_takeover) {
    return SteadyTime::min();
  }
  return takeover_.WaitDue().value_or(SteadyTime::min());
}

std::optional<std::string> BackoffWriteLease::PickTakeoverLocked(SteadyTime now, const Skip* skip,
                                                                 SteadyTime* wait_until) {
  if (state_ != LeaseState::kFollower || in_flight_ > 0) return std::nullopt;
  const std::optional<SteadyTime> due = takeover_.WaitDue();
  if (!due) return std::nullopt;
  // Why only lease-deferred work: a key waiting for its retry interval
  // keeps it (a takeover is no reason to hammer a failing API server).
  auto it = due_.begin();
  while (it != due_.end()) {
    const std::string& key = std::get<2>(*it);
    const Slot& slot = slots_.at(key);
    if (HeldLocked(slot) && (skip == nullptr || skip->count(key) == 0)) break;
    ++it;
  }
  if (it == due_.end()) return std::nullopt;
  if (*due > now) {
    *wait_until = std::min(*wait_until, *due);
    return std::nullopt;
  }
  std::string picked = std::get<2>(*it);
  Slot& slot = slots_.at(picked);
  UnscheduleLocked(picked, slot);
  slot.taking_over = true;
  UpdateHeldLocked(slot, now);
  VLOG(2) << options_.name << ": no progress by the leader within "
          << Ms(takeover_.Deadline()) << "ms (+ jitter); taking over " << picked;
  return picked;
}

void BackoffWriteLease::FollowLocked(int tick, SteadyTime now) {
  tick_ = tick;
  // Why at least the takeover's longest wait: with takeover, the expiry is
  // the backstop, not the failure detector; a short expiry at low ticks
  // (20 ms x4) would run held work before a slow leader's next write could
  // show, whatever D had learnt.
  Duration follow = Backoff(options_.backoff, tick_, options_.interval, rng_);
  if (options_.takeover.rules.expiry_waits_for_takeover) {
    follow = std::max(follow, takeover_.LongestWait());
  }
  expires_ = now + follow;
}

std::optional<std::string> BackoffWriteLease::PickLocked(SteadyTime now, const Skip* skip,
                                                         SteadyTime* wait_until) {
  *wait_until = SteadyTime::max();
  if (options_.single_probe && state_ != LeaseState::kLeader && in_flight_ > 0) {
    return std::nullopt;  // a probe is out; its end notifies
  }
  auto it = due_.begin();
  while (it != due_.end()) {
    const auto& [due, seq, key] = *it;
    if (due > now) {
      *wait_until = due;
      break;
    }
    if (skip != nullptr && skip->count(key) > 0) {
      ++it;
      continue;
    }
    std::string picked = key;
    Slot& slot = slots_.at(picked);
    it = due_.erase(it);
    slot.queued = false;
    const SteadyTime progress_due = ProgressTakeoverDueLocked(slot);
    if (state_ == LeaseState::kFollower && (now < expires_ || now < progress_due)) {
      // Why: the lease was extended after this work was queued: defer
      // again (a delayed requeue, never a sleeping worker).
      ++stats_.follower_deferrals;
      ScheduleLocked(picked, slot, std::max(expires_, progress_due), true);
      UpdateHeldLocked(slot, now);
      it = due_.begin();
      continue;
    }
    return picked;
  }
  return PickTakeoverLocked(now, skip, wait_until);
}

void BackoffWriteLease::TransitionLocked(LeaseState to, const char* cause, Fired* fired) {
  if (state_ == to) return;
  LeaseTransition t{state_, to, tick_, expires_, cause};
  ++stats_.transitions[{state_, to}];
  VLOG(2) << options_.name << ": lease " << LeaseStateName(state_) << " -> "
          << LeaseStateName(to) << " (" << cause << ", tick " << tick_ << ", expires in "
          << std::chrono::duration_cast<std::chrono::milliseconds>(expires_ - clock_.Now()).count()
          << "ms)";
  state_ = to;
  fired->push_back(t);
  if (to == LeaseState::kFollower) {
    ++others_seen_;
    takeover_.Follow(clock_.Now());
  }
  if (to == LeaseState::kLeader) PromoteDeferredLocked(clock_.Now());
}

void BackoffWriteLease::PromoteDeferredLocked(SteadyTime now) {
  // Why: work deferred while following or waiting for the election gate
  // is ours to do now, in the order it was queued; retry delays are kept.
  std::vector<std::string> promote;
  for (const auto& [due, seq, key] : due_) {
    if (due > now && slots_.at(key).lease_deferred) promote.push_back(key);
  }
  for (const std::string& key : promote) ScheduleLocked(key, slots_.at(key), now, false);
  for (auto& [key, slot] : slots_) {
    if (slot.running && slot.work && slot.lease_deferred) {
      slot.due = std::min(slot.due, now);
      slot.lease_deferred = false;
    }
    UpdateHeldLocked(slot, now);
  }
}

void BackoffWriteLease::ApplyLocked(WorkResult result, SteadyTime now, Fired* fired) {
  switch (result) {
    case WorkResult::kNone:
      return;
    case WorkResult::kExtend:
      tick_ = 0;
      expires_ = now + options_.interval;
      TransitionLocked(LeaseState::kLeader, "work:extend", fired);
      return;
    case WorkResult::kRelease:
      FollowLocked(state_ == LeaseState::kFollower ? std::min(tick_ + 1, kMaxTick) : 0, now);
      if (options_.follower_min_delay > Duration::zero()) {
        // Why: a lost write proves another writer is alive now; probing
        // again before its write can reach our watch only loses again.
        expires_ = std::max(expires_, now + FollowerDelayLocked());
      }
      TransitionLocked(LeaseState::kFollower, "work:release", fired);
      // Why after the transition: Follow() starts a wait that may be a
      // sample; a lost write's wait is not one.
      takeover_.LostWrite(now);
      return;
  }
}

void BackoffWriteLease::RunPicked(const std::string& key, std::unique_lock<std::mutex>& lock,
                                  Fired* fired) {
  const LeaseState started_as = state_;
  const uint64_t others_seen_before = others_seen_;
  Slot& slot = slots_.at(key);  // stays: EraseSlotLocked refuses a running slot
  Work work = std::move(slot.work);
  CHECK(work) << options_.name << ": no work queued for " << key;
  slot.work = nullptr;
  slot.running = true;
  slot.cancel_retry = false;
  const bool taking_over = slot.taking_over;
  UpdateHeldLocked(slot, clock_.Now());
  if (started_as == LeaseState::kFollower) takeover_.Probe();
  ++in_flight_;
  ++stats_.runs;
  const SteadyTime started = clock_.Now();
  lock.unlock();
  const WorkOutcome outcome = RunGuarded(options_.name, key, work);
  lock.lock();
  --in_flight_;
  ++stats_.outcomes[static_cast<int>(outcome.result)];
  if (taking_over) ++stats_.takeovers[static_cast<int>(outcome.result)];
  slot.taking_over = false;
  const SteadyTime now = clock_.Now();
  const RunFacts facts{started_as, state_, others_seen_ != others_seen_before,
                       slot.work && !shutdown_, slot.cancel_retry || shutdown_};
  const RunEffects effects = InterpretRun(outcome, facts, options_.takeover.rules);
  if (effects.latency_sample) {
    const Duration latency =
        outcome.write_latency > Duration::zero() ? outcome.write_latency : now - started;
    takeover_.ProbeAnswered(latency);
    VLOG(3) << options_.name << ": our write of " << key << " was answered in " << Ms(latency)
            << "ms; deadline now " << Ms(takeover_.Deadline()) << "ms";
  }
  if (effects.new_wait) takeover_.LostWrite(now);
  ApplyLocked(effects.apply, now, fired);
  if (effects.next == NextRun::kRetry) slot.parked = effects.park;
  RequeueLocked(key, slot, std::move(work), outcome, effects.next, now);
}

void BackoffWriteLease::RequeueLocked(const std::string& key, Slot& slot, Work work,
                                      const WorkOutcome& outcome, NextRun next,
                                      SteadyTime now) {
  slot.running = false;
  switch (next) {
    case NextRun::kNewer:
      ScheduleLocked(key, slot, slot.due, slot.lease_deferred);
      break;
    case NextRun::kRetry:
      ++stats_.retries;
      slot.work = std::move(work);
      ScheduleLocked(key, slot,
                     now + (outcome.retry_after > Duration::zero() ? outcome.retry_after
                                                                     : options_.retry),
                     false);
      break;
    case NextRun::kDrop:
      slot.work = nullptr;
      UpdateHeldLocked(slot, now);
      EraseSlotLocked(slots_.find(key));
      return;
  }
  UpdateHeldLocked(slot, now);
}

void BackoffWriteLease::Notify(const Fired& fired) {
  if (!options_.on_transition) return;
  for (const auto& t : fired) options_.on_transition(t);
}

bool BackoffWriteLease::RunNext() {
  Fired fired;
  {
    std::unique_lock<std::mutex> lock(mu_);
    std::optional<std::string> key;
    while (true) {
      if (shutdown_) return false;
      const SteadyTime now = clock_.Now();
      SteadyTime wait_until;
      key = PickLocked(now, nullptr, &wait_until);
      if (key) break;
      if (wait_until == SteadyTime::max()) wait_until = now + kIdleWait;
      clock_.WaitUntil(cv_, lock, wait_until);
    }
    RunPicked(*key, lock, &fired);
  }
  // Why: waiters may be blocked on a probe or on a key that is now queued.
  cv_.notify_all();
  Notify(fired);
  return true;
}

int BackoffWriteLease::RunDue() {
  std::unordered_set<std::string> ran;
  int count = 0;
  while (true) {
    Fired fired;
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (shutdown_) break;
      SteadyTime wait_until;
      auto key = PickLocked(clock_.Now(), &ran, &wait_until);
      if (!key) break;
      ran.insert(*key);
      RunPicked(*key, lock, &fired);
    }
    ++count;
    cv_.notify_all();
    Notify(fired);
  }
  return count;
}

std::optional<SteadyTime> BackoffWriteLease::NextDue() const {
  std::lock_guard<std::mutex> l(mu_);
  if (due_.empty()) return std::nullopt;
  SteadyTime next = std::get<0>(*due_.begin());
  if (state_ == LeaseState::kFollower && in_flight_ == 0) {
    const std::optional<SteadyTime> takeover = takeover_.WaitDue();
    if (takeover && *takeover < next) {
      for (const auto& [due, seq, key] : due_) {
        if (HeldLocked(slots_.at(key))) return std::max(*takeover, clock_.Now());
      }
    }
  }
  return next;
}

void BackoffWriteLease::Shutdown() {
  {
    std::lock_guard<std::mutex> l(mu_);
    if (shutdown_) return;
    shutdown_ = true;
    std::vector<std::string> keys;
    for (const auto& [key, slot] : slots_) keys.push_back(key);
    for (const std::string& key : keys) DropWorkLocked(key, clock_.Now());
  }
  cv_.notify_all();
}

LeaseSnapshot BackoffWriteLease::Snapshot() const {
  std::lock_guard<std::mutex> l(mu_);
  LeaseSnapshot s = stats_;
  s.state = state_;
  s.tick = tick_;
  s.expires = expires_;
  s.pending_keys = 0;
  s.running_keys = 0;
  s.progress_samples = takeover_.estimator().total();
  s.takeover_deadline = takeover_.enabled() ? takeover_.Deadline() : Duration::zero();
  s.progress_quantile = takeover_.Quantile();
  for (const auto& [key, slot] : slots_) {
    if (slot.work) ++s.pending_keys;
    if (slot.running) ++s.running_keys;
  }
  return s;
}

}  // namespace routestatus::lease
