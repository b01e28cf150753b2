#include "controller/tracker_gate.h"

#include "controller/desired_status.h"

namespace routestatus::controller {
namespace {

conflict::ContentionTracker::Difference DifferenceOf(
    const kubeclient::RouteIngress& entry, const std::optional<kubeclient::RouteIngress>& desired) {
  // Why no desired counts as a view difference: "outside our shard" may come
  // from namespace labels our cache has not caught up with yet.
  return !desired || DiffersOnlyInView(*desired, entry)
             ? conflict::ContentionTracker::Difference::kView
             : conflict::ContentionTracker::Difference::kConfiguration;
}

}  // namespace

void TrackerGate::EntriesListed(const std::vector<ListedEntry>& listed) {
  struct Candidate {
    const ListedEntry* listed;
    SystemTime written_at;
  };
  std::vector<Candidate> clear, ambiguous;
  for (const ListedEntry& l : listed) {
    const kubeclient::Route& route = *l.route;
    if (!l.desired || kubeclient::IngressEqual(l.entry, *l.desired)) continue;
    // Why first: only entries written since we started can tell of a live
    // fight, and only those may count towards the ambiguity limit below.
    const auto written = NewestConditionTime(l.entry);
    if (!written) continue;
    const SystemTime written_at{std::chrono::seconds(*written)};
    const bool since_start = tracker_.WrittenSinceWeStarted(written_at);
    if (!since_start && !tracker_.WrittenJustBeforeWeStarted(written_at)) continue;
    // Why: an entry written for an older spec (the host or wildcard policy
    // changed since, and its write is still pending) differs from ours
    // without any router being configured differently. Only an entry that
    // fits the route's current spec can tell of another configuration.
    if (!EntryFitsSpec(route, l.entry)) continue;
    // Why an entry written just before we started is ambiguous too: it is
    // a live router started with us (a fleet started at once on a loaded
    // node starts its replicas seconds apart, and the last one overwrote
    // every route the first had written: issue 59's loaded fight, 40
    // writes for 20 routes), or a previous configuration of ours that
    // wrote it just before it stopped. Many at once are the former.
    const bool ambiguous_entry = !since_start || HostAloneDiffers(route, l.entry, *l.desired);
    (ambiguous_entry ? ambiguous : clear).push_back({&l, written_at});
  }
  if (ambiguous.size() > static_cast<size_t>(tracker_.options().limit)) {
    clear.insert(clear.end(), ambiguous.begin(), ambiguous.end());
  }
  for (const Candidate& c : clear) {
    const ListedEntry& l = *c.listed;
    tracker_.Listed(l.route->metadata.uid, l.route->Key(), l.entry, &*l.desired,
                    DifferenceOf(l.entry, l.desired), c.written_at);
  }
}

void TrackerGate::EntryChanged(const kubeclient::Route& route,
                               const std::optional<kubeclient::RouteIngress>& old_entry,
                               const std::optional<kubeclient::RouteIngress>& new_entry,
                               const std::optional<kubeclient::RouteIngress>& desired) {
  const kubeclient::RouteIngress* want = desired ? &*desired : nullptr;
  if (!new_entry) {
    if (old_entry) tracker_.Removed(route.metadata.uid, route.Key(), *old_entry, want);
    return;
  }
  const auto difference = DifferenceOf(*new_entry, desired);
  if (old_entry) {
    tracker_.Changed(route.metadata.uid, route.Key(), *old_entry, *new_entry, want, difference);
  } else {
    tracker_.Appeared(route.metadata.uid, route.Key(), *new_entry, want, difference);
  }
}

}  // namespace routestatus::controller
