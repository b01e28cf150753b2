#include "test/testing/status_patch.h"

namespace routestatus::testing {

StatusOr<nlohmann::json> WithIngressEntry(nlohmann::json object, std::string_view router_name,
                                          const std::optional<kubeclient::RouteIngress>& entry) {
  auto route = kubeclient::RouteFromJson(object);
  if (!route.ok()) return route.status();
  auto patch = kubeclient::IngressStatusPatch(*route, router_name, entry);
  if (!patch.ok()) return patch.status();
  // Why merge only .status: the status subresource ignores the rest (the
  // patch's resourceVersion is a precondition, not a change).
  nlohmann::json status = {{"status", object.contains("status") ? object["status"]
                                                                  : nlohmann::json::object()}};
  status.merge_patch({{"status", (*patch)["status"]}});
  object["status"] = std::move(status["status"]);
  return object;
}

}  // namespace routestatus::testing
