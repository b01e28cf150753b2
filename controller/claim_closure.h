#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "controller/admission.h"
#include "kubeclient/cache/store.h"
#include "kubeclient/route.h"

namespace routestatus::controller {

// Which side of a route ClaimClosure walks.
enum class ClaimSide {
  kOlder,    // what the route's admission depends on (Admit's peers)
  kYounger,  // whose admission may change when the route changes
};

// The routes linked to `route` through overlapping claims, one step at a
// time towards `side`: the routes under HostClaimPeerKeys(route) in
// `routes`' kRoutesByHostIndex that are older (younger) than it, then
// theirs that are older (younger) than them, and so on. Each route once,
// `route` itself left out; routes for which `keep` is false are neither
// returned nor walked through (the shard filter). Thread-safe when
// `routes` is.
std::vector<std::shared_ptr<const kubeclient::Route>> ClaimClosure(
    const kubeclient::Route& route, const kubeclient::cache::ObjectStore<kubeclient::Route>& routes,
    const AdmissionOptions& options, ClaimSide side,
    const std::function<bool(const kubeclient::Route&)>& keep);

}  // namespace routestatus::controller
