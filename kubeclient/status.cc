#include "kubeclient/status.h"

namespace routestatus::kubeclient {

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

}  // namespace routestatus::kubeclient
