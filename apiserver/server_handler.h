#pragma once

// Internal to the apiserver library: the request handler behind Server.

#include <optional>
#include <string>
#include <vector>

#include "apiserver/http_io.h"
#include "apiserver/media_type.h"
#include "apiserver/request_info.h"
#include "apiserver/request_metrics.h"
#include "apiserver/server.h"
#include "apiserver/table_convertor.h"

namespace routestatus::apiserver {

// What the router decided a request is about: kube's RequestInfo (verb
// get list watch create update patch delete deletecollection) and the
// resource type served.
struct ResourceRequest : RequestInfo {
  const ResourceInfo* info = nullptr;
};

// kube's ValidateDryRun: true if every dryRun value is "All" (an empty list
// is valid and means a real write).
bool ValidDryRun(const std::vector<std::string>& values);
// kube's cleanDryRun: the dry_run label of apiserver_request_total for a
// request: "" without a dryRun query parameter, "invalid" if one is not
// "All", else "All".
std::string DryRunLabel(const HttpRequest& req);

// Serves one request at a time per calling thread; shares the server's state.
// Thread-safe (stateless besides the Server it points to).
class Server::Handler {
 public:
  explicit Handler(Server& server) : server_(server) {}
  // Returns the HTTP status code written.
  int Serve(mg_connection* conn);

 private:
  int ServeNonResource(const HttpRequest& req, RequestLabels* labels);
  int ServeAdmin(const HttpRequest& req);
  // Parses /api/v1/... and /apis/G/V/...; false if not a resource path.
  bool ParseResourcePath(const HttpRequest& req, ResourceRequest* out, int* error_code);
  int ServeResource(const HttpRequest& req, const ResourceRequest& rr);
  // The list/watch query parameters decoded as kube does.
  struct ListOptions {
    size_t limit = 0;                       // 0 = no limit (absent, 0 or negative)
    std::optional<int64_t> timeout_seconds;
    std::string resource_version;           // as sent
    std::optional<uint64_t> rv;             // parsed; nullopt for "", "0"
    bool exact = false;                     // resourceVersionMatch=Exact
    bool not_older_than = false;            // resourceVersionMatch=NotOlderThan
    std::string continue_token;
    bool bookmarks = false;                 // allowWatchBookmarks
    std::optional<bool> send_initial_events;  // sendInitialEvents (watch only)
  };
  // False + error response written (400 for a non-integer limit or
  // timeoutSeconds, 422 for a bad resourceVersionMatch, 400/500 for a
  // malformed resourceVersion, as kube-apiserver answers each).
  bool ReadListOptions(const HttpRequest& req, bool watch, ListOptions* out, int* code);
  int ServeList(const HttpRequest& req, const ResourceRequest& rr);
  int ServeWatch(const HttpRequest& req, const ResourceRequest& rr);
  int ServeCreate(const HttpRequest& req, const ResourceRequest& rr);
  int ServeUpdate(const HttpRequest& req, const ResourceRequest& rr);
  int ServePatch(const HttpRequest& req, const ResourceRequest& rr);
  int ServeDelete(const HttpRequest& req, const ResourceRequest& rr);
  int ServeDeleteCollection(const HttpRequest& req, const ResourceRequest& rr);
  // Decodes a create/update body by its Content-Type: JSON (also when the
  // header is absent) or, for built-in kinds, Kubernetes protobuf. False +
  // error response written (400 malformed, 415 unsupported media type).
  bool DecodeObject(const HttpRequest& req, const ResourceRequest& rr, nlohmann::json* out,
                    int* code);
  // Decodes an optional DeleteOptions body (JSON or protobuf) into *out
  // (left null when the body is empty). False + error response written.
  bool DecodeDeleteOptions(const HttpRequest& req, nlohmann::json* out, int* code);
  // kube's DeleteOptions checks: from the body when there is one, else from
  // the query (gracePeriodSeconds must be an integer: 400); an unknown
  // propagationPolicy, or one with orphanDependents, is 422. False + error
  // response written. (Propagation has no effect: there is no garbage
  // collector, and every delete is immediate.)
  bool CheckDeleteOptions(const HttpRequest& req, const nlohmann::json& body, int* code);

  // Reads a write's dryRun directive the way kube-apiserver does: from the
  // query, except that a delete with a DeleteOptions body (`delete_options`
  // not null) takes it from the body only. False + 422 Invalid written (an
  // `options_kind`.meta.k8s.io error) if a value is not "All".
  bool ReadWriteOptions(const HttpRequest& req, const char* options_kind,
                        const nlohmann::json& delete_options, WriteOptions* out, int* code);

  int Error(const HttpRequest& req, const ApiError& e);
  // Answers a write's result: the object with `code` and its warnings as
  // Warning headers, or the error.
  int Written(const HttpRequest& req, int code, const ApiResult<ObjectPtr>& result);
  // Writes one object in the negotiated form (format_).
  int Object(const HttpRequest& req, int code, const ObjectPtr& obj);
  // Writes a list page (items and metadata) in the negotiated form.
  int List(const HttpRequest& req, const ResourceInfo& r, const ListPage& page);
  // Chooses format_/include_ from Accept and includeObject; false + error
  // response written (406, 400) if they cannot be served.
  bool Negotiate(const HttpRequest& req, const ResourceRequest& rr, int* code);
  // The Table columns of `r` (a custom resource's from its stored CRD).
  // The CRD that defines custom resource `r`: the stored one (parsed into
  // *parsed, which must outlive the result), else deploy/crd's.
  const nlohmann::json& CrdDefinition(const ResourceInfo& r, nlohmann::json* parsed) const;
  TableConvertor Convertor(const ResourceInfo& r) const;
  // Table options for a response of this request.
  TableConvertor::RenderOptions TableOptions(const std::string& rv) const;
  // `obj` as a PartialObjectMetadata document.
  std::string PartialObject(const StoredObject& obj) const;
  int Json(const HttpRequest& req, int code, const nlohmann::json& body);
  // Writes a complete response with this request's headers (Audit-Id,
  // warnings); a JSON body is indented when kube would (pretty_).
  void Write(const HttpRequest& req, int code, const std::string& body,
             const std::string& content_type = "application/json");
  // Builds an ObjectFilter from labelSelector/fieldSelector; false + error
  // response written if they are malformed.
  bool Filter(const HttpRequest& req, const ResourceRequest& rr, ObjectFilter* out, int* code);

  // Records the request metric (once) just before the response is written,
  // so a client that has its response also sees the count.
  void RecordMetric(int code);

  Server& server_;
  // Headers of this request's response: Audit-Id, then any Warning.
  std::vector<std::pair<std::string, std::string>> headers_;
  bool pretty_ = false;  // kube's isPrettyPrint: ?pretty=, or curl/Wget/browser clients
  std::optional<RequestLabels> pending_labels_;
  ResponseFormat format_;                             // set by Negotiate
  IncludeObject include_ = IncludeObject::kMetadata;  // set by Negotiate
  const ResourceInfo* resource_ = nullptr;            // set by ServeResource
};

}  // namespace routestatus::apiserver
