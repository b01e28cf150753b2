#include "controller/pem_blocks.h"

#include <array>
#include <optional>
#include <utility>

namespace routestatus::controller {
namespace {

constexpr std::string_view kBegin = "-----BEGIN ";
constexpr std::string_view kBeginLine = "\n-----BEGIN ";
constexpr std::string_view kEnd = "-----END ";
constexpr std::string_view kEndLine = "\n-----END ";
constexpr std::string_view kDashes = "-----";

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}
bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// The first line of `text` and what follows its '\n'. The line loses one
// '\r' before the '\n', then its trailing spaces and tabs.
std::pair<std::string_view, std::string_view> SplitLine(std::string_view text) {
  const size_t nl = text.find('\n');
  std::string_view line = text.substr(0, nl);
  std::string_view rest = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
  if (nl != std::string_view::npos && !line.empty() && line.back() == '\r') line.remove_suffix(1);
  while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);
  return {line, rest};
}

// The value of a base64 digit, -1 for any other character.
int Base64Value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

bool IsLineBreak(char c) { return c == '\r' || c == '\n'; }

// Standard padded base64 as Go's base64.StdEncoding decodes it: '\r' and
// '\n' anywhere are ignored; every group of four digits is complete, the
// last one may end in "=" or "==", and nothing but line breaks follows the
// padding. Unused bits of the last digit may be set. nullopt otherwise.
std::optional<std::string> DecodeBase64(std::string_view body) {
  std::string out;
  out.reserve(body.size() / 4 * 3);
  std::array<int, 4> group{};
  size_t filled = 0;
  size_t i = 0;
  while (i < body.size()) {
    const char c = body[i++];
    if (IsLineBreak(c)) continue;
    if (const int v = Base64Value(c); v >= 0) {
      group[filled++] = v;
      if (filled == 4) {
        out += static_cast<char>(group[0] << 2 | group[1] >> 4);
        out += static_cast<char>((group[1] & 15) << 4 | group[2] >> 2);
        out += static_cast<char>((group[2] & 3) << 6 | group[3]);
        filled = 0;
      }
      continue;
    }
    if (c != '=' || filled < 2) return std::nullopt;
    if (filled == 2) {  // a second '=' must follow
      while (i < body.size() && IsLineBreak(body[i])) ++i;
      if (i == body.size() || body[i] != '=') return std::nullopt;
      ++i;
    }
    while (i < body.size() && IsLineBreak(body[i])) ++i;
    if (i < body.size()) return std::nullopt;
    out += static_cast<char>(group[0] << 2 | group[1] >> 4);
    if (filled == 3) out += static_cast<char>((group[1] & 15) << 4 | group[2] >> 2);
    return out;
  }
  if (filled != 0) return std::nullopt;
  return out;
}

// Reads the next block of `rest` into `block` and moves `rest` past it.
// False when there is none; `rest` is then unspecified.
bool NextBlock(std::string_view& rest, PemBlock& block) {
  while (true) {
    if (StartsWith(rest, kBegin)) {
      rest.remove_prefix(kBegin.size());
    } else if (size_t at = rest.find(kBeginLine); at != std::string_view::npos) {
      rest.remove_prefix(at + kBeginLine.size());
    } else {
      return false;
    }
    // Why `continue` on every failure below: the block is skipped and the
    // search goes on from here (after its BEGIN line and headers), as Go's
    // decoder does.
    auto [type_line, after_type] = SplitLine(rest);
    rest = after_type;
    if (!EndsWith(type_line, kDashes)) continue;
    const std::string_view type = type_line.substr(0, type_line.size() - kDashes.size());
    bool headers = false;
    while (true) {
      if (rest.empty()) return false;
      auto [line, next] = SplitLine(rest);
      if (line.find(':') == std::string_view::npos) break;
      headers = true;
      rest = next;
    }
    size_t end_at = 0;       // where the body ends
    size_t trailer_at = 0;   // where the END line's type starts
    if (!headers && StartsWith(rest, kEnd)) {
      trailer_at = kEnd.size();
    } else {
      end_at = rest.find(kEndLine);
      if (end_at == std::string_view::npos) continue;
      trailer_at = end_at + kEndLine.size();
    }
    const std::string_view trailer = rest.substr(trailer_at);
    if (trailer.size() < type.size() + kDashes.size()) continue;
    if (trailer.substr(0, type.size()) != type ||
        trailer.substr(type.size(), kDashes.size()) != kDashes) {
      continue;
    }
    auto [end_line_rest, after_end] = SplitLine(trailer.substr(type.size() + kDashes.size()));
    if (!end_line_rest.empty()) continue;
    std::string body;
    body.reserve(end_at);
    for (char c : rest.substr(0, end_at)) {
      if (c != ' ' && c != '\t') body += c;
    }
    std::optional<std::string> der = DecodeBase64(body);
    if (!der) continue;
    block.type = std::string(type);
    block.der = std::move(*der);
    block.has_headers = headers;
    rest = after_end;
    return true;
  }
}

}  // namespace

std::vector<PemBlock> DecodePemBlocks(std::string_view text) {
  std::vector<PemBlock> blocks;
  PemBlock block;
  while (!text.empty() && NextBlock(text, block)) blocks.push_back(std::move(block));
  return blocks;
}

}  // namespace routestatus::controller
