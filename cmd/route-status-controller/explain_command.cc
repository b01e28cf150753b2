#include "cmd/route-status-controller/explain_command.h"

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>

#include <glog/logging.h>

#include "controller/explain.h"
#include "controller/shard.h"
#include "controller/status_syncer.h"
#include "kubeclient/cache/informer.h"

namespace routestatus::cmd {
namespace {

constexpr auto kSyncPoll = std::chrono::milliseconds(50);

// Polls `synced` every kSyncPoll of Clock time until it holds (true) or
// `timeout` passes (false).
bool WaitUntilSynced(const Clock& clock, std::chrono::milliseconds timeout,
                     const std::function<bool()>& synced) {
  std::mutex mu;
  std::condition_variable cv;  // Why: WaitUntil sleeps on one; nothing else notifies it
  std::unique_lock<std::mutex> lock(mu);
  const SteadyTime deadline = clock.Now() + timeout;
  while (!synced()) {
    if (clock.Now() >= deadline) return false;
    clock.WaitUntil(cv, lock, std::min(deadline, clock.Now() + kSyncPoll));
  }
  return true;
}

}  // namespace

int RunExplain(const ExplainRequest& request, const ComponentOptions& components,
               kubeclient::KubeClient& client, const Clock& clock, const std::string& server,
               std::ostream& out, std::ostream& err) {
  const std::string key = request.namespace_name + "/" + request.name;
  // Why a GET first: it answers "not found" and "unreachable" at once; the
  // informers below retry such failures for ever, as a replica must.
  auto got = client.Get(kubeclient::RoutesResource(), request.namespace_name, request.name);
  if (!got.ok()) {
    if (got.status().code() == StatusCode::kNotFound) {
      err << "route-status-controller: route " << key << " not found\n";
      return kExplainNotFound;
    }
    err << "route-status-controller: cannot read route " << key << " from the API server "
        << server << ": " << got.status().ToString() << "\n";
    return kExplainApiError;
  }

  // The replica's own list path: the same informers, options and index.
  kubeclient::cache::RouteInformer routes(client, clock, components.route_informer);
  routes.AddIndex(controller::kRoutesByHostIndex,
                  controller::RoutesByHostIndexFunc(components.admission));
  std::unique_ptr<kubeclient::cache::NamespaceInformer> namespaces;
  if (!components.shard.namespace_selector.Empty()) {
    namespaces = std::make_unique<kubeclient::cache::NamespaceInformer>(
        client, clock, components.namespace_informer);
    namespaces->Start();
  }
  routes.Start();
  const bool synced = WaitUntilSynced(clock, request.list_timeout, [&] {
    return routes.HasSynced() && (!namespaces || namespaces->HasSynced());
  });
  routes.Stop();
  if (namespaces) namespaces->Stop();
  if (!synced) {
    err << "route-status-controller: could not list "
        << (routes.HasSynced() ? "namespaces" : "routes") << " from the API server " << server
        << " within " << request.list_timeout.count() / 1000
        << " s (see the log above for the server's answers)\n";
    return kExplainApiError;
  }
  auto route = routes.Get(key);
  if (!route) {
    err << "route-status-controller: route " << key << " not found (deleted while listing)\n";
    return kExplainNotFound;
  }
  controller::ShardFilter shard(components.shard, namespaces.get());
  controller::Explanation e = controller::ExplainRoute(route, routes, namespaces.get(), shard,
                                                       components.admission, clock.WallNow());
  if (request.json) {
    out << controller::ExplanationJson(e).dump(2) << "\n";
  } else {
    out << controller::ExplanationText(e);
  }
  out.flush();
  return kExplainDecided;
}

}  // namespace routestatus::cmd
