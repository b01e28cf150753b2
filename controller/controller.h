#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <unordered_set>

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
// policy, labels, creation) enqueues every route found under the old or new
// HostClaimPeerKeys (for a wildcard route: the plain routes in its
// subdomain), so the next route in line is admitted without a resync;
// namespace label changes enqueue that namespace's routes.
//
// Thread-safe: handlers run on the informer threads, any number of workers
// may call ProcessNextItem. References must outlive the controller.
class Controller {
 public:
  // `namespaces` may be null when the shard has no namespace selector.
  Controller(StatusSyncer& syncer, const kubeclient::cache::ObjectStore<kubeclient::Route>& routes,
             const kubeclient::cache::ObjectStore<kubeclient::Namespace>* namespaces,
             const ShardFilter& shard, kubeclient::cache::WorkQueueInterface& queue,
             ContentionGate& gate);
  ~Controller();

  // Register these with the route and namespace informers.
  kubeclient::cache::EventHandler<kubeclient::Route>& route_handler();
  kubeclient::cache::EventHandler<kubeclient::Namespace>& namespace_handler();

  // Takes one key from the queue and reconciles it. False once the queue is
  // shut down. Until the caches have synced the key is re-added after
  // kNotSyncedDelay (Why: an unsynced namespace cache would make routes look
  // out of shard and remove our entries).
  bool ProcessNextItem();
  // Calls ProcessNextItem until the queue shuts down.
  void RunWorker();

  static constexpr kubeclient::Duration kNotSyncedDelay = std::chrono::milliseconds(200);

 private:
  class RouteHandler;
  class NamespaceHandler;

  void EnqueueClaimPeers(const kubeclient::Route& route);
  void EnqueueNamespace(const std::string& ns);

  StatusSyncer& syncer_;
  const kubeclient::cache::ObjectStore<kubeclient::Route>& routes_;
  const kubeclient::cache::ObjectStore<kubeclient::Namespace>* namespaces_;
  const ShardFilter& shard_;
  kubeclient::cache::WorkQueueInterface& queue_;
  ContentionGate& gate_;
  std::mutex mu_;
  // Keys whose entry of ours a watch update changed since their last
  // reconcile (see StatusSyncer::Sync).
  std::unordered_set<std::string> entry_changed_;  // GUARDED_BY(mu_)
  std::unique_ptr<RouteHandler> route_handler_;
  std::unique_ptr<NamespaceHandler> namespace_handler_;
};

}  // namespace routestatus::controller
