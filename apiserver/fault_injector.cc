#include "apiserver/fault_injector.h"

#include <algorithm>
#include <iterator>

namespace routestatus::apiserver {

std::optional<FaultRule> FaultRule::FromJson(const nlohmann::json& j, std::string* error) {
  if (!j.is_object()) {
    *error = "a fault rule must be a JSON object";
    return std::nullopt;
  }
  FaultRule rule;
  try {
    rule.verb = j.value("verb", "");
    rule.resource = j.value("resource", "");
    rule.subresource = j.value("subresource", "");
    rule.ns = j.value("namespace", "");
    rule.count = j.value("count", static_cast<int64_t>(-1));
    rule.fraction = j.value("fraction", 1.0);
    rule.code = j.value("code", 500);
    rule.retry_after_seconds = j.value("retryAfterSeconds", 1);
    rule.latency = std::chrono::milliseconds(j.value("latencyMs", static_cast<int64_t>(0)));
  } catch (const nlohmann::json::exception& e) {
    *error = std::string("bad fault rule: ") + e.what();
    return std::nullopt;
  }
  for (char& c : rule.verb) c = static_cast<char>(toupper(static_cast<unsigned char>(c)));
  static const char* const kVerbs[] = {"",    "GET",   "LIST",   "WATCH", "POST",
                                       "PUT", "PATCH", "DELETE", "APPLY"};
  if (std::find(std::begin(kVerbs), std::end(kVerbs), rule.verb) == std::end(kVerbs)) {
    *error = "verb \"" + rule.verb +
             "\" is not an apiserver_request_total verb: use POST (create), PUT (update, "
             "status included), PATCH, DELETE (deletecollection too), APPLY, GET, LIST or WATCH";
    return std::nullopt;
  }
  if (rule.code != 0 && (rule.code < 400 || rule.code > 599)) {
    *error = "code must be 0 or 400..599";
    return std::nullopt;
  }
  if (rule.fraction < 0 || rule.fraction > 1) {
    *error = "fraction must be within [0, 1]";
    return std::nullopt;
  }
  return rule;
}

nlohmann::json FaultRule::ToJson() const {
  return {{"verb", verb},       {"resource", resource},
          {"subresource", subresource}, {"namespace", ns},
          {"count", count},     {"fraction", fraction},
          {"code", code},       {"retryAfterSeconds", retry_after_seconds},
          {"latencyMs", latency.count()}};
}

void FaultInjector::Add(FaultRule rule) {
  std::lock_guard<std::mutex> lock(mu_);
  rules_.push_back(std::move(rule));
}

void FaultInjector::Clear() {
  std::lock_guard<std::mutex> lock(mu_);
  rules_.clear();
  never_read_ = 0;
}

void FaultInjector::NeverReadConnections(int count, std::chrono::milliseconds hold) {
  std::lock_guard<std::mutex> lock(mu_);
  never_read_ = count;
  never_read_hold_ = hold;
}

std::chrono::milliseconds FaultInjector::TakeNeverRead() {
  std::lock_guard<std::mutex> lock(mu_);
  if (never_read_ <= 0) return std::chrono::milliseconds(0);
  --never_read_;
  return never_read_hold_;
}

std::vector<FaultRule> FaultInjector::Rules() const {
  std::lock_guard<std::mutex> lock(mu_);
  return rules_;
}

FaultDecision FaultInjector::Decide(const std::string& verb, const std::string& resource,
                                    const std::string& subresource, const std::string& ns) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = rules_.begin(); it != rules_.end(); ++it) {
    FaultRule& r = *it;
    if (!r.verb.empty() && r.verb != verb) continue;
    if (!r.resource.empty() && r.resource != resource) continue;
    if (r.subresource == "-" ? !subresource.empty()
                             : (!r.subresource.empty() && r.subresource != subresource)) {
      continue;
    }
    if (!r.ns.empty() && r.ns != ns) continue;
    if (r.fraction < 1.0 && std::uniform_real_distribution<double>(0, 1)(rng_) >= r.fraction) {
      continue;
    }
    FaultDecision d{r.code, r.retry_after_seconds, r.latency};
    if (r.count > 0 && --r.count == 0) rules_.erase(it);
    return d;
  }
  return {};
}

}  // namespace routestatus::apiserver
