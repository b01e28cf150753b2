#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace routestatus::apiserver {

// The opaque list continuation: the snapshot's resourceVersion and the last
// key returned, as base64 JSON in kube-apiserver's own shape
// ({"v":"meta.k8s.io/v1","rv":N,"start":"KEY\u0000"}).
struct ContinueToken {
  uint64_t rv = 0;
  std::string last_key;
};

std::string EncodeContinueToken(const ContinueToken& token);
// nullopt for anything that is not a token we issued.
std::optional<ContinueToken> DecodeContinueToken(const std::string& text);

std::string Base64Encode(const std::string& in);
std::optional<std::string> Base64Decode(const std::string& in);

}  // namespace routestatus::apiserver
