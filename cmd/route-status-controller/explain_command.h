#pragma once

#include <chrono>
#include <ostream>
#include <string>

#include "base/clock.h"
#include "cmd/route-status-controller/component_options.h"
#include "kubeclient/kube_client.h"

namespace routestatus::cmd {

// Exit codes of `route-status-controller explain`.
inline constexpr int kExplainDecided = 0;
inline constexpr int kExplainNotFound = 1;
inline constexpr int kExplainUsage = 2;  // ParseConfig errors (main prints them)
inline constexpr int kExplainApiError = 3;

// What `explain` needs besides the router's configuration.
struct ExplainRequest {
  std::string namespace_name;
  std::string name;
  bool json = false;  // --output=json
  // How long the route (and namespace) lists may take before giving up.
  std::chrono::milliseconds list_timeout = std::chrono::seconds(60);
};

// Runs `explain`: reads the route (a 404 is kExplainNotFound; any other
// failure, an unreachable server included, kExplainApiError with the
// server's words on `err`), lists routes, and namespaces when the shard has
// a namespace selector, through the controller's own informers (same
// options, same "routes by host" index), then prints ExplanationText or
// ExplanationJson of controller::ExplainRoute on `out`. Read-only: it
// writes nothing to the API server. Blocks; not thread-safe with itself.
int RunExplain(const ExplainRequest& request, const ComponentOptions& components,
               kubeclient::KubeClient& client, const Clock& clock, const std::string& server,
               std::ostream& out, std::ostream& err);

}  // namespace routestatus::cmd
