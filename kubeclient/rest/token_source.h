#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

#include "base/status.h"

namespace routestatus::kubeclient::rest {

// OK, or kUnauthorized naming `source` when `token` holds CR, LF or NUL
// (which Go's HTTP client refuses in a header value). Pure.
Status CheckTokenBytes(std::string_view token, const std::string& source);

// The bearer token of a client: a fixed string, or a file that is re-read
// whenever its modification time, size or inode changes (service-account
// tokens rotate in place). Thread-safe.
class TokenSource {
 public:
  // `token_file` wins when both are set (as in client-go, whose kubeconfig
  // loader and transport both prefer tokenFile). Both empty = no token.
  TokenSource(std::string token, std::string token_file);

  // The current token ("" when none is configured). kUnauthorized naming the
  // file when the token file cannot be read and no earlier token is known.
  // A token with CR, LF or NUL inside is kUnauthorized (Go's HTTP client
  // refuses such a header value; sent, it would inject a header).
  StatusOr<std::string> Token();

 private:
  const std::string static_token_;
  const std::string file_;
  std::mutex mu_;
  std::string cached_;       // GUARDED_BY(mu_)
  int64_t mtime_ns_ = -1;    // GUARDED_BY(mu_)
  int64_t size_ = -1;        // GUARDED_BY(mu_)
  uint64_t inode_ = 0;       // GUARDED_BY(mu_)
};

}  // namespace routestatus::kubeclient::rest
