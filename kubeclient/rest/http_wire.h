#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace routestatus::kubeclient::rest {

// Pure HTTP/1.1 client-side wire helpers for the socket transport (watches
// and liveness probes): the parts of a server URL, a request's head, a
// response's head, and a response body's framing. No I/O. Thread-safe
// (stateless) except BodyDecoder, which one reader owns.

// An http(s) server URL, split. Value type.
struct ServerUrl {
  bool tls = false;
  std::string host;         // without brackets for an IPv6 literal
  int port = 0;             // the scheme's default when the URL has none
  bool default_port = true; // the URL named no port
  std::string path_prefix;  // e.g. "/k8s/clusters/c-1" ("" for none); no trailing '/'
  // "host[:port]" as a Host header or a CONNECT target writes it.
  std::string Authority(bool with_port) const;
};

// Parses "http(s)://host[:port][/prefix]"; kInvalid naming what is wrong.
StatusOr<ServerUrl> ParseServerUrl(std::string_view url);

// Standard base64 (with padding) of `bytes`, as Basic credentials use it.
std::string Base64Encode(std::string_view bytes);

// True when `host` is an IPv4 or IPv6 literal (no brackets).
bool IsIpLiteral(const std::string& host);

// The head of a response, as far as the client needs it. Value type.
struct ResponseHead {
  int status = 0;
  bool chunked = false;                   // Transfer-Encoding: chunked
  std::optional<uint64_t> content_length;  // Content-Length, when sent
  std::string retry_after;                // the Retry-After value, or ""
};

enum class HeadParse { kNeedMore, kDone, kInvalid };

// Looks for a complete response head ("HTTP/1.x NNN ...\r\n" headers
// "\r\n") at the start of `buffer`. kDone: *head is filled and *consumed is
// the head's length. kInvalid: *error says why. kNeedMore: read more (a head
// over 64 KiB is kInvalid).
HeadParse ParseResponseHead(std::string_view buffer, ResponseHead* head, size_t* consumed,
                            std::string* error);

// Decodes a response body's framing incrementally: chunked transfer coding,
// a Content-Length, or (neither) everything until the connection closes.
// Not thread-safe.
class BodyDecoder {
 public:
  explicit BodyDecoder(const ResponseHead& head);

  // Decodes `in`, appending the payload to *out. false (with *error) on a
  // malformed chunked framing; sticky.
  bool Feed(std::string_view in, std::string* out, std::string* error);
  // The body is complete (the last chunk or Content-Length bytes arrived).
  // A body read until close is never complete before the close.
  bool done() const { return state_ == State::kDone; }
  // Whether the connection's end is the body's normal end.
  bool EndsAtClose() const { return !chunked_ && !remaining_known_; }

 private:
  enum class State { kSize, kData, kDataEnd, kTrailer, kIdentity, kDone, kFailed };
  bool chunked_;
  bool remaining_known_;  // identity body with Content-Length
  uint64_t remaining_ = 0;
  State state_;
  std::string line_;  // the chunk-size or trailer line being read
};

}  // namespace routestatus::kubeclient::rest
