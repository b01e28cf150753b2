// How Server::Handler writes resource responses: content negotiation (plain
// JSON, meta.k8s.io Table, PartialObjectMetadata[List]) and rendering.

#include <glog/logging.h>

#include "apiserver/builtin_crd.h"
#include "apiserver/server_handler.h"

namespace routestatus::apiserver {

namespace {

using nlohmann::json;

std::string MetadataText(const StoredObject& obj) {
  json parsed = json::parse(obj.json, nullptr, false);
  if (parsed.is_discarded() || !parsed.contains("metadata")) return "{}";
  return parsed["metadata"].dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace

bool Server::Handler::Negotiate(const HttpRequest& req, const ResourceRequest& rr, int* code) {
  std::optional<ResponseFormat> format = NegotiateResponseFormat(req.Header("Accept"));
  if (!format) {
    *code = Error(req, NotAcceptableError(std::string("only the following media types are accepted: ") +
                                          AcceptableMediaTypes()));
    return false;
  }
  bool list = rr.verb == "list" || rr.verb == "deletecollection";
  if (format->kind == ResponseFormat::Kind::kPartialObjectMetadata && list) {
    *code = Error(req, NotAcceptableError(
                           "you requested PartialObjectMetadata, but the requested object is a list"));
    return false;
  }
  if (format->kind == ResponseFormat::Kind::kPartialObjectMetadataList && !list) {
    *code = Error(req, NotAcceptableError("you requested PartialObjectMetadataList, but the "
                                          "requested object is not a list"));
    return false;
  }
  if (format->kind == ResponseFormat::Kind::kTable) {
    std::optional<IncludeObject> include = ParseIncludeObject(req.Query("includeObject"));
    if (!include) {
      *code = Error(req, BadRequestError("Unable to convert to Table as requested: includeObject: "
                                         "Unsupported value: \"" + req.Query("includeObject") +
                                         "\": supported values: \"None\", \"Metadata\", \"Object\""));
      return false;
    }
    include_ = *include;
  }
  format_ = *format;
  return true;
}

const json& Server::Handler::CrdDefinition(const ResourceInfo& r, json* parsed) const {
  auto crd = server_.store_->Get(CrdsInfo(), "", r.GroupResource());
  if (crd.ok()) *parsed = json::parse(crd.value->json, nullptr, false);
  // Why: without a stored CRD, routes are served as deploy/crd's CRD serves
  // them (HOST, ADMITTED, SERVICE, TLS, AGE), as on a cluster running it.
  return parsed->is_object() ? *parsed : BuiltinRouteCrd();
}

TableConvertor Server::Handler::Convertor(const ResourceInfo& r) const {
  if (&r == &NamespacesInfo() || &r == &CrdsInfo()) return TableConvertor::For(r, nullptr);
  json parsed;
  std::string warning;
  TableConvertor t = TableConvertor::For(r, &CrdDefinition(r, &parsed), &warning);
  if (!warning.empty()) {
    LOG_EVERY_N(WARNING, 100) << "default Table columns served: " << warning;
  }
  return t;
}

TableConvertor::RenderOptions Server::Handler::TableOptions(const std::string& rv) const {
  TableConvertor::RenderOptions o;
  o.api_version = format_.api_version;
  o.include = include_;
  o.resource_version = rv;
  o.now = server_.clock_.WallNow();
  return o;
}

std::string Server::Handler::PartialObject(const StoredObject& obj) const {
  return "{\"kind\":\"PartialObjectMetadata\",\"apiVersion\":\"" + format_.api_version +
         "\",\"metadata\":" + MetadataText(obj) + "}";
}

int Server::Handler::Object(const HttpRequest& req, int code, const ObjectPtr& obj) {
  RecordMetric(code);
  switch (format_.kind) {
    case ResponseFormat::Kind::kTable:
      Write(req, code,
            Convertor(*resource_).Render(
                {obj}, TableOptions(obj->rv == 0 ? "" : std::to_string(obj->rv))),
            format_.ContentType());
      break;
    case ResponseFormat::Kind::kPartialObjectMetadata:
      Write(req, code, PartialObject(*obj), format_.ContentType());
      break;
    default:
      Write(req, code, obj->json);
  }
  return code;
}

int Server::Handler::List(const HttpRequest& req, const ResourceInfo& r, const ListPage& page) {
  RecordMetric(200);
  std::string rv = std::to_string(page.rv);
  if (format_.kind == ResponseFormat::Kind::kTable) {
    TableConvertor::RenderOptions options = TableOptions(rv);
    options.continue_token = page.continue_token;
    options.remaining = page.remaining;
    Write(req, 200, Convertor(r).Render(page.items, options), format_.ContentType());
    return 200;
  }
  bool partial = format_.kind == ResponseFormat::Kind::kPartialObjectMetadataList;
  std::string out = "{\"apiVersion\":\"" + (partial ? format_.api_version : r.ApiVersion()) +
                    "\",\"items\":[";
  size_t reserve = out.size() + 200;
  for (const auto& o : page.items) reserve += o->json.size() + 1;
  out.reserve(reserve);
  for (size_t i = 0; i < page.items.size(); ++i) {
    if (i > 0) out += ',';
    out += partial ? PartialObject(*page.items[i]) : page.items[i]->json;
  }
  out += "],\"kind\":\"" + (partial ? std::string("PartialObjectMetadataList") : r.list_kind) +
         "\",\"metadata\":{";
  // Why: a custom resource list is unstructured in kube and always carries
  // "continue"; typed lists omit it when empty.
  if (!page.continue_token.empty() || (r.custom_resource && !partial)) {
    out += "\"continue\":\"" + page.continue_token + "\",";
  }
  if (page.remaining) out += "\"remainingItemCount\":" + std::to_string(*page.remaining) + ",";
  out += "\"resourceVersion\":\"" + rv + "\"}}";
  if (req.method == "GET") server_.metrics_.AddSentBytes("LIST", r.resource, out.size());
  Write(req, 200, out, format_.ContentType());
  return 200;
}

}  // namespace routestatus::apiserver
