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

// Tunables of BackoffWriteLease. Value type. The defaults are what
// route-status-controller runs with (its flags set name, interval, retry and
// election delay to the same values); OpenshiftLikeLeaseOptions()
// (lease/lease_presets.h) is the plain lease openshift-router runs.
struct WriteLeaseOptions {
  std::string name = "lease";  // for logs, e.g. the router name
  // Lease length and the backoff cap.
  Duration interval = std::chrono::seconds(15);
  // Delay before a key whose work asked for `retry` runs again.
  Duration retry = std::chrono::seconds(3);
  BackoffPolicy backoff;
  // In Election, no work runs before the first work arrived + election_delay
  // x (0.1 + U[0, 1)) (one draw per process). The replica with the smallest
  // draw writes first; the others see its writes through the watch first.
  // So does a live leader when this replica joins a converged fleet: the
  // 10% floor (100 ms by default) covers the leader's PUT and our watch's
  // lag for the first change we meet. 0 disables it.
  Duration election_delay = std::chrono::seconds(1);
  // While not Leader, run at most one work item at a time (a probe), so a
  // replica that is about to lose spends at most one conflicting PUT per
  // probe, however many worker threads call RunNext.
  bool single_probe = true;
  // Extend(key, kPeer) while in Election (another writer of our router name
  // just wrote this key) makes us Follower, so a replica that starts next to a
  // live leader follows at once instead of racing it. Needs a caller that
  // extends only for writes it saw happen (controller::StatusSyncer extends
  // only for entry changes delivered by the watch, never for entries found
  // in the initial list or on resync); a caller that extended for every
  // already-correct entry would make every restarted replica follow even
  // with no leader alive.
  bool election_follows_extend = true;
  // A Follower's Try is due no earlier than now + this, however long ago
  // its lease expired; when set (> 0), a lost write (Release) also keeps
  // the lease for at least this long. It should cover the skew between
  // replicas' watches plus a PUT's latency: a follower that runs before the
  // leader's write of the same change reaches its watch spends a
  // conflicting PUT. Zero means two base backoff steps (40 ms, as
  // openshift-router). The simulator (test/sim) measured 4x fewer
  // conflicts with 500 ms and jitter than with 40 ms once watch skew
  // exceeds 40 ms.
  Duration follower_min_delay = std::chrono::milliseconds(500);
  // Spread that delay uniformly over [min, 2 x min) (one draw per Try).
  bool follower_delay_jitter = true;
  // A Leader asked to Extend(key, kPeer) (another replica of our router
  // name wrote it) becomes Follower at tick 0, instead of leading on next
  // to the other leader (each such pair spends one conflicting PUT per
  // change until one loses a write).
  bool leader_follows_foreign_extend = true;
  // Failure detection by the leader's progress: a Follower holding work
  // takes it over (runs it although its lease has not expired) once the
  // leader has written nothing for an adaptive deadline (lease/takeover.h).
  // Lease expiry still bounds every deferral. Its cap is `interval`.
  TakeoverOptions takeover;
  // Test only: a Follower never runs held work, neither on a takeover nor
  // at its lease's expiry, so it never writes nor leads again. A
  // deliberately broken lease that the simulator's checker must fail
  // (test/sim mutation_test.cc, issue 46); false, as cmd/ leaves it,
  // changes nothing.
  bool never_take_over = false;
  // Seed of the backoff/jitter generator; unset = std::random_device.
  std::optional<uint64_t> seed;
  // Called after every state change, outside the lease's lock, from the
  // thread that caused it. Must not block for long.
  std::function<void(const LeaseTransition&)> on_transition;
};

// kInvalid naming the bad field, or OK.
Status ValidateWriteLeaseOptions(const WriteLeaseOptions& options);

// A point-in-time copy of the lease for metrics and tests.
struct LeaseSnapshot {
  LeaseState state = LeaseState::kElection;
  int tick = 0;
  SteadyTime expires{};
  // Count of state changes by (from, to); only from != to.
  std::map<std::pair<LeaseState, LeaseState>, uint64_t> transitions;
  uint64_t follower_deferrals = 0;  // work deferred because we follow
  uint64_t runs = 0;                // work items run
  uint64_t outcomes[3] = {0, 0, 0};  // by WorkResult (none, extend, release)
  uint64_t retries = 0;             // work requeued after the retry interval
  uint64_t extend_drops = 0;        // queued work dropped by Extend(key)
  uint64_t foreign_extends = 0;     // Leader saw another writer's write (Extend kPeer)
  // Takeovers (Follower work run before its lease expired because the
  // leader made no progress within the deadline) by outcome (none,
  // extend = won, release = lost).
  uint64_t takeovers[3] = {0, 0, 0};
  uint64_t progress_samples = 0;              // waits for the leader measured
  Duration takeover_deadline{};   // the current deadline D
  Duration progress_quantile{};   // the quantile of recent waits
  size_t pending_keys = 0;          // keys with queued work (running or not)
  size_t running_keys = 0;
};

// The work-renewed write lease (docs/design.md section 3) as a per-key delayed
// queue: no worker ever sleeps on the lease. Each key has at most one queued
// work item (the latest Try replaces older work; replacing never postpones
// it). Worker threads belong to the caller and call RunNext(); a key never
// runs on two threads at once, and work queued for a key while it runs is
// kept and runs after. A Follower's due work whose lease has not expired is
// re-deferred to the expiry instead of running, unless the takeover deadline
// (lease/takeover.h) has passed: then one queued key runs as a probe, whose
// success makes us Leader. Thread-safe.
class BackoffWriteLease final : public WriteLease {
 public:
  // CHECK-fails on invalid options (see ValidateWriteLeaseOptions). Threads
  // calling RunNext must be joined (after Shutdown) before destruction.
  BackoffWriteLease(const Clock& clock, WriteLeaseOptions options);
  ~BackoffWriteLease() override;

  // WriteLease. Try after Shutdown() drops the work.
  void Try(const std::string& key, Work work) override;
  void Extend(const std::string& key, EntryWriter writer) override;
  void Remove(const std::string& key) override;
  LeaseState State() const override;

  // Blocks (on the Clock) until some key's work is due, runs it on this
  // thread, applies its outcome and returns true; returns false once
  // Shutdown() was called (at once if it already was).
  bool RunNext();
  // Runs, on this thread, the work of every key due at the current Clock
  // time, each key at most once per call (so work that requeues itself
  // cannot loop); returns how many ran. Never blocks on time. For tests and
  // the simulator.
  int RunDue();
  // Earliest due time of queued (not running) work, or nullopt.
  std::optional<SteadyTime> NextDue() const;
  // Drops all queued work and makes RunNext return false. Work already
  // running finishes. Idempotent.
  void Shutdown();

  // The API server has not answered this process for a while (true), or
  // answers again (false): docs/design.md section 7. Cut off, a Leader
  // becomes Follower at once: a replica that cannot see other replicas'
  // writes must not report itself leader, and a follower has taken over by
  // now. Reconnected, a Follower defers held work by the follower floor
  // and restarts its takeover wait, so that its watch brings in what the
  // leader wrote meanwhile before any held write may run (its cache is as
  // old as the outage). Thread-safe.
  void SetCutOff(bool cut_off);

  LeaseSnapshot Snapshot() const;
  // The backoff for `tick` using the lease's policy, cap and generator
  // (draws from the lease's generator).
  Duration BackoffFor(int tick);

 private:
  struct Slot {
    Work work;                    // latest queued work; empty when none
    SteadyTime due{};  // when `work` may run
    uint64_t seq = 0;             // tie-break in due_ while queued
    bool queued = false;          // `work` is in due_
    bool running = false;         // a thread runs this key's older work
    bool lease_deferred = false;  // `due` came from following or the election gate
    bool cancel_retry = false;    // Extend/Remove while running: no retry
    bool parked = false;          // `work` retries a key_failing write (not held)
    bool taking_over = false;     // the running work is a takeover
    bool held = false;            // counted in held_ (see HeldLocked)
    SteadyTime held_since{};      // when it last became held
    double takeover_draw = 0;     // its jitter draw (per-change takeover)
  };
  using DueEntry = std::tuple<SteadyTime, uint64_t, std::string>;
  using Fired = std::vector<LeaseTransition>;

  // REQUIRES: mu_ held (all of the *Locked functions).
  void ScheduleLocked(const std::string& key, Slot& slot, SteadyTime due,
                      bool lease_deferred);
  void UnscheduleLocked(const std::string& key, Slot& slot);
  // Held work (the takeover's "we hold work", lease/takeover.h): the
  // slot's queued work is deferred because we follow (or wait for the
  // election) and is not parked, or the slot runs a takeover. Work waiting
  // for its retry interval is not held.
  static bool HeldLocked(const Slot& slot);
  // Brings slot.held and held_ up to date after a change of the slot;
  // starts a takeover wait when a Follower begins holding work. Called once
  // at the end of each change, so a slot that stays held is never counted
  // as newly held.
  void UpdateHeldLocked(Slot& slot, SteadyTime now);
  // Erases a slot that is not running (a running slot's thread still uses it).
  void EraseSlotLocked(std::unordered_map<std::string, Slot>::iterator it);
  Duration BackoffLocked(int tick);
  // How long a follower follows at `tick`: the backoff, and in progress
  // mode at least the takeover's longest wait (see the .cc).
  Duration FollowForLocked(int tick);
  Duration FollowerDelayLocked();
  // kPerChange: when `slot`'s change is due for takeover; max() otherwise.
  SteadyTime ChangeTakeoverDueLocked(const Slot& slot) const;
  // kProgress: a Follower's unparked work runs no earlier than the
  // takeover wait's end, whether its lease expired or not; min() otherwise.
  SteadyTime ProgressTakeoverDueLocked(const Slot& slot) const;
  // kProgress: the queued key to take over now (marked), or nullopt with
  // *wait_until lowered to the takeover time.
  std::optional<std::string> PickTakeoverLocked(SteadyTime now,
                                                const std::unordered_set<std::string>* skip,
                                                SteadyTime* wait_until);
  // The key to run now, or nullopt with *wait_until set (max() = no work).
  std::optional<std::string> PickLocked(SteadyTime now,
                                        const std::unordered_set<std::string>* skip,
                                        SteadyTime* wait_until);
  void TransitionLocked(LeaseState to, const char* cause, Fired* fired);
  void ApplyLocked(WorkResult result, SteadyTime now, Fired* fired);
  // Runs `key` (picked); unlocks `lock` around the work.
  void RunPicked(const std::string& key, std::unique_lock<std::mutex>& lock, Fired* fired);
  void Notify(const Fired& fired);

  const Clock& clock_;
  const WriteLeaseOptions options_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::mt19937_64 rng_;                       // GUARDED_BY(mu_)
  LeaseState state_ = LeaseState::kElection;  // GUARDED_BY(mu_)
  int tick_ = 0;                              // GUARDED_BY(mu_)
  SteadyTime expires_{};          // GUARDED_BY(mu_)
  // Transitions to Follower, and peer writes seen while following: a
  // write that was out across one does not make us lead. GUARDED_BY(mu_)
  uint64_t others_seen_ = 0;
  Duration election_offset_{};    // election_delay x (0.1 + U[0, 1)), drawn once
  // First Try in Election + election_offset_; unset before it.
  std::optional<SteadyTime> election_gate_;  // GUARDED_BY(mu_)
  bool shutdown_ = false;                     // GUARDED_BY(mu_)
  bool cut_off_ = false;                      // GUARDED_BY(mu_)
  int in_flight_ = 0;                         // GUARDED_BY(mu_)
  uint64_t next_seq_ = 0;                     // GUARDED_BY(mu_)
  std::unordered_map<std::string, Slot> slots_;  // GUARDED_BY(mu_)
  std::set<DueEntry> due_;                       // GUARDED_BY(mu_)
  size_t held_ = 0;                           // GUARDED_BY(mu_): slots with `held`
  TakeoverTimer takeover_;                    // GUARDED_BY(mu_)
  LeaseSnapshot stats_;  // GUARDED_BY(mu_); counters only
};

}  // namespace routestatus::lease
