#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/clock.h"
#include "conflict/observation.h"
#include "kubeclient/route.h"

namespace routestatus::conflict {

// Tunables of ContentionTracker. Value type.
struct ContentionTrackerOptions {
  std::string router_name = "default";  // named in the warning
  // How long a contended route stays blocked; flushes run every 2 x interval.
  Duration interval = std::chrono::minutes(3);
  // More than `limit` contentions in a window stop all changes of existing
  // entries until a flush brings the count back down.
  int limit = 5;
  // How long a Suspect route (see ContentionTracker) is not changed by us:
  // long enough for replicas' caches to catch up with each other, after
  // which the route is reconciled again (RecheckAfter).
  Duration suspect_block = std::chrono::seconds(15);
  // Flush lazily from any call once 2 x interval passed since the last
  // flush, so no timer is needed. The caller may also call Flush() itself.
  bool auto_flush = true;
  size_t max_examples = 3;  // example routes named in the warning
  // An entry found at start-up (initial list) that differs from ours in
  // what only the configuration decides counts as contention when it was
  // written after the tracker was made, less this allowance: whole-second
  // lastTransitionTimes and a writer's clock a little behind ours (see
  // Listed).
  Duration listed_skew = std::chrono::seconds(1);
  // And one written in the `listed_recent` before that may be a live
  // router started with us: replicas started at once on a loaded node
  // start seconds apart (see Listed and TrackerGate::EntriesListed).
  Duration listed_recent = std::chrono::seconds(5);
};

// A point-in-time copy of the tracker for metrics and tests.
struct ContentionSnapshot {
  int contentions = 0;            // the counter compared with the limit
  int contentions_in_window = 0;  // contention events since the last flush
  size_t contended_routes = 0;    // routes in state Contended
  size_t suspect_routes = 0;      // routes in state Suspect (blocked, not counted)
  size_t tracked_routes = 0;
  uint64_t flushes = 0;
  uint64_t warnings = 0;
  uint64_t events_total = 0;   // contention events since construction
  bool cutoff_active = false;  // contentions > limit
};

// Detects two writers that share our router name but compute different
// entries (docs/design.md section 4), so that we stop fighting them. Per route
// UID it keeps a RouteRecord (conflict/observation.h: {at,
// Candidate|Suspect|Contended, last, own, suspected, armed_until, ...}),
// where `last` is the entry as we last wrote (own) or saw it. How a watch
// update changes it is one pure function, InterpretObservation.
//
// Which foreign values count: a value that differs from ours in what only
// the route itself and the router's configuration decide
// (Difference::kConfiguration: host, canonical hostname, wildcard policy, a
// rejection that involves no other route) cannot come from a writer with
// our configuration and counts at once. A value that differs only in what
// other objects decide (Difference::kView: host claims; and our entry
// created where we would have none, or removed where we would keep one,
// which namespace labels decide) may come from a slightly older view, the
// writer's or ours: it makes the route Suspect (we do not change it for
// suspect_block, then reconcile it again; not counted, not named in a
// warning, no cut-off). It counts only as a second change away: after we
// restored the entry to ours (our write; a peer's ends the suspicion
// without arming) at least suspect_block after the suspicion
// (by then every view has caught up, so the restore is a considered
// disagreement), a view difference within the interval counts.
//
// Rules for the caller (the status path):
// - Changed()/Appeared()/Removed() only for watch updates (never the
//   initial list) that change our router name's entry.
// - Pass `desired`, the entry we would compute for the new object now.
//   A change to exactly that value is never contention: it is what our own
//   replicas write (e.g. after the route owner changed spec.host, our leader
//   writes the new host; the watch may deliver that before our Clear()).
//   Without `desired`, only `last` tells our writes from theirs.
// - Ask IsChangeContended() before changing or removing an existing entry,
//   IsCreationBlocked() before creating one (the cut-off never blocks a
//   creation; a route whose entry another writer removed may be blocked).
// - Call Clear() after every successful write of ours.
//
// Thread-safe: the informer thread calls Changed while workers call the rest.
class ContentionTracker {
 public:
  // How another writer's entry differs from the one we compute (see above).
  enum class Difference { kConfiguration, kView };

  ContentionTracker(const Clock& clock, ContentionTrackerOptions options);

  // Our entry of route `uid` ("namespace/name" `route_key`, for the warning)
  // changed from `old_entry` to `new_entry`. Equal to `desired` or to
  // `last` -> not contention; unknown uid -> Candidate, unless `old_entry`
  // equals `desired` (another writer replaced the entry we compute);
  // otherwise the route becomes Contended and the contention count grows,
  // or for a kView `difference` Suspect (see the class comment). Without
  // `desired` (we would have no entry) a change tells nothing. Changes that
  // IngressEqual ignores (lastTransitionTime, condition order) are no
  // change. While the cut-off is active nothing is tracked.
  void Changed(const std::string& uid, const std::string& route_key,
               const kubeclient::RouteIngress& old_entry,
               const kubeclient::RouteIngress& new_entry,
               const kubeclient::RouteIngress* desired = nullptr,
               Difference difference = Difference::kConfiguration);
  // Another writer created our router name's entry of route `uid` (absent
  // before) as `new_entry`. Equal to `desired` -> not contention (one of our
  // replicas wrote it); different -> as if the entry we compute had been
  // replaced (Changed). Without `desired` (we would have none) a view
  // difference.
  void Appeared(const std::string& uid, const std::string& route_key,
                const kubeclient::RouteIngress& new_entry, const kubeclient::RouteIngress* desired,
                Difference difference = Difference::kConfiguration);
  // At start-up (the caches just synced), route `uid` already carries
  // `entry` for our router name, last changed at `written_at` (its newest
  // condition's lastTransitionTime, by the writer's wall clock). The
  // initial list is read as if we had watched since we started: an entry
  // written after the tracker was made (less listed_skew) that differs
  // from `desired` in what only the configuration decides (kConfiguration)
  // counts as Appeared. So a replica that lists after a router configured
  // differently has written every route notices the fight instead of
  // overwriting them all once. So does one written in the listed_recent
  // before that (WrittenJustBeforeWeStarted), which the gate passes only
  // when many were listed. An entry written earlier is what a previous
  // configuration of ours may have left: not contention, we overwrite it.
  void Listed(const std::string& uid, const std::string& route_key,
              const kubeclient::RouteIngress& entry, const kubeclient::RouteIngress* desired,
              Difference difference, SystemTime written_at);
  // True when an entry written at `written_at` (writer's wall clock) counts
  // as written since the tracker was made, less listed_skew (see Listed).
  bool WrittenSinceWeStarted(SystemTime written_at) const;
  // True when it was written in the listed_recent before that.
  bool WrittenJustBeforeWeStarted(SystemTime written_at) const;
  // Another writer removed our router name's entry of `uid` (`old_entry`).
  // Without `desired` we would remove it too: not contention (it ends a
  // suspicion). Otherwise a view difference.
  void Removed(const std::string& uid, const std::string& route_key,
               const kubeclient::RouteIngress& old_entry, const kubeclient::RouteIngress* desired);
  // After our successful write: `written` is the entry we wrote, or nullopt
  // when we removed our entry. The route becomes a Candidate with last =
  // written (a removal is kept until its echo, or while a suspicion is
  // recent).
  void Clear(const std::string& uid, const std::optional<kubeclient::RouteIngress>& written);
  // Our view now computes the entry route `uid` carries (or, absent, that
  // we would have none): a suspicion of an older view ends, the route
  // becomes a Candidate without being armed. Why: a Suspect route whose
  // value our view caught up with was no disagreement; left Suspect, our
  // next legitimate write of it, however much later, counted as the
  // restore that arms it, and a peer's next view difference then counted as
  // a contention with one configuration (issue 23, claims seed 33). Also
  // when the route's spec changed what an entry states: the suspicion was
  // about the old spec's entry.
  void Agreed(const std::string& uid);
  // The route was deleted.
  void Forget(const std::string& uid);
  // True if we must not change our existing entry of `uid` now: the global
  // cut-off is active, `uid` is Contended and its interval has not passed
  // (or it is held: see RecheckAfter), or Suspect and its suspect_block has
  // not passed, unless `beyond_view`: the entry we would write differs
  // from the existing one in what only the route and our configuration
  // decide (the route's spec changed since it was written), which no older
  // view explains. Why: a leader partitioned (or dead) within suspect_block
  // of a suspicion left the route's next spec change unwritten for up to
  // 15 s (issue 23, the simulator's claims seed 106044529741049: 9.6 s).
  bool IsChangeContended(const std::string& uid, bool beyond_view = false);
  // While a change of `uid` is blocked: the time until the block may end,
  // when the caller reconciles the route again (issue 23: a wrong entry of
  // ours is repaired within a window, not at the next resync). Under the
  // cut-off that is the next flush, for every route; otherwise the end of
  // the route's suspect_block (Suspect) or interval (Contended). Zero when
  // nothing blocks it, and for a held route: one that was Contended again
  // after our rewrite at the end of its block (a live fight, not a careless
  // writer; so a fight settles instead of being replayed every window).
  Duration RecheckAfter(const std::string& uid) const;
  // True if we must not create our entry of `uid` (absent now): the route
  // itself is blocked as IsChangeContended says (Suspect, Contended, held),
  // the cut-off and the beyond_view exception aside. Why: another writer's removal of an entry we keep is
  // a view difference like any other (issue 23: a replica whose namespace
  // watch lagged re-created entries a peer had just removed, and removed
  // them again a moment later). The cut-off does not block creations, so
  // new routes are always admitted.
  bool IsCreationBlocked(const std::string& uid);
  // As RecheckAfter for a creation IsCreationBlocked blocks: the end of the
  // route's own block, never the cut-off's flush.
  Duration RecheckCreationAfter(const std::string& uid) const;

  // Warnings (LOG(WARNING), at once, from the call that counts): the first
  // contention of a window names the route with our value and theirs; the
  // contention that engages the cut-off names up to max_examples routes and
  // says that all changes are paused. At most one of each per window (a
  // window ends at a flush), so at most two per 2 x interval.
  //
  // Drops Contended and Suspect routes older than the interval and Candidates older than
  // 3 x interval; returns a summary of the window's contentions (else "",
  // logged at VLOG(1) only: its warnings were logged when they happened);
  // resets the count to the number of routes still Contended and starts a
  // new warning window.
  std::string Flush();
  // When the next lazy flush is due. Calls made at or after it flush first;
  // a controller that wants windows to end on time even when no route
  // changes calls Flush() from a timer at this time.
  SteadyTime NextFlush() const;
  // The text of the last warning logged, or "".
  std::string LastWarning() const;
  ContentionSnapshot Snapshot() const;
  const ContentionTrackerOptions& options() const { return options_; }

  // "{host=a.example.com canonicalHostname=router.example.com Admitted=True}"
  // as used in the warning; "{no entry}" for nullopt. Thread-safe (pure).
  static std::string DescribeEntry(const kubeclient::RouteIngress& entry);
  static std::string DescribeEntry(const std::optional<kubeclient::RouteIngress>& entry);

 private:
  struct Example {
    std::string route_key;
    std::optional<kubeclient::RouteIngress> ours;  // nullopt: no entry
    std::optional<kubeclient::RouteIngress> theirs;
  };

  // REQUIRES: mu_ held. Changed/Appeared/Removed: our entry went from
  // `old_entry` to `new_entry` (nullopt: absent; not both), we compute
  // `desired`. Gathers the facts, applies what InterpretObservation
  // (conflict/observation.h) decides.
  void ObserveLocked(const std::string& uid, const std::string& route_key,
                     const std::optional<kubeclient::RouteIngress>& old_entry,
                     const std::optional<kubeclient::RouteIngress>& new_entry,
                     const kubeclient::RouteIngress* desired, Difference difference,
                     SteadyTime now);
  // REQUIRES: mu_ held. We wrote the entry back to ours (Clear).
  void RestoredLocked(RouteRecord& e, SteadyTime now) const;
  // REQUIRES: mu_ held. Counts a contention of route `route_key` (its
  // record is already Contended): the window's count and examples, and a
  // prompt warning.
  void CountLocked(const std::string& route_key,
                   const std::optional<kubeclient::RouteIngress>& ours,
                   const std::optional<kubeclient::RouteIngress>& old_entry,
                   const std::optional<kubeclient::RouteIngress>& new_entry, SteadyTime now);
  // REQUIRES: mu_ held.
  bool BlockedLocked(const RouteRecord& e, SteadyTime now) const;
  // RecheckAfter, or with `cutoff_blocks` false RecheckCreationAfter.
  Duration RecheckIn(const std::string& uid, bool cutoff_blocks) const;
  // REQUIRES: mu_ held. Sets pending_warning_ when this contention is the
  // window's first, or engages the cut-off (see Flush()).
  void PromptWarningLocked(const std::string& route_key,
                           const std::optional<kubeclient::RouteIngress>& ours,
                           const std::optional<kubeclient::RouteIngress>& theirs,
                           SteadyTime now);
  // REQUIRES: mu_ held.
  void MaybeFlushLocked(SteadyTime now);
  std::string FlushLocked(SteadyTime now);
  std::string WarningLocked(SteadyTime now, bool cutoff) const;
  std::string AdviceLocked() const;
  static void Log(const std::string& warning);
  // The key of a route's record in ids_.
  static uint64_t IdOf(const std::string& uid);

  const Clock& clock_;
  const ContentionTrackerOptions options_;
  const SystemTime started_;  // wall clock at construction (see Listed)

  mutable std::mutex mu_;
  // Records by IdOf(uid). Why a 64-bit hash of the uid, not the uid: a
  // record per written route outlives a cold start's writes, and a uid (36
  // characters, on the heap) cost ~80 more bytes each (100k routes: 8 MB).
  // Two uids (random UUIDs) sharing a hash would share a record: with
  // 100,000 routes the chance is ~3e-10. GUARDED_BY(mu_)
  std::unordered_map<uint64_t, RouteRecord> ids_;
  int contentions_ = 0;                           // GUARDED_BY(mu_)
  int window_events_ = 0;                         // GUARDED_BY(mu_)
  std::vector<Example> examples_;                 // GUARDED_BY(mu_)
  SteadyTime window_start_{};         // GUARDED_BY(mu_)
  SteadyTime next_flush_{};           // GUARDED_BY(mu_)
  uint64_t flushes_ = 0;                          // GUARDED_BY(mu_)
  uint64_t warnings_ = 0;                         // GUARDED_BY(mu_)
  uint64_t events_total_ = 0;                     // GUARDED_BY(mu_)
  std::string last_warning_;                      // GUARDED_BY(mu_)
  bool warned_contended_ = false;  // GUARDED_BY(mu_); this window
  bool warned_cutoff_ = false;     // GUARDED_BY(mu_); this window
  // A warning to log once mu_ is released (set by PromptWarningLocked).
  std::string pending_warning_;  // GUARDED_BY(mu_)
};

}  // namespace routestatus::conflict
