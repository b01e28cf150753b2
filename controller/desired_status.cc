#include "controller/desired_status.h"

#include <algorithm>
#include <chrono>

namespace routestatus::controller {

using kubeclient::RouteCondition;
using kubeclient::RouteIngress;

RouteIngress DesiredEntry(const AdmissionDecision& decision, const AdmissionOptions& options,
                          const RouteIngress* observed, SystemTime now) {
  RouteIngress entry;
  entry.router_name = options.router_name;
  entry.host = decision.host;
  entry.router_canonical_hostname = options.canonical_hostname;
  entry.wildcard_policy = decision.wildcard_policy;
  RouteCondition cond;
  cond.type = kAdmittedCondition;
  cond.status = decision.admitted ? "True" : "False";
  if (!decision.admitted) {
    cond.reason = decision.reason;
    cond.message = decision.message;
  }
  const RouteCondition* previous = nullptr;
  if (observed != nullptr) {
    for (const auto& c : observed->conditions) {
      if (c.type == kAdmittedCondition) previous = &c;
    }
  }
  if (previous != nullptr && !previous->last_transition_time.empty()) {
    // Why compare the whole entry: any change of it (host, canonical
    // hostname, wildcard policy, the condition, a dropped condition) is a
    // transition, as in the OpenShift router; people read the time as "when
    // did this entry change".
    cond.last_transition_time = previous->last_transition_time;
    entry.conditions.push_back(cond);
    if (kubeclient::IngressEqual(entry, *observed)) return entry;
    entry.conditions.clear();
  }
  auto secs = std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
  cond.last_transition_time = kubeclient::FormatRfc3339(secs);
  entry.conditions.push_back(std::move(cond));
  return entry;
}

bool EntryFitsSpec(const kubeclient::Route& route, const kubeclient::RouteIngress& entry) {
  const std::string_view policy =
      route.spec.wildcard_policy.empty() ? std::string_view("None") : route.spec.wildcard_policy.view();
  if (!route.spec.host.empty() && entry.host != route.spec.host) return false;
  return entry.wildcard_policy.empty() || entry.wildcard_policy == policy;
}

bool HostAloneDiffers(const kubeclient::Route& route, const RouteIngress& entry,
                      const RouteIngress& desired) {
  return route.spec.host.empty() && entry.host != desired.host &&
         entry.router_canonical_hostname == desired.router_canonical_hostname;
}

bool DiffersOnlyInView(const RouteIngress& ours, const RouteIngress& theirs) {
  if (kubeclient::IngressEqual(ours, theirs)) return false;
  if (ours.router_name != theirs.router_name || ours.host != theirs.host ||
      ours.router_canonical_hostname != theirs.router_canonical_hostname ||
      ours.wildcard_policy != theirs.wildcard_policy || ours.conditions.size() != 1 ||
      theirs.conditions.size() != 1) {
    return false;
  }
  const RouteCondition& a = ours.conditions[0];
  const RouteCondition& b = theirs.conditions[0];
  auto claim_decided = [](const RouteCondition& c) {
    return c.status == "True" || (c.status == "False" && c.reason == kReasonHostAlreadyClaimed);
  };
  return a.type == kAdmittedCondition && b.type == kAdmittedCondition && claim_decided(a) &&
         claim_decided(b) &&
         (a.reason == kReasonHostAlreadyClaimed || b.reason == kReasonHostAlreadyClaimed);
}

std::optional<int64_t> NewestConditionTime(const RouteIngress& entry) {
  std::optional<int64_t> newest;
  for (const auto& c : entry.conditions) {
    auto t = kubeclient::ParseRfc3339(c.last_transition_time);
    if (t && (!newest || *t > *newest)) newest = t;
  }
  return newest;
}

}  // namespace routestatus::controller
