#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace routestatus::apiserver {

// The opaque list continuation in kube-apiserver's own format: unpadded
// URL-safe base64 of {"v":"meta.k8s.io/v1","rv":N,"start":"KEY\u0000"},
// where KEY is the last key returned relative to the listed prefix (the
// name in a namespace's list, "ns/name" across namespaces). rv -1 is
// kube's "continue from the latest version" (issued with a 410 Expired).
struct ContinueToken {
  int64_t rv = 0;
  std::string last_key;
};

std::string EncodeContinueToken(const ContinueToken& token);
// nullopt with *error set to kube's words ("continue key is not valid: ...")
// for anything kube-apiserver would not accept.
std::optional<ContinueToken> DecodeContinueToken(const std::string& text, std::string* error);

// Standard base64 with padding (kubeconfig data).
std::string Base64Encode(const std::string& in);
std::optional<std::string> Base64Decode(const std::string& in);

}  // namespace routestatus::apiserver
