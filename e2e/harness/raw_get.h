#pragma once

#include <string>

#include "base/status.h"
#include "kubeclient/rest/kube_config.h"

namespace routestatus::e2e {

// A blocking HTTP/1.0 GET of `path` (e.g. "/metrics") from the API server
// that `config` describes, with its trust and credentials: https with the
// CA (data or file; system roots when neither; none with
// insecure_skip_tls_verify), client certificate and key, bearer token (or
// token file); plain http too. Returns the body of a 200 response; other
// codes and transport failures are errors naming them. For the e2e suite on
// real clusters (kubectl may not be installed where it runs). Thread-safe.
StatusOr<std::string> RawGet(const kubeclient::rest::RestConfig& config,
                                         const std::string& path);

}  // namespace routestatus::e2e
