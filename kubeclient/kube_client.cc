#include "kubeclient/kube_client.h"

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

std::string WatchEvent::ResourceVersion() const {
  if (!object.is_object()) return "";
  auto m = object.find("metadata");
  if (m == object.end() || !m->is_object()) return "";
  auto rv = m->find("resourceVersion");
  if (rv == m->end() || !rv->is_string()) return "";
  return rv->get<std::string>();
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
  return Status(code, std::move(message), retry_after);
}

}  // namespace routestatus::kubeclient
