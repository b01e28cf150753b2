#pragma once

#include <string_view>

#include "base/clock.h"
#include "controller/admission.h"
#include "kubeclient/route.h"

namespace routestatus::controller {

// Our desired status.ingress entry for an admission decision: routerName,
// host, routerCanonicalHostname, wildcardPolicy and one Admitted condition
// (status True, or False with reason and message). Rejections carry host,
// canonical hostname and wildcard policy too.
// lastTransitionTime: kept from `observed`'s Admitted condition when the
// entry is otherwise unchanged (IngressEqual: host, canonical hostname,
// wildcard policy and every condition's status, reason and message);
// any change of the entry is a transition, stamped `now` as RFC 3339 whole
// seconds (as the OpenShift router does). Pure; thread-safe.
kubeclient::RouteIngress DesiredEntry(const AdmissionDecision& decision,
                                      const AdmissionOptions& options,
                                      const kubeclient::RouteIngress* observed,
                                      SystemTime now);

// True when another writer's entry `theirs` for a route differs from the
// entry `ours` we compute for the same version of it only in what depends
// on other objects of our cache: the Admitted condition, when one side (or
// both) is rejected with HostAlreadyClaimed (host claims depend on the
// other routes). A writer with our configuration can produce such an entry
// from a cache a moment older than ours. Every other difference (host,
// canonical hostname, wildcard policy, any other condition or reason)
// depends only on the route itself, which that writer read at this very
// version (its PUT was guarded by it), and on the router's configuration:
// it cannot come from our configuration. False when they are equal. Pure.
bool DiffersOnlyInView(const kubeclient::RouteIngress& ours, const kubeclient::RouteIngress& theirs);

// True unless `entry` contradicts what `route`'s spec fixes for every
// router, whatever its configuration: the host when spec.host is set, and
// the wildcard policy when the entry names one. An entry that contradicts
// it was written for an older spec (its owner changed the route since).
// Pure.
bool EntryFitsSpec(const kubeclient::Route& route, const kubeclient::RouteIngress& entry);

// True when `entry` differs from `desired` in its host alone (same canonical
// hostname) on a route without spec.host. Such an entry is ambiguous: a
// router with another hostname template wrote it, or the route's spec.host
// was cleared (or changed and changed back) since it was written. Pure.
bool HostAloneDiffers(const kubeclient::Route& route, const kubeclient::RouteIngress& entry,
                      const kubeclient::RouteIngress& desired);

// The newest lastTransitionTime of any condition of `entry` (seconds since
// the epoch), or nullopt when none parses.
std::optional<int64_t> NewestConditionTime(const kubeclient::RouteIngress& entry);

}  // namespace routestatus::controller
