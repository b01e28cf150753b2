#pragma once

#include <string>

#include "base/clock.h"
#include "base/status.h"
#include "cmd/route-status-controller/router_readiness.h"

namespace routestatus::cmd {

// A RouterProbe that GETs `url` (http or https; a self-signed certificate
// is accepted: the router is in the same pod) on a new connection. 2xx is
// OK; any other answer or none by the deadline is an error naming it.
// kInvalid when `url` is not an http(s) URL.
StatusOr<RouterProbe> HttpRouterProbe(const std::string& url, const Clock& clock);

}  // namespace routestatus::cmd
