#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "base/clock.h"
#include "controller/contention_gate.h"
#include "controller/shard.h"
#include "controller/status_syncer.h"
#include "kubeclient/cache/store.h"
#include "kubeclient/cache/work_queue.h"
#include "kubeclient/route.h"

namespace routestatus::controller {

// Glue between the informers and the status path. The event handlers only
// enqueue keys (and feed the contention tracker); workers reconcile keys from
// the cache by calling StatusSyncer::Sync (level-triggered).
//
// Fan-out: a route change that moves a host claim (host, path, wildcard
// policy, TLS termination, labels, creation) enqueues the younger routes
// linked to the old or new route through claims (ClaimClosure), so the
// next route in line is admitted without a resync;
// namespace label changes enqueue that namespace's routes and their claim
// peers.
//
// Thread-safe: handlers run on the informer threads, any number of workers
// may run RunWorker (they start reconciling once the caches have synced).
// References must outlive the controller.
class Controller {
 public:
  // How often a namespace's routes are re-evaluated at most while its labels
  // keep changing (docs/design.md section 5): the first change is queued at
  // once, later ones within this window at its end, so a flapping label
  // costs one write per route per window instead of one per flip.
  static constexpr Duration kDefaultNamespaceSettle = std::chrono::seconds(1);

  // `namespaces` may be null when the shard has no namespace selector.
  // `clock` paces the wait for the caches (WaitForCacheSync) and the
  // namespace settle window (0 = every change at once).
  Controller(StatusSyncer& syncer, const kubeclient::cache::ObjectStore<kubeclient::Route>& routes,
             const kubeclient::cache::ObjectStore<kubeclient::Namespace>* namespaces,
             const ShardFilter& shard, kubeclient::cache::WorkQueueInterface& queue,
             ContentionGate& gate, const Clock& clock,
             Duration namespace_settle = kDefaultNamespaceSettle);
  ~Controller();

  // Register these with the route and namespace informers.
  kubeclient::cache::EventHandler<kubeclient::Route>& route_handler();
  kubeclient::cache::EventHandler<kubeclient::Namespace>& namespace_handler();

  // True once the route cache (and the namespace cache, when the shard has a
  // namespace selector) holds its first full list.
  bool CachesSynced() const;
  // Blocks until CachesSynced() (true) or Stop() (false), checking every
  // kSyncPoll of Clock time, as client-go's WaitForCacheSync does. Why
  // workers wait: an unsynced namespace cache would make routes look out of
  // shard and remove our entries; and a worker that requeued each key until
  // then would spin on every route while a cache cannot sync (e.g. a 403).
  bool WaitForCacheSync();
  // Takes one key from the queue and reconciles it. False once the queue is
  // shut down. REQUIRES: CachesSynced() (RunWorker waits for it).
  bool ProcessNextItem();
  // WaitForCacheSync(), then (once per controller, before any worker
  // reconciles) ReportListedEntries(), then ProcessNextItem until the queue
  // shuts down.
  void RunWorker();
  // The start-up report: decides every cached route once. A route whose
  // single entry of ours is already desired is settled here
  // (StatusSyncer::NoteUnchanged: its admission recorded, no reconcile);
  // every other route is queued, and the gate is handed the entries of
  // ours that differ from what we compute (ContentionGate::EntriesListed).
  // The first list's OnAdd queues nothing: this report stands for those
  // routes' first reconcile. Returns the number of routes settled.
  // REQUIRES: CachesSynced(), and no reconcile yet (RunWorker).
  size_t ReportListedEntries();
  // Whether the start-up report has run. Why it matters: until then a
  // controller whose caches have synced has an empty queue and still its
  // first reconciles to do (the first list queues nothing), so "synced and
  // the queue idle" alone does not mean "done" (the simulator's quiet
  // check). Any thread.
  bool StartupReported() const { return reported_.load(std::memory_order_acquire); }
  // Makes WaitForCacheSync return false (shutdown); shut the queue down too.
  void Stop();

  static constexpr Duration kSyncPoll = std::chrono::milliseconds(100);

 private:
  class RouteHandler;
  class NamespaceHandler;

  void EnqueueClaimPeers(const kubeclient::Route& route, Duration delay = Duration::zero());
  void EnqueueNamespace(const std::string& ns);
  void EnqueueAfter(const std::string& key, Duration delay);

  StatusSyncer& syncer_;
  const kubeclient::cache::ObjectStore<kubeclient::Route>& routes_;
  const kubeclient::cache::ObjectStore<kubeclient::Namespace>* namespaces_;
  const ShardFilter& shard_;
  kubeclient::cache::WorkQueueInterface& queue_;
  ContentionGate& gate_;
  const Clock& clock_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;  // GUARDED_BY(mu_)
  // Keys whose entry of ours a watch update changed since their last
  // reconcile (see StatusSyncer::Sync).
  std::unordered_set<std::string> entry_changed_;  // GUARDED_BY(mu_)
  const Duration namespace_settle_;
  // Namespace -> start of its current settle window. GUARDED_BY(mu_)
  std::unordered_map<std::string, SteadyTime> namespace_window_;
  std::once_flag listed_reported_;  // ReportListedEntries ran
  std::atomic<bool> reported_{false};  // StartupReported()
  std::unique_ptr<RouteHandler> route_handler_;
  std::unique_ptr<NamespaceHandler> namespace_handler_;
};

}  // namespace routestatus::controller
