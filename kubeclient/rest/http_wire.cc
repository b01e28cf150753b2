#include "kubeclient/rest/http_wire.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <charconv>

namespace routestatus::kubeclient::rest {
namespace {

constexpr size_t kMaxHeadBytes = 64 * 1024;
constexpr size_t kMaxChunkLine = 4096;

bool IEquals(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

bool ContainsTokenChunked(std::string_view value) {
  // "gzip, chunked": the last coding is what frames the body.
  size_t comma = value.rfind(',');
  std::string_view last = Trim(comma == std::string_view::npos ? value : value.substr(comma + 1));
  return IEquals(last, "chunked");
}

}  // namespace

std::string ServerUrl::Authority(bool with_port) const {
  std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  if (with_port) h += ":" + std::to_string(port);
  return h;
}

std::string Base64Encode(std::string_view bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve(4 * ((bytes.size() + 2) / 3));
  for (size_t i = 0; i < bytes.size(); i += 3) {
    const size_t n = std::min<size_t>(3, bytes.size() - i);
    uint32_t v = 0;
    for (size_t j = 0; j < 3; ++j) {
      v = (v << 8) | (j < n ? static_cast<unsigned char>(bytes[i + j]) : 0u);
    }
    for (size_t j = 0; j < 4; ++j) {
      out.push_back(j <= n ? kAlphabet[(v >> (18 - 6 * j)) & 0x3f] : '=');
    }
  }
  return out;
}

bool IsIpLiteral(const std::string& host) {
  unsigned char buf[16];
  return inet_pton(AF_INET, host.c_str(), buf) == 1 || inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

StatusOr<ServerUrl> ParseServerUrl(std::string_view url) {
  ServerUrl u;
  std::string_view rest;
  if (url.rfind("https://", 0) == 0) {
    u.tls = true;
    rest = url.substr(8);
  } else if (url.rfind("http://", 0) == 0) {
    rest = url.substr(7);
  } else {
    return Status(StatusCode::kInvalid, "\"" + std::string(url) + "\" is not an http(s) URL");
  }
  size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  if (slash != std::string_view::npos) {
    std::string_view path = rest.substr(slash);
    while (!path.empty() && path.back() == '/') path.remove_suffix(1);
    u.path_prefix = std::string(path);
  }
  if (size_t at = authority.rfind('@'); at != std::string_view::npos) authority.remove_prefix(at + 1);
  std::string_view port_text;
  if (!authority.empty() && authority.front() == '[') {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) {
      return Status(StatusCode::kInvalid, "\"" + std::string(url) + "\": unterminated IPv6 literal");
    }
    u.host = std::string(authority.substr(1, close - 1));
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') {
        return Status(StatusCode::kInvalid, "\"" + std::string(url) + "\": bad authority");
      }
      port_text = after.substr(1);
    }
  } else {
    size_t colon = authority.rfind(':');
    u.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port_text = authority.substr(colon + 1);
  }
  if (u.host.empty()) return Status(StatusCode::kInvalid, "\"" + std::string(url) + "\": no host");
  u.port = u.tls ? 443 : 80;
  if (!port_text.empty()) {
    int port = 0;
    auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (ec != std::errc() || end != port_text.data() + port_text.size() || port <= 0 ||
        port > 65535) {
      return Status(StatusCode::kInvalid, "\"" + std::string(url) + "\": bad port");
    }
    u.port = port;
    u.default_port = false;
  }
  return u;
}

HeadParse ParseResponseHead(std::string_view buffer, ResponseHead* head, size_t* consumed,
                            std::string* error) {
  size_t end = buffer.find("\r\n\r\n");
  if (end == std::string_view::npos) {
    if (buffer.size() > kMaxHeadBytes) {
      *error = "response head larger than 64 KiB";
      return HeadParse::kInvalid;
    }
    return HeadParse::kNeedMore;
  }
  *consumed = end + 4;
  std::string_view text = buffer.substr(0, end + 2);
  size_t eol = text.find("\r\n");
  std::string_view status_line = text.substr(0, eol);
  // "HTTP/1.1 200 OK"
  if (status_line.rfind("HTTP/1.", 0) != 0 || status_line.size() < 12 || status_line[8] != ' ') {
    *error = "bad status line \"" + std::string(status_line.substr(0, 64)) + "\"";
    return HeadParse::kInvalid;
  }
  int code = 0;
  auto [p, ec] = std::from_chars(status_line.data() + 9, status_line.data() + 12, code);
  if (ec != std::errc() || p != status_line.data() + 12 || code < 100) {
    *error = "bad status code in \"" + std::string(status_line.substr(0, 64)) + "\"";
    return HeadParse::kInvalid;
  }
  *head = ResponseHead();
  head->status = code;
  for (size_t pos = eol + 2; pos < text.size();) {
    size_t next = text.find("\r\n", pos);
    std::string_view line = text.substr(pos, next - pos);
    pos = next + 2;
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view name = Trim(line.substr(0, colon));
    std::string_view value = Trim(line.substr(colon + 1));
    if (IEquals(name, "Transfer-Encoding")) {
      head->chunked = ContainsTokenChunked(value);
    } else if (IEquals(name, "Content-Length")) {
      uint64_t n = 0;
      auto [q, e] = std::from_chars(value.data(), value.data() + value.size(), n);
      if (e != std::errc() || q != value.data() + value.size()) {
        *error = "bad Content-Length \"" + std::string(value.substr(0, 32)) + "\"";
        return HeadParse::kInvalid;
      }
      head->content_length = n;
    } else if (IEquals(name, "Retry-After")) {
      head->retry_after = std::string(value);
    }
  }
  return HeadParse::kDone;
}

BodyDecoder::BodyDecoder(const ResponseHead& head)
    : chunked_(head.chunked),
      remaining_known_(!head.chunked && head.content_length.has_value()),
      remaining_(head.content_length.value_or(0)),
      state_(head.chunked ? State::kSize : State::kIdentity) {
  if (remaining_known_ && remaining_ == 0) state_ = State::kDone;
}

bool BodyDecoder::Feed(std::string_view in, std::string* out, std::string* error) {
  while (!in.empty()) {
    switch (state_) {
      case State::kFailed:
        *error = "malformed chunked body";
        return false;
      case State::kDone:
        return true;  // bytes after the body: ignored (the connection is not reused)
      case State::kIdentity: {
        size_t n = remaining_known_ ? static_cast<size_t>(std::min<uint64_t>(remaining_, in.size()))
                                    : in.size();
        out->append(in.data(), n);
        in.remove_prefix(n);
        if (remaining_known_) {
          remaining_ -= n;
          if (remaining_ == 0) state_ = State::kDone;
        }
        break;
      }
      case State::kSize:
      case State::kTrailer:
      case State::kDataEnd: {
        size_t nl = in.find('\n');
        std::string_view part = in.substr(0, nl);
        line_.append(part.data(), part.size());
        if (line_.size() > kMaxChunkLine) {
          state_ = State::kFailed;
          *error = "chunk header line longer than 4 KiB";
          return false;
        }
        if (nl == std::string_view::npos) return true;
        in.remove_prefix(nl + 1);
        std::string_view line = line_;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (state_ == State::kDataEnd) {
          if (!line.empty()) {
            state_ = State::kFailed;
            *error = "chunk data not followed by CRLF";
            return false;
          }
          state_ = State::kSize;
        } else if (state_ == State::kTrailer) {
          if (line.empty()) state_ = State::kDone;
        } else {
          std::string_view size_text = line.substr(0, line.find(';'));
          size_text = Trim(size_text);
          uint64_t size = 0;
          auto [p, ec] =
              std::from_chars(size_text.data(), size_text.data() + size_text.size(), size, 16);
          if (size_text.empty() || ec != std::errc() || p != size_text.data() + size_text.size()) {
            state_ = State::kFailed;
            *error = "bad chunk size \"" + std::string(size_text.substr(0, 32)) + "\"";
            return false;
          }
          remaining_ = size;
          state_ = size == 0 ? State::kTrailer : State::kData;
        }
        line_.clear();
        break;
      }
      case State::kData: {
        size_t n = static_cast<size_t>(std::min<uint64_t>(remaining_, in.size()));
        out->append(in.data(), n);
        in.remove_prefix(n);
        remaining_ -= n;
        if (remaining_ == 0) state_ = State::kDataEnd;
        break;
      }
    }
  }
  return state_ != State::kFailed;
}

}  // namespace routestatus::kubeclient::rest
