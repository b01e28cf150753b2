#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace routestatus::apiserver {

// A Kubernetes API failure, rendered exactly like kube-apiserver's
// metav1.Status body (kind Status, apiVersion v1, status Failure, message,
// reason, details, code). Value type; thread-compatible.
struct ApiError {
  int code = 500;
  std::string reason;   // "NotFound", "Conflict", "Invalid", ...
  std::string message;
  std::string name;     // details.name ("" = no details)
  std::string group;    // details.group
  std::string kind;     // details.kind (plural resource name, as the server does)
  std::optional<int> retry_after_seconds;  // details.retryAfterSeconds + header
  nlohmann::json causes;  // details.causes (null = none)
  bool empty_details = false;  // "details": {} even with nothing in it
  std::string continue_token;  // metadata.continue (410 for an expired continue)

  nlohmann::json ToJson() const;
};

// Helpers building the server's standard errors. `resource` is the plural
// resource name and `group` its API group ("" for core).
ApiError NotFoundError(const std::string& group, const std::string& resource,
                       const std::string& name);
ApiError AlreadyExistsError(const std::string& group, const std::string& resource,
                            const std::string& name);
ApiError ConflictError(const std::string& group, const std::string& resource,
                       const std::string& name);
ApiError BadRequestError(const std::string& message);
// 406: the Accept header lists nothing the server can produce.
ApiError NotAcceptableError(const std::string& message);
// 422 Invalid; `field` and `detail` become one details.causes entry.
ApiError InvalidError(const std::string& group_kind, const std::string& group,
                      const std::string& kind, const std::string& name,
                      const std::string& field, const std::string& detail,
                      const std::string& cause_type = "FieldValueRequired");
// 410 Expired ("too old resource version: R (OLDEST)").
ApiError TooOldResourceVersionError(uint64_t requested, uint64_t oldest);
// 410 Expired for a continue token older than the history: kube's words
// for an inconsistent continuation (the caller sets continue_token).
ApiError ExpiredContinueError();
// 504 Timeout for a list at a resourceVersion the store has not reached.
ApiError TooLargeResourceVersionError(uint64_t requested, uint64_t current);
// 422 Invalid with several causes, each {field, detail, reason}; the message
// lists them like kube's field.ErrorList ("[a: x, b: y]" for more than one).
struct FieldCause {
  std::string field;
  std::string detail;  // "Required value", "Invalid value: ...", ...
  std::string reason;  // FieldValueRequired, FieldValueInvalid, ...
};
ApiError InvalidCausesError(const std::string& group_kind, const std::string& group,
                            const std::string& kind, const std::string& name,
                            const std::vector<FieldCause>& causes);
// 422 Invalid for a JSON patch that does not apply (kube keeps no details).
ApiError PatchNotAppliedError();
ApiError UnauthorizedError();
ApiError MethodNotSupportedError(const std::string& group, const std::string& resource,
                                 const std::string& verb);
// 415 for a request body in a media type the resource does not decode, in
// kube-apiserver's words: "the body of the request was in an unknown format -
// accepted media types include: A, B".
ApiError UnsupportedBodyMediaTypeError(const std::vector<std::string>& accepted);
ApiError InternalError(const std::string& message);
ApiError ServiceUnavailableError(const std::string& message);
ApiError TooManyRequestsError(int retry_after_seconds);

// "routes.route.openshift.io" or "namespaces" (core group has no suffix).
std::string GroupResource(const std::string& group, const std::string& resource);

}  // namespace routestatus::apiserver
