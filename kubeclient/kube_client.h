#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace routestatus::kubeclient {

// Which API resource a request is about.
struct ResourceRef {
  std::string group;     // "" for the core group
  std::string version;   // "v1"
  std::string resource;  // plural: "routes", "namespaces"
  bool namespaced = true;
};

// route.openshift.io/v1 routes (namespaced, with a status subresource).
const ResourceRef& RoutesResource();
// v1 namespaces (cluster-scoped).
const ResourceRef& NamespacesResource();

// Options of a list request. Empty strings are omitted from the query.
struct ListOptions {
  std::string label_selector;
  std::string field_selector;
  int64_t limit = 0;               // 0 = no paging
  std::string continue_token;      // from the previous page
  std::string resource_version;    // "" = most recent (a quorum read)
};

// One page of a list: the items as JSON objects, and the list metadata.
struct ListPage {
  std::vector<nlohmann::json> items;
  std::string resource_version;  // the list's metadata.resourceVersion
  std::string continue_token;    // "" on the last page
};

// One page of a list as text: the response body and where each element of
// "items" is in it (its exact JSON text), plus the list metadata. Lets
// decoders skip the per-page JSON tree. Value type.
struct RawListPage {
  std::string body;
  std::vector<std::pair<size_t, size_t>> items;  // offset and length in body
  std::string resource_version;  // the list's metadata.resourceVersion
  std::string continue_token;    // "" on the last page

  size_t size() const { return items.size(); }
  // The exact text of item i. REQUIRES: i < size().
  std::string_view Item(size_t i) const {
    return std::string_view(body).substr(items[i].first, items[i].second);
  }
};

// Splits a list response body ({"metadata":{..},"items":[..]}) without
// building a tree. kInvalid when the body is not a valid JSON object or
// "items" is neither null nor an array; other list fields are ignored.
StatusOr<RawListPage> RawListPageFromText(std::string body);

// Options of a watch request.
struct WatchOptions {
  std::string resource_version;     // resume after this version ("" = now)
  std::string label_selector;
  std::string field_selector;
  bool allow_bookmarks = true;
  std::chrono::seconds timeout{300};  // the server's timeoutSeconds
  // A watch list (KEP-3157, kube 1.27+ with WatchList): the server first
  // sends the current state as ADDED events, then a BOOKMARK annotated
  // k8s.io/initial-events-end: "true" (IsInitialEventsEnd). Sent as
  // sendInitialEvents=true&resourceVersionMatch=NotOlderThan; needs
  // allow_bookmarks. Servers without it answer 422 Invalid (kube 1.26:
  // "resourceVersionMatch is forbidden for watch").
  bool send_initial_events = false;
};

// True when `bookmark` (a BOOKMARK event's object) ends a watch list's
// initial events: metadata.annotations["k8s.io/initial-events-end"] is "true".
bool IsInitialEventsEnd(const nlohmann::json& bookmark);

enum class WatchEventType { kAdded, kModified, kDeleted, kBookmark, kError };

// "ADDED" -> kAdded etc.; false for unknown text.
bool ParseWatchEventType(std::string_view text, WatchEventType* type);
const char* WatchEventTypeName(WatchEventType type);

// object.metadata.resourceVersion when it is a string, else "" (any other
// shape, including a non-object). Pure.
std::string ResourceVersionOf(const nlohmann::json& object);

// One event of a watch stream. For kError, `object` is a Kubernetes Status
// object (e.g. 410 "too old resource version"); ErrorStatus() decodes it.
struct WatchEvent {
  WatchEventType type = WatchEventType::kAdded;
  nlohmann::json object;
  // The Status carried by a kError event, as a Status value.
  Status ErrorStatus() const;
  // object.metadata.resourceVersion, or "" when absent.
  std::string ResourceVersion() const;
  // Set only by DecodeWatchEventText (WatchStream::NextRaw) for kAdded,
  // kModified and kDeleted: the object's exact JSON text, and then `object`
  // is left null (ResourceVersion() is ""): decode the text instead.
  std::string object_text;
};

// Decodes one line of a watch stream ({"type":..,"object":..}); never throws.
StatusOr<WatchEvent> DecodeWatchEvent(std::string_view line);
// The same checks and errors, but without a tree for kAdded/kModified/
// kDeleted: their object stays text (WatchEvent::object_text).
StatusOr<WatchEvent> DecodeWatchEventText(std::string_view line);
// True when `before` and `after` differ in anything but metadata and status:
// what makes kube-apiserver bump metadata.generation of a custom resource.
// Compares in place (no copies). Pure.
bool SpecChanged(const nlohmann::json& before, const nlohmann::json& after);
// Decodes a Kubernetes Status object (or an error response body with its
// HTTP code) into a Status; unknown bodies (HTML, empty) still give a code
// from the HTTP status.
Status StatusFromResponse(int http_code, std::string_view body,
                          std::optional<std::chrono::milliseconds> retry_after = std::nullopt);

// An open watch. Next() is called from one thread; Cancel() may be called
// from any thread and makes a blocked Next() return kCancelled promptly.
class WatchStream {
 public:
  virtual ~WatchStream() = default;
  // The next event. kClosed when the server ended the stream normally;
  // other codes for transport or decoding failures.
  virtual StatusOr<WatchEvent> Next() = 0;
  // Next(), but an implementation may return kAdded/kModified/kDeleted
  // events as text (WatchEvent::object_text, object null), saving the tree.
  // The default calls Next().
  virtual StatusOr<WatchEvent> NextRaw() { return Next(); }
  // Thread-safe; idempotent.
  virtual void Cancel() = 0;
};

// The Kubernetes API as the controller, tests and tools use it. Objects are
// JSON; typed decoding lives in route.h. Implementations are thread-safe.
// Namespaced calls with an empty `ns` act on all namespaces where the API
// allows it (list, watch).
class KubeClient {
 public:
  virtual ~KubeClient() = default;

  virtual StatusOr<nlohmann::json> Get(const ResourceRef& res, const std::string& ns,
                                       const std::string& name) = 0;
  virtual StatusOr<ListPage> List(const ResourceRef& res, const std::string& ns,
                                  const ListOptions& options) = 0;
  // List() with each item as its exact JSON text (RawListPage). The default
  // implementation calls List() and dumps the items; clients that read a
  // response body override it to skip the tree.
  virtual StatusOr<RawListPage> ListRaw(const ResourceRef& res, const std::string& ns,
                                        const ListOptions& options);
  // One page of a list, each item handed to `each` as its exact JSON text
  // as it is read; the list's metadata is returned (ListPage::items stays
  // empty). The default implementation calls ListRaw(); clients that read
  // a response body override it to hold one item at a time (a list from
  // kube-apiserver's watch cache comes in one page, whatever the limit).
  virtual StatusOr<ListPage> ListEach(const ResourceRef& res, const std::string& ns,
                                      const ListOptions& options,
                                      const std::function<void(std::string_view item)>& each);
  virtual StatusOr<std::unique_ptr<WatchStream>> Watch(const ResourceRef& res,
                                                       const std::string& ns,
                                                       const WatchOptions& options) = 0;
  virtual StatusOr<nlohmann::json> Create(const ResourceRef& res, const std::string& ns,
                                          const nlohmann::json& object) = 0;
  // PUT of the whole object, guarded by its metadata.resourceVersion.
  virtual StatusOr<nlohmann::json> Update(const ResourceRef& res, const nlohmann::json& object) = 0;
  // PUT .../status, guarded by the object's metadata.resourceVersion.
  virtual StatusOr<nlohmann::json> UpdateStatus(const ResourceRef& res,
                                                const nlohmann::json& object) = 0;
  // PATCH .../name/status with a JSON merge patch (RFC 7386, sent as
  // application/merge-patch+json): only what `patch` names changes, arrays
  // are replaced whole. Guarded when the patch names
  // metadata.resourceVersion: a stale one is kConflict, as for
  // UpdateStatus; a missing object is kNotFound.
  virtual StatusOr<nlohmann::json> MergePatchStatus(const ResourceRef& res, const std::string& ns,
                                                    const std::string& name,
                                                    const nlohmann::json& patch) = 0;
  virtual Status Delete(const ResourceRef& res, const std::string& ns,
                        const std::string& name) = 0;
  // For process shutdown: every request in flight and every later one, and
  // every wait inside the client (rate limit, Retry-After), ends promptly
  // with kCancelled. Irreversible; thread-safe. Open watch streams are
  // cancelled by their owners. The default does nothing (in-memory fakes
  // never block).
  virtual void Shutdown() {}
};

}  // namespace routestatus::kubeclient
