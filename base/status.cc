#include "base/status.h"

#include <algorithm>
#include <cctype>
#include <string_view>

namespace routestatus {

const char* StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "ok";
    case StatusCode::kNotFound: return "not_found";
    case StatusCode::kAlreadyExists: return "already_exists";
    case StatusCode::kConflict: return "conflict";
    case StatusCode::kGone: return "gone";
    case StatusCode::kTooManyRequests: return "too_many_requests";
    case StatusCode::kUnavailable: return "unavailable";
    case StatusCode::kTimeout: return "timeout";
    case StatusCode::kUnauthorized: return "unauthorized";
    case StatusCode::kForbidden: return "forbidden";
    case StatusCode::kInvalid: return "invalid";
    case StatusCode::kCancelled: return "cancelled";
    case StatusCode::kClosed: return "closed";
    case StatusCode::kInternal: return "internal";
  }
  return "unknown";
}

bool Status::IsRetryable() const {
  switch (code_) {
    case StatusCode::kConflict:
    case StatusCode::kGone:
    case StatusCode::kTooManyRequests:
    case StatusCode::kUnavailable:
    case StatusCode::kTimeout:
    case StatusCode::kClosed:
    case StatusCode::kInternal:
      return true;
    default:
      return false;
  }
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  std::string s = StatusCodeName(code_);
  if (!message_.empty()) s += ": " + message_;
  return s;
}

namespace {

bool Contains(const std::string& text, std::string_view what) {
  auto lower = [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); };
  auto it = std::search(text.begin(), text.end(), what.begin(), what.end(),
                        [&](char a, char b) { return lower(a) == lower(b); });
  return it != text.end();
}

}  // namespace

FailureClass FailureClassOf(const Status& status) {
  const int http = status.http_code();
  if (http == 429) return FailureClass::kThrottled;
  if (http >= 500) return FailureClass::kServerError;
  if (http != 0) return FailureClass::kAnswered;
  switch (status.code()) {
    case StatusCode::kTimeout:
      return FailureClass::kTimeout;
    case StatusCode::kUnavailable: {
      // Why: transports report errno text ("Connection refused",
      // "Connection reset by peer", "End of file", "Broken pipe");
      // cpprestsdk reports any failed connect (refused, no route) as "Failed
      // to connect to any resolved endpoint".
      const std::string& m = status.message();
      if (Contains(m, "refused") || Contains(m, "failed to connect")) {
        return FailureClass::kConnectionRefused;
      }
      if (Contains(m, "reset") || Contains(m, "broken pipe") || Contains(m, "end of file") ||
          Contains(m, "truncated")) {
        return FailureClass::kConnectionReset;
      }
      if (Contains(m, "timed out")) return FailureClass::kTimeout;
      return FailureClass::kConnectionError;
    }
    default:
      return FailureClass::kAnswered;
  }
}

const char* FailureClassName(FailureClass c) {
  switch (c) {
    case FailureClass::kAnswered: return "answered";
    case FailureClass::kConnectionRefused: return "connection_refused";
    case FailureClass::kConnectionReset: return "connection_reset";
    case FailureClass::kTimeout: return "timeout";
    case FailureClass::kConnectionError: return "connection_error";
    case FailureClass::kServerError: return "server_error";
    case FailureClass::kThrottled: return "throttled";
  }
  return "unknown";
}

bool IsNoAnswer(FailureClass c) {
  return c == FailureClass::kConnectionRefused || c == FailureClass::kConnectionReset ||
         c == FailureClass::kTimeout || c == FailureClass::kConnectionError;
}

}  // namespace routestatus
