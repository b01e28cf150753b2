#pragma once

#include <string>

#include "kubeclient/route.h"

namespace routestatus::controller {

// openshift-router's extended validation of spec.tls (its extended
// validator plugin, EXTENDED_VALIDATION): "" when the route passes, else a
// message naming the field and what is wrong with it (for the status entry
// of reason ExtendedValidationFailed). Pure; thread-safe.
std::string ExtendedValidationProblem(const kubeclient::Route& route);

}  // namespace routestatus::controller
