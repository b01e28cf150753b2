#pragma once

#include <string>
#include <vector>

#include "controller/admission.h"

namespace routestatus::controller {

// What an operator should know about an admission configuration that
// openshift-router accepts but that cannot do what it seems to say: an
// allowed or denied domain written "*.example.com", ".example.com" or in
// upper case (matched literally, it matches no valid host), a hostname
// template with a key other than name and namespace (no route gets a host
// from it), a template whose expansion is not a valid host (every route it
// names is InvalidHost). One sentence each, naming the setting and what to
// change; empty when there is nothing to say. For a warning logged once at
// start-up. Pure.
std::vector<std::string> AdmissionOptionWarnings(const AdmissionOptions& options);

}  // namespace routestatus::controller
