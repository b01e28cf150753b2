#pragma once

#include <functional>
#include <string>

namespace routestatus::lease {

// What running one piece of work did to the lease (DESIGN.md section 3).
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
};

using Work = std::function<WorkOutcome()>;

enum class LeaseState { kElection, kLeader, kFollower };
const char* LeaseStateName(LeaseState state);

// A work-renewed write lease: writing status *is* leadership. One per
// process, shared by all keys; at most one queued piece of work per key (the
// latest replaces older work). Thread-safe. See DESIGN.md section 3.
class WriteLease {
 public:
  virtual ~WriteLease() = default;
  // Queues (or replaces) the work for `key`. Leader/Election: due now;
  // Follower: due at max(expires - now, 2 * base backoff).
  virtual void Try(const std::string& key, Work work) = 0;
  // Our router name's entry for `key` is already correct and newest: drop
  // queued work for `key`; a Follower backs off further.
  virtual void Extend(const std::string& key) = 0;
  // Forget `key` (the object was deleted).
  virtual void Remove(const std::string& key) = 0;
  virtual LeaseState State() const = 0;
};

}  // namespace routestatus::lease
