#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "lease/backoff_write_lease.h"
#include "lease/write_lease.h"

namespace routestatus::lease {

// The lease used with --write-lease=false: a plain level-driven controller.
// Every replica writes whenever its own cache differs from the desired
// entry; a 409 is retried after the retry interval (by then the watch has
// usually delivered the winner's write and the work finds nothing to do).
// There is no leader, no follower and no deferral.
//
// It wraps a BackoffWriteLease built with PassThroughOptions() (no election
// delay, no single probe, never follows) as the per-key delayed queue, and
// hands it every outcome as kNone, so the inner lease stays in Election
// (where work is due at once) forever. The real outcomes are counted here
// for the metrics. Exists to measure the naive baseline and for small
// single-replica installs. Thread-safe; `queue` must outlive it.
class UnleasedWriteLease final : public WriteLease {
 public:
  // `base` with every gate of BackoffWriteLease turned off (retry and
  // name kept).
  static WriteLeaseOptions PassThroughOptions(WriteLeaseOptions base) {
    base.election_delay = Duration::zero();
    base.single_probe = false;
    base.election_follows_extend = false;
    base.leader_follows_foreign_extend = false;
    base.follower_min_delay = Duration::zero();
    base.follower_delay_jitter = false;
    base.takeover.mode = TakeoverMode::kOff;
    base.on_transition = nullptr;
    return base;
  }

  explicit UnleasedWriteLease(BackoffWriteLease& queue) : queue_(queue) {}

  void Try(const std::string& key, Work work) override {
    queue_.Try(key, [this, work = std::move(work)] {
      WorkOutcome outcome = work();
      ++outcomes_[static_cast<int>(outcome.result)];
      // Why: kNone keeps the inner lease in Election, where work runs at once.
      return WorkOutcome{WorkResult::kNone, outcome.retry, outcome.retry_after};
    });
  }
  // The entry is already correct: queued work for `key` is dropped.
  void Extend(const std::string& key, EntryWriter writer) override {
    queue_.Extend(key, writer);
  }
  // No takeover without a lease: nothing to learn.
  void Remove(const std::string& key) override { queue_.Remove(key); }
  // Always kElection (never leads, never follows); the metrics report it as
  // the distinct state "disabled".
  LeaseState State() const override { return LeaseState::kElection; }

  // Work items run, by what the work itself returned (kNone, kExtend = it
  // wrote, kRelease = it lost a write or failed).
  uint64_t outcome(WorkResult result) const {
    return outcomes_[static_cast<int>(result)].load();
  }

 private:
  BackoffWriteLease& queue_;
  std::atomic<uint64_t> outcomes_[3] = {0, 0, 0};
};

}  // namespace routestatus::lease
