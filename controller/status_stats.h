#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>

namespace routestatus::controller {

// Counters of the status path, for metrics (cmd/ exports them to
// Prometheus). Thread-safe.
class StatusStats {
 public:
  // Status PUTs by result.
  std::atomic<int64_t> writes_success{0};
  std::atomic<int64_t> writes_conflict{0};
  std::atomic<int64_t> writes_not_found{0};
  std::atomic<int64_t> writes_cancelled{0};  // we cancelled it (shutdown)
  std::atomic<int64_t> writes_error{0};
  // Reconciles or work that ended without a write, by reason.
  std::atomic<int64_t> skipped_no_change{0};     // observed entry already desired
  std::atomic<int64_t> skipped_follower{0};      // already desired, a peer's write: lease.Extend
  std::atomic<int64_t> skipped_own_write{0};     // the watch brought back our own write
  std::atomic<int64_t> skipped_contended{0};     // tracker says contended
  std::atomic<int64_t> skipped_out_of_shard{0};  // not ours, no entry of ours
  std::atomic<int64_t> skipped_gone{0};          // route deleted or UID changed
  std::atomic<int64_t> skipped_done{0};          // work ran but the cache already had the entry
  std::atomic<int64_t> skipped_relisting{0};     // work held: a cache relists after a 410
  // Work items handed to the lease.
  std::atomic<int64_t> queued{0};
  // Reconciles that did not queue a write because the route backs off
  // after a permanent error.
  std::atomic<int64_t> skipped_backoff{0};
  // Routes whose status PUT failed permanently (403, 422, ...) and that back
  // off until a write succeeds.
  std::atomic<int64_t> backoff_routes{0};
  // 1 while status writes fail for our credentials (401, or an RBAC 403)
  // and no write has succeeded since; 0 otherwise.
  std::atomic<int64_t> auth_failing{0};

  // A status PUT failed permanently with `reason` (StatusCodeName, e.g.
  // "forbidden", "invalid").
  void CountWriteError(const std::string& reason);
  std::map<std::string, int64_t> WriteErrorsByReason() const;

  // Records the latest admission of `key`: `result` is "true", "false" or
  // "out_of_shard"; `reason` one of the kReason* constants. The status
  // syncer calls it from Sync only (one reconcile per key at a time), and
  // ForgetAdmission when the route is gone.
  void SetAdmission(const std::string& key, const std::string& result, const std::string& reason);
  void ForgetAdmission(const std::string& key);
  // Room for `routes` admission records. Why: the table grew from empty by
  // rehashing ~17 times at 100,000 routes during the start-up report.
  void ReserveAdmissions(size_t routes);
  // Routes per "result/reason" (a gauge: each route counted once).
  std::map<std::string, int64_t> AdmissionCounts() const;

 private:
  mutable std::mutex mu_;
  // "result/reason" -> routes; an entry stays (at 0) once created, so that
  // admission_by_key_ may point at it. GUARDED_BY(mu_)
  std::map<std::string, int64_t> admission_counts_;
  // A 64-bit hash of the key -> its entry of admission_counts_. Why a hash
  // and a pointer, not the key and the label's text: one per route, and
  // the two strings cost ~80 bytes more (100k routes: 8 MB). Two keys
  // sharing a hash (~3e-10 at 100,000 routes) would miscount one route in
  // a gauge. GUARDED_BY(mu_)
  std::unordered_map<uint64_t, std::pair<const std::string, int64_t>*> admission_by_key_;
  std::map<std::string, int64_t> write_errors_;                     // GUARDED_BY(mu_)
};

}  // namespace routestatus::controller
