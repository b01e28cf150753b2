#include "apiserver/server_handler.h"

#include <cstdio>
#include <random>
#include <thread>

#include <civetweb.h>
#include <glog/logging.h>

namespace routestatus::apiserver {

namespace {

constexpr size_t kMaxBody = 3 * 1024 * 1024;  // kube's default request size limit

bool Accepts(const HttpRequest& req, const std::string& what) {
  return req.Header("Accept").find(what) != std::string::npos;
}

// The client's Audit-ID, else a random UUID, as kube-apiserver answers in Audit-Id.
std::string AuditId(const HttpRequest& req) {
  std::string given = req.Header("Audit-ID");
  if (!given.empty()) return given;
  thread_local std::mt19937_64 rng(std::random_device{}());
  uint64_t hi = rng();
  uint64_t lo = rng();
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%08x-%04x-4%03x-%04x-%012llx",
                static_cast<unsigned>(hi >> 32), static_cast<unsigned>(hi >> 16) & 0xffff,
                static_cast<unsigned>(hi) & 0xfff,
                static_cast<unsigned>(0x8000 | ((lo >> 48) & 0x3fff)),
                static_cast<unsigned long long>(lo & 0xffffffffffffULL));
  return buf;
}

// kube's isPrettyPrint: ?pretty as Go's strconv.ParseBool reads it, else
// true for curl, Wget and browsers.
bool PrettyPrint(const HttpRequest& req) {
  if (req.raw_query.find("pretty") != std::string::npos) {
    std::vector<std::string> values = req.QueryValues("pretty");
    if (!values.empty() && !values.front().empty()) {
      const std::string& v = values.front();
      return v == "1" || v == "t" || v == "T" || v == "true" || v == "TRUE" || v == "True";
    }
  }
  std::string agent = req.Header("User-Agent");
  for (const char* prefix : {"curl", "Wget", "Mozilla/5.0"}) {
    if (agent.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

}  // namespace

void Server::Handler::Write(const HttpRequest& req, int code, const std::string& body,
                            const std::string& content_type) {
  if (pretty_ && content_type.rfind("application/json", 0) == 0) {
    nlohmann::json parsed = nlohmann::json::parse(body, nullptr, false);
    if (!parsed.is_discarded()) {
      WriteResponse(req.conn, code,
                    parsed.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n",
                    content_type, headers_);
      return;
    }
  }
  WriteResponse(req.conn, code, body, content_type, headers_);
}

void Server::Handler::RecordMetric(int code) {
  if (!pending_labels_) return;
  pending_labels_->code = std::to_string(code);
  server_.metrics_.Record(*pending_labels_);
  pending_labels_.reset();
}

int Server::Handler::Json(const HttpRequest& req, int code, const nlohmann::json& body) {
  RecordMetric(code);
  Write(req, code, body.dump());
  return code;
}

int Server::Handler::Error(const HttpRequest& req, const ApiError& e) {
  RecordMetric(e.code);
  if (e.retry_after_seconds) {
    headers_.emplace_back("Retry-After", std::to_string(*e.retry_after_seconds));
  }
  Write(req, e.code, e.ToJson().dump());
  return e.code;
}

int Server::Handler::Serve(mg_connection* conn) {
  HttpRequest req = ReadRequest(conn, kMaxBody);
  headers_.emplace_back("Audit-Id", AuditId(req));
  pretty_ = PrettyPrint(req);
  RequestLabels labels;
  labels.verb = req.method;
  labels.dry_run = DryRunLabel(req);
  labels.system_client = SystemClient(req.Header("User-Agent"));
  if (!server_.options_.token.empty() &&
      req.Header("Authorization") != "Bearer " + server_.options_.token) {
    labels.code = "401";
    server_.metrics_.Record(labels);
    return Error(req, UnauthorizedError());
  }
  if (req.body_too_large) {
    ApiError e;
    e.code = 413;
    e.reason = "RequestEntityTooLarge";
    e.message = "Request entity too large: limit is 3145728";
    return Error(req, e);
  }
  if (!req.segments.empty() && req.segments[0] == "admin") return ServeAdmin(req);

  ResourceRequest rr;
  int code = 0;
  if (!ParseResourcePath(req, &rr, &code)) {
    if (req.segments.empty() || req.segments[0] != "metrics") pending_labels_ = labels;
    code = ServeNonResource(req, &labels);
    RecordMetric(code);
    return code;
  }
  if (code != 0) return code;  // error already written

  MetricLabels metric = MetricLabelsFor(req, *rr.info, rr);
  labels.verb = metric.verb;
  labels.group = rr.info->group;
  labels.version = rr.info->version;
  labels.resource = rr.info->resource;
  labels.subresource = rr.subresource;
  labels.scope = metric.scope;
  pending_labels_ = labels;
  if (rr.info->custom_resource && server_.Starting()) {
    // Why: kube's crdHandler answers this until its CRD informer has synced
    // (apiextensions-apiserver's serverStartingError).
    ApiError e = ServiceUnavailableError("server is starting");
    e.retry_after_seconds = 10;
    code = Error(req, e);
    RecordMetric(code);
    return code;
  }
  FaultDecision fault =
      server_.faults_.Decide(labels.verb, rr.info->resource, rr.subresource, rr.ns);
  if (fault.latency.count() > 0) server_.FaultDelay(fault.latency);
  if (fault.code != 0) {
    ApiError e;
    switch (fault.code) {
      case 429: e = TooManyRequestsError(fault.retry_after_seconds); break;
      case 503:
        e = ServiceUnavailableError("injected fault: service unavailable");
        e.retry_after_seconds = fault.retry_after_seconds;
        break;
      case 500: e = InternalError("injected fault"); break;
      default:
        e.code = fault.code;
        e.reason = fault.code >= 500 ? "InternalError" : "BadRequest";
        e.message = "injected fault";
    }
    code = Error(req, e);
  } else {
    code = ServeResource(req, rr);
  }
  RecordMetric(code);
  return code;
}

bool Server::Handler::ParseResourcePath(const HttpRequest& req, ResourceRequest* out,
                                        int* error_code) {
  const auto& s = req.segments;
  std::string group;
  size_t i;
  if (s.size() >= 3 && s[0] == "api" && s[1] == "v1") {
    i = 2;
  } else if (s.size() >= 4 && s[0] == "apis") {
    group = s[1];
    i = 3;
  } else {
    return false;
  }
  const std::string version = s[i - 1];
  std::vector<std::string> rest(s.begin() + static_cast<long>(i), s.end());
  std::string ns;
  if (rest.size() >= 3 && rest[0] == "namespaces") {
    ns = rest[1];
    rest.erase(rest.begin(), rest.begin() + 2);
  }
  if (rest.empty() || rest.size() > 3) return false;
  out->info = FindResource(group, version, rest[0]);
  if (out->info == nullptr) {
    ApiError e;
    e.code = 404;
    e.reason = "NotFound";
    e.message = "the server could not find the requested resource";
    *error_code = Error(req, e);
    return true;
  }
  if (!ns.empty() && !out->info->namespaced) return false;
  out->ns = ns;
  if (rest.size() >= 2) out->name = rest[1];
  if (rest.size() == 3) out->subresource = rest[2];
  out->verb = RequestVerb(req, !out->name.empty());
  out->metrics_name = out->name;
  if (out->verb == "list" || out->verb == "watch") out->metrics_name = FieldSelectorName(req);
  if (!out->subresource.empty() &&
      (out->subresource != "status" || !out->info->has_status)) {
    *error_code = Error(req, NotFoundError(out->info->group, out->info->resource, out->name));
  }
  return true;
}

int Server::Handler::ServeNonResource(const HttpRequest& req, RequestLabels* labels) {
  const auto& s = req.segments;
  (void)labels;
  if (req.method != "GET") {
    ApiError e;
    e.code = 404;
    e.reason = "NotFound";
    e.message = "the server could not find the requested resource";
    return Error(req, e);
  }
  if (s.size() == 1 && s[0] == "version") {
    // Why: kube writes /version indented whatever the client.
    pretty_ = true;
    return Json(req, 200, VersionDocument());
  }
  if (s.size() == 1 && s[0] == "readyz" && server_.Starting()) {
    // Why: kube's /readyz fails until every post-start hook has run.
    Write(req, 500,
          "[-]poststarthook/crd-informer-synced failed: reason withheld\nreadyz check failed\n",
          "text/plain; charset=utf-8");
    return 500;
  }
  if (s.size() == 1 && (s[0] == "healthz" || s[0] == "readyz" || s[0] == "livez")) {
    Write(req, 200, "ok", "text/plain; charset=utf-8");
    return 200;
  }
  if (s.size() == 1 && s[0] == "metrics") {
    Write(req, 200, server_.metrics_.Exposition(), "text/plain; version=0.0.4; charset=utf-8");
    return 200;
  }
  bool aggregated = Accepts(req, "as=APIGroupDiscoveryList");
  if (s.size() == 1 && (s[0] == "api" || s[0] == "apis")) {
    if (aggregated) {
      Write(req, 200, AggregatedDiscovery(s[0] == "api").dump(),
            "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList");
      return 200;
    }
    return Json(req, 200, s[0] == "api" ? CoreApiVersions() : ApiGroupList());
  }
  nlohmann::json doc;
  if (s.size() == 2 && s[0] == "openapi" && s[1] == "v3") doc = OpenApiV3Root();
  if (s.size() >= 3 && s[0] == "openapi" && s[1] == "v3") {
    std::string gv;
    for (size_t i = 2; i < s.size(); ++i) gv += (i > 2 ? "/" : "") + s[i];
    doc = OpenApiV3Document(gv, [this](const ResourceInfo& r) {
      json parsed;
      return CrdDefinition(r, &parsed);
    });
  }
  if (s.size() == 2 && s[0] == "api") doc = ApiResourceList("", s[1]);
  if (s.size() == 2 && s[0] == "apis") doc = ApiGroupDocument(s[1]);
  if (s.size() == 3 && s[0] == "apis") doc = ApiResourceList(s[1], s[2]);
  if (!doc.is_null()) return Json(req, 200, doc);
  ApiError e;
  e.code = 404;
  e.reason = "NotFound";
  e.message = "the server could not find the requested resource";
  return Error(req, e);
}

int Server::Handler::ServeAdmin(const HttpRequest& req) {
  const auto& s = req.segments;
  std::string what = s.size() >= 2 ? s[1] : "";
  if (what == "faults") {
    if (req.method == "GET") {
      nlohmann::json rules = nlohmann::json::array();
      for (const auto& r : server_.faults_.Rules()) rules.push_back(r.ToJson());
      return Json(req, 200, rules);
    }
    if (req.method == "DELETE") {
      server_.faults_.Clear();
      return Json(req, 200, nlohmann::json::object());
    }
    if (req.method == "POST") {
      nlohmann::json body = nlohmann::json::parse(req.body, nullptr, false);
      if (body.is_discarded()) return Error(req, BadRequestError("malformed JSON"));
      if (!body.is_array()) body = nlohmann::json::array({body});
      std::vector<FaultRule> rules;
      for (const auto& j : body) {
        std::string error;
        std::optional<FaultRule> rule = FaultRule::FromJson(j, &error);
        if (!rule) return Error(req, BadRequestError(error));
        rules.push_back(*rule);
      }
      for (auto& r : rules) server_.faults_.Add(std::move(r));
      return Json(req, 200, nlohmann::json::object());
    }
  } else if (req.method == "POST" && what == "close-watches") {
    server_.CloseAllWatches();
    return Json(req, 200, nlohmann::json::object());
  } else if (req.method == "POST" && what == "compact") {
    server_.Compact();
    return Json(req, 200, {{"compactedResourceVersion", std::to_string(server_.store_->OldestResumableRv())}});
  } else if (req.method == "POST" && what == "close-idle-connections") {
    // This request's own connection is busy, so it stays open.
    return Json(req, 200, {{"closed", server_.CloseIdleConnections()}});
  } else if (req.method == "POST" && what == "never-read") {
    nlohmann::json body = nlohmann::json::parse(req.body, nullptr, false);
    const auto count_j = body.is_object() ? body.value("count", nlohmann::json(1)) : nlohmann::json();
    const auto hold_j = body.is_object() ? body.value("holdMs", nlohmann::json(30000)) : nlohmann::json();
    if (!count_j.is_number_integer() || !hold_j.is_number_integer() || count_j.get<int64_t>() < 0 ||
        hold_j.get<int64_t>() < 0) {
      return Error(req, BadRequestError("expected {\"count\":N,\"holdMs\":M} with N, M >= 0"));
    }
    const int count = static_cast<int>(count_j.get<int64_t>());
    const int64_t hold = hold_j.get<int64_t>();
    server_.faults_.NeverReadConnections(count, std::chrono::milliseconds(hold));
    return Json(req, 200, nlohmann::json::object());
  } else if (req.method == "POST" && what == "drop-connections") {
    Json(req, 200, nlohmann::json::object());
    // Why: the listener cannot be restarted from one of its own worker threads.
    server_.DropConnectionsAsync();
    return 200;
  } else if (req.method == "POST" && what == "restart") {
    nlohmann::json body = req.body.empty() ? nlohmann::json::object()
                                           : nlohmann::json::parse(req.body, nullptr, false);
    if (!body.is_object()) return Error(req, BadRequestError("body must be a JSON object"));
    auto millis = [&](const char* field, std::chrono::milliseconds* out) {
      auto v = body.find(field);
      if (v != body.end() && (!v->is_number_integer() || v->get<int64_t>() < 0)) return false;
      *out = std::chrono::milliseconds(v == body.end() ? 0 : v->get<int64_t>());
      return true;
    };
    std::chrono::milliseconds ms{0}, startup{0};
    if (!millis("downMs", &ms)) return Error(req, BadRequestError("downMs must be an integer >= 0"));
    if (!millis("startupMs", &startup)) {
      return Error(req, BadRequestError("startupMs must be an integer >= 0"));
    }
    Json(req, 200, {{"downMs", ms.count()}, {"startupMs", startup.count()}});
    // Why: as for drop-connections, the listener stops on a helper thread.
    server_.RestartAsync(ms, startup);
    return 200;
  }
  ApiError e;
  e.code = 404;
  e.reason = "NotFound";
  e.message = "unknown admin endpoint " + req.path;
  return Error(req, e);
}

}  // namespace routestatus::apiserver
