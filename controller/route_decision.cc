#include "controller/route_decision.h"

#include "controller/claim_closure.h"
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
  out.peers = ClaimClosure(route, routes, admission, ClaimSide::kOlder,
                           [&shard](const Route& peer) { return shard.InShard(peer); });
  out.admission = Admit(route, out.peers, admission);
  out.entry = DesiredEntry(out.admission, admission, observed ? &*observed : nullptr, now);
  return out;
}

}  // namespace routestatus::controller
