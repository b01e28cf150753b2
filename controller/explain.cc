#include "controller/explain.h"

#include <algorithm>
#include <chrono>

#include "controller/claim_closure.h"

namespace routestatus::controller {

using kubeclient::Route;
using kubeclient::RouteCondition;
using kubeclient::RouteIngress;

namespace {

const RouteCondition* FindCondition(const RouteIngress& entry, const std::string& type) {
  for (const auto& c : entry.conditions) {
    if (c.type == type) return &c;
  }
  return nullptr;
}

// The fields of `stored` that `desired` changes, as IngressEqual compares
// them (lastTransitionTime is not compared: it follows the other fields).
std::vector<FieldDifference> Differences(const RouteIngress& stored, const RouteIngress& desired) {
  std::vector<FieldDifference> out;
  auto field = [&out](const std::string& name, const std::string& a, const std::string& b) {
    if (a != b) out.push_back({name, a, b});
  };
  field("host", stored.host, desired.host);
  field("routerCanonicalHostname", stored.router_canonical_hostname,
        desired.router_canonical_hostname);
  field("wildcardPolicy", stored.wildcard_policy, desired.wildcard_policy);
  std::vector<std::string> types;
  for (const auto* entry : {&stored, &desired}) {
    for (const auto& c : entry->conditions) {
      if (std::find(types.begin(), types.end(), c.type) == types.end()) types.push_back(c.type);
    }
  }
  for (const std::string& type : types) {
    const std::string prefix = "conditions[" + type + "]";
    const RouteCondition* a = FindCondition(stored, type);
    const RouteCondition* b = FindCondition(desired, type);
    if (a == nullptr || b == nullptr) {
      field(prefix, a ? "present" : "", b ? "present" : "");
      continue;
    }
    field(prefix + ".status", a->status, b->status);
    field(prefix + ".reason", a->reason, b->reason);
    field(prefix + ".message", a->message, b->message);
  }
  if (out.empty() && stored.conditions.size() != desired.conditions.size()) {
    // Why: repeated condition types differ only in their count.
    field("conditions", std::to_string(stored.conditions.size()) + " conditions",
          std::to_string(desired.conditions.size()) + " conditions");
  }
  return out;
}

}  // namespace

const char* EntryStateName(EntryState state) {
  switch (state) {
    case EntryState::kUpToDate: return "up-to-date";
    case EntryState::kDiffers: return "differs";
    case EntryState::kMissing: return "no-entry";
    case EntryState::kExtra: return "remove";
    case EntryState::kNone: return "none";
  }
  return "unknown";
}

std::string FormatAge(int64_t seconds) {
  struct Unit {
    int64_t size;
    const char* name;
  };
  static constexpr Unit kUnits[] = {{86400, "d"}, {3600, "h"}, {60, "m"}, {1, "s"}};
  if (seconds < 0) seconds = 0;
  size_t i = 0;
  while (i + 1 < std::size(kUnits) && seconds < kUnits[i].size) ++i;
  std::string out = std::to_string(seconds / kUnits[i].size) + kUnits[i].name;
  if (i + 1 < std::size(kUnits)) {
    const int64_t next = seconds % kUnits[i].size / kUnits[i + 1].size;
    if (next > 0) out += std::to_string(next) + kUnits[i + 1].name;
  }
  return out;
}

Explanation ExplainRoute(std::shared_ptr<const Route> route,
                         const kubeclient::cache::ObjectStore<Route>& routes,
                         const kubeclient::cache::ObjectStore<kubeclient::Namespace>* namespaces,
                         const ShardFilter& shard, const AdmissionOptions& admission,
                         SystemTime now) {
  Explanation e;
  e.route = route;
  e.admission = admission;
  e.shard_options = shard.options();
  e.now_unix = std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
  if (namespaces != nullptr) {
    if (auto ns = namespaces->Get(route->metadata.namespace_name)) {
      e.namespace_labels = ns->metadata.labels;
    }
  }
  for (const RouteIngress& entry : route->Ingress()) {
    if (entry.router_name == admission.router_name) {
      if (e.entries_of_ours++ == 0) e.stored = entry;
    } else {
      e.other_routers.push_back(entry.router_name);
    }
  }
  // Why the stored entry as `observed`: it keeps lastTransitionTime when
  // nothing changes, exactly as the status path computes it.
  e.decision = DecideRoute(*route, e.stored, routes, shard, admission, now);
  // Why the younger ones too: they are the routes in line behind this one
  // (a change of it re-decides them); Admit did not need them.
  for (auto& younger : ClaimClosure(*route, routes, admission, ClaimSide::kYounger,
                                    [&shard](const Route& peer) { return shard.InShard(peer); })) {
    e.decision.peers.push_back(std::move(younger));
  }
  // Why sorted: people read the list as "who came first"; the order does
  // not matter to the decision (it is taken already).
  std::sort(e.decision.peers.begin(), e.decision.peers.end(),
            [](const auto& a, const auto& b) { return IsOlder(*a, *b); });
  const AdmissionDecision& d = e.decision.admission;
  if (e.decision.shard == ShardRule::kInShard) {
    if (d.blocker) {
      e.holder = d.blocker;
    } else if (d.admitted) {
      e.holder = route;
    }
  }
  if (e.holder && e.holder != route) {
    e.holder_same_second = e.holder->metadata.creation_unix == route->metadata.creation_unix;
  }
  if (!e.decision.entry) {
    e.state = e.stored ? EntryState::kExtra : EntryState::kNone;
  } else if (!e.stored) {
    e.state = EntryState::kMissing;
  } else if (kubeclient::IngressEqual(*e.stored, *e.decision.entry)) {
    e.state = EntryState::kUpToDate;
  } else {
    e.state = EntryState::kDiffers;
    e.differences = Differences(*e.stored, *e.decision.entry);
  }
  return e;
}

}  // namespace routestatus::controller
