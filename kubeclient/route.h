#pragma once

#include <cstdint>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "base/status.h"
#include "kubeclient/compact_string.h"
#include "kubeclient/json_reader.h"
#include "kubeclient/labels.h"

namespace routestatus::kubeclient {

// The parts of metadata the controller uses. Value type.
// Its strings are CompactString (16 bytes, short texts inline): the cache
// keeps one per route.
struct ObjectMeta {
  CompactString name;
  CompactString namespace_name;  // empty for cluster-scoped objects
  CompactString uid;
  CompactString resource_version;
  int64_t generation = 0;
  Labels labels;
  // metadata.creationTimestamp in seconds since the epoch (0 when absent).
  // Why not the text too: kube sends whole seconds, FormatRfc3339 gives it
  // back, and 100,000 cached copies of it cost ~6 MB.
  int64_t creation_unix = 0;
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

// spec.tls's certificate material and insecure policy as given (what
// openshift-router's extended validation checks). Value type.
struct RouteTlsMaterial {
  std::string certificate;
  std::string key;
  std::string ca_certificate;
  std::string destination_ca_certificate;
  std::string insecure_edge_termination_policy;
};

// The parts of Route.spec the controller uses (admission's claim keys and
// the decision; spec.to is not read, so not kept).
struct RouteSpec {
  CompactString host;
  CompactString subdomain;
  CompactString path;
  CompactString wildcard_policy;  // "" | "None" | "Subdomain" | anything (invalid)
  CompactString tls_termination;  // "" when spec.tls is absent
  // spec.tls's other fields; null when it sets none of them (most routes:
  // no allocation). Shared, immutable.
  std::shared_ptr<const RouteTlsMaterial> tls_material;
};

// A route.openshift.io/v1 Route as the cache keeps it: typed metadata and
// spec (what admission, the decision and the contention tracker read) and
// status.ingress as its exact JSON text, the one part a status write sends
// back (other routers' entries verbatim, unknown fields included). Nothing
// else of the object is kept (managedFields, annotations, spec.tls
// certificates, other status fields...): the status write is a merge patch
// of status.ingress (IngressStatusPatch), not the whole object. Entries are
// decoded on demand (Ingress, FindIngress): two entries typed cost more than
// twice their text. Immutable once built; share it as
// std::shared_ptr<const Route>.
struct Route {
  ObjectMeta metadata;
  RouteSpec spec;
  // status.ingress's exact JSON text (an array), "" when absent or null.
  CompactString ingress_json;

  // "namespace/name", the cache and work-queue key.
  std::string Key() const;
  // status.ingress in server order, decoded from ingress_json (empty when
  // absent or not an array). Thread-safe; ~1 us per entry.
  std::vector<RouteIngress> Ingress() const;
  // The first entry whose routerName is `router_name`, decoded from
  // ingress_json; nullopt when there is none. Thread-safe.
  std::optional<RouteIngress> FindIngress(std::string_view router_name) const;
  // Replaces status.ingress with `entries`. For building routes by hand
  // (tests, fakes); a decoded route is immutable.
  void SetIngress(const std::vector<RouteIngress>& entries);
};

// A v1 Namespace: only metadata matters (namespace label selectors).
struct Namespace {
  ObjectMeta metadata;
  std::string Key() const { return metadata.name; }
};

// Decodes a Route from a JSON object (status.ingress kept as compact text).
// Returns kInvalid with a message naming the bad field for wrong shapes.
StatusOr<Route> RouteFromJson(const nlohmann::json& object);
// Decodes a Route from JSON text in one pass without building a tree, with
// the same typed result and the same errors as RouteFromJson (kInvalid for
// invalid JSON or wrong shapes; duplicate keys: the last one wins). Keeps
// the text of status.ingress itself as ingress_json, so other routers'
// entries survive byte for byte. Never throws; thread-safe.
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

// The JSON merge patch (RFC 7386, application/merge-patch+json) for the
// route's status subresource that leaves status.ingress as cached with our
// router's entry replaced in place (or appended when absent), or removed
// when `entry` is nullopt; duplicates of ours are reduced to one. Other
// routers' entries and their order are sent with the values cached (keys
// and values as they were; a merge patch replaces an array whole). Guarded by the cached resourceVersion:
//   {"metadata":{"resourceVersion":RV},"status":{"ingress":[...]}}
// which kube-apiserver answers 409 when the version is stale, as a PUT.
// kInvalid when ingress_json is not an array or the route has no
// resourceVersion.
StatusOr<nlohmann::json> IngressStatusPatch(const Route& route, std::string_view router_name,
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
