#include "kubeclient/kube_client.h"

#include "kubeclient/route.h"

namespace routestatus::kubeclient {

using nlohmann::json;

const ResourceRef& RoutesResource() {
  static const ResourceRef kRoutes{"route.openshift.io", "v1", "routes", true};
  return kRoutes;
}

const ResourceRef& NamespacesResource() {
  static const ResourceRef kNamespaces{"", "v1", "namespaces", false};
  return kNamespaces;
}

bool ParseWatchEventType(std::string_view text, WatchEventType* type) {
  if (text == "ADDED") *type = WatchEventType::kAdded;
  else if (text == "MODIFIED") *type = WatchEventType::kModified;
  else if (text == "DELETED") *type = WatchEventType::kDeleted;
  else if (text == "BOOKMARK") *type = WatchEventType::kBookmark;
  else if (text == "ERROR") *type = WatchEventType::kError;
  else return false;
  return true;
}

const char* WatchEventTypeName(WatchEventType type) {
  switch (type) {
    case WatchEventType::kAdded: return "ADDED";
    case WatchEventType::kModified: return "MODIFIED";
    case WatchEventType::kDeleted: return "DELETED";
    case WatchEventType::kBookmark: return "BOOKMARK";
    case WatchEventType::kError: return "ERROR";
  }
  return "UNKNOWN";
}

std::string ResourceVersionOf(const nlohmann::json& object) {
  if (!object.is_object()) return "";
  auto m = object.find("metadata");
  if (m == object.end() || !m->is_object()) return "";
  auto rv = m->find("resourceVersion");
  if (rv == m->end() || !rv->is_string()) return "";
  return rv->get<std::string>();
}

std::string WatchEvent::ResourceVersion() const { return ResourceVersionOf(object); }

bool IsInitialEventsEnd(const nlohmann::json& bookmark) {
  if (!bookmark.is_object()) return false;
  auto m = bookmark.find("metadata");
  if (m == bookmark.end() || !m->is_object()) return false;
  auto a = m->find("annotations");
  if (a == m->end() || !a->is_object()) return false;
  auto end = a->find("k8s.io/initial-events-end");
  return end != a->end() && end->is_string() && end->get<std::string>() == "true";
}

Status WatchEvent::ErrorStatus() const {
  int code = 500;
  if (object.is_object()) {
    auto c = object.find("code");
    if (c != object.end() && c->is_number_integer()) code = c->get<int>();
  }
  return StatusFromResponse(code, object.is_null() ? "" : object.dump());
}

StatusOr<WatchEvent> DecodeWatchEvent(std::string_view line) {
  json doc = json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    return Status(StatusCode::kInvalid, "watch event is not a JSON object");
  }
  auto t = doc.find("type");
  if (t == doc.end() || !t->is_string()) {
    return Status(StatusCode::kInvalid, "watch event has no type");
  }
  WatchEvent event;
  if (!ParseWatchEventType(t->get_ref<const std::string&>(), &event.type)) {
    return Status(StatusCode::kInvalid, "unknown watch event type " + t->get<std::string>());
  }
  auto o = doc.find("object");
  if (o == doc.end() || !o->is_object()) {
    return Status(StatusCode::kInvalid, "watch event has no object");
  }
  event.object = std::move(*o);
  return event;
}

StatusOr<ListPage> KubeClient::ListEach(const ResourceRef& res, const std::string& ns,
                                        const ListOptions& options,
                                        const std::function<void(std::string_view item)>& each) {
  auto raw = ListRaw(res, ns, options);
  if (!raw.ok()) return raw.status();
  for (size_t i = 0; i < raw->size(); ++i) each(raw->Item(i));
  ListPage page;
  page.resource_version = std::move(raw->resource_version);
  page.continue_token = std::move(raw->continue_token);
  return page;
}

StatusOr<RawListPage> KubeClient::ListRaw(const ResourceRef& res, const std::string& ns,
                                          const ListOptions& options) {
  auto page = List(res, ns, options);
  if (!page.ok()) return page.status();
  RawListPage raw;
  raw.resource_version = std::move(page->resource_version);
  raw.continue_token = std::move(page->continue_token);
  raw.items.reserve(page->items.size());
  for (auto& item : page->items) {
    size_t at = raw.body.size();
    // Why: dump() throws on invalid UTF-8 unless told to replace it.
    raw.body += item.dump(-1, ' ', false, json::error_handler_t::replace);
    raw.items.emplace_back(at, raw.body.size() - at);
    item = json();
  }
  return raw;
}

StatusOr<RawListPage> RawListPageFromText(std::string body) {
  RawListPage page;
  const Status invalid(StatusCode::kInvalid, "list response is not a JSON object");
  {
    JsonReader r(body);
    r.SkipBom();
    if (!r.BeginObject()) return invalid;
    bool items_bad = false;
    std::string_view key;
    for (int more; (more = r.NextMember(&key)) != 0;) {
      if (more < 0) return invalid;
      bool ok = true;
      if (key == "items") {
        page.items.clear();
        char c = r.Peek();
        items_bad = c != '[' && c != 'n';
        if (c == '[') {
          r.BeginArray();
          for (int e; ok && (e = r.NextElement()) != 0;) {
            if (e < 0) return invalid;
            r.Peek();
            size_t at = r.pos() - body.data();
            ok = r.SkipValue();
            page.items.emplace_back(at, r.pos() - body.data() - at);
          }
        } else {
          ok = r.SkipValue();
        }
      } else if (key == "metadata" && r.Peek() == '{') {
        page.resource_version.clear();
        page.continue_token.clear();
        r.BeginObject();
        for (int m; ok && (m = r.NextMember(&key)) != 0;) {
          if (m < 0) return invalid;
          std::string* field = key == "resourceVersion" ? &page.resource_version
                               : key == "continue"      ? &page.continue_token
                                                        : nullptr;
          if (field != nullptr && r.Peek() == '"') {
            ok = r.String(field);
          } else {
            if (field != nullptr) field->clear();
            ok = r.SkipValue();
          }
        }
      } else {
        if (key == "metadata") page.resource_version.clear(), page.continue_token.clear();
        ok = r.SkipValue();
      }
      if (!ok) return invalid;
    }
    if (!r.AtEnd()) return invalid;
    if (items_bad) return Status(StatusCode::kInvalid, "list response: items is not an array");
  }
  page.body = std::move(body);
  return page;
}

bool SpecChanged(const json& before, const json& after) {
  if (!before.is_object() || !after.is_object()) return before != after;
  auto counted = [](const std::string& key) { return key != "metadata" && key != "status"; };
  size_t counted_before = 0;
  for (auto it = before.begin(); it != before.end(); ++it) {
    if (!counted(it.key())) continue;
    ++counted_before;
    auto other = after.find(it.key());
    if (other == after.end() || *other != it.value()) return true;
  }
  size_t counted_after = 0;
  for (auto it = after.begin(); it != after.end(); ++it) counted_after += counted(it.key());
  return counted_before != counted_after;
}

StatusOr<WatchEvent> DecodeWatchEventText(std::string_view line) {
  const Status not_object(StatusCode::kInvalid, "watch event is not a JSON object");
  JsonReader r(line);
  r.SkipBom();
  if (r.Peek() != '{') return not_object;
  r.BeginObject();
  bool has_type = false, type_is_string = false;
  std::string type;
  std::string_view object;  // the last "object" member's text
  bool object_is_object = false;
  std::string_view key;
  for (int more; (more = r.NextMember(&key)) != 0;) {
    if (more < 0) return not_object;
    bool ok;
    if (key == "type") {
      has_type = true;
      type_is_string = r.Peek() == '"';
      ok = type_is_string ? r.String(&type) : r.SkipValue();
    } else if (key == "object") {
      object_is_object = r.Peek() == '{';
      const char* start = r.pos();
      ok = r.SkipValue();
      object = std::string_view(start, r.pos() - start);
    } else {
      ok = r.SkipValue();
    }
    if (!ok) return not_object;
  }
  if (!r.AtEnd()) return not_object;
  if (!has_type || !type_is_string) return Status(StatusCode::kInvalid, "watch event has no type");
  WatchEvent event;
  if (!ParseWatchEventType(type, &event.type)) {
    return Status(StatusCode::kInvalid, "unknown watch event type " + type);
  }
  if (!object_is_object) return Status(StatusCode::kInvalid, "watch event has no object");
  if (event.type == WatchEventType::kBookmark || event.type == WatchEventType::kError) {
    event.object = json::parse(object.begin(), object.end(), nullptr, /*allow_exceptions=*/false);
  } else {
    event.object_text.assign(object.data(), object.size());
  }
  return event;
}

namespace {

StatusCode CodeFromReason(const std::string& reason) {
  if (reason == "NotFound") return StatusCode::kNotFound;
  if (reason == "AlreadyExists") return StatusCode::kAlreadyExists;
  if (reason == "Conflict") return StatusCode::kConflict;
  if (reason == "Gone" || reason == "Expired") return StatusCode::kGone;
  if (reason == "TooManyRequests") return StatusCode::kTooManyRequests;
  if (reason == "ServiceUnavailable" || reason == "InternalError") return StatusCode::kUnavailable;
  if (reason == "Timeout" || reason == "ServerTimeout") return StatusCode::kTimeout;
  if (reason == "Unauthorized") return StatusCode::kUnauthorized;
  if (reason == "Forbidden") return StatusCode::kForbidden;
  if (reason == "Invalid" || reason == "BadRequest") return StatusCode::kInvalid;
  return StatusCode::kOk;  // unknown: decide by HTTP code
}

StatusCode CodeFromHttp(int http_code) {
  switch (http_code) {
    case 400: return StatusCode::kInvalid;
    case 401: return StatusCode::kUnauthorized;
    case 403: return StatusCode::kForbidden;
    case 404: return StatusCode::kNotFound;
    case 409: return StatusCode::kConflict;
    case 410: return StatusCode::kGone;
    case 422: return StatusCode::kInvalid;
    case 429: return StatusCode::kTooManyRequests;
    case 504: return StatusCode::kTimeout;
    default: break;
  }
  if (http_code >= 500) return StatusCode::kUnavailable;
  if (http_code >= 400) return StatusCode::kInvalid;
  return StatusCode::kInternal;
}

}  // namespace

Status StatusFromResponse(int http_code, std::string_view body,
                          std::optional<std::chrono::milliseconds> retry_after) {
  std::string message;
  StatusCode code = StatusCode::kOk;
  json doc = json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
  // Why: json::value() throws when "kind" is not a string; check the type.
  const bool is_status = !doc.is_discarded() && doc.is_object() && doc.contains("kind") &&
                         doc["kind"].is_string() && doc["kind"] == "Status";
  if (is_status) {
    if (doc.contains("message") && doc["message"].is_string()) message = doc["message"];
    if (doc.contains("reason") && doc["reason"].is_string()) code = CodeFromReason(doc["reason"]);
    if (!retry_after && doc.contains("details") && doc["details"].is_object()) {
      auto& d = doc["details"];
      if (d.contains("retryAfterSeconds") && d["retryAfterSeconds"].is_number_integer()) {
        retry_after = std::chrono::seconds(d["retryAfterSeconds"].get<int64_t>());
      }
    }
  } else {
    // Why: proxies and load balancers answer with HTML or plain text; keep a
    // short, printable excerpt so the log says what came back.
    std::string excerpt(body.substr(0, 200));
    for (char& c : excerpt) {
      if (static_cast<unsigned char>(c) < 0x20) c = ' ';
    }
    message = "HTTP " + std::to_string(http_code) + (excerpt.empty() ? "" : ": " + excerpt);
  }
  if (code == StatusCode::kOk) code = CodeFromHttp(http_code);
  if (message.empty()) message = "HTTP " + std::to_string(http_code);
  return Status(code, std::move(message), retry_after, http_code);
}

}  // namespace routestatus::kubeclient
