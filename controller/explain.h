#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/clock.h"
#include "controller/admission.h"
#include "controller/route_decision.h"
#include "controller/shard.h"
#include "kubeclient/cache/store.h"
#include "kubeclient/labels.h"
#include "kubeclient/route.h"

namespace routestatus::controller {

// How our stored entry compares with the one a replica would write.
enum class EntryState {
  kUpToDate,  // "up-to-date": stored == desired (IngressEqual); nothing to write
  kDiffers,   // "differs": a replica would PUT the desired entry
  kMissing,   // "no-entry": in shard, no entry of ours: a replica would add it
  kExtra,     // "remove": outside the shard with an entry of ours: a replica removes it
  kNone,      // "none": outside the shard, no entry of ours: nothing to do
};
const char* EntryStateName(EntryState state);

// One field of our entry that a write would change. Value type.
struct FieldDifference {
  std::string field;    // "host", "conditions[Admitted].reason", ...
  std::string stored;   // "" when absent
  std::string desired;  // "" when absent
};

// Everything `route-status-controller explain` reports for one route and one
// router configuration. Built by ExplainRoute from the same decision the
// status path takes (DecideRoute); rendered by ExplanationText /
// ExplanationJson. Value type.
struct Explanation {
  std::shared_ptr<const kubeclient::Route> route;
  AdmissionOptions admission;  // this router's configuration
  ShardOptions shard_options;
  // The labels of the route's namespace as listed; nullopt when the
  // namespace was not listed (no namespace selector, or not found).
  std::optional<kubeclient::Labels> namespace_labels;
  // Its peers: the older routes Admit weighed, then the younger ones linked
  // through claims (ClaimClosure), sorted oldest first (IsOlder).
  RouteDecision decision;
  // The route that holds the claimed host (or subdomain): the blocker of a
  // HostAlreadyClaimed rejection, the route itself when admitted; null when
  // no claim was weighed (outside the shard, or rejected before the claim
  // check).
  std::shared_ptr<const kubeclient::Route> holder;
  // True when holder and route were created in the same second (IsOlder then
  // compares UIDs).
  bool holder_same_second = false;
  int64_t now_unix = 0;  // the wall time the decision was taken at

  // Our entry as stored now (the first one with our routerName), how many
  // entries carry our routerName, and the routerNames of the others.
  std::optional<kubeclient::RouteIngress> stored;
  int entries_of_ours = 0;
  std::vector<std::string> other_routers;
  EntryState state = EntryState::kNone;
  std::vector<FieldDifference> differences;  // kDiffers only
};

// Explains what a replica with `admission` and `shard` would decide for
// `route` (a route from `routes`, the route cache carrying
// kRoutesByHostIndex; `namespaces` may be null without a namespace
// selector) at wall time `now`. Pure apart from reading the stores.
Explanation ExplainRoute(std::shared_ptr<const kubeclient::Route> route,
                         const kubeclient::cache::ObjectStore<kubeclient::Route>& routes,
                         const kubeclient::cache::ObjectStore<kubeclient::Namespace>* namespaces,
                         const ShardFilter& shard, const AdmissionOptions& admission,
                         SystemTime now);

// "4d3h", "12m5s", "40s": a duration in seconds the way kubectl prints ages
// (two units at most; negative as "0s").
std::string FormatAge(int64_t seconds);

// The explanation for a person (several lines, ending in '\n').
std::string ExplanationText(const Explanation& e);

// The explanation for scripts; the shape is documented in docs/explain.md
// ("apiVersion": "routestatus.explain/v1") and only grows.
nlohmann::json ExplanationJson(const Explanation& e);

}  // namespace routestatus::controller
