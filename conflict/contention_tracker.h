#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "kubeclient/clock.h"
#include "kubeclient/route.h"

namespace routestatus::conflict {

// Tunables of ContentionTracker. Value type.
struct ContentionTrackerOptions {
  std::string router_name = "default";  // named in the warning
  // How long a contended route stays blocked; flushes run every 2 x interval.
  kubeclient::Duration interval = std::chrono::minutes(3);
  // More than `limit` contentions in a window stop all changes of existing
  // entries until a flush brings the count back down.
  int limit = 5;
  // Flush lazily from any call once 2 x interval passed since the last
  // flush, so no timer is needed. The caller may also call Flush() itself.
  bool auto_flush = true;
  size_t max_examples = 3;  // example routes named in the warning
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
// entries (DESIGN.md section 4), so that we stop fighting them. Per route
// UID it keeps {at, Candidate|Suspect|Contended, last, own}, where `last` is
// the entry as we last wrote (own) or saw it.
//
// Which foreign values count (Changed): a value that differs from ours in
// what only the route itself and the router's configuration decide
// (Difference::kConfiguration: host, canonical hostname, wildcard policy, a
// rejection that involves no other route) cannot come from a writer with
// our configuration and counts at once. A value that differs only in what
// the other routes decide (Difference::kView: host claims) may be a peer's
// slightly older view; it makes the route Suspect (not changed by us for
// the interval, but not counted, not named in a warning, no cut-off) and
// counts only when it replaces our own write or the route changes away
// again while suspect. A change to the entry we compute ends Suspect.
//
// Rules for the caller (the status path):
// - Changed() only for watch updates (never the initial list) where both
//   the old and the new object have our router name's entry and they differ.
// - Pass `desired`, the entry we would compute for the new object now.
//   A change to exactly that value is never contention: it is what our own
//   replicas write (e.g. after the route owner changed spec.host, our leader
//   writes the new host; the watch may deliver that before our Clear()).
//   Without `desired`, only `last` tells our writes from theirs.
// - Ask IsChangeContended() before changing or removing an existing entry.
//   Creating our entry (it was absent) is never blocked: do not ask.
// - Call Clear() after every successful write of ours.
//
// Thread-safe: the informer thread calls Changed while workers call the rest.
class ContentionTracker {
 public:
  // How another writer's entry differs from the one we compute (see above).
  enum class Difference { kConfiguration, kView };

  ContentionTracker(const kubeclient::Clock& clock, ContentionTrackerOptions options);

  // Our entry of route `uid` ("namespace/name" `route_key`, for the warning)
  // changed from `old_entry` to `new_entry`. Equal to `desired` or to
  // `last` -> not contention; unknown uid -> Candidate, unless `old_entry`
  // equals `desired` (another writer replaced the entry we compute);
  // otherwise the route becomes Contended and the contention count grows,
  // or for a kView `difference` Suspect (see the class comment). Changes
  // that IngressEqual ignores (lastTransitionTime, condition order) are no
  // change. While the cut-off is active nothing is tracked.
  void Changed(const std::string& uid, const std::string& route_key,
               const kubeclient::RouteIngress& old_entry,
               const kubeclient::RouteIngress& new_entry,
               const kubeclient::RouteIngress* desired = nullptr,
               Difference difference = Difference::kConfiguration);
  // Another writer created our router name's entry of route `uid` (absent
  // before) as `new_entry`, on a watch update (never the initial list).
  // Equal to `desired` -> not contention (one of our replicas wrote it);
  // different -> the route is Contended and the count grows, exactly as if
  // the entry we compute had been replaced. Without `desired` nothing can
  // be told apart and the call is ignored.
  void Appeared(const std::string& uid, const std::string& route_key,
                const kubeclient::RouteIngress& new_entry, const kubeclient::RouteIngress* desired,
                Difference difference = Difference::kConfiguration);
  // After our successful write: `written` is the entry we wrote (the route
  // becomes a Candidate with last = written), or nullopt when we removed our
  // entry (the route is forgotten).
  void Clear(const std::string& uid, const std::optional<kubeclient::RouteIngress>& written);
  // The route was deleted.
  void Forget(const std::string& uid);
  // True if we must not change our existing entry of `uid` now: the global
  // cut-off is active, or `uid` is Contended or Suspect and its window has
  // not passed.
  bool IsChangeContended(const std::string& uid);

  // Drops Contended and Suspect routes older than the interval and Candidates older than
  // 3 x interval; if there were contentions since the last flush, logs one
  // LOG(WARNING) and returns its text (else ""); resets the count to the
  // number of routes still Contended.
  std::string Flush();
  // When the next lazy flush is due. Calls made at or after it flush first;
  // a controller that wants the warning on time even when no route changes
  // calls Flush() from a timer at this time.
  kubeclient::SteadyTime NextFlush() const;
  // The text of the last warning logged, or "".
  std::string LastWarning() const;
  ContentionSnapshot Snapshot() const;

  // "{host=a.example.com canonicalHostname=router.example.com Admitted=True}"
  // as used in the warning. Thread-safe (pure).
  static std::string DescribeEntry(const kubeclient::RouteIngress& entry);

 private:
  enum class State { kCandidate, kSuspect, kContended };
  // Why a fingerprint of `last`, not the entry: after a cold start every
  // route we wrote is a Candidate for 3 x interval; a typed entry per route
  // costs ~600 bytes (100,000 routes: ~60 MB), the fingerprint 8.
  struct Element {
    kubeclient::SteadyTime at{};
    State state = State::kCandidate;
    uint64_t last = 0;  // IngressFingerprint of `last`
    bool own = false;   // `last` is our own write (Clear)
  };
  struct Example {
    std::string route_key;
    kubeclient::RouteIngress ours;
    kubeclient::RouteIngress theirs;
  };

  // REQUIRES: mu_ held. Return the warning to log after unlocking, or "".
  std::string MaybeFlushLocked(kubeclient::SteadyTime now);
  std::string FlushLocked(kubeclient::SteadyTime now);
  std::string WarningLocked(kubeclient::SteadyTime now, bool cutoff) const;
  static void Log(const std::string& warning);

  const kubeclient::Clock& clock_;
  const ContentionTrackerOptions options_;

  mutable std::mutex mu_;
  std::unordered_map<std::string, Element> ids_;  // GUARDED_BY(mu_)
  int contentions_ = 0;                           // GUARDED_BY(mu_)
  int window_events_ = 0;                         // GUARDED_BY(mu_)
  std::vector<Example> examples_;                 // GUARDED_BY(mu_)
  kubeclient::SteadyTime window_start_{};         // GUARDED_BY(mu_)
  kubeclient::SteadyTime next_flush_{};           // GUARDED_BY(mu_)
  uint64_t flushes_ = 0;                          // GUARDED_BY(mu_)
  uint64_t warnings_ = 0;                         // GUARDED_BY(mu_)
  uint64_t events_total_ = 0;                     // GUARDED_BY(mu_)
  std::string last_warning_;                      // GUARDED_BY(mu_)
};

}  // namespace routestatus::conflict
