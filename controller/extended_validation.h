#pragma once

#include <string>

#include "kubeclient/route.h"

namespace routestatus::controller {

// openshift-router's extended validation of spec.tls (its extended
// validator plugin, EXTENDED_VALIDATION; docs/admission.md lists the
// checks): what each termination may carry, the insecure policy, PEM that
// parses, no CA-signed SHA-1/MD5/MD2 certificate, the certificate chaining
// to spec.tls.caCertificate (expiry ignored), the private key matching it.
// "" when the route passes, else one "spec.tls.<field>: <problem>" per
// failure, joined by "; " (the message of reason ExtendedValidationFailed).
// Reads PEM as openshift-router's Go decoder does (DecodePemBlocks) and
// parses with OpenSSL, on every call; returns at once for a route without
// spec.tls. Pure; thread-safe.
std::string ExtendedValidationProblem(const kubeclient::Route& route);

}  // namespace routestatus::controller
