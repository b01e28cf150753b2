// The resource verbs of Server::Handler: get, list, watch, create, update,
// patch, delete, deletecollection.

#include <civetweb.h>
#include <glog/logging.h>

#include "apiserver/selector_syntax.h"
#include "apiserver/server_handler.h"

namespace routestatus::apiserver {

namespace {

using nlohmann::json;

void StripDirectives(json* j) {
  if (j->is_object()) {
    for (auto it = j->begin(); it != j->end();) {
      if (!it.key().empty() && it.key()[0] == '$') {
        it = j->erase(it);
      } else {
        StripDirectives(&it.value());
        ++it;
      }
    }
  } else if (j->is_array()) {
    for (auto& v : *j) StripDirectives(&v);
  }
}

void AppendEvent(std::string* out, const std::string& type, const std::string& object) {
  *out += "{\"type\":\"";
  *out += type;
  *out += "\",\"object\":";
  *out += object;
  *out += "}\n";
}

// The object of a BOOKMARK event: only kind, apiVersion and the version, as
// kube sends it; built-in types are typed objects in kube, so their empty
// fields are written too.
std::string BookmarkObject(const ResourceInfo& r, const std::string& rv) {
  if (r.custom_resource) {
    return "{\"apiVersion\":\"" + r.ApiVersion() + "\",\"kind\":\"" + r.kind +
           "\",\"metadata\":{\"resourceVersion\":\"" + rv + "\"}}";
  }
  std::string out = "{\"kind\":\"" + r.kind + "\",\"apiVersion\":\"" + r.ApiVersion() +
                    "\",\"metadata\":{\"resourceVersion\":\"" + rv + "\",\"creationTimestamp\":null}";
  if (&r == &NamespacesInfo()) out += ",\"spec\":{},\"status\":{}";
  return out + "}";
}

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
                                       const json& delete_options, WriteOptions* out,
                                       int* code) {
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
      *code = Error(req, BadRequestError("malformed DeleteOptions: dryRun must be a list of strings"));
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

int Server::Handler::Written(const HttpRequest& req, int code, const ApiResult<ObjectPtr>& result) {
  if (!result.ok()) return Error(req, *result.error);
  for (const std::string& w : result.warnings) {
    headers_.emplace_back("Warning", "299 - " + json(w).dump());
  }
  return Object(req, code, result.value);
}

bool Server::Handler::Filter(const HttpRequest& req, const ResourceRequest& rr, ObjectFilter* out,
                             int* code) {
  out->ns = rr.ns;
  const std::string selector = req.Query("labelSelector");
  auto labels = kubeclient::LabelSelector::Parse(selector);
  if (!labels.ok()) {
    // Why: kube's words for a malformed selector; ours for a bad key or value.
    std::optional<std::string> syntax = LabelSelectorSyntaxError(selector);
    *code = Error(req, BadRequestError(syntax ? *syntax
                                              : "unable to parse requirement: " +
                                                    labels.status().message()));
    return false;
  }
  out->labels = labels.value();
  std::string error;
  auto fields = FieldSelector::Parse(req.Query("fieldSelector"), &error);
  if (!fields) {
    *code = Error(req, BadRequestError(error));
    return false;
  }
  out->fields = *fields;
  return true;
}

int Server::Handler::ServeResource(const HttpRequest& req, const ResourceRequest& rr) {
  const ResourceInfo& r = *rr.info;
  resource_ = rr.info;
  int code = 0;
  if (!Negotiate(req, rr, &code)) return code;
  if (r.namespaced && rr.ns.empty() && rr.verb != "list" && rr.verb != "watch") {
    return Error(req, MethodNotSupportedError(r.group, r.resource, rr.verb));
  }
  if (rr.verb == "get") {
    auto got = server_.store_->Get(r, rr.ns, rr.name);
    return got.ok() ? Object(req, 200, got.value) : Error(req, *got.error);
  }
  if (rr.verb == "list") return ServeList(req, rr);
  if (rr.verb == "watch") return ServeWatch(req, rr);
  if (rr.verb == "create" && rr.name.empty()) return ServeCreate(req, rr);
  if (rr.verb == "update" && !rr.name.empty()) return ServeUpdate(req, rr);
  if (rr.verb == "patch" && !rr.name.empty()) return ServePatch(req, rr);
  if (rr.verb == "delete" && rr.subresource.empty()) return ServeDelete(req, rr);
  // Why: kube-apiserver serves deletecollection for every resource but namespaces.
  if (rr.verb == "deletecollection" && rr.subresource.empty() && &r != &NamespacesInfo()) {
    return ServeDeleteCollection(req, rr);
  }
  return Error(req, MethodNotSupportedError(r.group, r.resource, rr.verb));
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
  // Why: kube's ValidateListOptions (lists only), answered as 422 Invalid.
  std::vector<FieldCause> causes;
  if (!watch && !match.empty()) {
    const char* field = "resourceVersionMatch";
    if (out->resource_version.empty()) {
      causes.push_back({field, "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided", "FieldValueForbidden"});
    }
    if (!out->continue_token.empty()) {
      causes.push_back({field, "Forbidden: resourceVersionMatch is forbidden when continue is provided", "FieldValueForbidden"});
    }
    if (match != "Exact" && match != "NotOlderThan") {
      causes.push_back({field, "Unsupported value: \"" + match + "\": supported values: \"Exact\", \"NotOlderThan\", \"\"", "FieldValueNotSupported"});
    }
    if (match == "Exact" && out->resource_version == "0") {
      causes.push_back({field, "Forbidden: resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"", "FieldValueForbidden"});
    }
  }
  if (!causes.empty()) {
    *code = Error(req, InvalidCausesError("ListOptions.meta.k8s.io", "meta.k8s.io", "ListOptions",
                                          "", causes));
    return false;
  }
  out->exact = match == "Exact";
  if (!watch && !out->continue_token.empty() && !out->resource_version.empty() &&
      out->resource_version != "0") {
    *code = Error(req, BadRequestError("specifying resource version is not allowed when using continue"));
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

int Server::Handler::ServeList(const HttpRequest& req, const ResourceRequest& rr) {
  ObjectFilter filter;
  int code = 0;
  ListOptions options;
  if (!ReadListOptions(req, /*watch=*/false, &options, &code)) return code;
  if (!Filter(req, rr, &filter, &code)) return code;
  std::optional<uint64_t> exact;
  if (options.rv && options.exact) exact = options.rv;
  // Why: a NotOlderThan version the store has not reached yet is kube's 504
  // (after a 3 s wait in the watch cache; the store answers at once).
  uint64_t current = server_.store_->CurrentRv();
  if (options.rv && !options.exact && options.continue_token.empty() && *options.rv > current) {
    return Error(req, TooLargeResourceVersionError(*options.rv, current));
  }
  auto page = server_.store_->List(*rr.info, filter, options.limit, options.continue_token, exact);
  if (!page.ok()) return Error(req, *page.error);
  return List(req, *rr.info, page.value);
}

int Server::Handler::ServeWatch(const HttpRequest& req, const ResourceRequest& rr) {
  const ResourceInfo& r = *rr.info;
  ObjectFilter filter;
  int code = 0;
  ListOptions options;
  if (!ReadListOptions(req, /*watch=*/true, &options, &code)) return code;
  if (!Filter(req, rr, &filter, &code)) return code;
  std::optional<uint64_t> from = options.rv;
  const bool bookmarks = options.bookmarks;
  // Why: like kube, no timeoutSeconds (or 0) is the server's own long
  // timeout and a negative one ends the watch at once.
  std::chrono::seconds timeout(1800);
  if (options.timeout_seconds && *options.timeout_seconds != 0) {
    timeout = std::chrono::seconds(std::max<int64_t>(*options.timeout_seconds, 0));
  }
  const kubeclient::Clock& clock = server_.clock_;
  std::optional<TableConvertor> table;
  if (format_.kind == ResponseFormat::Kind::kTable) table = Convertor(r);
  bool headers = true;  // Why: like kube, only the first Table event carries columnDefinitions.
  auto render = [&](const ObjectPtr& object, const std::string& rv) -> std::string {
    if (table) {
      TableConvertor::RenderOptions options = TableOptions(rv);
      options.headers = headers;
      headers = false;
      return table->Render(object ? std::vector<ObjectPtr>{object} : std::vector<ObjectPtr>{},
                           options);
    }
    if (format_.kind == ResponseFormat::Kind::kPartialObjectMetadata) {
      if (object) return PartialObject(*object);
      return "{\"kind\":\"PartialObjectMetadata\",\"apiVersion\":\"" + format_.api_version +
             "\",\"metadata\":{\"resourceVersion\":\"" + rv + "\",\"creationTimestamp\":null}}";
    }
    if (object) return object->json;
    return BookmarkObject(r, rv);
  };
  // Why: the timeout runs from the request, before the answer starts.
  const kubeclient::SteadyTime end = clock.Now() + timeout;
  auto opened = server_.store_->Watch(r, filter, from);
  RecordMetric(200);
  if (!StartChunked(req.conn, 200, "application/json", headers_)) {
    if (opened.ok()) server_.store_->Unwatch(opened.value);
    return 200;
  }
  if (!opened.ok()) {
    std::string line;
    AppendEvent(&line, "ERROR", opened.error->ToJson().dump());
    WriteChunk(req.conn, line);
    EndChunks(req.conn);
    return 200;
  }
  std::shared_ptr<Watcher> watcher = opened.value;
  if (server_.stopping_.load()) watcher->Close();
  // Why: kube's cacheWatcher.nextBookmarkTime: every bookmark interval and
  // 2 s before the watch times out, none once that moment has passed.
  auto next_bookmark_after = [&](kubeclient::SteadyTime now) {
    kubeclient::SteadyTime next =
        std::min(now + server_.options_.bookmark_interval, end - std::chrono::seconds(2));
    return next <= now ? kubeclient::SteadyTime::max() : next;
  };
  kubeclient::SteadyTime next_bookmark =
      bookmarks ? next_bookmark_after(end - timeout) : kubeclient::SteadyTime::max();
  std::deque<WatchRecord> batch;
  std::string out;
  bool alive = true;
  while (alive) {
    kubeclient::SteadyTime wake = std::min(end, next_bookmark);
    batch.clear();
    bool open = watcher->Wait(wake, &batch);
    out.clear();
    for (const auto& rec : batch) {
      if (format_.converted()) {
        AppendEvent(&out, rec.type, render(rec.object, std::to_string(rec.object->rv)));
      } else {
        AppendEvent(&out, rec.type, rec.object->json);
      }
    }
    if (!out.empty() && !WriteChunk(req.conn, out)) break;
    if (!open) break;
    kubeclient::SteadyTime now = clock.Now();
    if (now >= end) break;
    if (now >= next_bookmark) {
      // Why: read the dispatched version before checking the queue is empty,
      // so every event up to it has already been written.
      uint64_t rv = server_.store_->CurrentRv();
      if (watcher->Empty()) {
        out.clear();
        AppendEvent(&out, "BOOKMARK", render(nullptr, std::to_string(rv)));
        alive = WriteChunk(req.conn, out);
      }
      next_bookmark = next_bookmark_after(now);
    }
  }
  server_.store_->Unwatch(watcher);
  if (alive) EndChunks(req.conn);
  return 200;
}

int Server::Handler::ServeCreate(const HttpRequest& req, const ResourceRequest& rr) {
  if (!rr.subresource.empty()) {
    return Error(req, MethodNotSupportedError(rr.info->group, rr.info->resource, "create"));
  }
  WriteOptions options;
  int code = 0;
  if (!ReadWriteOptions(req, "CreateOptions", nullptr, &options, &code)) return code;
  json body;
  if (!DecodeObject(req, rr, &body, &code)) return code;
  return Written(req, 201,
                 server_.store_->Create(*rr.info, rr.ns, std::move(body), /*keep_status=*/false,
                                        options));
}

int Server::Handler::ServeUpdate(const HttpRequest& req, const ResourceRequest& rr) {
  WriteOptions options;
  int code = 0;
  if (!ReadWriteOptions(req, "UpdateOptions", nullptr, &options, &code)) return code;
  json body;
  if (!DecodeObject(req, rr, &body, &code)) return code;
  // Why: kube's update handler checks the body names the URL's object
  // before it reads the store.
  const json& meta = body.contains("metadata") ? body["metadata"] : json();
  std::string name = meta.is_object() ? meta.value("name", std::string()) : "";
  std::string ns = meta.is_object() ? meta.value("namespace", std::string()) : "";
  if (!name.empty() && name != rr.name) {
    return Error(req, BadRequestError("the name of the object (" + name +
                                      ") does not match the name on the URL (" + rr.name + ")"));
  }
  if (rr.info->namespaced && !ns.empty() && ns != rr.ns) {
    return Error(req, BadRequestError("the namespace of the provided object does not match the "
                                      "namespace sent on the request"));
  }
  return Written(req, 200,
                 server_.store_->Update(*rr.info, rr.ns, rr.name, std::move(body),
                                        rr.subresource == "status", options));
}

int Server::Handler::ServePatch(const HttpRequest& req, const ResourceRequest& rr) {
  std::string type = req.Header("Content-Type");
  type = type.substr(0, type.find(';'));
  bool json_patch = type == "application/json-patch+json";
  bool merge = type == "application/merge-patch+json";
  // Why: like kube, custom resources take no strategic merge patch.
  bool strategic = type == "application/strategic-merge-patch+json" && !rr.info->custom_resource;
  if (!json_patch && !merge && !strategic) {
    std::vector<std::string> accepted = {"application/json-patch+json",
                                         "application/merge-patch+json"};
    if (!rr.info->custom_resource) accepted.push_back("application/strategic-merge-patch+json");
    return Error(req, UnsupportedBodyMediaTypeError(accepted));
  }
  WriteOptions options;
  int code = 0;
  if (!ReadWriteOptions(req, "PatchOptions", nullptr, &options, &code)) return code;
  json patch = json::parse(req.body, nullptr, false);
  if (patch.is_discarded()) return Error(req, BadRequestError("error decoding patch: malformed JSON"));
  if (json_patch && !patch.is_array()) {
    return Error(req, BadRequestError("json: cannot unmarshal object into Go value of type jsonpatch.Patch"));
  }
  if (!json_patch && !patch.is_object()) {
    return Error(req, BadRequestError("error decoding patch: the patch must be a JSON object"));
  }
  if (strategic) StripDirectives(&patch);
  const ResourceInfo& r = *rr.info;
  auto mutation = [&](const json& current) -> ApiResult<json> {
    ApiResult<json> out;
    if (json_patch) {
      try {
        out.value = current.patch(patch);
      } catch (const json::exception& e) {
        VLOG(2) << "JSON patch of " << r.resource << " " << rr.name << " failed: " << e.what();
        return ApiResult<json>::Error(PatchNotAppliedError());
      }
    } else {
      out.value = current;
      out.value.merge_patch(patch);
    }
    return out;
  };
  return Written(req, 200,
                 server_.store_->Mutate(r, rr.ns, rr.name, rr.subresource == "status",
                                        /*require_rv=*/false, mutation, options));
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
    causes.push_back({"propagationPolicy",
                      "Unsupported value: \"" + *propagation +
                          "\": supported values: \"Foreground\", \"Background\", \"Orphan\", \"nil\"",
                      "FieldValueNotSupported"});
  }
  if (causes.empty()) return true;
  *code = Error(req, InvalidCausesError("DeleteOptions.meta.k8s.io", "meta.k8s.io", "DeleteOptions",
                                        "", causes));
  return false;
}

int Server::Handler::ServeDelete(const HttpRequest& req, const ResourceRequest& rr) {
  std::optional<std::string> rv;
  std::optional<std::string> uid;
  json options;
  int code = 0;
  if (!DecodeDeleteOptions(req, &options, &code)) return code;
  if (!CheckDeleteOptions(req, options, &code)) return code;
  WriteOptions write;
  if (!ReadWriteOptions(req, "DeleteOptions", options, &write, &code)) return code;
  if (options.is_object()) {
    auto pre = options.find("preconditions");
    if (pre != options.end() && pre->is_object()) {
      if (pre->contains("resourceVersion") && (*pre)["resourceVersion"].is_string()) {
        rv = (*pre)["resourceVersion"].get<std::string>();
      }
      if (pre->contains("uid") && (*pre)["uid"].is_string()) uid = (*pre)["uid"].get<std::string>();
    }
  }
  auto deleted = server_.store_->Delete(*rr.info, rr.ns, rr.name, rv, uid, write);
  if (!deleted.ok()) return Error(req, *deleted.error);
  if (rr.info->custom_resource) {
    // Why: kube's registry answers a finished delete of a custom resource
    // with a Success Status naming it (details.kind is the plural, as kube sets it).
    const ResourceInfo& r = *rr.info;
    return Json(req, 200,
                {{"kind", "Status"},
                 {"apiVersion", "v1"},
                 {"metadata", json::object()},
                 {"status", "Success"},
                 {"details",
                  {{"name", rr.name}, {"group", r.group}, {"kind", r.resource},
                   {"uid", deleted.value->uid}}}});
  }
  return Object(req, 200, deleted.value);
}


int Server::Handler::ServeDeleteCollection(const HttpRequest& req, const ResourceRequest& rr) {
  json options;
  int code = 0;
  ObjectFilter filter;
  if (!Filter(req, rr, &filter, &code)) return code;
  if (!DecodeDeleteOptions(req, &options, &code)) return code;
  if (!CheckDeleteOptions(req, options, &code)) return code;
  WriteOptions write;
  if (!ReadWriteOptions(req, "DeleteOptions", options, &write, &code)) return code;
  auto deleted = server_.store_->DeleteCollection(*rr.info, filter, write);
  if (!deleted.ok()) return Error(req, *deleted.error);
  return List(req, *rr.info, deleted.value);
}

}  // namespace routestatus::apiserver
