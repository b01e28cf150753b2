#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "lease/backoff.h"
#include "lease/run_outcome.h"
#include "lease/takeover.h"
#include "lease/write_lease.h"

namespace routestatus::lease {

// One change of the lease's state (from != to), for observers and logs.
struct LeaseTransition {
  LeaseState from = LeaseState::kElection;
  LeaseState to = LeaseState::kElection;
  int tick = 0;
  SteadyTime expires{};
  const char* cause = "";  // "work:extend", "work:release", "extend"
};

// Tunables of BackoffWriteLease. Value type. The defaults are
// route-status-controller's; OpenshiftLikeLeaseOptions() (lease_presets.h)
// is the plain lease openshift-router runs.
struct WriteLeaseOptions {
  std::string name = "lease";  // for logs, e.g. the router name
  Duration interval = std::chrono::seconds(15);  // lease length, backoff cap, D's cap
  Duration retry = std::chrono::seconds(3);      // delay before a retry
  BackoffPolicy backoff;
  // In Election no work runs before the first Try + election_delay x (0.1 +
  // U[0, 1)), one draw per process: the smallest draw writes first and the
  // others see its writes. The 10% floor covers a live leader's PUT when we
  // join a converged fleet. 0 disables the gate.
  Duration election_delay = std::chrono::seconds(1);
  // While not Leader, at most one work item runs at a time (a probe): a
  // replica about to lose spends one conflicting PUT, not one per worker.
  bool single_probe = true;
  // Extend(key, kPeer) in Election makes us follow (a replica starting next
  // to a live leader does not race it). The caller must extend only for
  // writes it saw happen, not for entries found correct in a list.
  bool election_follows_extend = true;
  // A Follower's Try is due no earlier than now + this (jittered to [min,
  // 2 x min)), and a lost write keeps the lease at least this long: it
  // covers watch skew plus a PUT, so a follower does not race the leader's
  // write of the same change. Zero means two base backoff steps (40 ms).
  Duration follower_min_delay = std::chrono::milliseconds(500);
  bool follower_delay_jitter = true;
  // A Leader that sees Extend(key, kPeer) follows (two leaders would race
  // every change until one lost a write).
  bool leader_follows_foreign_extend = true;
  // The failure detector by the leader's progress (takeover.h); expiry
  // still bounds every deferral.
  TakeoverOptions takeover;
  std::optional<uint64_t> seed;  // backoff and jitter; unset = random_device
  // Called after every state change, outside the lock, on the thread that
  // caused it. Must not block for long.
  std::function<void(const LeaseTransition&)> on_transition;
};

// kInvalid naming the bad field, or OK.
Status ValidateWriteLeaseOptions(const WriteLeaseOptions& options);

// A point-in-time copy of the lease for metrics and tests.
struct LeaseSnapshot {
  LeaseState state = LeaseState::kElection;
  int tick = 0;
  SteadyTime expires{};
  // State changes by (from, to), from != to.
  std::map<std::pair<LeaseState, LeaseState>, uint64_t> transitions;
  uint64_t follower_deferrals = 0;   // work deferred because we follow
  uint64_t runs = 0;                 // work items run
  uint64_t outcomes[3] = {0, 0, 0};  // by WorkResult (none, extend, release)
  uint64_t retries = 0;              // work requeued for a retry
  uint64_t extend_drops = 0;         // queued work dropped by Extend(key)
  uint64_t foreign_extends = 0;      // a Leader saw Extend(key, kPeer)
  // Held work run before the lease expired (the takeover wait passed), by
  // outcome (none, extend = won, release = lost).
  uint64_t takeovers[3] = {0, 0, 0};
  uint64_t progress_samples = 0;  // samples of D
  Duration takeover_deadline{};   // the current deadline D
  Duration progress_quantile{};   // the quantile of the samples
  size_t pending_keys = 0;        // keys with queued work (running or not)
  size_t running_keys = 0;
};

// The write lease (write_lease.h) as a per-key delayed queue; no worker
// sleeps on the lease. Each key has at most one queued work item (a newer
// Try replaces it and never postpones it); a key never runs on two threads
// at once, and work queued while it runs runs after. A Follower's due work
// is deferred again to its lease's expiry (and, with takeover, to the end
// of the takeover wait) unless the takeover wait has passed: then one held
// key runs as a probe, whose success makes us Leader. Thread-safe.
class BackoffWriteLease final : public WriteLease {
 public:
  // CHECK-fails on invalid options. Threads calling RunNext must be joined
  // (after Shutdown) before destruction.
  BackoffWriteLease(const Clock& clock, WriteLeaseOptions options);
  ~BackoffWriteLease() override;

  // WriteLease. Try after Shutdown() drops the work.
  void Try(const std::string& key, Work work) override;
  void Extend(const std::string& key, EntryWriter writer) override;
  void Remove(const std::string& key) override;
  LeaseState State() const override;

  // Blocks (on the Clock) until some key's work is due, runs it on this
  // thread and returns true; false once Shutdown() was called.
  bool RunNext();
  // Runs the work of every key due now, each key at most once per call;
  // returns how many ran. Never blocks on time (tests, the simulator).
  int RunDue();
  // Earliest due time of queued (not running) work, or nullopt.
  std::optional<SteadyTime> NextDue() const;
  // Drops all queued work and makes RunNext return false; running work
  // finishes. Idempotent.
  void Shutdown();

  // The API server has not answered this process for a while (true), or
  // answers again (false): docs/design.md section 7. Cut off, a Leader
  // follows at once (it cannot see other writers, and a follower has taken
  // over by now). Reconnected, a Follower defers held work by the follower
  // floor and waits anew, so its watch catches up before it may write.
  void SetCutOff(bool cut_off);

  LeaseSnapshot Snapshot() const;

 private:
  struct Slot {
    Work work;                    // latest queued work; empty when none
    SteadyTime due{};             // when `work` may run
    uint64_t seq = 0;             // tie-break in due_ while queued
    bool queued = false;          // `work` is in due_
    bool running = false;         // a thread runs this key's older work
    bool lease_deferred = false;  // `due` came from following or the election gate
    bool cancel_retry = false;    // Extend/Remove while running: no retry
    bool parked = false;          // `work` retries a Failure::kThisKey write (not held)
    bool taking_over = false;     // the running work is a takeover
    bool held = false;            // counted in held_ (see HeldLocked)
    SteadyTime held_since{};      // when it last became held
  };
  using DueEntry = std::tuple<SteadyTime, uint64_t, std::string>;
  using Fired = std::vector<LeaseTransition>;
  using Skip = std::unordered_set<std::string>;

  // REQUIRES: mu_ held (all of the *Locked functions).
  void ScheduleLocked(const std::string& key, Slot& slot, SteadyTime due, bool lease_deferred);
  void UnscheduleLocked(const std::string& key, Slot& slot);
  // Held work (what the takeover waits with): queued work deferred because
  // we follow (or wait for the election) and not parked, or a running
  // takeover. Work waiting for its retry is not held.
  static bool HeldLocked(const Slot& slot);
  // Brings slot.held and held_ up to date after a change of the slot; a
  // Follower that begins holding work starts a takeover wait.
  void UpdateHeldLocked(Slot& slot, SteadyTime now);
  // Drops `key`'s queued work (a running key loses its retry); returns
  // whether it had work and since when it was held.
  std::pair<bool, std::optional<SteadyTime>> DropWorkLocked(const std::string& key,
                                                            SteadyTime now);
  void EraseSlotLocked(std::unordered_map<std::string, Slot>::iterator it);
  void FollowLocked(int tick, SteadyTime now);  // tick_ = tick; expires_ from it
  Duration FollowerDelayLocked();               // the follower floor, jittered
  // A Follower's unparked work runs no earlier than the takeover wait's end.
  SteadyTime ProgressTakeoverDueLocked(const Slot& slot) const;
  // The held key to take over now (marked), or nullopt with *wait_until
  // lowered to the takeover time.
  std::optional<std::string> PickTakeoverLocked(SteadyTime now, const Skip* skip,
                                                SteadyTime* wait_until);
  // The key to run now, or nullopt with *wait_until set (max() = no work).
  std::optional<std::string> PickLocked(SteadyTime now, const Skip* skip, SteadyTime* wait_until);
  void TransitionLocked(LeaseState to, const char* cause, Fired* fired);
  void PromoteDeferredLocked(SteadyTime now);  // becoming Leader
  void ApplyLocked(WorkResult result, SteadyTime now, Fired* fired);
  // Runs `key` (picked) with `lock` released around the work.
  void RunPicked(const std::string& key, std::unique_lock<std::mutex>& lock, Fired* fired);
  // After a run: newer work, the retry, or nothing.
  void RequeueLocked(const std::string& key, Slot& slot, Work work, const WorkOutcome& outcome,
                     NextRun next, SteadyTime now);
  void Notify(const Fired& fired);

  const Clock& clock_;
  const WriteLeaseOptions options_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  // All below GUARDED_BY(mu_).
  std::mt19937_64 rng_;
  LeaseState state_ = LeaseState::kElection;
  int tick_ = 0;
  SteadyTime expires_{};
  // Transitions to Follower plus peer writes seen while following: a write
  // that was out across one does not make us lead.
  uint64_t others_seen_ = 0;
  Duration election_offset_{};  // election_delay x (0.1 + U[0, 1)), drawn once
  std::optional<SteadyTime> election_gate_;  // first Try in Election + offset
  bool shutdown_ = false;
  bool cut_off_ = false;
  int in_flight_ = 0;
  uint64_t next_seq_ = 0;
  std::unordered_map<std::string, Slot> slots_;
  std::set<DueEntry> due_;
  size_t held_ = 0;  // slots with `held`
  TakeoverTimer takeover_;
  LeaseSnapshot stats_;  // counters only
};

}  // namespace routestatus::lease
