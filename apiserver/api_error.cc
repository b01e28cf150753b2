#include "apiserver/api_error.h"

namespace routestatus::apiserver {

std::string GroupResource(const std::string& group, const std::string& resource) {
  return group.empty() ? resource : resource + "." + group;
}

nlohmann::json ApiError::ToJson() const {
  nlohmann::json metadata = nlohmann::json::object();
  if (!continue_token.empty()) metadata["continue"] = continue_token;
  nlohmann::json j = {{"kind", "Status"},
                      {"apiVersion", "v1"},
                      {"metadata", metadata},
                      {"status", "Failure"},
                      {"message", message}};
  if (!reason.empty()) j["reason"] = reason;
  nlohmann::json details = nlohmann::json::object();
  if (!name.empty()) details["name"] = name;
  if (!group.empty()) details["group"] = group;
  if (!kind.empty()) details["kind"] = kind;
  if (!causes.is_null()) details["causes"] = causes;
  if (retry_after_seconds) details["retryAfterSeconds"] = *retry_after_seconds;
  if (!details.empty() || empty_details) j["details"] = details;
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
  return InvalidCausesError(group_kind, group, kind, name, {{field, detail, cause_type}});
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
      "can start a new list without the continue parameter, or use the continue token in this "
      "response to retrieve the remainder of the results. Continuing with the provided token "
      "results in an inconsistent list - objects that were created, modified, or deleted "
      "between the time the first chunk was returned and now may show up in the list.";
  return e;
}

ApiError TooLargeResourceVersionError(uint64_t requested, uint64_t current) {
  ApiError e;
  e.code = 504;
  e.reason = "Timeout";
  e.message = "Too large resource version: " + std::to_string(requested) +
              ", current: " + std::to_string(current);
  e.causes = nlohmann::json::array(
      {{{"reason", "ResourceVersionTooLarge"}, {"message", "Too large resource version"}}});
  e.retry_after_seconds = 1;
  return e;
}

ApiError InvalidCausesError(const std::string& group_kind, const std::string& group,
                            const std::string& kind, const std::string& name,
                            const std::vector<FieldCause>& causes) {
  ApiError e;
  e.code = 422;
  e.reason = "Invalid";
  e.name = name;
  e.group = group;
  e.kind = kind;
  e.causes = nlohmann::json::array();
  std::string list;
  for (size_t i = 0; i < causes.size(); ++i) {
    const FieldCause& c = causes[i];
    e.causes.push_back({{"reason", c.reason}, {"message", c.detail}, {"field", c.field}});
    list += (i > 0 ? ", " : "") + c.field + ": " + c.detail;
  }
  e.message = group_kind + " \"" + name + "\" is invalid: " +
              (causes.size() > 1 ? "[" + list + "]" : list);
  return e;
}

ApiError PatchNotAppliedError() {
  ApiError e;
  e.code = 422;
  e.reason = "Invalid";
  e.message = "the server rejected our request due to an error in our request";
  e.empty_details = true;
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
