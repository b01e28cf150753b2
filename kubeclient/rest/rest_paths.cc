#include "kubeclient/rest/rest_paths.h"

#include <cctype>

namespace routestatus::kubeclient::rest {
namespace {

void AddParam(std::string* q, const char* key, const std::string& value) {
  if (value.empty()) return;
  q->append(q->empty() ? "?" : "&");
  q->append(key);
  q->push_back('=');
  q->append(PercentEncode(value));
}

}  // namespace

std::string PercentEncode(std::string_view text) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(ch);
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

std::string ResourcePath(const ResourceRef& res, const std::string& ns, const std::string& name,
                         const std::string& subresource) {
  std::string p = res.group.empty() ? "/api/" + res.version
                                    : "/apis/" + res.group + "/" + res.version;
  if (res.namespaced && !ns.empty()) p += "/namespaces/" + PercentEncode(ns);
  p += "/" + res.resource;
  if (!name.empty()) {
    p += "/" + PercentEncode(name);
    if (!subresource.empty()) p += "/" + subresource;
  }
  return p;
}

std::string ListQuery(const ListOptions& o) {
  std::string q;
  if (o.limit > 0) AddParam(&q, "limit", std::to_string(o.limit));
  AddParam(&q, "continue", o.continue_token);
  AddParam(&q, "labelSelector", o.label_selector);
  AddParam(&q, "fieldSelector", o.field_selector);
  AddParam(&q, "resourceVersion", o.resource_version);
  return q;
}

std::string WatchQuery(const WatchOptions& o) {
  std::string q = "?watch=true";
  if (o.allow_bookmarks) q += "&allowWatchBookmarks=true";
  if (o.timeout.count() > 0) q += "&timeoutSeconds=" + std::to_string(o.timeout.count());
  if (o.send_initial_events) q += "&sendInitialEvents=true&resourceVersionMatch=NotOlderThan";
  AddParam(&q, "resourceVersion", o.resource_version);
  AddParam(&q, "labelSelector", o.label_selector);
  AddParam(&q, "fieldSelector", o.field_selector);
  return q;
}

std::string DefaultUserAgent(const std::string& version) {
#if defined(__linux__)
  const char* os = "linux";
#elif defined(__APPLE__)
  const char* os = "darwin";
#else
  const char* os = "unknown";
#endif
#if defined(__x86_64__)
  const char* arch = "amd64";
#elif defined(__aarch64__)
  const char* arch = "arm64";
#else
  const char* arch = "unknown";
#endif
  return "routestatus/" + (version.empty() ? std::string("dev") : version) + " (" + os + "/" +
         arch + ")";
}

std::optional<std::chrono::milliseconds> ParseRetryAfter(std::string_view value) {
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
  if (value.empty() || value.size() > 9) return std::nullopt;
  int64_t seconds = 0;
  for (char c : value) {
    if (c < '0' || c > '9') return std::nullopt;
    seconds = seconds * 10 + (c - '0');
  }
  return std::chrono::milliseconds(seconds * 1000);
}

}  // namespace routestatus::kubeclient::rest
