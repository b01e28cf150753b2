#pragma once

// The type checks kube-apiserver's decoding of metadata into ObjectMeta
// makes on labels and annotations (map[string]string), in Go's words. Pure
// functions; thread-safe.

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace routestatus::apiserver {

// Go's UnmarshalTypeError text for the first label or annotation of
// `object` that is not a string (or for labels/annotations that are not an
// object), e.g. "json: cannot unmarshal number into Go struct field
// ObjectMeta.metadata.annotations of type string"; nullopt when both are
// absent, null, or maps whose values are strings or null (Go reads null as
// ""). Keys are checked in sorted order, not the body's.
std::optional<std::string> ObjectMetaTypeError(const nlohmann::json& object);

// What decoding into ObjectMeta and back leaves of labels and annotations
// that passed ObjectMetaTypeError: a null value becomes "" (Go reads null
// into a string as its zero value) and a null map is dropped (a nil map is
// omitted). Anything else is left alone.
void NormalizeObjectMetaMaps(nlohmann::json* object);

// kube's transformDecodeError for a body whose kind is known: `KIND in
// version "VERSION" cannot be handled as a TARGET: DETAIL`. The body's kind
// and apiVersion, each defaulted from `default_kind` and `default_version`
// as kube defaults them from the request's path.
std::string CannotBeHandledMessage(const nlohmann::json& object, const std::string& default_kind,
                                   const std::string& default_version,
                                   const std::string& detail);

}  // namespace routestatus::apiserver
