#include "apiserver/api_error.h"

namespace routestatus::apiserver {

std::string GroupResource(const std::string& group, const std::string& resource) {
  return group.empty() ? resource : resource + "." + group;
}

nlohmann::json ApiError::ToJson() const {
  nlohmann::json j = {{"kind", "Status"},
                      {"apiVersion", "v1"},
                      {"metadata", nlohmann::json::object()},
                      {"status", "Failure"},
                      {"message", message}};
  if (!reason.empty()) j["reason"] = reason;
  nlohmann::json details = nlohmann::json::object();
  if (!name.empty()) details["name"] = name;
  if (!group.empty()) details["group"] = group;
  if (!kind.empty()) details["kind"] = kind;
  if (!causes.is_null()) details["causes"] = causes;
  if (retry_after_seconds) details["retryAfterSeconds"] = *retry_after_seconds;
  if (!details.empty()) j["details"] = details;
  j["code"] = code;
  return j;
}

namespace {

// An error about one named object: details carry its name, group and kind.
ApiError ObjectError(int code, const char* reason, std::string message, const std::string& group,
                     const std::string& resource, const std::string& name) {
  ApiError e;
  e.code = code;
  e.reason = reason;
  e.message = std::move(message);
  e.name = name;
  e.group = group;
  e.kind = resource;
  return e;
}

}  // namespace

ApiError NotFoundError(const std::string& group, const std::string& resource,
                       const std::string& name) {
  return ObjectError(404, "NotFound", GroupResource(group, resource) + " \"" + name + "\" not found",
                     group, resource, name);
}

ApiError AlreadyExistsError(const std::string& group, const std::string& resource,
                            const std::string& name) {
  return ObjectError(409, "AlreadyExists",
                     GroupResource(group, resource) + " \"" + name + "\" already exists", group,
                     resource, name);
}

ApiError ConflictError(const std::string& group, const std::string& resource,
                       const std::string& name) {
  return ObjectError(409, "Conflict",
                     "Operation cannot be fulfilled on " + GroupResource(group, resource) + " \"" +
                         name +
                         "\": the object has been modified; please apply your changes to the "
                         "latest version and try again",
                     group, resource, name);
}

ApiError BadRequestError(const std::string& message) {
  ApiError e;
  e.code = 400;
  e.reason = "BadRequest";
  e.message = message;
  return e;
}

ApiError NotAcceptableError(const std::string& message) {
  ApiError e = BadRequestError(message);
  e.code = 406;
  e.reason = "NotAcceptable";
  return e;
}

ApiError InvalidError(const std::string& group_kind, const std::string& group,
                      const std::string& kind, const std::string& name,
                      const std::string& field, const std::string& detail,
                      const std::string& cause_type) {
  ApiError e;
  e.code = 422;
  e.reason = "Invalid";
  e.message = group_kind + " \"" + name + "\" is invalid: " + field + ": " + detail;
  e.name = name;
  e.group = group;
  e.kind = kind;
  e.causes = nlohmann::json::array(
      {{{"reason", cause_type}, {"message", detail}, {"field", field}}});
  return e;
}

ApiError TooOldResourceVersionError(uint64_t requested, uint64_t oldest) {
  ApiError e;
  e.code = 410;
  e.reason = "Expired";
  e.message = "too old resource version: " + std::to_string(requested) + " (" +
              std::to_string(oldest) + ")";
  return e;
}

ApiError ExpiredContinueError() {
  ApiError e;
  e.code = 410;
  e.reason = "Expired";
  e.message =
      "The provided continue parameter is too old to display a consistent list result. You "
      "can start a new list without the continue parameter.";
  return e;
}

ApiError UnauthorizedError() {
  ApiError e;
  e.code = 401;
  e.reason = "Unauthorized";
  e.message = "Unauthorized";
  return e;
}

ApiError MethodNotSupportedError(const std::string& group, const std::string& resource,
                                 const std::string& verb) {
  ApiError e;
  e.code = 405;
  e.reason = "MethodNotAllowed";
  e.message = verb + " is not supported on resources of kind \"" +
              GroupResource(group, resource) + "\"";
  e.group = group;
  e.kind = resource;
  return e;
}

ApiError UnsupportedMediaTypeError(const std::string& content_type) {
  ApiError e;
  e.code = 415;
  e.reason = "UnsupportedMediaType";
  e.message = "the body of the request was in an unknown format - accepted media types "
              "include: application/json, application/merge-patch+json, "
              "application/json-patch+json, application/strategic-merge-patch+json (got \"" +
              content_type + "\")";
  return e;
}

ApiError UnsupportedBodyMediaTypeError(const std::vector<std::string>& accepted) {
  ApiError e;
  e.code = 415;
  e.reason = "UnsupportedMediaType";
  e.message = "the body of the request was in an unknown format - accepted media types include: ";
  for (size_t i = 0; i < accepted.size(); ++i) e.message += (i > 0 ? ", " : "") + accepted[i];
  return e;
}

ApiError InternalError(const std::string& message) {
  ApiError e;
  e.code = 500;
  e.reason = "InternalError";
  e.message = "Internal error occurred: " + message;
  e.causes = nlohmann::json::array({{{"message", message}}});
  return e;
}

ApiError ServiceUnavailableError(const std::string& message) {
  ApiError e;
  e.code = 503;
  e.reason = "ServiceUnavailable";
  e.message = message;
  return e;
}

ApiError TooManyRequestsError(int retry_after_seconds) {
  ApiError e;
  e.code = 429;
  e.reason = "TooManyRequests";
  e.message = "Too many requests, please try again later.";
  e.retry_after_seconds = retry_after_seconds;
  return e;
}

}  // namespace routestatus::apiserver
