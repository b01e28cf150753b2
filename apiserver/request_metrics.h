#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

namespace routestatus::apiserver {

// The labels of kube-apiserver's apiserver_request_total counter (see
// MetricLabelsFor in request_info.h for how verb and scope are chosen).
struct RequestLabels {
  std::string verb;         // POST PUT PATCH DELETE APPLY GET LIST WATCH
  std::string dry_run;      // "", "All" (dryRun=All in the query) or "invalid"
  std::string group;
  std::string version;
  std::string resource;
  std::string subresource;
  std::string scope;        // resource | namespace | cluster | "" (non-resource)
  std::string component = "apiserver";
  std::string code;         // "200", "409", ...
  // OpenShift's kube-apiserver label (see SystemClient in request_info.h).
  std::string system_client;

  auto Tie() const {
    return std::tie(verb, dry_run, group, version, resource, subresource, scope, component, code,
                    system_client);
  }
  bool operator<(const RequestLabels& o) const { return Tie() < o.Tie(); }
};

// Counts requests the way kube-apiserver's apiserver_request_total does and
// renders them in the Prometheus text format. Thread-safe.
class RequestMetrics {
 public:
  void Record(const RequestLabels& labels);
  // Sum over every series matching the given values ("" / -1 = any; for
  // subresource pass "-" to require an empty one).
  uint64_t Count(const std::string& verb, const std::string& resource,
                 const std::string& subresource, int code, const std::string& scope = "") const;
  std::string Exposition() const;

 private:
  mutable std::mutex mu_;
  std::map<RequestLabels, uint64_t> counts_;  // guarded by mu_
};

}  // namespace routestatus::apiserver
