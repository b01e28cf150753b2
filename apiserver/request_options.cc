// How Server::Handler reads a request's options the way kube-apiserver
// decodes and validates them: dryRun, fieldValidation and fieldManager of
// writes, DeleteOptions, and the list/watch query parameters.

#include "apiserver/server_handler.h"

namespace routestatus::apiserver {

namespace {

using nlohmann::json;

// Go's %#v of a []string, as kube's "Unsupported value" messages print it.
std::string GoStringSlice(const std::vector<std::string>& values) {
  std::string out = "[]string{";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ", ";
    out += json(values[i]).dump();
  }
  return out + "}";
}

}  // namespace

bool ValidDryRun(const std::vector<std::string>& values) {
  for (const std::string& v : values) {
    if (v != "All") return false;
  }
  return true;
}

std::string DryRunLabel(const HttpRequest& req) {
  // Why: like kube, skip the parse for the common request without dryRun.
  if (req.raw_query.find("dryRun") == std::string::npos) return "";
  std::vector<std::string> values = req.QueryValues("dryRun");
  if (values.empty()) return "";
  return ValidDryRun(values) ? "All" : "invalid";
}

bool Server::Handler::ReadWriteOptions(const HttpRequest& req, const char* options_kind,
                                       const json& delete_options, WriteOptions* out, int* code) {
  std::vector<std::string> values;
  if (delete_options.is_null()) {
    if (req.raw_query.find("dryRun") != std::string::npos) values = req.QueryValues("dryRun");
  } else if (delete_options.contains("dryRun") && !delete_options["dryRun"].is_null()) {
    const json& list = delete_options["dryRun"];
    bool ok = list.is_array();
    for (size_t i = 0; ok && i < list.size(); ++i) {
      ok = list[i].is_string();
      if (ok) values.push_back(list[i].get<std::string>());
    }
    if (!ok) {
      *code =
          Error(req, BadRequestError("malformed DeleteOptions: dryRun must be a list of strings"));
      return false;
    }
  }
  if (!ValidDryRun(values)) {
    std::string kind = options_kind;
    *code = Error(req, InvalidError(kind + ".meta.k8s.io", "meta.k8s.io", kind, "", "dryRun",
                                    "Unsupported value: " + GoStringSlice(values) +
                                        ": supported values: \"All\"",
                                    "FieldValueNotSupported"));
    return false;
  }
  out->dry_run = !values.empty();
  if (!delete_options.is_null() || std::string(options_kind) == "DeleteOptions") return true;
  // Why: kube's ValidateCreate/Update/PatchOptions, answered as 422 Invalid.
  std::vector<FieldCause> causes;
  std::string manager = req.Query("fieldManager");
  if (manager.size() > 128) {
    causes.push_back({"fieldManager", "Too long: may not be longer than 128", "FieldValueTooLong"});
  }
  out->field_validation = req.Query("fieldValidation");
  const std::string& fv = out->field_validation;
  if (!fv.empty() && fv != "Ignore" && fv != "Warn" && fv != "Strict") {
    causes.push_back({"fieldValidation",
                      "Unsupported value: \"" + fv +
                          "\": supported values: \"\", \"Ignore\", \"Strict\", \"Warn\"",
                      "FieldValueNotSupported"});
  }
  if (!causes.empty()) {
    std::string kind = options_kind;
    *code = Error(req, InvalidCausesError(kind + ".meta.k8s.io", "meta.k8s.io", kind, "", causes));
    return false;
  }
  return true;
}

bool Server::Handler::ReadListOptions(const HttpRequest& req, bool watch, ListOptions* out,
                                      int* code) {
  std::string error;
  std::optional<int64_t> limit = QueryInt64(req, "limit", &error);
  std::optional<int64_t> timeout;
  if (error.empty()) timeout = QueryInt64(req, "timeoutSeconds", &error);
  if (!error.empty()) {
    *code = Error(req, BadRequestError(error));
    return false;
  }
  out->limit = limit && *limit > 0 ? static_cast<size_t>(*limit) : 0;
  out->timeout_seconds = timeout;
  out->resource_version = req.Query("resourceVersion");
  out->continue_token = req.Query("continue");
  out->bookmarks = QueryBool(req, "allowWatchBookmarks");
  const std::string match = req.Query("resourceVersionMatch");
  // Why: kube's ValidateListOptions, answered as 422 Invalid: for lists
  // (and, on a server without WatchList, for watches: kube 1.26's rules,
  // which forbid resourceVersionMatch on a watch); validateWatchOptions of
  // kube 1.27+ for watches on a server that streams initial events.
  std::vector<FieldCause> causes;
  const char* field = "resourceVersionMatch";
  const bool watch_list = server_.options_.watch_list;
  if (watch && watch_list) {
    if (std::optional<bool> send = QueryOptionalBool(req, "sendInitialEvents")) {
      out->send_initial_events = send;
      if (match != "NotOlderThan") {
        causes.push_back({field,
                          "Forbidden: sendInitialEvents requires setting resourceVersionMatch to "
                          "NotOlderThan",
                          "FieldValueForbidden"});
      }
      if (server_.options_.watch_list_answer == ServerOptions::WatchListAnswer::kGateOff) {
        // Why: kube 1.33's validateWatchOptions with its WatchList gate off.
        causes.push_back({"sendInitialEvents",
                          "Forbidden: sendInitialEvents is forbidden for watch unless the "
                          "WatchList feature gate is enabled",
                          "FieldValueForbidden"});
      }
      if (*send && !out->bookmarks) {
        causes.push_back({"allowWatchBookmarks",
                          "Forbidden: sendInitialEvents requires setting allowWatchBookmarks to "
                          "true",
                          "FieldValueForbidden"});
      }
    }
    if (!match.empty()) {
      if (!out->send_initial_events) {
        causes.push_back({field,
                          "Forbidden: resourceVersionMatch is forbidden for watch unless "
                          "sendInitialEvents is provided",
                          "FieldValueForbidden"});
      }
      if (match != "NotOlderThan") {
        causes.push_back({field,
                          "Unsupported value: \"" + match +
                              "\": supported values: \"NotOlderThan\"",
                          "FieldValueNotSupported"});
      }
      if (!out->continue_token.empty()) {
        causes.push_back({field,
                          "Forbidden: resourceVersionMatch is forbidden when continue is provided",
                          "FieldValueForbidden"});
      }
    }
  } else if (!match.empty()) {
    if (watch) {
      causes.push_back(
          {field, "Forbidden: resourceVersionMatch is forbidden for watch", "FieldValueForbidden"});
    }
    if (out->resource_version.empty()) {
      causes.push_back(
          {field, "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided",
           "FieldValueForbidden"});
    }
    if (!out->continue_token.empty()) {
      causes.push_back({field,
                        "Forbidden: resourceVersionMatch is forbidden when continue is provided",
                        "FieldValueForbidden"});
    }
    if (match != "Exact" && match != "NotOlderThan") {
      causes.push_back({field,
                        "Unsupported value: \"" + match +
                            "\": supported values: \"Exact\", \"NotOlderThan\", \"\"",
                        "FieldValueNotSupported"});
    }
    if (match == "Exact" && out->resource_version == "0") {
      causes.push_back(
          {field,
           "Forbidden: resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
           "FieldValueForbidden"});
    }
  }
  if (!causes.empty()) {
    *code = Error(req, InvalidCausesError("ListOptions.meta.k8s.io", "meta.k8s.io", "ListOptions",
                                          "", causes));
    return false;
  }
  out->exact = match == "Exact";
  out->not_older_than = match == "NotOlderThan";
  if (!watch && !out->continue_token.empty() && !out->resource_version.empty() &&
      out->resource_version != "0") {
    *code = Error(
        req, BadRequestError("specifying resource version is not allowed when using continue"));
    return false;
  }
  if (!out->resource_version.empty() && out->resource_version != "0") {
    out->rv = ParseRv(out->resource_version);
    if (!out->rv) {
      // Why: kube's storage answers a malformed version with its field error,
      // as 400 where it reads etcd (paged, continued or exact lists) and as
      // a plain 500 where the watch cache serves (other lists, watches).
      std::string detail = "resourceVersion: Invalid value: \"" + out->resource_version +
                           "\": strconv.ParseUint: parsing \"" + out->resource_version +
                           "\": invalid syntax";
      if (!watch && (out->limit > 0 || out->exact)) {
        *code = Error(req, BadRequestError("invalid resource version: " + detail));
      } else {
        ApiError e;
        e.code = 500;
        e.message = detail;
        *code = Error(req, e);
      }
      return false;
    }
  }
  return true;
}

bool Server::Handler::CheckDeleteOptions(const HttpRequest& req, const json& body, int* code) {
  std::optional<std::string> propagation;
  bool orphan_set = false;
  if (body.is_object()) {
    if (body.contains("propagationPolicy") && body["propagationPolicy"].is_string()) {
      propagation = body["propagationPolicy"].get<std::string>();
    }
    orphan_set = body.contains("orphanDependents") && !body["orphanDependents"].is_null();
  } else {
    // Why: without a body kube decodes DeleteOptions from the query.
    std::string error;
    QueryInt64(req, "gracePeriodSeconds", &error);
    if (!error.empty()) {
      *code = Error(req, BadRequestError(error));
      return false;
    }
    orphan_set = QueryOptionalBool(req, "orphanDependents").has_value();
    if (req.HasQuery("propagationPolicy")) propagation = req.Query("propagationPolicy");
  }
  std::vector<FieldCause> causes;
  if (orphan_set && propagation) {
    causes.push_back({"propagationPolicy",
                      "Invalid value: \"" + *propagation +
                          "\": orphanDependents and deletionPropagation cannot be both set",
                      "FieldValueInvalid"});
  }
  if (propagation && *propagation != "Foreground" && *propagation != "Background" &&
      *propagation != "Orphan") {
    causes.push_back(
        {"propagationPolicy",
         "Unsupported value: \"" + *propagation +
             "\": supported values: \"Foreground\", \"Background\", \"Orphan\", \"nil\"",
         "FieldValueNotSupported"});
  }
  if (causes.empty()) return true;
  *code = Error(req, InvalidCausesError("DeleteOptions.meta.k8s.io", "meta.k8s.io", "DeleteOptions",
                                        "", causes));
  return false;
}

}  // namespace routestatus::apiserver
