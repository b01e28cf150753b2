#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace routestatus::apiserver {

// Static description of one resource type the server serves. Immutable.
struct ResourceInfo {
  std::string group;      // "" for core
  std::string version;    // "v1"
  std::string resource;   // plural, e.g. "routes"
  std::string singular;   // "route"
  std::string kind;       // "Route"
  std::string list_kind;  // "RouteList"
  bool namespaced = false;
  bool has_status = false;             // a status subresource
  bool require_rv_on_update = false;   // CRD-backed types refuse unconditional PUT
  // Served like a CRD's custom resource by kube-apiserver (its CRD handler:
  // JSON and merge/JSON patches only, delete answers a Status, metrics take
  // the scope from the request).
  bool custom_resource = false;
  std::vector<std::string> short_names;

  // "route.openshift.io/v1" or "v1".
  std::string ApiVersion() const { return group.empty() ? version : group + "/" + version; }
  // "routes.route.openshift.io" or "namespaces".
  std::string GroupResource() const {
    return group.empty() ? resource : resource + "." + group;
  }
  // "Route.route.openshift.io" (for Invalid messages) or "Namespace".
  std::string GroupKind() const { return group.empty() ? kind : kind + "." + group; }
};

// The resource types served: routes, namespaces, customresourcedefinitions.
const std::vector<ResourceInfo>& ServedResources();
const ResourceInfo& RoutesInfo();
const ResourceInfo& NamespacesInfo();
const ResourceInfo& CrdsInfo();
// Looks a resource up by group/version/plural; nullptr if not served.
const ResourceInfo* FindResource(const std::string& group, const std::string& version,
                                 const std::string& resource);

// Discovery documents (plain, non-aggregated forms).
nlohmann::json VersionDocument();
nlohmann::json CoreApiVersions();                 // /api
nlohmann::json ApiGroupList();                    // /apis
nlohmann::json ApiGroupDocument(const std::string& group);  // /apis/G (null if unknown)
nlohmann::json ApiResourceList(const std::string& group,     // /api/v1, /apis/G/V
                               const std::string& version);  // (null if unknown)
// Aggregated discovery (apidiscovery.k8s.io/v2 APIGroupDiscoveryList) for
// /api (core=true) or /apis (core=false).
nlohmann::json AggregatedDiscovery(bool core);
// OpenAPI v3 discovery: the root (/openapi/v3) and one document per
// group-version ("api/v1", "apis/G/V"; null if unknown). The documents
// declare the PATCH operations with the fieldValidation parameter (what
// kubectl checks to use server-side validation) and, for a custom resource,
// its kind's schema as kube's CRD handler publishes it: the CRD version's
// openAPIV3Schema named "io.openshift.route.v1.Route" (the group reversed),
// with apiVersion, kind and a metadata reference to ObjectMeta, and the
// x-kubernetes-group-version-kind that `kubectl explain` looks for.
// `crd_of` gives the CRD that defines a custom resource (stored or built in).
using CrdLookup = std::function<nlohmann::json(const ResourceInfo&)>;
nlohmann::json OpenApiV3Root();
nlohmann::json OpenApiV3Document(const std::string& gv_path, const CrdLookup& crd_of);

}  // namespace routestatus::apiserver
