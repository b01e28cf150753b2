#pragma once

#include <nlohmann/json.hpp>

namespace routestatus::apiserver::testing {

// The additionalPrinterColumns of deploy/crd/routes.route.openshift.io.yaml
// (the kubectl test applies the file itself).
inline nlohmann::json RoutesPrinterColumns() {
  return nlohmann::json::parse(R"([
    {"name": "Host", "type": "string", "jsonPath": ".status.ingress[0].host"},
    {"name": "Admitted", "type": "string",
     "jsonPath": ".status.ingress[0].conditions[?(@.type==\"Admitted\")].status"},
    {"name": "Service", "type": "string", "jsonPath": ".spec.to.name"},
    {"name": "TLS", "type": "string", "jsonPath": ".spec.tls.termination"},
    {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}])");
}

// A CustomResourceDefinition for routes with those columns on version v1.
inline nlohmann::json RoutesCrd() {
  return {{"apiVersion", "apiextensions.k8s.io/v1"},
          {"kind", "CustomResourceDefinition"},
          {"metadata", {{"name", "routes.route.openshift.io"}}},
          {"spec",
           {{"group", "route.openshift.io"},
            {"versions",
             nlohmann::json::array({{{"name", "v1"},
                                     {"additionalPrinterColumns", RoutesPrinterColumns()}}})}}}};
}

}  // namespace routestatus::apiserver::testing
