#pragma once

#include <functional>
#include <string>

#include "base/clock.h"

namespace routestatus::lease {

// A work-renewed write lease (docs/design.md section 3). Writing status is
// leadership: a replica whose write succeeds leads and runs its work at
// once. A replica that loses a write (409) or sees another replica of its
// router name write follows: it holds its work, backs off, and runs it only
// when the leader shows no progress for a learnt deadline D, or when its
// lease expires. So followers write nothing while the leader keeps up, and
// nobody writes when nothing changes.
//
// Not guaranteed: exclusivity. Two replicas may both believe they lead and
// both write (a race at start-up, a slow watch, a partition). The fence is
// the API server's 409 on a stale resourceVersion: a write made from an old
// view is refused, never merged, and costs one PUT.
class WriteLease;

enum class LeaseState { kElection, kLeader, kFollower };
const char* LeaseStateName(LeaseState state);

// What running one piece of work did to the lease.
enum class WorkResult {
  kNone,     // nothing written and no other writer seen: the state stays
  kExtend,   // we wrote: we lead
  kRelease,  // we lost a write (409 on our entry): we follow
};

// With kNone and `retry`: what the failure says about the others.
enum class Failure {
  kServer,   // no answer, or an error: the API server may be failing, so a
             // follower taking over starts a new wait before its next key
  kThisKey,  // this object fails alone: the key is parked (no leader's
             // progress to wait for; only a leader, or an expired lease, runs it)
  kNothing,  // nothing learnt (no request sent, or a 409 from an owner's
             // update that left our entry alone): other held work goes on
};

// The value a piece of work returns.
struct WorkOutcome {
  WorkResult result = WorkResult::kNone;
  bool retry = false;  // run this key's (latest) work again later
  // With `retry`: after this long; zero = the lease's retry interval.
  Duration retry_after = Duration::zero();
  Failure failure = Failure::kServer;  // with kNone and `retry`
  // How long the server took to answer the write itself, when the work did
  // more (e.g. read the object after a 409); zero = the work's duration.
  Duration write_latency = Duration::zero();
};

using Work = std::function<WorkOutcome()>;

// Who wrote the entry an Extend(key) reports.
enum class EntryWriter {
  kUs,    // this replica: the watch brought back our own write
  kPeer,  // another replica of our router name
};

// The lease's interface: one per process, shared by all keys, at most one
// queued piece of work per key (the latest replaces older work).
// Thread-safe.
class WriteLease {
 public:
  virtual ~WriteLease() = default;
  // Queues (or replaces) the work for `key`: due now when leading, later
  // when following or before the election gate.
  virtual void Try(const std::string& key, Work work) = 0;
  // Our entry for `key` is already correct and newest: queued work for it
  // is dropped. kPeer (another replica wrote it; the caller knows which
  // writes were its own) makes a Leader or an Election follow, and is the
  // leader's progress to a Follower.
  virtual void Extend(const std::string& key, EntryWriter writer) = 0;
  // Forget `key` (the object was deleted).
  virtual void Remove(const std::string& key) = 0;
  virtual LeaseState State() const = 0;
};

}  // namespace routestatus::lease
