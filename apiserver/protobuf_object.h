#pragma once

// Decoding of Kubernetes protobuf request bodies
// (Content-Type: application/vnd.kubernetes.protobuf) into the JSON a JSON
// client would have sent for the same object. kubectl (client-go typed
// clients) sends built-in kinds this way, e.g. `kubectl create namespace`.
//
// The body is the 4-byte magic "k8s\0" followed by a runtime.Unknown message
// {typeMeta = 1 {apiVersion = 1, kind = 2}, raw = 2, contentEncoding = 3,
// contentType = 4}; `raw` is the object's own message (for v1.Namespace:
// metadata = 1, spec = 2 {finalizers = 1}, status = 3 {phase = 1}).
// Pure functions; thread-safe.

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace routestatus::apiserver {

inline constexpr char kProtobufMediaType[] = "application/vnd.kubernetes.protobuf";

// The envelope of a Kubernetes protobuf body. `raw` points into the input.
struct ProtobufEnvelope {
  std::string api_version;
  std::string kind;
  std::string_view raw;
  std::string content_encoding;
  std::string content_type;
};

// Parses "k8s\0" + runtime.Unknown. nullopt (and *error set) if the magic is
// missing or the message is malformed.
std::optional<ProtobufEnvelope> ParseProtobufEnvelope(std::string_view body, std::string* error);

// Decodes a v1.Namespace message (the envelope's raw bytes) into JSON:
// apiVersion, kind, metadata (name, generateName, namespace, uid,
// resourceVersion, labels, annotations, ownerReferences, finalizers),
// spec.finalizers and status.phase. Fields the server sets itself
// (selfLink, generation, creation/deletion timestamps, grace period,
// managedFields) are checked for their wire type and dropped, as
// kube-apiserver ignores them on create and update; unknown fields are
// skipped. Empty strings count as absent (as in Go's JSON encoding).
// nullopt (and *error set) on malformed input or invalid UTF-8.
std::optional<nlohmann::json> DecodeNamespace(std::string_view raw, std::string* error);

// Decodes a v1.DeleteOptions message (gracePeriodSeconds = 1,
// preconditions = 2 {uid = 1, resourceVersion = 2}, orphanDependents = 3,
// propagationPolicy = 4, dryRun = 5) into its JSON form.
std::optional<nlohmann::json> DecodeDeleteOptions(std::string_view raw, std::string* error);

}  // namespace routestatus::apiserver
