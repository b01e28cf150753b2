// The resource verbs of Server::Handler: get, list, watch, create, update,
// patch, delete, deletecollection.

#include <civetweb.h>
#include <glog/logging.h>

#include "apiserver/connection_sockets.h"
#include "apiserver/continue_token.h"
#include "apiserver/go_json.h"
#include "apiserver/object_meta_types.h"
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
// `initial_events_end`: the bookmark that ends a watch's initial events
// (sendInitialEvents), annotated as kube 1.27+ annotates it.
// `blueprint`: the end bookmark also carries kube 1.32's
// kubernetes.io/initial-events-list-blueprint, the resource's empty list
// object in base64.
std::string BookmarkObject(const ResourceInfo& r, const std::string& rv,
                           bool initial_events_end = false, bool blueprint = false) {
  std::string annotations;
  if (initial_events_end) {
    annotations = ",\"annotations\":{\"k8s.io/initial-events-end\":\"true\"";
    if (blueprint) {
      const std::string list =
          r.custom_resource ? "{\"apiVersion\":\"" + r.ApiVersion() + "\",\"items\":[],\"kind\":\"" +
                                  r.kind + "List\"}\n"
                            : "{\"kind\":\"" + r.kind + "List\",\"apiVersion\":\"" + r.ApiVersion() +
                                  "\",\"metadata\":{},\"items\":null}\n";
      annotations += ",\"kubernetes.io/initial-events-list-blueprint\":\"" + Base64Encode(list) + "\"";
    }
    annotations += "}";
  }
  if (r.custom_resource) {
    return "{\"apiVersion\":\"" + r.ApiVersion() + "\",\"kind\":\"" + r.kind +
           "\",\"metadata\":{\"resourceVersion\":\"" + rv + "\"" + annotations + "}}";
  }
  std::string out = "{\"kind\":\"" + r.kind + "\",\"apiVersion\":\"" + r.ApiVersion() +
                    "\",\"metadata\":{\"resourceVersion\":\"" + rv +
                    "\",\"creationTimestamp\":null" + annotations + "}";
  if (&r == &NamespacesInfo()) out += ",\"spec\":{},\"status\":{}";
  return out + "}";
}

}  // namespace

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

int Server::Handler::Written(const HttpRequest& req, int code, const ApiResult<ObjectPtr>& result) {
  if (!result.ok()) return Error(req, *result.error);
  for (const std::string& w : result.warnings) {
    headers_.emplace_back("Warning", "299 - " + json(w).dump());
  }
  return Object(req, code, result.value);
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

int Server::Handler::ServeList(const HttpRequest& req, const ResourceRequest& rr) {
  ObjectFilter filter;
  int code = 0;
  ListOptions options;
  if (!ReadListOptions(req, /*watch=*/false, &options, &code)) return code;
  if (!Filter(req, rr, &filter, &code)) return code;
  // Why: etcd3's store refuses a continue token with a version (the token
  // carries the version of the list it continues).
  if (!options.continue_token.empty() && options.rv) {
    return Error(req, BadRequestError("specifying resource version is not allowed when using "
                                      "continue"));
  }
  // Why: kube's cacher (1.26, shouldDelegateList) serves from the watch
  // cache "0", whose limit it ignores, and a version without a limit
  // (NotOlderThan: once the cache has caught up), unless the list asks for
  // an exact version or continues a page; the rest reads storage (etcd),
  // where a limited list at N without resourceVersionMatch (the legacy
  // paged read) is at exactly N. With the watch cache off, all read storage.
  const bool from_cache =
      server_.watch_cache_.load() &&
      (options.resource_version == "0" ||
      (!options.resource_version.empty() && options.limit == 0 && !options.exact &&
       options.continue_token.empty()));
  const size_t limit = from_cache ? 0 : options.limit;
  std::optional<uint64_t> exact;
  if (options.rv && (options.exact || (limit > 0 && !options.not_older_than))) exact = options.rv;
  // Why: a NotOlderThan version the store has not reached yet is kube's 504
  // (after a 3 s wait in the watch cache; the store answers at once).
  uint64_t current = server_.store_->CurrentRv();
  if (options.rv && !exact && options.continue_token.empty() && *options.rv > current) {
    return Error(req, TooLargeResourceVersionError(*options.rv, current));
  }
  // Why: with etcd as storage, a storage read is a real etcd range read.
  EtcdStorage* etcd = from_cache ? nullptr : server_.etcd_.load();
  auto page = etcd != nullptr ? etcd->List(*rr.info, filter, limit, options.continue_token, exact,
                                           current)
                              : server_.store_->List(*rr.info, filter, limit,
                                                     options.continue_token, exact);
  if (!page.ok()) return Error(req, *page.error);
  server_.metrics_.RecordList(rr.info->group, rr.info->resource,
                              from_cache ? ListSource::kWatchCache : ListSource::kStorage);
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
  // Why: sendInitialEvents=false with NotOlderThan and no version starts
  // at the current state without the synthetic ADDED events.
  const bool send_initial = options.send_initial_events.value_or(false);
  if (options.send_initial_events && !send_initial && !from) from = server_.store_->CurrentRv();
  if (options.send_initial_events && options.rv && *options.rv > server_.store_->CurrentRv()) {
    return Error(req, TooLargeResourceVersionError(*options.rv, server_.store_->CurrentRv()));
  }
  // Why: like kube, no timeoutSeconds (or 0) is the server's own long
  // timeout and a negative one ends the watch at once.
  std::chrono::seconds timeout(1800);
  if (options.timeout_seconds && *options.timeout_seconds != 0) {
    timeout = std::chrono::seconds(std::max<int64_t>(*options.timeout_seconds, 0));
  }
  const Clock& clock = server_.clock_;
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
  const SteadyTime end = clock.Now() + timeout;
  std::vector<ObjectPtr> initial;
  uint64_t initial_rv = 0;
  auto opened = server_.store_->Watch(r, filter, from, send_initial ? &initial : nullptr,
                                      &initial_rv);
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
  // Why: like kube-apiserver, end the watch as soon as its client goes,
  // even when it is quiet and writes nothing (HangupMonitor).
  const mg_request_info* info = mg_get_request_info(req.conn);
  const int fd = info == nullptr ? -1 : FindConnection(server_.backend_port_, info->remote_port);
  const uint64_t hangup_id = fd < 0 ? 0 : server_.hangups_.Add(fd, watcher);
  // Why: kube's cacheWatcher.nextBookmarkTime: every bookmark interval and
  // 2 s before the watch times out, none once that moment has passed.
  auto next_bookmark_after = [&](SteadyTime now) {
    SteadyTime next =
        std::min(now + server_.options_.bookmark_interval, end - std::chrono::seconds(2));
    return next <= now ? SteadyTime::max() : next;
  };
  SteadyTime next_bookmark =
      bookmarks ? next_bookmark_after(end - timeout) : SteadyTime::max();
  std::deque<WatchRecord> batch;
  std::string out;
  bool alive = true;
  // Why counted per chunk: a watch may stay open for its whole timeout.
  auto write = [&](const std::string& data) {
    server_.metrics_.AddSentBytes("WATCH", r.resource, data.size());
    return WriteChunk(req.conn, data);
  };
  bool ended = false;  // the stream ends after what is written (alive: cleanly)
  if (send_initial &&
      server_.options_.watch_list_answer == ServerOptions::WatchListAnswer::kNoProgressNotify) {
    // Why: kube 1.32 over an etcd without RequestWatchProgress accepts the
    // watch list, then ends it with this one event
    // (test/apiserver/golden/kube-apiserver-1.32/watchlist-etcd-3.4.23.txt).
    ApiError e;
    e.code = 500;
    e.reason = "InternalError";
    e.message = "a watch stream was requested by the client but the required storage feature "
                "RequestWatchProgress is disabled";
    std::string line;
    AppendEvent(&line, "ERROR", e.ToJson().dump());
    alive = write(line);
    ended = true;
  }
  if (send_initial && !ended) {
    server_.metrics_.RecordList(r.group, r.resource, ListSource::kWatchList);
    // Why chunks of ~64 KiB: the initial state of 100,000 routes is ~150 MB;
    // it goes out as it is rendered, never whole in memory.
    const std::string rv = std::to_string(initial_rv);
    for (size_t i = 0; i < initial.size() && alive; ++i) {
      AppendEvent(&out, "ADDED", format_.converted() ? render(initial[i], rv) : initial[i]->json);
      initial[i].reset();
      if (out.size() >= 64 * 1024) {
        alive = write(out);
        out.clear();
      }
    }
    std::string end_marker =
        format_.converted() ? render(nullptr, rv)
                            : BookmarkObject(r, rv, true, server_.options_.initial_events_blueprint);
    if (alive) AppendEvent(&out, "BOOKMARK", end_marker);
    alive = alive && write(out);
    std::vector<ObjectPtr>().swap(initial);
  }
  while (alive && !ended) {
    SteadyTime wake = std::min(end, next_bookmark);
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
    if (!out.empty() && !write(out)) break;
    if (!open) break;
    SteadyTime now = clock.Now();
    if (now >= end) break;
    if (now >= next_bookmark) {
      // Why: read the version before checking the queue is empty, so every
      // event up to it has already been written; kube queues a bookmark
      // behind the events, so a busy queue delays it rather than drops it.
      const bool legacy = server_.options_.legacy_bookmarks;
      uint64_t rv = legacy ? server_.store_->CurrentRv() : server_.store_->BookmarkRv(r);
      if (!watcher->Empty()) continue;
      // Why: kube's cacheWatcher.process drops every event, bookmarks
      // included, not above the watch's start version; it sends a bookmark
      // at the same version again at each due time.
      if (legacy || rv > watcher->start_rv()) {
        out.clear();
        AppendEvent(&out, "BOOKMARK", render(nullptr, std::to_string(rv)));
        alive = write(out);
      }
      next_bookmark = next_bookmark_after(now);
    }
  }
  if (hangup_id != 0) server_.hangups_.Remove(hangup_id);
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
  // Why: kube decodes patches with Go's encoding/json, so a body deeper than
  // its 10000 levels (or malformed) is a bad request in Go's words.
  if (std::optional<std::string> syntax = GoJsonSyntaxError(req.body)) {
    return Error(req, BadRequestError("error decoding patch: " + *syntax));
  }
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
    // Why: kube decodes the patched object as it decodes a body; a failure
    // is a 422 on the field "patch" naming the patched JSON.
    if (std::optional<std::string> meta = ObjectMetaTypeError(out.value)) {
      return ApiResult<json>::Error(InvalidCausesError(
          "", "", "", "",
          {{"patch", "Invalid value: " + json(out.value.dump()).dump() + ": " + *meta,
            "FieldValueInvalid"}}));
    }
    NormalizeObjectMetaMaps(&out.value);
    return out;
  };
  return Written(req, 200,
                 server_.store_->Mutate(r, rr.ns, rr.name, rr.subresource == "status",
                                        /*require_rv=*/false, mutation, options));
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
