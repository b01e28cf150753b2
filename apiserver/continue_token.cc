#include "apiserver/continue_token.h"

#include <nlohmann/json.hpp>

#include "apiserver/go_json.h"

namespace routestatus::apiserver {

namespace {

constexpr char kStdAlphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr char kUrlAlphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

std::string Encode(const std::string& in, const char* alphabet, bool pad) {
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    uint32_t v = (static_cast<uint8_t>(in[i]) << 16) | (static_cast<uint8_t>(in[i + 1]) << 8) |
                 static_cast<uint8_t>(in[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out += alphabet[(v >> s) & 63];
  }
  size_t rest = in.size() - i;
  if (rest > 0) {
    uint32_t v = static_cast<uint8_t>(in[i]) << 16;
    if (rest == 2) v |= static_cast<uint8_t>(in[i + 1]) << 8;
    out += alphabet[(v >> 18) & 63];
    out += alphabet[(v >> 12) & 63];
    if (rest == 2) out += alphabet[(v >> 6) & 63];
    if (pad) out += rest == 2 ? "=" : "==";
  }
  return out;
}

int Index(const char* alphabet, char c) {
  for (int i = 0; i < 64; ++i) {
    if (alphabet[i] == c) return i;
  }
  return -1;
}

// Go's base64.RawURLEncoding.DecodeString; on failure *bad_at is the input
// offset Go's CorruptInputError names.
std::optional<std::string> DecodeRawUrl(const std::string& in, size_t* bad_at) {
  std::string out;
  uint32_t v = 0;
  int bits = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    int d = Index(kUrlAlphabet, in[i]);
    if (d < 0) {
      *bad_at = i;
      return std::nullopt;
    }
    v = (v << 6) | static_cast<uint32_t>(d);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((v >> bits) & 0xff);
    }
  }
  // Why: a lone trailing character carries fewer than 8 bits.
  if (in.size() % 4 == 1) {
    *bad_at = in.size() - 1;
    return std::nullopt;
  }
  return out;
}

}  // namespace

std::string Base64Encode(const std::string& in) { return Encode(in, kStdAlphabet, true); }

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
    int d = Index(kStdAlphabet, c);
    if (d < 0) return std::nullopt;
    v = (v << 6) | static_cast<uint32_t>(d);
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
  // Why: the field order of kube's continueToken struct, so tokens read the same.
  std::string start = nlohmann::json(token.last_key + '\0').dump();
  return Encode("{\"v\":\"meta.k8s.io/v1\",\"rv\":" + std::to_string(token.rv) +
                    ",\"start\":" + start + "}",
                kUrlAlphabet, false);
}

std::optional<ContinueToken> DecodeContinueToken(const std::string& text, std::string* error) {
  const std::string prefix = "continue key is not valid: ";
  size_t bad_at = 0;
  std::optional<std::string> raw = DecodeRawUrl(text, &bad_at);
  if (!raw) {
    *error = prefix + "illegal base64 data at input byte " + std::to_string(bad_at);
    return std::nullopt;
  }
  if (std::optional<std::string> syntax = GoJsonSyntaxError(*raw)) {
    *error = prefix + *syntax;
    return std::nullopt;
  }
  nlohmann::json j = nlohmann::json::parse(*raw, nullptr, false);
  auto field = [&j](const char* key) -> const nlohmann::json* {
    if (!j.is_object()) return nullptr;
    auto it = j.find(key);
    return it == j.end() || it->is_null() ? nullptr : &*it;
  };
  const nlohmann::json* v = field("v");
  const nlohmann::json* rv = field("rv");
  const nlohmann::json* start = field("start");
  if (!j.is_object() || (v && !v->is_string()) || (rv && !rv->is_number_integer()) ||
      (start && !start->is_string())) {
    *error = prefix + "json: the token's fields have the wrong types";
    return std::nullopt;
  }
  std::string version = v ? v->get<std::string>() : "";
  if (version != "meta.k8s.io/v1") {
    *error = prefix + "server does not recognize this encoded version \"" + version + "\"";
    return std::nullopt;
  }
  ContinueToken token;
  token.rv = rv ? rv->get<int64_t>() : 0;
  if (token.rv == 0) {
    *error = prefix + "incorrect encoded start resourceVersion (version meta.k8s.io/v1)";
    return std::nullopt;
  }
  token.last_key = start ? start->get<std::string>() : "";
  if (token.last_key.empty()) {
    *error = prefix + "encoded start key empty (version meta.k8s.io/v1)";
    return std::nullopt;
  }
  if (token.last_key.back() == '\0') token.last_key.pop_back();
  // Why: like kube, a key must not climb out of the listed prefix.
  std::string key = "/" + token.last_key;
  auto ends_with = [&key](const char* tail) {
    size_t n = std::char_traits<char>::length(tail);
    return key.size() >= n && key.compare(key.size() - n, n, tail) == 0;
  };
  if (key.find("/../") != std::string::npos || key.find("/./") != std::string::npos ||
      key.find("//") != std::string::npos || (key.size() > 1 && key.back() == '/') ||
      ends_with("/..") || ends_with("/.")) {
    *error = prefix + token.last_key;
    return std::nullopt;
  }
  return token;
}

}  // namespace routestatus::apiserver
