#include "controller/desired_status.h"

#include <algorithm>
#include <chrono>

namespace routestatus::controller {

using kubeclient::RouteCondition;
using kubeclient::RouteIngress;

RouteIngress DesiredEntry(const AdmissionDecision& decision, const AdmissionOptions& options,
                          const RouteIngress* observed, kubeclient::SystemTime now) {
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
  if (previous != nullptr && previous->status == cond.status && previous->reason == cond.reason &&
      previous->message == cond.message && !previous->last_transition_time.empty()) {
    cond.last_transition_time = previous->last_transition_time;
  } else {
    auto secs = std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
    cond.last_transition_time = kubeclient::FormatRfc3339(secs);
  }
  entry.conditions.push_back(std::move(cond));
  return entry;
}

std::optional<int64_t> NewestConditionTime(const RouteIngress& entry) {
  std::optional<int64_t> newest;
  for (const auto& c : entry.conditions) {
    auto t = kubeclient::ParseRfc3339(c.last_transition_time);
    if (t && (!newest || *t > *newest)) newest = t;
  }
  return newest;
}

bool IsNewestEntry(const kubeclient::Route& route, std::string_view router_name) {
  const std::vector<RouteIngress> entries = route.Ingress();
  auto ours = std::find_if(entries.begin(), entries.end(), [&](const RouteIngress& e) {
    return e.router_name == router_name;
  });
  if (ours == entries.end()) return false;
  auto our_time = NewestConditionTime(*ours);
  if (!our_time) return false;
  for (const auto& entry : entries) {
    if (entry.router_name == router_name) continue;
    auto t = NewestConditionTime(entry);
    if (t && *t > *our_time) return false;
  }
  return true;
}

}  // namespace routestatus::controller
