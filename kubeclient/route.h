#pragma once

#include <cstdint>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "base/status.h"
#include "kubeclient/json_reader.h"
#include "kubeclient/labels.h"

namespace routestatus::kubeclient {

// The parts of metadata the controller uses. Value type.
struct ObjectMeta {
  std::string name;
  std::string namespace_name;  // empty for cluster-scoped objects
  std::string uid;
  std::string resource_version;
  int64_t generation = 0;
  Labels labels;
  std::string creation_timestamp;  // RFC 3339 as sent by the server
  int64_t creation_unix = 0;       // creation_timestamp in seconds since epoch
};

// One condition of a status.ingress entry.
struct RouteCondition {
  std::string type;    // "Admitted"
  std::string status;  // "True" | "False" | "Unknown"
  std::string reason;
  std::string message;
  std::string last_transition_time;  // RFC 3339, whole seconds; may be empty
};

// One router's entry of status.ingress[], keyed by router_name.
struct RouteIngress {
  std::string router_name;
  std::string host;
  std::string router_canonical_hostname;
  std::string wildcard_policy;
  std::vector<RouteCondition> conditions;
};

// The parts of Route.spec the controller uses.
struct RouteSpec {
  std::string host;
  std::string subdomain;
  std::string path;
  std::string wildcard_policy;  // "" | "None" | "Subdomain" | anything (invalid)
  std::string to_kind;
  std::string to_name;
  std::string tls_termination;  // "" when spec.tls is absent
};

// A route.openshift.io/v1 Route: typed metadata and spec plus the exact JSON
// text it was decoded from, so that a status write sends back every field,
// including the ones this model does not know. status.ingress is not kept
// typed: it is decoded from raw_json on demand (Ingress, FindIngress), which
// saves about 1 KB per cached route (two entries typed cost more than twice
// their text). Immutable once built; share it as std::shared_ptr<const Route>.
struct Route {
  ObjectMeta metadata;
  RouteSpec spec;
  std::string raw_json;  // the whole object's exact JSON text

  // "namespace/name", the cache and work-queue key.
  std::string Key() const;
  // status.ingress in server order, decoded from raw_json (empty when absent
  // or when raw_json is not a JSON object). Thread-safe; ~1 us per entry.
  std::vector<RouteIngress> Ingress() const;
  // The first entry whose routerName is `router_name`, decoded from
  // raw_json; nullopt when there is none. Thread-safe.
  std::optional<RouteIngress> FindIngress(std::string_view router_name) const;
  // Replaces status.ingress in raw_json with `entries` (raw_json "{}" is
  // taken when empty), keeping every other field. For building routes by
  // hand (tests, fakes); a decoded route is immutable.
  void SetIngress(const std::vector<RouteIngress>& entries);
};

// A v1 Namespace: only metadata matters (namespace label selectors).
struct Namespace {
  ObjectMeta metadata;
  std::string Key() const { return metadata.name; }
};

// Decodes a Route from a JSON object. Keeps the compact text in raw_json.
// Returns kInvalid with a message naming the bad field for wrong shapes.
StatusOr<Route> RouteFromJson(const nlohmann::json& object);
// Decodes a Route from JSON text in one pass without building a tree, with
// the same typed result and the same errors as RouteFromJson (kInvalid for
// invalid JSON or wrong shapes; duplicate keys: the last one wins). Keeps
// `text` itself (surrounding whitespace trimmed) as raw_json, so unknown
// fields survive byte for byte. Never throws; thread-safe.
StatusOr<Route> RouteFromText(std::string_view text);
// Decodes a Namespace from a JSON object.
StatusOr<Namespace> NamespaceFromJson(const nlohmann::json& object);
// Decodes metadata (used by both kinds). Missing name is kInvalid.
StatusOr<ObjectMeta> ObjectMetaFromJson(const nlohmann::json& object);

// The JSON form of one status.ingress entry (lastTransitionTime omitted when
// empty).
nlohmann::json IngressToJson(const RouteIngress& entry);
// Decodes one status.ingress entry; tolerant of missing fields.
RouteIngress IngressFromJson(const nlohmann::json& entry);

// The route's full JSON with our router's status.ingress entry replaced in
// place (or appended when absent), or removed when `entry` is nullopt. Every
// other field, other routers' entries and their order are kept exactly.
StatusOr<nlohmann::json> WithIngressEntry(const Route& route, std::string_view router_name,
                                          const std::optional<RouteIngress>& entry);

// Entry equality for "is a write needed": host, canonical hostname, wildcard
// policy, router name, and the conditions compared by type/status/reason/
// message in any order; lastTransitionTime is ignored.
bool IngressEqual(const RouteIngress& a, const RouteIngress& b);
// A 64-bit fingerprint of exactly what IngressEqual compares: equal entries
// have equal fingerprints; different ones collide with probability ~2^-64.
// For callers that remember many entries only to compare them later.
uint64_t IngressFingerprint(const RouteIngress& entry);

// Parses an RFC 3339 timestamp ("2026-11-29T14:00:00Z", fractional seconds
// and offsets accepted) into seconds since the epoch; nullopt if malformed.
std::optional<int64_t> ParseRfc3339(std::string_view text);
// Formats seconds since the epoch as RFC 3339 UTC with whole seconds.
std::string FormatRfc3339(int64_t unix_seconds);

}  // namespace routestatus::kubeclient
