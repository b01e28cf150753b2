#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <variant>

#include <glog/logging.h>

namespace routestatus {

// What a caller should do about a failed operation. Codes follow the
// Kubernetes API's Status reasons where one exists.
enum class StatusCode {
  kOk = 0,
  kNotFound,         // drop the work: the object is gone
  kAlreadyExists,    // create of an existing object
  kConflict,         // stale resourceVersion: re-read and retry
  kGone,             // resourceVersion too old (410): relist
  kTooManyRequests,  // 429: retry after Status::retry_after()
  kUnavailable,      // 5xx, connection refused/reset: back off and retry
  kTimeout,          // request or server timeout: retry
  kUnauthorized,     // 401: credentials wrong
  kForbidden,        // 403: RBAC: do not retry
  kInvalid,          // 400/422 or undecodable data: do not retry
  kCancelled,        // the caller cancelled the operation
  kClosed,           // a stream ended normally (e.g. watch timeoutSeconds)
  kInternal,         // a bug or an unexpected state
};

// Stable lower-case name of a code, for logs and metric labels.
const char* StatusCodeName(StatusCode code);

// The outcome of an operation: a code, a message for people, for
// kTooManyRequests/kUnavailable an optional server-suggested retry delay, and
// the HTTP status when the API server answered (0 when no answer arrived:
// connection refused or reset, timeout). Value type; thread-compatible.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message,
         std::optional<std::chrono::milliseconds> retry_after = std::nullopt, int http_code = 0)
      : code_(code), message_(std::move(message)), retry_after_(retry_after),
        http_code_(http_code) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  const std::optional<std::chrono::milliseconds>& retry_after() const { return retry_after_; }
  // The HTTP status of the server's answer; 0 for failures without one.
  int http_code() const { return http_code_; }

  // True for codes worth retrying later (conflict, gone, 429, 5xx, timeouts).
  bool IsRetryable() const;
  // "conflict: the object has been modified ..." style text.
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
  std::optional<std::chrono::milliseconds> retry_after_;
  int http_code_ = 0;
};

// Why a request got no usable answer from the API server, for reachability
// logs, metrics and retry pacing. kAnswered: the server answered (2xx, or an
// API answer such as 404, 409, 410, 422, 401 that shows it works), or the
// outcome says nothing about the server (cancelled by us, a watch closed).
enum class FailureClass {
  kAnswered = 0,
  kConnectionRefused,  // no connection made: nothing listens (down, restarting) or no route
  kConnectionReset,    // the connection was reset or closed mid-request
  kTimeout,            // no answer in time (no HTTP status)
  kConnectionError,    // other failures without an answer (DNS, TLS, routing)
  kServerError,        // HTTP 5xx
  kThrottled,          // HTTP 429
};
inline constexpr int kFailureClassCount = 7;

// The class of `status`: from its HTTP code when the server answered, else
// from the code and the transport's message. Pure.
FailureClass FailureClassOf(const Status& status);
// "connection_refused", "server_error", ... ("answered" for kAnswered); for
// logs and metric labels.
const char* FailureClassName(FailureClass c);
// True for the classes without an HTTP answer (refused, reset, timeout,
// other connection errors).
bool IsNoAnswer(FailureClass c);

// Either a value or a non-OK Status. Accessing value() of an error is a bug
// (CHECK-fails).
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(Status status) : v_(std::move(status)) {  // NOLINT: implicit by design
    CHECK(!std::get<Status>(v_).ok()) << "StatusOr built from an OK Status";
  }
  StatusOr(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design

  bool ok() const { return std::holds_alternative<T>(v_); }
  Status status() const { return ok() ? Status::Ok() : std::get<Status>(v_); }

  const T& value() const& { CHECK(ok()) << status().ToString(); return std::get<T>(v_); }
  T& value() & { CHECK(ok()) << status().ToString(); return std::get<T>(v_); }
  T&& value() && { CHECK(ok()) << status().ToString(); return std::get<T>(std::move(v_)); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

 private:
  std::variant<Status, T> v_;
};

}  // namespace routestatus
