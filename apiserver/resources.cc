#include "apiserver/resources.h"

#include <set>

#include <openssl/evp.h>
#include <openssl/sha.h>

#include "apiserver/builtin_crd.h"
#include "apiserver/crd_schema.h"

namespace routestatus::apiserver {

namespace {

std::vector<ResourceInfo> MakeResources() {
  ResourceInfo routes;
  routes.group = "route.openshift.io";
  routes.version = "v1";
  routes.resource = "routes";
  routes.singular = "route";
  routes.kind = "Route";
  routes.list_kind = "RouteList";
  routes.namespaced = true;
  routes.has_status = true;
  routes.require_rv_on_update = true;
  routes.custom_resource = true;

  ResourceInfo ns;
  ns.version = "v1";
  ns.resource = "namespaces";
  ns.singular = "namespace";
  ns.kind = "Namespace";
  ns.list_kind = "NamespaceList";
  ns.namespaced = false;
  ns.has_status = true;
  ns.short_names = {"ns"};

  ResourceInfo crd;
  crd.group = "apiextensions.k8s.io";
  crd.version = "v1";
  crd.resource = "customresourcedefinitions";
  crd.singular = "customresourcedefinition";
  crd.kind = "CustomResourceDefinition";
  crd.list_kind = "CustomResourceDefinitionList";
  crd.namespaced = false;
  crd.has_status = true;
  crd.short_names = {"crd", "crds"};
  return {routes, ns, crd};
}

// Like kube-apiserver: built-in types list their verbs sorted, custom
// resources in the CRD handler's order, and namespaces have no
// deletecollection.
std::vector<std::string> Verbs(const ResourceInfo& r) {
  if (&r == &NamespacesInfo()) {
    return {"create", "delete", "get", "list", "patch", "update", "watch"};
  }
  if (r.custom_resource) {
    return {"delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"};
  }
  return {"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"};
}

// kube's discovery.StorageVersionHash: base64 of the first 8 bytes of
// sha256("group/version/kind").
std::string StorageVersionHash(const ResourceInfo& r) {
  std::string text = r.group + "/" + r.version + "/" + r.kind;
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest);
  unsigned char out[16];
  int n = EVP_EncodeBlock(out, digest, 8);
  return std::string(reinterpret_cast<char*>(out), static_cast<size_t>(n));
}

// The shortNames/categories discovery shows: a custom resource's from the
// built-in Route CRD (deploy/crd), a built-in type's own.
void AddNames(const ResourceInfo& r, nlohmann::json* entry) {
  if (!r.custom_resource) {
    if (!r.short_names.empty()) (*entry)["shortNames"] = r.short_names;
    return;
  }
  const nlohmann::json& names = BuiltinRouteCrd()["spec"]["names"];
  for (const char* key : {"shortNames", "categories"}) {
    if (names.contains(key)) (*entry)[key] = names[key];
  }
}

nlohmann::json ResourceEntry(const ResourceInfo& r) {
  nlohmann::json j = {{"name", r.resource},
                      {"singularName", r.singular},
                      {"namespaced", r.namespaced},
                      {"kind", r.kind},
                      {"verbs", Verbs(r)},
                      {"storageVersionHash", StorageVersionHash(r)}};
  AddNames(r, &j);
  return j;
}

nlohmann::json AggregatedResourceEntry(const ResourceInfo& r) {
  nlohmann::json j = {
      {"resource", r.resource},
      {"responseKind", {{"group", r.group}, {"version", r.version}, {"kind", r.kind}}},
      {"scope", r.namespaced ? "Namespaced" : "Cluster"},
      {"singularResource", r.singular},
      {"verbs", Verbs(r)}};
  AddNames(r, &j);
  if (r.has_status) {
    j["subresources"] = nlohmann::json::array(
        {{{"subresource", "status"},
          {"responseKind", {{"group", r.group}, {"version", r.version}, {"kind", r.kind}}},
          {"verbs", {"get", "patch", "update"}}}});
  }
  return j;
}

std::vector<std::string> Groups() {
  std::vector<std::string> groups;
  std::set<std::string> seen;
  for (const auto& r : ServedResources()) {
    if (!r.group.empty() && seen.insert(r.group).second) groups.push_back(r.group);
  }
  return groups;
}

}  // namespace

const std::vector<ResourceInfo>& ServedResources() {
  static const std::vector<ResourceInfo> resources = MakeResources();
  return resources;
}
const ResourceInfo& RoutesInfo() { return ServedResources()[0]; }
const ResourceInfo& NamespacesInfo() { return ServedResources()[1]; }
const ResourceInfo& CrdsInfo() { return ServedResources()[2]; }

const ResourceInfo* FindResource(const std::string& group, const std::string& version,
                                 const std::string& resource) {
  for (const auto& r : ServedResources()) {
    if (r.group == group && r.version == version && r.resource == resource) return &r;
  }
  return nullptr;
}

nlohmann::json VersionDocument() {
  return {{"major", "1"},
          {"minor", "32"},
          {"gitVersion", "v1.32.0-routestatus-local"},
          {"gitCommit", "0000000000000000000000000000000000000000"},
          {"gitTreeState", "clean"},
          {"buildDate", "2026-11-29T00:00:00Z"},
          {"goVersion", "go1.23.0"},
          {"compiler", "gc"},
          {"platform", "linux/amd64"}};
}

nlohmann::json CoreApiVersions() {
  return {{"kind", "APIVersions"},
          {"versions", {"v1"}},
          {"serverAddressByClientCIDRs",
           {{{"clientCIDR", "0.0.0.0/0"}, {"serverAddress", "127.0.0.1"}}}}};
}

nlohmann::json ApiGroupDocument(const std::string& group) {
  for (const auto& g : Groups()) {
    if (g != group) continue;
    nlohmann::json gv = {{"groupVersion", g + "/v1"}, {"version", "v1"}};
    return {{"kind", "APIGroup"},
            {"apiVersion", "v1"},
            {"name", g},
            {"versions", {gv}},
            {"preferredVersion", gv}};
  }
  return nullptr;
}

nlohmann::json ApiGroupList() {
  nlohmann::json groups = nlohmann::json::array();
  for (const auto& g : Groups()) {
    nlohmann::json doc = ApiGroupDocument(g);
    doc.erase("kind");
    doc.erase("apiVersion");
    groups.push_back(doc);
  }
  return {{"kind", "APIGroupList"}, {"apiVersion", "v1"}, {"groups", groups}};
}

nlohmann::json ApiResourceList(const std::string& group, const std::string& version) {
  nlohmann::json resources = nlohmann::json::array();
  for (const auto& r : ServedResources()) {
    if (r.group != group || r.version != version) continue;
    resources.push_back(ResourceEntry(r));
    if (r.has_status) {
      resources.push_back({{"name", r.resource + "/status"},
                           {"singularName", ""},
                           {"namespaced", r.namespaced},
                           {"kind", r.kind},
                           {"verbs", {"get", "patch", "update"}}});
    }
  }
  if (resources.empty()) return nullptr;
  return {{"kind", "APIResourceList"},
          {"apiVersion", "v1"},
          {"groupVersion", group.empty() ? version : group + "/" + version},
          {"resources", resources}};
}

nlohmann::json AggregatedDiscovery(bool core) {
  nlohmann::json items = nlohmann::json::array();
  std::vector<std::string> groups = core ? std::vector<std::string>{""} : Groups();
  for (const auto& g : groups) {
    nlohmann::json resources = nlohmann::json::array();
    for (const auto& r : ServedResources()) {
      if (r.group == g) resources.push_back(AggregatedResourceEntry(r));
    }
    nlohmann::json meta = nlohmann::json::object();
    if (!g.empty()) meta["name"] = g;
    items.push_back({{"metadata", meta},
                     {"versions",
                      {{{"version", "v1"}, {"resources", resources}, {"freshness", "Current"}}}}});
  }
  return {{"kind", "APIGroupDiscoveryList"},
          {"apiVersion", "apidiscovery.k8s.io/v2"},
          {"metadata", nlohmann::json::object()},
          {"items", items}};
}

namespace {

std::string GvPath(const ResourceInfo& r) {
  return r.group.empty() ? "api/" + r.version : "apis/" + r.group + "/" + r.version;
}

}  // namespace

nlohmann::json OpenApiV3Root() {
  nlohmann::json paths = nlohmann::json::object();
  for (const auto& r : ServedResources()) {
    std::string gv = GvPath(r);
    paths[gv] = {{"serverRelativeURL", "/openapi/v3/" + gv + "?hash=0"}};
  }
  return {{"paths", paths}};
}

namespace {

constexpr char kObjectMetaSchema[] = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

// "route.openshift.io", "v1", "Route" -> "io.openshift.route.v1.Route": how
// kube's CRD handler names a custom kind's definition.
std::string DefinitionName(const ResourceInfo& r) {
  std::string name;
  std::string_view group = r.group;
  while (!group.empty()) {
    const size_t dot = group.rfind('.');
    const std::string_view label = dot == std::string_view::npos ? group : group.substr(dot + 1);
    name += std::string(label) + ".";
    group = dot == std::string_view::npos ? std::string_view() : group.substr(0, dot);
  }
  return name + r.version + "." + r.kind;
}

// The few ObjectMeta fields a reader of `kubectl explain` looks for.
nlohmann::json ObjectMetaSchema() {
  auto field = [](const char* type, const char* description) {
    return nlohmann::json{{"type", type}, {"description", description}};
  };
  auto string_map = [&](const char* description) {
    nlohmann::json map = field("object", description);
    map["additionalProperties"] = {{"type", "string"}, {"default", ""}};
    return map;
  };
  return {{"type", "object"},
          {"description", "Standard object metadata, which every persisted resource has."},
          {"properties",
           {{"name", field("string", "Unique within a namespace; cannot be updated.")},
            {"namespace", field("string", "The namespace the object lives in.")},
            {"labels", string_map("Key-value pairs that label selectors match.")},
            {"annotations", string_map("Key-value pairs for tools; not selectable.")},
            {"uid", field("string", "Unique in time and space; set by the server.")},
            {"resourceVersion",
             field("string", "Opaque version for optimistic concurrency and watches.")},
            {"generation", field("integer", "Increments with each change of the spec.")},
            {"creationTimestamp", field("string", "When the object was created (RFC 3339).")}}}};
}

// The kind's schema from its CRD (null when the CRD has none for r.version).
nlohmann::json KindSchema(const ResourceInfo& r, const nlohmann::json& crd) {
  const nlohmann::json* open_api = CrdSchema::VersionSchema(crd, r.version);
  nlohmann::json schema = open_api != nullptr ? *open_api : nlohmann::json();
  if (!schema.is_object()) return nullptr;
  nlohmann::json& props = schema["properties"];
  if (!props.is_object()) props = nlohmann::json::object();
  props["apiVersion"] = {{"type", "string"},
                         {"description", "The versioned schema of this object, " + r.ApiVersion() + "."}};
  props["kind"] = {{"type", "string"}, {"description", "The kind of this object, " + r.kind + "."}};
  props["metadata"] = {{"allOf", {{{"$ref", std::string("#/components/schemas/") + kObjectMetaSchema}}}},
                       {"description", "Standard object metadata."}};
  schema["x-kubernetes-group-version-kind"] = {
      {{"group", r.group}, {"kind", r.kind}, {"version", r.version}}};
  return schema;
}

}  // namespace

nlohmann::json OpenApiV3Document(const std::string& gv_path, const CrdLookup& crd_of) {
  nlohmann::json schemas = nlohmann::json::object();
  nlohmann::json paths = nlohmann::json::object();
  for (const auto& r : ServedResources()) {
    if (GvPath(r) != gv_path) continue;
    std::string base = "/" + gv_path + (r.namespaced ? "/namespaces/{namespace}/" : "/") +
                       r.resource + "/{name}";
    nlohmann::json gvk = {{"group", r.group}, {"version", r.version}, {"kind", r.kind}};
    nlohmann::json op = {
        {"x-kubernetes-group-version-kind", gvk},
        {"x-kubernetes-action", "patch"},
        {"parameters",
         {{{"name", "fieldValidation"}, {"in", "query"}, {"schema", {{"type", "string"}}}},
          {{"name", "fieldManager"}, {"in", "query"}, {"schema", {{"type", "string"}}}}}},
        {"responses", {{"200", {{"description", "OK"}}}}}};
    paths[base] = {{"patch", op}};
    if (r.has_status) paths[base + "/status"] = {{"patch", op}};
    nlohmann::json schema = r.custom_resource && crd_of ? KindSchema(r, crd_of(r)) : nullptr;
    if (schema.is_object()) {
      schemas[DefinitionName(r)] = std::move(schema);
      schemas[kObjectMetaSchema] = ObjectMetaSchema();
    }
  }
  if (paths.empty()) return nullptr;
  return {{"openapi", "3.0.0"},
          {"info", {{"title", "Kubernetes"}, {"version", "v1.32.0"}}},
          {"paths", paths},
          {"components", {{"schemas", schemas}}}};
}

}  // namespace routestatus::apiserver
