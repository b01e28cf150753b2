// The resource verbs of Server::Handler: get, list, watch, create, update,
// patch, delete, deletecollection.

#include <civetweb.h>
#include <glog/logging.h>

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
  return true;
}

bool Server::Handler::Filter(const HttpRequest& req, const ResourceRequest& rr, ObjectFilter* out,
                             int* code) {
  out->ns = rr.ns;
  auto labels = kubeclient::LabelSelector::Parse(req.Query("labelSelector"));
  if (!labels.ok()) {
    *code = Error(req, BadRequestError("unable to parse requirement: " + labels.status().message()));
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
  if (r.namespaced && rr.ns.empty() && rr.verb != "LIST" && rr.verb != "WATCH") {
    return Error(req, MethodNotSupportedError(r.group, r.resource, rr.verb == "CREATE" ? "create" : rr.verb));
  }
  if (rr.verb == "GET") {
    auto got = server_.store_->Get(r, rr.ns, rr.name);
    return got.ok() ? Object(req, 200, got.value) : Error(req, *got.error);
  }
  if (rr.verb == "LIST") return ServeList(req, rr);
  if (rr.verb == "WATCH") return ServeWatch(req, rr);
  if (rr.verb == "CREATE" && rr.name.empty()) return ServeCreate(req, rr);
  if (rr.verb == "UPDATE" && !rr.name.empty()) return ServeUpdate(req, rr);
  if (rr.verb == "PATCH" && !rr.name.empty()) return ServePatch(req, rr);
  if (rr.verb == "DELETE" && rr.subresource.empty()) return ServeDelete(req, rr);
  // Why: kube-apiserver serves deletecollection for every resource but namespaces.
  if (rr.verb == "DELETECOLLECTION" && rr.subresource.empty() && &r != &NamespacesInfo()) {
    return ServeDeleteCollection(req, rr);
  }
  if (rr.verb == "APPLY") {
    return Error(req, UnsupportedMediaTypeError(req.Header("Content-Type")));
  }
  std::string verb = rr.verb;
  for (char& c : verb) c = static_cast<char>(tolower(static_cast<unsigned char>(c)));
  return Error(req, MethodNotSupportedError(r.group, r.resource, verb));
}

int Server::Handler::ServeList(const HttpRequest& req, const ResourceRequest& rr) {
  ObjectFilter filter;
  int code = 0;
  if (!Filter(req, rr, &filter, &code)) return code;
  size_t limit = 0;
  std::string limit_text = req.Query("limit");
  if (!limit_text.empty()) {
    std::optional<uint64_t> l = ParseRv(limit_text);
    if (l) limit = static_cast<size_t>(*l);
  }
  auto page = server_.store_->List(*rr.info, filter, limit, req.Query("continue"));
  if (!page.ok()) return Error(req, *page.error);
  return List(req, *rr.info, page.value);
}

int Server::Handler::ServeWatch(const HttpRequest& req, const ResourceRequest& rr) {
  const ResourceInfo& r = *rr.info;
  ObjectFilter filter;
  int code = 0;
  if (!Filter(req, rr, &filter, &code)) return code;
  std::optional<uint64_t> from;
  std::string rv_text = req.Query("resourceVersion");
  if (!rv_text.empty()) {
    from = ParseRv(rv_text);
    if (!from) return Error(req, BadRequestError("invalid resource version: " + rv_text));
  }
  bool bookmarks = req.Query("allowWatchBookmarks") == "true" || req.Query("allowWatchBookmarks") == "1";
  std::chrono::seconds timeout(1800);
  if (!req.Query("timeoutSeconds").empty()) {
    std::optional<uint64_t> t = ParseRv(req.Query("timeoutSeconds"));
    if (t) timeout = std::chrono::seconds(*t);
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
    return "{\"kind\":\"" + r.kind + "\",\"apiVersion\":\"" + r.ApiVersion() +
           "\",\"metadata\":{\"resourceVersion\":\"" + rv + "\",\"creationTimestamp\":null}}";
  };
  auto opened = server_.store_->Watch(r, filter, from);
  RecordMetric(200);
  if (!StartChunked(req.conn, 200, "application/json")) {
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
  const kubeclient::SteadyTime end = clock.Now() + timeout;
  kubeclient::SteadyTime next_bookmark = clock.Now() + server_.options_.bookmark_interval;
  std::deque<WatchRecord> batch;
  std::string out;
  bool alive = true;
  while (alive) {
    kubeclient::SteadyTime wake = bookmarks ? std::min(end, next_bookmark) : end;
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
    if (bookmarks && now >= next_bookmark) {
      // Why: read the dispatched version before checking the queue is empty,
      // so every event up to it has already been written.
      uint64_t rv = server_.store_->CurrentRv();
      if (watcher->Empty()) {
        out.clear();
        AppendEvent(&out, "BOOKMARK", render(nullptr, std::to_string(rv)));
        alive = WriteChunk(req.conn, out);
      }
      next_bookmark = now + server_.options_.bookmark_interval;
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
  auto created = server_.store_->Create(*rr.info, rr.ns, std::move(body), /*keep_status=*/false,
                                        options);
  return created.ok() ? Object(req, 201, created.value) : Error(req, *created.error);
}

int Server::Handler::ServeUpdate(const HttpRequest& req, const ResourceRequest& rr) {
  WriteOptions options;
  int code = 0;
  if (!ReadWriteOptions(req, "UpdateOptions", nullptr, &options, &code)) return code;
  json body;
  if (!DecodeObject(req, rr, &body, &code)) return code;
  auto updated = server_.store_->Update(*rr.info, rr.ns, rr.name, std::move(body),
                                        rr.subresource == "status", options);
  return updated.ok() ? Object(req, 200, updated.value) : Error(req, *updated.error);
}

int Server::Handler::ServePatch(const HttpRequest& req, const ResourceRequest& rr) {
  std::string type = req.Header("Content-Type");
  type = type.substr(0, type.find(';'));
  bool json_patch = type == "application/json-patch+json";
  bool merge = type == "application/merge-patch+json";
  bool strategic = type == "application/strategic-merge-patch+json";
  if (!json_patch && !merge && !strategic) return Error(req, UnsupportedMediaTypeError(type));
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
        ApiError err;
        err.code = 422;
        err.reason = "Invalid";
        err.message = std::string("the server rejected our request due to an error in our "
                                  "request: ") + e.what();
        return ApiResult<json>::Error(err);
      }
    } else {
      out.value = current;
      out.value.merge_patch(patch);
    }
    return out;
  };
  auto patched = server_.store_->Mutate(r, rr.ns, rr.name, rr.subresource == "status",
                                        /*require_rv=*/false, mutation, options);
  return patched.ok() ? Object(req, 200, patched.value) : Error(req, *patched.error);
}

int Server::Handler::ServeDelete(const HttpRequest& req, const ResourceRequest& rr) {
  std::optional<std::string> rv;
  std::optional<std::string> uid;
  json options;
  int code = 0;
  if (!DecodeDeleteOptions(req, &options, &code)) return code;
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
  return deleted.ok() ? Object(req, 200, deleted.value) : Error(req, *deleted.error);
}


int Server::Handler::ServeDeleteCollection(const HttpRequest& req, const ResourceRequest& rr) {
  json options;
  int code = 0;
  ObjectFilter filter;
  if (!Filter(req, rr, &filter, &code)) return code;
  if (!DecodeDeleteOptions(req, &options, &code)) return code;
  WriteOptions write;
  if (!ReadWriteOptions(req, "DeleteOptions", options, &write, &code)) return code;
  auto deleted = server_.store_->DeleteCollection(*rr.info, filter, write);
  if (!deleted.ok()) return Error(req, *deleted.error);
  return List(req, *rr.info, deleted.value);
}

}  // namespace routestatus::apiserver
