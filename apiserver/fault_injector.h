#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace routestatus::apiserver {

// One fault rule. Empty match fields match anything; `verb` names requests
// as apiserver_request_total labels them (a status update is PUT, a create
// POST, a deletecollection DELETE). Applies to the next
// `count` matching requests (-1 = unlimited) and, of those, a `fraction`
// (1.0 = all). `code` 0 means latency only.
struct FaultRule {
  std::string verb;         // GET LIST WATCH POST PUT PATCH DELETE APPLY
  std::string resource;     // "routes"
  std::string subresource;  // "status"; "-" = only the main resource
  std::string ns;
  int64_t count = -1;
  double fraction = 1.0;
  int code = 500;           // 500, 503, 429 (or any 4xx/5xx), 0 = none
  int retry_after_seconds = 1;  // for 429/503
  std::chrono::milliseconds latency{0};

  // From JSON {"verb":..,"resource":..,"subresource":..,"namespace":..,
  // "count":..,"fraction":..,"code":..,"retryAfterSeconds":..,"latencyMs":..}.
  static std::optional<FaultRule> FromJson(const nlohmann::json& j, std::string* error);
  nlohmann::json ToJson() const;
};

// What to do with one request.
struct FaultDecision {
  int code = 0;  // 0 = serve normally
  int retry_after_seconds = 0;
  std::chrono::milliseconds latency{0};
};

// The active fault rules, and the connection fault "never read": the next
// accepted connections are held without reading a byte, as by a server
// that accepted them and hung. Thread-safe.
class FaultInjector {
 public:
  explicit FaultInjector(uint64_t seed = 1) : rng_(seed) {}
  void Add(FaultRule rule);
  // Removes every rule and pending never-read connection.
  void Clear();
  // The next `count` accepted connections are each held unread for `hold`.
  void NeverReadConnections(int count, std::chrono::milliseconds hold);
  // For a newly accepted connection: how long to hold it unread (0 = serve).
  std::chrono::milliseconds TakeNeverRead();
  std::vector<FaultRule> Rules() const;
  // Consumes the first matching rule (its count) and returns its decision.
  FaultDecision Decide(const std::string& verb, const std::string& resource,
                       const std::string& subresource, const std::string& ns);

 private:
  mutable std::mutex mu_;
  std::vector<FaultRule> rules_;  // guarded by mu_
  int never_read_ = 0;            // guarded by mu_
  std::chrono::milliseconds never_read_hold_{0};  // guarded by mu_
  std::mt19937_64 rng_;           // guarded by mu_
};

}  // namespace routestatus::apiserver
