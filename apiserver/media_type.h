#pragma once

#include <optional>
#include <string>

namespace routestatus::apiserver {

// The form a resource response takes, chosen from the Accept header as
// kube-apiserver does: plain JSON, or a meta.k8s.io conversion
// (application/json;as=Table|PartialObjectMetadata|PartialObjectMetadataList;
// g=meta.k8s.io;v=v1|v1beta1). Value type.
struct ResponseFormat {
  enum class Kind { kJson, kTable, kPartialObjectMetadata, kPartialObjectMetadataList };
  Kind kind = Kind::kJson;
  std::string api_version;  // "meta.k8s.io/v1" or "meta.k8s.io/v1beta1" for conversions

  bool converted() const { return kind != Kind::kJson; }
  // The Content-Type of a response in this form: application/json, as
  // kube-apiserver sends for conversions too.
  std::string ContentType() const;
};

// The first acceptable media range of `accept` (ranges ordered by q, then as
// listed; q=0 ranges skipped): application/json (or application/*, */*),
// optionally with a supported as=/g=/v= conversion. An empty header means
// JSON. nullopt when nothing listed is acceptable (406 Not Acceptable).
std::optional<ResponseFormat> NegotiateResponseFormat(const std::string& accept);

// The media types the server can produce (for the 406 message).
const char* AcceptableMediaTypes();

}  // namespace routestatus::apiserver
