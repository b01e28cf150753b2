#pragma once

#include <functional>
#include <string>

#include "base/clock.h"

namespace routestatus::lease {

// What running one piece of work did to the lease (docs/design.md section 3).
enum class WorkResult {
  kNone,     // nothing written, no other writer seen (nothing to write, or
             // the write failed without a 409): the state stays as it is
  kExtend,   // we wrote: we lead
  kRelease,  // we lost a write (409, contended): we follow
};

// The value a piece of work returns.
struct WorkOutcome {
  WorkResult result = WorkResult::kNone;
  bool retry = false;  // run this key's (latest) work again after the retry interval
  // With `retry`: run it again after this long instead (e.g. a per-key
  // backoff after a permanent error); zero = the lease's retry interval.
  Duration retry_after = Duration::zero();
  // With `retry`: the write fails for this key alone (the server rejects
  // this object, or errs on it while other requests succeed), so the key is
  // parked: it is no leader's progress to wait for. A Follower never counts
  // it as held work nor takes it over; like any follower work it runs only
  // once its lease has expired (no peer write for a while), after
  // `retry_after`. So while a leader makes progress, only the leader
  // retries it. A new Try for the key ends the parking.
  bool key_failing = false;
  // How long the server took to answer the write itself, when the work did
  // more than write (e.g. read the object after a 409): the lease learns
  // the write latency from it. Zero = the whole work's duration.
  Duration write_latency = Duration::zero();
  // With kNone and `retry`: the server answered 409 because an owner's
  // update (a label, an annotation, another router's entry) moved the
  // object's version, leaving our entry alone. Nothing was learnt about our
  // router name's other writers, so it is no lost race: no new takeover
  // wait starts, and a follower's other held work goes on at once (the
  // key's next version, queued again, is held work like any other).
  bool owner_moved_version = false;
  // With kNone and `retry`: no request was sent (the status path holds the
  // key back for `retry_after`, e.g. a contention block): nothing was
  // learnt about the API server or our router name's other writers, so a
  // follower taking over goes on with its other held work at once.
  bool not_sent = false;
};

using Work = std::function<WorkOutcome()>;

enum class LeaseState { kElection, kLeader, kFollower };

// Who wrote the entry an Extend(key) reports.
enum class EntryWriter {
  kUs,    // this replica: the watch brought back our own write
  kPeer,  // another replica of our router name
};
const char* LeaseStateName(LeaseState state);

// A work-renewed write lease: writing status *is* leadership. One per
// process, shared by all keys; at most one queued piece of work per key (the
// latest replaces older work). Thread-safe. See docs/design.md section 3.
class WriteLease {
 public:
  virtual ~WriteLease() = default;
  // Queues (or replaces) the work for `key`. Leader/Election: due now;
  // Follower: due at max(expires - now, 2 * base backoff).
  virtual void Try(const std::string& key, Work work) = 0;
  // Our router name's entry for `key` is already correct and newest: drop
  // queued work for `key`; a Follower backs off further. `writer` says who
  // wrote that entry, as the caller knows it (the status syncer records its
  // own writes): kPeer means another replica of our router name is writing,
  // which a Leader (leader_follows_foreign_extend) or an Election
  // (election_follows_extend) turns into following.
  virtual void Extend(const std::string& key, EntryWriter writer) = 0;
  // Forget `key` (the object was deleted).
  virtual void Remove(const std::string& key) = 0;
  virtual LeaseState State() const = 0;
};

}  // namespace routestatus::lease
