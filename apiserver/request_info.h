#pragma once

// How kube-apiserver reads a request before serving it: its query-parameter
// decoding (lenient booleans, strict integers) and its RequestInfo, and the
// labels apiserver_request_total gets from them. Pure functions; thread-safe.

#include <cstdint>
#include <optional>
#include <string>

#include "apiserver/http_io.h"
#include "apiserver/resources.h"

namespace routestatus::apiserver {

// A boolean query parameter as kube's Convert_Slice_string_To_bool decodes
// it: absent is false; a first value of "0" or "false" (any case) is false;
// any other value is true, "" (`?watch` or `?watch=`), "f", "True" and "yes"
// included.
bool QueryBool(const HttpRequest& req, const std::string& key);
// The same, but nullopt when the parameter is absent (kube's *bool fields).
std::optional<bool> QueryOptionalBool(const HttpRequest& req, const std::string& key);

// An integer query parameter as kube's Convert_Slice_string_To_int64 decodes
// it: nullopt when absent; otherwise Go's strconv.ParseInt of the first value,
// whose failure sets *error to Go's text (`strconv.ParseInt: parsing "x":
// invalid syntax`), which kube answers with 400 BadRequest.
std::optional<int64_t> QueryInt64(const HttpRequest& req, const std::string& key,
                                  std::string* error);

// What kube's RequestInfoFactory decides about a resource request. Value type.
struct RequestInfo {
  // get list watch create update patch delete deletecollection (or the
  // method in lower case for anything else).
  std::string verb;
  std::string ns;
  std::string name;  // from the path
  std::string subresource;
  // The name kube-apiserver's metrics see: the path's, or for a list/watch
  // the value of a fieldSelector `metadata.name=X` (kube's RequestInfo sets
  // Name from it; it only changes the scope label of custom resources).
  std::string metrics_name;
};

// kube's RequestInfo verb for `method` on a path with or without a name.
std::string RequestVerb(const HttpRequest& req, bool has_name);
// The metadata.name an exact-match fieldSelector requires ("" if none or if
// the list options do not decode, as in kube's RequestInfoFactory).
std::string FieldSelectorName(const HttpRequest& req);

// The labels of apiserver_request_total that kube-apiserver 1.26 derives
// from the request (component and code aside).
struct MetricLabels {
  std::string verb;   // POST PUT PATCH DELETE APPLY GET LIST WATCH (other: "other")
  std::string scope;  // resource | namespace | cluster
};
// Custom resources (routes) are served by kube's CRD handler, which takes
// the scope from RequestInfo (metrics.CleanScope: a name, or a create, makes
// it "resource"); built-in types (namespaces, CRDs) get the scope of the
// route they were installed under (a POST, or a path with {name}, is
// "resource"). The verb is the HTTP method, except GET, which is GET on a
// "resource" scope and LIST otherwise, WATCH for a watch, and APPLY for a
// PATCH whose Content-Type is application/apply-patch+yaml.
MetricLabels MetricLabelsFor(const HttpRequest& req, const ResourceInfo& r,
                             const RequestInfo& info);

// The system_client label of OpenShift's kube-apiserver (the server the
// golden recordings come from): the User-Agent's program name when it is
// kube-apiserver, kube-controller-manager or kube-scheduler, else "".
std::string SystemClient(const std::string& user_agent);

}  // namespace routestatus::apiserver
