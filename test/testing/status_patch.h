#pragma once

#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "kubeclient/route.h"

namespace routestatus::testing {

// `object` (a whole route) as the API server leaves it after the status
// merge patch a replica of `router_name` sends to write `entry`
// (kubeclient::IngressStatusPatch of the decoded route; nullopt removes
// ours). Everything but .status is returned as given, resourceVersion
// included. For tests that store a route with an entry already written.
// kInvalid when `object` does not decode as a route.
StatusOr<nlohmann::json> WithIngressEntry(nlohmann::json object, std::string_view router_name,
                                          const std::optional<kubeclient::RouteIngress>& entry);

}  // namespace routestatus::testing
