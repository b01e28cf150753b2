#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "base/clock.h"
#include "controller/admission.h"
#include "controller/shard.h"
#include "kubeclient/cache/store.h"
#include "kubeclient/route.h"

namespace routestatus::controller {

// What a replica decides for one route from its caches. Value type.
struct RouteDecision {
  // Why the route is (not) in our shard; every field below is empty when it
  // is not.
  ShardRule shard = ShardRule::kInShard;
  // The older in-shard routes linked to the route through claims
  // (ClaimClosure; the route itself left out): what Admit weighed.
  std::vector<std::shared_ptr<const kubeclient::Route>> peers;
  AdmissionDecision admission;
  // Our desired status.ingress entry (DesiredEntry); nullopt when the route
  // is outside our shard (we must have no entry there).
  std::optional<kubeclient::RouteIngress> entry;
};

// The one decision of the status path (StatusSyncer) and of `explain`:
// shard membership, then Admit against the older in-shard claim closure read from
// `routes` (which must carry kRoutesByHostIndex built with `admission`),
// then DesiredEntry with `observed` (our entry as stored now) and `now`.
// No side effects; thread-safe when `routes` and `shard` are.
RouteDecision DecideRoute(const kubeclient::Route& route,
                          const std::optional<kubeclient::RouteIngress>& observed,
                          const kubeclient::cache::ObjectStore<kubeclient::Route>& routes,
                          const ShardFilter& shard, const AdmissionOptions& admission,
                          SystemTime now);

}  // namespace routestatus::controller
