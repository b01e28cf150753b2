#include "controller/controller.h"

#include <glog/logging.h>

#include "controller/claim_closure.h"
#include "controller/desired_status.h"

namespace routestatus::controller {

using kubeclient::Namespace;
using kubeclient::Route;

namespace {

// True when a change between `a` and `b` may change who holds which host.
bool ClaimChanged(const Route& a, const Route& b, const AdmissionOptions& options) {
  return a.spec.host != b.spec.host || a.spec.subdomain != b.spec.subdomain ||
         a.spec.path != b.spec.path || a.spec.wildcard_policy != b.spec.wildcard_policy ||
         a.spec.tls_termination != b.spec.tls_termination ||
         a.metadata.labels != b.metadata.labels ||
         a.metadata.creation_unix != b.metadata.creation_unix || a.metadata.uid != b.metadata.uid ||
         HostClaimKeys(a, options) != HostClaimKeys(b, options);
}

// True when `a` and `b` agree on what EntryFitsSpec checks.
bool SameSpecFacts(const Route& a, const Route& b) {
  return a.spec.host == b.spec.host && a.spec.wildcard_policy == b.spec.wildcard_policy;
}

}  // namespace

class Controller::RouteHandler final : public kubeclient::cache::EventHandler<Route> {
 public:
  explicit RouteHandler(Controller& c) : c_(c) {}

  void OnAdd(const Ptr& obj, bool initial_list) override {
    // Why the first list queues nothing: the start-up report, which runs
    // once the caches have synced and before any reconcile, either settles
    // or queues every route it lists (ReportListedEntries); queueing all of
    // them here cost a queue add and a reconcile per route at every
    // restart, before the cache could even say it had synced.
    if (initial_list) return;
    c_.queue_.Add(obj->Key());
    c_.EnqueueClaimPeers(*obj);
  }

  void OnUpdate(const Ptr& old_obj, const Ptr& new_obj) override {
    const std::string& name = c_.syncer_.admission_options().router_name;
    const auto old_entry = old_obj->FindIngress(name);
    const auto new_entry = new_obj->FindIngress(name);
    // Why removals too: a peer removing our entry (the route left the
    // shard) is the leader's write as much as setting it.
    if (new_entry ? !old_entry || !kubeclient::IngressEqual(*old_entry, *new_entry)
                  : old_entry.has_value()) {
      std::lock_guard<std::mutex> lock(c_.mu_);
      c_.entry_changed_.insert(new_obj->Key());
    }
    // Why also a created entry: a router sharing our name but configured
    // differently shows up first as someone else creating our entry;
    // without it, every replica overwrites every route once before any
    // fight is noticed. Why everything as arguments: a relist delivers a
    // batch of updates to one handler after another, so nothing about
    // "the update being delivered" may be kept for a later call.
    // Why only once synced: the entry we compute from a cache still being
    // filled (e.g. namespaces not listed yet) says nothing about others.
    // Why not an entry that contradicts a spec this update changed: one
    // watch event never changes spec and status together (the status is
    // a subresource), so such an update is a relist's, spanning several
    // versions, and the entry was written for a spec in between that we
    // never saw (the simulator's chaos seed 2999926567645: host changed
    // twice, the relist showed the first host's entry beside the second
    // host, counted as a contention with one configuration). A spec that
    // now names no host fixes none, so after such an update the entry's
    // host may be any spec's in between (partitioned steady seed
    // 203130581671392: spec.host cleared while we were cut off, the
    // relist showed the old host's entry beside it, counted).
    // Why also an entry that changed in an update whose metadata.generation
    // moved (the API server bumps it on every spec change, never on a
    // status write): such an update spans versions, and the spec may have
    // gone elsewhere and back while we were not watching (partitioned
    // slow-leader seed 187181658494969: a route without spec.host was given
    // h78, a replica wrote h78's entry, the host was cleared again; the
    // relist showed h78's entry beside the template spec, counted as a
    // contention with one configuration). Only an entry whose host differs
    // from ours can be a skipped spec's; one differing in anything else
    // (canonical hostname) is another configuration's. A server that keeps
    // no generation (0) leaves it counted.
    const bool entry_changed =
        new_entry && (!old_entry || !kubeclient::IngressEqual(*old_entry, *new_entry));
    const bool host_cleared = !old_obj->spec.host.empty() && new_obj->spec.host.empty();
    const bool spans_spec_changes = entry_changed && old_obj->metadata.generation > 0 &&
                                    old_obj->metadata.generation != new_obj->metadata.generation;
    const bool written_for_a_skipped_spec =
        new_entry &&
        ((!SameSpecFacts(*old_obj, *new_obj) &&
          (!EntryFitsSpec(*new_obj, *new_entry) || host_cleared)) ||
         (spans_spec_changes && EntryHostFromAnotherSpec(*new_obj, *new_entry)));
    if (entry_changed && written_for_a_skipped_spec && c_.CachesSynced()) {
      VLOG(1) << new_obj->Key() << ": our entry (host " << new_entry->host
              << ") came with spec changes we did not see (generation "
              << old_obj->metadata.generation << " -> " << new_obj->metadata.generation
              << "): not counted as a contention";
    }
    // Why a spec change ends a suspicion: the view difference it stands for
    // (a peer's older or newer view of namespaces or host claims) concerned
    // the old spec's entry; held 15 s, the new spec's entry missed the
    // failover bound when the suspect write's author then died (partitioned
    // claims seed 156957148746238 and outage seed 104768407171825: a
    // namespace left and rejoined the shard, the leader removed our entry
    // from its older view and was cut off, and the owner's next host change
    // waited 11.1 and 6.2 s). Before EntryChanged, which judges the new
    // entry against the new spec.
    if (!SameSpecFacts(*old_obj, *new_obj) && old_obj->metadata.uid == new_obj->metadata.uid) {
      c_.gate_.SpecChanged(new_obj->metadata.uid);
    }
    if (c_.CachesSynced() && (old_entry || new_entry) && !written_for_a_skipped_spec &&
        old_obj->metadata.uid == new_obj->metadata.uid &&
        (!old_entry || !new_entry || !kubeclient::IngressEqual(*old_entry, *new_entry))) {
      c_.gate_.EntryChanged(*new_obj, old_entry, new_entry, c_.syncer_.Desired(*new_obj, nullptr));
    }
    // Why queued only now: a worker may take the key at once, and must find
    // the change counted (else it writes a route the tracker was about to
    // block: one write too many per fought route).
    c_.queue_.Add(new_obj->Key());
    if (ClaimChanged(*old_obj, *new_obj, c_.syncer_.admission_options())) {
      c_.EnqueueClaimPeers(*old_obj);
      c_.EnqueueClaimPeers(*new_obj);
    }
  }

  void OnDelete(const Ptr& last) override {
    c_.gate_.Forget(last->metadata.uid);
    c_.queue_.Add(last->Key());  // Sync sees it gone: lease.Remove
    c_.EnqueueClaimPeers(*last);
  }

 private:
  // True when `entry` may have been written for another spec of `route`:
  // its host is not the spec's, or (no spec.host) differs from ours in the
  // host alone.
  bool EntryHostFromAnotherSpec(const Route& route, const kubeclient::RouteIngress& entry) {
    if (!EntryFitsSpec(route, entry)) return true;
    const auto desired = c_.syncer_.Desired(route, nullptr);
    return desired && HostAloneDiffers(route, entry, *desired);
  }

  Controller& c_;
};

class Controller::NamespaceHandler final : public kubeclient::cache::EventHandler<Namespace> {
 public:
  explicit NamespaceHandler(Controller& c) : c_(c) {}

  void OnAdd(const Ptr& obj, bool initial_list) override {
    if (!initial_list) c_.EnqueueNamespace(obj->metadata.name);
  }
  void OnUpdate(const Ptr& old_obj, const Ptr& new_obj) override {
    if (old_obj->metadata.labels != new_obj->metadata.labels) {
      c_.EnqueueNamespace(new_obj->metadata.name);
    }
  }
  void OnDelete(const Ptr& last) override {
    c_.EnqueueNamespace(last->metadata.name);
  }

 private:
  Controller& c_;
};

Controller::Controller(StatusSyncer& syncer, const kubeclient::cache::ObjectStore<Route>& routes,
                       const kubeclient::cache::ObjectStore<Namespace>* namespaces,
                       const ShardFilter& shard, kubeclient::cache::WorkQueueInterface& queue,
                       ContentionGate& gate, const Clock& clock, Duration namespace_settle)
    : syncer_(syncer),
      routes_(routes),
      namespaces_(namespaces),
      shard_(shard),
      queue_(queue),
      gate_(gate),
      clock_(clock),
      namespace_settle_(namespace_settle),
      route_handler_(std::make_unique<RouteHandler>(*this)),
      namespace_handler_(std::make_unique<NamespaceHandler>(*this)) {}

Controller::~Controller() = default;

kubeclient::cache::EventHandler<Route>& Controller::route_handler() { return *route_handler_; }

kubeclient::cache::EventHandler<Namespace>& Controller::namespace_handler() {
  return *namespace_handler_;
}

void Controller::EnqueueClaimPeers(const Route& route, Duration delay) {
  // Why the younger closure: a route's admission depends on every older
  // route linked to it through claims (Admit replays them oldest first), so
  // a change reaches the younger routes in line, and theirs, and so on.
  for (const auto& peer : ClaimClosure(route, routes_, syncer_.admission_options(),
                                       ClaimSide::kYounger, nullptr)) {
    EnqueueAfter(peer->Key(), delay);
  }
}

void Controller::EnqueueNamespace(const std::string& ns) {
  // Why a leading-edge window, not a plain delay: an isolated change (the
  // common case) is applied at once; only changes that follow it within
  // the window wait for its end, where one reconcile sees the latest labels.
  Duration delay = Duration::zero();
  if (namespace_settle_ > Duration::zero()) {
    SteadyTime now = clock_.Now();
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = namespace_window_.begin(); it != namespace_window_.end();) {
      it = now - it->second >= namespace_settle_ ? namespace_window_.erase(it) : std::next(it);
    }
    auto [it, fresh] = namespace_window_.emplace(ns, now);
    if (!fresh) delay = it->second + namespace_settle_ - now;
  }
  // Why a full scan: namespace label changes are rare; an index by
  // namespace would cost memory on every route.
  int n = 0;
  for (const auto& route : routes_.List()) {
    if (route && route->metadata.namespace_name == ns) {
      EnqueueAfter(route->Key(), delay);
      // Why: the route enters or leaves the shard, so its host claims appear
      // or vanish for the routes of other namespaces that share the hosts.
      EnqueueClaimPeers(*route, delay);
      ++n;
    }
  }
  VLOG(2) << "namespace " << ns << " changed: re-evaluating " << n << " routes"
          << (delay > Duration::zero() ? " at the end of its settle window" : "");
}

void Controller::EnqueueAfter(const std::string& key, Duration delay) {
  if (delay > Duration::zero()) {
    queue_.AddAfter(key, delay);
  } else {
    queue_.Add(key);
  }
}

bool Controller::CachesSynced() const {
  return routes_.HasSynced() &&
         (!shard_.NeedsNamespaces() || (namespaces_ != nullptr && namespaces_->HasSynced()));
}

bool Controller::WaitForCacheSync() {
  std::unique_lock<std::mutex> lock(mu_);
  bool logged = false;
  while (!stopping_ && !CachesSynced()) {
    if (!logged) {
      VLOG(1) << "reconcile worker waiting for the caches to sync";
      logged = true;
    }
    clock_.WaitUntil(cv_, lock, clock_.Now() + kSyncPoll);
  }
  return !stopping_;
}

void Controller::Stop() {
  std::lock_guard<std::mutex> lock(mu_);
  stopping_ = true;
  cv_.notify_all();
}

bool Controller::ProcessNextItem() {
  std::string key;
  if (!queue_.Get(&key)) return false;
  CHECK(CachesSynced()) << "reconcile of " << key << " before the caches synced";
  bool entry_changed = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    entry_changed = entry_changed_.erase(key) > 0;
  }
  SyncResult result = syncer_.Sync(key, entry_changed);
  VLOG(4) << "reconciled " << key << ": " << SyncResultName(result);
  if (result == SyncResult::kContended) {
    // Why: a change blocked only briefly (another writer's value may be a
    // slightly older view) is reconciled again when the block ends, not at
    // the next resync.
    if (auto route = routes_.Get(key)) {
      const Duration again = syncer_.BlockEndsIn(*route);
      if (again > Duration::zero()) queue_.AddAfter(key, again);
    }
  }
  queue_.Forget(key);
  queue_.Done(key);
  return true;
}

size_t Controller::ReportListedEntries() {
  const std::string& name = syncer_.admission_options().router_name;
  std::vector<ContentionGate::ListedEntry> listed;
  std::vector<std::shared_ptr<const Route>> routes = routes_.List();
  syncer_.ExpectRoutes(routes.size());
  size_t settled = 0, queued = 0;
  auto reconcile = [&](const Route& route) {
    queue_.Add(route.Key());
    ++queued;
  };
  for (auto& route : routes) {
    // Our first entry and whether there are more (one decode of the text).
    std::optional<kubeclient::RouteIngress> entry;
    int ours = 0;
    for (auto& e : route->Ingress()) {
      if (e.router_name == name && ours++ == 0) entry = std::move(e);
    }
    if (!entry) {
      reconcile(*route);
      continue;
    }
    AdmissionDecision decision;
    // Why DesiredGiven: Desired() would decode status.ingress again.
    auto desired = syncer_.DesiredGiven(*route, entry, &decision);
    if (!desired) {
      reconcile(*route);
      continue;
    }
    if (kubeclient::IngressEqual(*entry, *desired)) {
      // Why settled here and not reconciled: its reconcile would decide it
      // again to the same result (~20% of a restart's CPU at 100,000
      // routes, with a queue add each). Why this is safe without watching
      // for events meanwhile: no reconcile runs before the report ends,
      // and every event queues the routes whose decision it may change
      // (as it does after the start), so a route an event touched during
      // the report is decided again after it. Why only a single entry of
      // ours: a reconcile reduces duplicates to one (a write).
      if (ours == 1) {
        syncer_.NoteUnchanged(route->Key(), decision);
        ++settled;
      } else {
        reconcile(*route);
      }
      // Why only differing entries reach the gate: on a restart every
      // status is correct, and a list of every route (about 400 bytes
      // each) was the start's largest passing allocation (40 MB at
      // 100,000 routes).
      continue;
    }
    reconcile(*route);
    listed.push_back({std::move(route), std::move(*entry), std::move(desired)});
  }
  gate_.EntriesListed(listed);
  reported_.store(true, std::memory_order_release);
  VLOG(1) << "start-up report: " << routes.size() << " routes listed, " << settled
          << " already correct, " << queued << " queued";
  return settled;
}

void Controller::RunWorker() {
  if (!WaitForCacheSync()) return;
  // Why before any reconcile (call_once blocks the other workers until it
  // is done): a worker that ran first could overwrite a fresh entry of a
  // differently configured router before the gate knew of it.
  std::call_once(listed_reported_, [this] { ReportListedEntries(); });
  while (ProcessNextItem()) {
  }
}

}  // namespace routestatus::controller
