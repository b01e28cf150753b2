#include "apiserver/continue_token.h"

#include <nlohmann/json.hpp>

namespace routestatus::apiserver {

namespace {
constexpr char kAlphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
}  // namespace

std::string Base64Encode(const std::string& in) {
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    uint32_t v = (static_cast<uint8_t>(in[i]) << 16) | (static_cast<uint8_t>(in[i + 1]) << 8) |
                 static_cast<uint8_t>(in[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out += kAlphabet[(v >> s) & 63];
  }
  size_t rest = in.size() - i;
  if (rest > 0) {
    uint32_t v = static_cast<uint8_t>(in[i]) << 16;
    if (rest == 2) v |= static_cast<uint8_t>(in[i + 1]) << 8;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += rest == 2 ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::optional<std::string> Base64Decode(const std::string& in) {
  std::string out;
  uint32_t v = 0;
  int bits = 0;
  size_t pad = 0;
  for (char c : in) {
    if (c == '=') {
      ++pad;
      continue;
    }
    if (pad > 0) return std::nullopt;
    const char* p = nullptr;
    for (const char* a = kAlphabet; *a; ++a) {
      if (*a == c) p = a;
    }
    if (p == nullptr) return std::nullopt;
    v = (v << 6) | static_cast<uint32_t>(p - kAlphabet);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((v >> bits) & 0xff);
    }
  }
  if (pad > 2) return std::nullopt;
  return out;
}

std::string EncodeContinueToken(const ContinueToken& token) {
  nlohmann::json j = {{"v", "meta.k8s.io/v1"}, {"rv", token.rv}, {"start", token.last_key + '\0'}};
  return Base64Encode(j.dump());
}

std::optional<ContinueToken> DecodeContinueToken(const std::string& text) {
  std::optional<std::string> raw = Base64Decode(text);
  if (!raw) return std::nullopt;
  nlohmann::json j = nlohmann::json::parse(*raw, nullptr, false);
  if (!j.is_object() || j.value("v", "") != "meta.k8s.io/v1") return std::nullopt;
  auto rv = j.find("rv");
  auto start = j.find("start");
  if (rv == j.end() || !rv->is_number_unsigned() || start == j.end() || !start->is_string()) {
    return std::nullopt;
  }
  ContinueToken token;
  token.rv = rv->get<uint64_t>();
  token.last_key = start->get<std::string>();
  if (token.last_key.empty() || token.last_key.back() != '\0') return std::nullopt;
  token.last_key.pop_back();
  return token;
}

}  // namespace routestatus::apiserver
