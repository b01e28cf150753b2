#include "controller/route_decision.h"

#include "controller/desired_status.h"
#include "controller/status_syncer.h"

namespace routestatus::controller {

using kubeclient::Route;

RouteDecision DecideRoute(const Route& route,
                          const std::optional<kubeclient::RouteIngress>& observed,
                          const kubeclient::cache::ObjectStore<Route>& routes,
                          const ShardFilter& shard, const AdmissionOptions& admission,
                          SystemTime now) {
  RouteDecision out;
  out.shard = shard.Check(route);
  if (out.shard != ShardRule::kInShard) return out;
  for (const auto& key : HostClaimPeerKeys(route, admission)) {
    for (auto& peer : routes.ByIndex(kRoutesByHostIndex, key)) {
      if (peer && peer->metadata.uid != route.metadata.uid && shard.InShard(*peer)) {
        out.peers.push_back(std::move(peer));
      }
    }
  }
  out.admission = Admit(route, out.peers, admission);
  out.entry = DesiredEntry(out.admission, admission, observed ? &*observed : nullptr, now);
  return out;
}

}  // namespace routestatus::controller
