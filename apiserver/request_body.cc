// How Server::Handler decodes request bodies: JSON, or Kubernetes protobuf
// for the built-in kinds it can decode (core/v1 Namespace, DeleteOptions).
// Custom resources (routes) and CRD objects are JSON-only here.

#include <cctype>

#include <glog/logging.h>

#include "apiserver/go_json.h"
#include "apiserver/object_meta_types.h"
#include "apiserver/protobuf_object.h"
#include "apiserver/server_handler.h"

namespace routestatus::apiserver {

namespace {

using nlohmann::json;

// The media type of a Content-Type header: lower case, no parameters.
std::string MediaType(const std::string& header) {
  std::string type = header.substr(0, header.find(';'));
  size_t b = type.find_first_not_of(" \t");
  size_t e = type.find_last_not_of(" \t");
  type = b == std::string::npos ? "" : type.substr(b, e - b + 1);
  for (char& c : type) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return type;
}

// Unwraps the protobuf envelope and checks it holds `kind` of `api_version`
// (any version when null).
std::optional<std::string_view> Raw(const std::string& body, const char* api_version,
                                    const char* kind, std::string* error) {
  std::optional<ProtobufEnvelope> env = ParseProtobufEnvelope(body, error);
  if (!env) return std::nullopt;
  if (!env->content_encoding.empty()) {
    *error = "unsupported content encoding \"" + env->content_encoding + "\"";
    return std::nullopt;
  }
  if (!env->content_type.empty() && env->content_type != kProtobufMediaType) {
    *error = "unsupported content type \"" + env->content_type + "\" in the protobuf envelope";
    return std::nullopt;
  }
  if (env->kind.empty()) {
    *error = "Object 'Kind' is missing in the protobuf envelope";
    return std::nullopt;
  }
  if (env->kind != kind || (api_version != nullptr && env->api_version != api_version)) {
    *error = "got " + env->api_version + ", Kind=" + env->kind;
    return std::nullopt;
  }
  return env->raw;
}

}  // namespace

bool Server::Handler::DecodeObject(const HttpRequest& req, const ResourceRequest& rr, json* out,
                                   int* code) {
  const ResourceInfo& r = *rr.info;
  const bool protobuf_ok = &r == &NamespacesInfo();
  std::string type = MediaType(req.Header("Content-Type"));
  if (type.empty() || type == "application/json") {
    // Why: kube reads apiVersion/kind with Go's encoding/json first, so a
    // bad body is reported in Go's words, followed by the body's start.
    std::optional<std::string> error = GoJsonSyntaxError(req.body);
    if (!error) {
      *out = json::parse(req.body, nullptr, false);
      if (out->is_discarded()) {
        error = "invalid UTF-8 in the body";
      } else if (out->is_null()) {
        error = "Object 'Kind' is missing in 'null'";
      } else if (!out->is_object()) {
        const char* go_type = out->is_array()    ? "array"
                              : out->is_string() ? "string"
                              : out->is_boolean() ? "bool"
                                                  : "number";
        error = std::string("json: cannot unmarshal ") + go_type +
                " into Go value of type struct { APIVersion string \"json:\\\"apiVersion,"
                "omitempty\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" }";
      }
      if (error && !out->is_null()) {
        error = "couldn't get version/kind; json parse error: " + *error;
      }
    } else {
      error = "couldn't get version/kind; json parse error: " + *error;
    }
    if (error) {
      *code = Error(req, BadRequestError("the object provided is unrecognized (must be of type " +
                                         r.kind + "): " + *error + " (" +
                                         SummarizeBody(req.body) + ")"));
      return false;
    }
    // Why: kube decodes metadata into ObjectMeta while decoding the body, so
    // a label or annotation that is not a string is a bad request.
    if (std::optional<std::string> meta = ObjectMetaTypeError(*out)) {
      *code = Error(req, BadRequestError(CannotBeHandledMessage(*out, r.kind, r.version, *meta)));
      return false;
    }
    NormalizeObjectMetaMaps(out);
    return true;
  }
  if (type != kProtobufMediaType || !protobuf_ok) {
    std::vector<std::string> accepted = {"application/json"};
    if (protobuf_ok) accepted.push_back(kProtobufMediaType);
    *code = Error(req, UnsupportedBodyMediaTypeError(accepted));
    return false;
  }
  std::string error;
  std::optional<std::string_view> raw = Raw(req.body, "v1", "Namespace", &error);
  std::optional<json> decoded;
  if (raw) decoded = DecodeNamespace(*raw, &error);
  if (!decoded) {
    VLOG(2) << "rejected a protobuf " << r.kind << " body: " << error;
    *code = Error(req, BadRequestError("the object provided is unrecognized (must be of type " +
                                       r.kind + "): " + error));
    return false;
  }
  *out = std::move(*decoded);
  return true;
}

bool Server::Handler::DecodeDeleteOptions(const HttpRequest& req, json* out, int* code) {
  *out = nullptr;
  if (req.body.empty()) return true;
  std::string type = MediaType(req.Header("Content-Type"));
  if (type == kProtobufMediaType) {
    std::string error;
    std::optional<std::string_view> raw = Raw(req.body, nullptr, "DeleteOptions", &error);
    std::optional<json> decoded;
    if (raw) decoded = apiserver::DecodeDeleteOptions(*raw, &error);
    if (!decoded) {
      *code = Error(req, BadRequestError("malformed DeleteOptions: " + error));
      return false;
    }
    *out = std::move(*decoded);
    return true;
  }
  if (!type.empty() && type != "application/json") {
    *code = Error(req, UnsupportedBodyMediaTypeError({"application/json", kProtobufMediaType}));
    return false;
  }
  *out = json::parse(req.body, nullptr, false);
  if (out->is_discarded() || !out->is_object()) {
    *code = Error(req, BadRequestError("malformed DeleteOptions"));
    return false;
  }
  return true;
}

}  // namespace routestatus::apiserver
