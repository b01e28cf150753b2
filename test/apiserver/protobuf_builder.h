#pragma once

// Hand-built protobuf bytes for tests of the server's protobuf decoding.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace routestatus::apiserver::testing {

// The varint encoding of `v`.
inline std::string Varint(uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
  return out;
}

inline std::string Tag(uint32_t number, int wire_type) {
  return Varint((static_cast<uint64_t>(number) << 3) | static_cast<uint64_t>(wire_type));
}

// A length-delimited field (string, bytes or nested message).
inline std::string Bytes(uint32_t number, const std::string& payload) {
  return Tag(number, 2) + Varint(payload.size()) + payload;
}

inline std::string VarintField(uint32_t number, uint64_t v) { return Tag(number, 0) + Varint(v); }

// map<string,string> entries of field `number`.
inline std::string StringMap(uint32_t number, const std::map<std::string, std::string>& m) {
  std::string out;
  for (const auto& [k, v] : m) out += Bytes(number, Bytes(1, k) + Bytes(2, v));
  return out;
}

// "k8s\0" + runtime.Unknown{typeMeta{apiVersion, kind}, raw}.
inline std::string Envelope(const std::string& api_version, const std::string& kind,
                            const std::string& raw) {
  return std::string("k8s\0", 4) + Bytes(1, Bytes(1, api_version) + Bytes(2, kind)) +
         Bytes(2, raw) + Bytes(3, "") + Bytes(4, "");
}

// A v1.Namespace message as client-go writes it (empty strings included).
inline std::string NamespaceMessage(const std::string& name,
                                    const std::map<std::string, std::string>& labels = {},
                                    const std::map<std::string, std::string>& annotations = {},
                                    const std::vector<std::string>& finalizers = {}) {
  std::string meta = Bytes(1, name) + Bytes(2, "") + Bytes(3, "") + Bytes(4, "") + Bytes(5, "") +
                     Bytes(6, "") + VarintField(7, 0) + Bytes(8, "") + StringMap(11, labels) +
                     StringMap(12, annotations);
  std::string spec;
  for (const auto& f : finalizers) spec += Bytes(1, f);
  return Bytes(1, meta) + Bytes(2, spec) + Bytes(3, Bytes(1, ""));
}

}  // namespace routestatus::apiserver::testing
