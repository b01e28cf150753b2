#pragma once

#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "base/clock.h"
#include "controller/admission.h"
#include "controller/contention_gate.h"
#include "controller/shard.h"
#include "controller/status_stats.h"
#include "kubeclient/cache/store.h"
#include "kubeclient/kube_client.h"
#include "kubeclient/route.h"
#include "lease/write_lease.h"

namespace routestatus::controller {

// Name of the informer index "routes by effective host" that admission reads.
inline constexpr char kRoutesByHostIndex[] = "routesByHost";
// The index function for kRoutesByHostIndex: HostClaimKeys with `options`
// (the same options the syncer uses).
kubeclient::cache::IndexFunc<kubeclient::Route> RoutesByHostIndexFunc(AdmissionOptions options);

// What one reconcile of a key decided.
enum class SyncResult {
  kQueued,      // a write (or removal) of our entry was handed to the lease
  kNoChange,    // our entry is already desired
  kFollower,    // already desired, just written by our router name: lease.Extend(key)
  kContended,   // a change is needed but the tracker blocks it
  kBackoff,     // this entry's write failed permanently; the lease retries it later
  kOutOfShard,  // not ours and we have no entry: nothing to do
  kGone,        // not in the cache: lease.Remove(key)
};
const char* SyncResultName(SyncResult result);

// Per-key backoff after a permanent status write error. Value type.
struct WriteErrorBackoff {
  Duration base = std::chrono::seconds(3);
  Duration max = std::chrono::minutes(5);
};

// The one status code path (docs/design.md section 5): admit, reject and removal
// of our entry all go through Sync(). Sync computes the desired entry from
// the cached route (or "no entry" when the route is outside our shard),
// compares it with the observed entry and, when they differ, queues one work
// item for the key in the lease. The work re-reads the route from the cache,
// recomputes, re-checks the tracker and writes .../status with a JSON merge
// patch of status.ingress guarded by the cached resourceVersion
// (kubeclient::IngressStatusPatch: every other entry is sent as cached, no
// other field is touched; 409 when stale, as a PUT). The work writes only
// from current caches: while the route cache, or the namespace cache the
// shard reads, relists after a 410 Gone, it is held and retried every
// kRelistingRecheck (a view with lost changes must not remove or add an
// entry).
//
// A status write the server answers with an error other than 409/404 (a
// 4xx such as 422/400/413 or an admission 403, or a 5xx on this object such
// as `500 etcdserver: request is too large`) is that route's problem, not a
// lost election: the work keeps the lease (kNone), marks the key failing
// (lease::Failure::kThisKey: followers park it, so while a leader makes
// progress only the leader retries it) and asks to be retried after the
// key's own backoff (base, doubling, capped); the failure is logged once per key (and when the
// server's message changes) and counted by reason; a success, the route's
// deletion or an entry that no longer needs the write ends the backoff.
// A 401, or a 403 from authorization (RBAC), is the client's problem: every
// route is retried at the lease's retry interval, one WARNING per backoff
// cap (5 min) while it lasts, StatusStats::auth_failing set. A write
// without an answer (or a 429) is an outage: retried at the retry interval,
// logged by the binary once per outage. A 409 releases the lease when
// another writer of our router name changed our entry (the syncer reads
// the route once to tell); a 409 that an owner's update or another
// router's entry caused is retried instead, the lease kept.
//
// Thread-safe. Every reference must outlive the syncer, and the lease must
// not run this syncer's work after the syncer is destroyed.
class StatusSyncer {
 public:
  // How soon work held while a cache relists (after a 410 Gone) runs again.
  // Why so soon: a relist takes milliseconds to seconds, and held work is
  // only the keys whose entry differs.
  static constexpr Duration kRelistingRecheck = std::chrono::milliseconds(100);

  StatusSyncer(AdmissionOptions admission, const ShardFilter& shard,
               const kubeclient::cache::ObjectStore<kubeclient::Route>& routes,
               kubeclient::KubeClient& client, lease::WriteLease& lease, ContentionGate& gate,
               const Clock& clock, StatusStats& stats,
               WriteErrorBackoff error_backoff = WriteErrorBackoff());

  // Reconciles `key` from the cache. Never blocks on I/O.
  // `watched_entry_change`: since the last reconcile of `key`, a watch
  // update changed our router name's entry (the controller tracks this).
  // Only then does an already-correct entry that is newest count as another
  // replica's write and call lease.Extend(key) (docs/design.md section 2: "sees,
  // through its watch"). Why not on every reconcile: entries left by a
  // previous incarnation would make every replica of a restarted fleet
  // follow (initial list, resyncs) although no leader is alive.
  SyncResult Sync(const std::string& key, bool watched_entry_change = false);

  // What Sync does for `key` when its single entry of ours is already the
  // desired one and no watched entry change is pending (kNoChange), given
  // `decision`, the admission decision already made for the route as now
  // cached: records the admission and counts the skip, without deciding
  // again. For the controller's start-up report. Any thread.
  void NoteUnchanged(const std::string& key, const AdmissionDecision& decision);
  // Room for the admission records of `routes` routes (the start-up report
  // calls it with the cache's size). Any thread.
  void ExpectRoutes(size_t routes) { stats_.ReserveAdmissions(routes); }

  // Our desired entry for `route` (read peers from the cache), or nullopt
  // when the route is outside our shard. `decision` (optional) receives the
  // admission decision. No side effects (metrics included): any thread.
  std::optional<kubeclient::RouteIngress> Desired(const kubeclient::Route& route,
                                                  AdmissionDecision* decision) const;

  // Desired() with our entry of `route` already decoded (`observed`, the
  // first entry of our router name, as Route::FindIngress returns it).
  std::optional<kubeclient::RouteIngress> DesiredGiven(
      const kubeclient::Route& route, const std::optional<kubeclient::RouteIngress>& observed,
      AdmissionDecision* decision) const;

  // The work queued for `key` whose route had UID `uid` (public for tests).
  lease::WorkOutcome RunWork(const std::string& key, const std::string& uid);

  // For a route Sync found blocked (kContended): how long until the
  // tracker's block may end, when the caller reconciles it again (zero: not
  // re-queued; a held fight). A creation (our entry absent) waits only for
  // the route's own block, a change also for the cut-off.
  Duration BlockEndsIn(const kubeclient::Route& route);

  // The API server answers again after an outage: ends the backoff of
  // every route whose last failure was a 5xx (it may have been the
  // outage's, not the route's), so the re-queue that follows writes them
  // at once. 4xx backoffs stay. Returns how many ended.
  int EndServerErrorBackoffs();

  const AdmissionOptions& admission_options() const { return admission_; }
  // Writes of ours whose echo has not been seen yet (tests: the record must
  // not grow with every route touched).
  size_t own_write_records() const;

 private:
  // The record of our own writes is the one place that knows "this write
  // was ours" (the lease is told, Extend(key, kUs | kPeer)). Removals are
  // recorded too: their echo is an entry change (the leader's progress for
  // a follower), which a leader must not take for a peer's write.
  // BeginOwnWrite before the PUT, with the version the PUT names and the
  // entry it writes (nullopt: removal); EndOwnWrite with its answer's
  // version ("" when it failed).
  void BeginOwnWrite(const std::string& key, const std::string& read_version,
                     const std::optional<kubeclient::RouteIngress>& written);
  void EndOwnWrite(const std::string& key, const std::string& resource_version);
  // True when our write of `key` over `cached_version` succeeded and its
  // echo has not been seen: the cache is behind our own write.
  bool AwaitingOwnEcho(const std::string& key, const std::string& cached_version);
  // A reconcile without a watched entry change found `key` cached at
  // `cached_version`: forgets our answered write of it when that version
  // is past it (the echo was skipped, and would never be consumed).
  void ForgetPassedOwnWrite(const std::string& key, const std::string& cached_version);
  // True when the entry change of `key` seen at `resource_version`, where
  // our entry is `observed`, is our own write. An entry equal to the one we
  // wrote is ours (our echo, or our echo coalesced by the work queue with
  // later updates that left our entry alone: labels, annotations, another
  // router's entry), never a peer's: a peer writes only what differs from
  // what it sees, and its write over ours needs a version past ours. While
  // our PUT is in flight, the first change past the version it names is
  // taken as ours: it is its echo (the watch can beat the answer), or a
  // write that landed first, and then our PUT fails with 409 and we follow
  // anyway. A second one with another entry is not ours: nothing lands
  // between the version our PUT names and our write, so it is newer than
  // our write. (The named version itself, reconciled late, is taken as
  // ours.) Otherwise the record is forgotten: the first entry change after
  // our write is either its echo or something newer. So records live from
  // a write until its echo.
  bool TakeOwnWrite(const std::string& key, const std::string& resource_version,
                    const std::optional<kubeclient::RouteIngress>& observed);

  struct OwnWrite {
    bool in_flight = false;        // the PUT is sent; its answer is not back
    std::string read_version;      // the version the PUT names
    std::string resource_version;  // the answer's version
    std::string echo_seen;         // the first change past read_version seen in flight
    uint64_t written = 0;          // IngressFingerprint of the entry written (0: removal)
  };

  // A permanent failure of `key`'s write of `entry` (nullopt: removal):
  // logs it (once per key, and when the server's message changes), counts
  // it and returns the delay before the next attempt.
  Duration NoteFailure(const std::string& key,
                                   const std::optional<kubeclient::RouteIngress>& entry,
                                   const Status& status);
  // A 401/403 of our credentials: WARNING once per error_backoff_.max.
  void NoteAuthFailure(const Status& status);
  // A write succeeded: the credentials work (INFO if they had failed).
  void EndAuthFailure();
  // Ends `key`'s backoff; `recovered`: after a successful write (logged).
  void ClearFailure(const std::string& key, bool recovered);
  // True while the write of `entry` for `key` backs off after failing.
  bool InBackoff(const std::string& key, const std::optional<kubeclient::RouteIngress>& entry);
  // Whether the gate blocks writing route `uid` now, and for how long:
  // IsChangeContended/RecheckAfter when our entry exists (`observed`; it
  // tells the gate whether `desired` differs from it beyond the view),
  // IsCreationBlocked/RecheckCreationAfter when we would create it.
  bool Blocked(const std::string& uid, const std::optional<kubeclient::RouteIngress>& observed,
               const std::optional<kubeclient::RouteIngress>& desired);
  Duration RecheckAfter(const std::string& uid, bool has_entry);
  // After a 409 on a write based on `cached`: whether the server's copy
  // shows our router name's entries changed since `cached` (another
  // replica wrote them). True when the server cannot be read: a 409 is
  // taken as a lost race unless shown otherwise. False without a read
  // when `cached_now` (the cache as the 409 came back) is a newer version
  // of the route with our entries as in `cached`.
  bool PeerChangedOurEntries(const kubeclient::Route& cached,
                             const std::shared_ptr<const kubeclient::Route>& cached_now);

  struct Failure {
    int attempts = 0;
    uint64_t entry = 0;  // IngressFingerprint of the entry that failed (0: removal)
    std::string message;
    bool server_error = false;  // the last failure was a 5xx
  };

  AdmissionOptions admission_;
  const WriteErrorBackoff error_backoff_;
  const ShardFilter& shard_;
  const kubeclient::cache::ObjectStore<kubeclient::Route>& routes_;
  kubeclient::KubeClient& client_;
  lease::WriteLease& lease_;
  ContentionGate& gate_;
  const Clock& clock_;
  StatusStats& stats_;
  mutable std::mutex own_writes_mu_;
  std::unordered_map<std::string, OwnWrite> own_writes_;  // GUARDED_BY(own_writes_mu_)
  std::mutex failures_mu_;
  std::unordered_map<std::string, Failure> failures_;  // GUARDED_BY(failures_mu_)
  std::optional<SteadyTime> auth_warned_at_;  // GUARDED_BY(failures_mu_)
};

}  // namespace routestatus::controller
