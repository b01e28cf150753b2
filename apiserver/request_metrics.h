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

// Where a list's objects were read from.
enum class ListSource {
  kStorage,     // etcd in kube (a quorum or exact read): every paged list's page
  kWatchCache,  // a list at resourceVersion "0"
  kWatchList,   // a watch's sendInitialEvents, from the watch cache
};

// Counts requests the way kube-apiserver's apiserver_request_total does,
// where lists read their objects from (apiserver_storage_list_total,
// apiserver_cache_list_total, apiserver_watch_list_total) and the bytes of
// list and watch responses, and renders them in the Prometheus text
// format. Thread-safe.
class RequestMetrics {
 public:
  void Record(const RequestLabels& labels);
  // One list of `group`/`resource` (plural) served from `source`.
  void RecordList(const std::string& group, const std::string& resource, ListSource source);
  // `bytes` of a LIST response body or a WATCH stream were sent.
  void AddSentBytes(const std::string& verb, const std::string& resource, uint64_t bytes);
  // Lists served from `source` (of `resource`, "" = any).
  uint64_t ListCount(ListSource source, const std::string& resource = "") const;
  // Bytes sent for `verb` ("LIST", "WATCH"; "" = both) of `resource` ("" = any).
  uint64_t SentBytes(const std::string& verb = "", const std::string& resource = "") const;
  // Sum over every series matching the given values ("" / -1 = any; for
  // subresource pass "-" to require an empty one).
  uint64_t Count(const std::string& verb, const std::string& resource,
                 const std::string& subresource, int code, const std::string& scope = "") const;
  std::string Exposition() const;

 private:
  mutable std::mutex mu_;
  std::map<RequestLabels, uint64_t> counts_;  // guarded by mu_
  // (source, group, resource) -> lists; guarded by mu_
  std::map<std::tuple<ListSource, std::string, std::string>, uint64_t> lists_;
  std::map<std::pair<std::string, std::string>, uint64_t> sent_bytes_;  // (verb, resource); mu_
};

}  // namespace routestatus::apiserver
