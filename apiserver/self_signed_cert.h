#pragma once

#include <string>
#include <vector>

#include "base/status.h"

namespace routestatus::apiserver {

// A PEM certificate and its private key.
struct CertAndKey {
  std::string cert_pem;
  std::string key_pem;
};

// Creates a self-signed (CA:TRUE) certificate for 127.0.0.1, ::1 and
// localhost, plus each of extra_hosts (an IPv4 or IPv6 address becomes an IP
// subjectAltName, anything else a DNS one, as kube-apiserver's generated
// certificate names its service IP and advertise address), valid for a
// year, with an EC P-256 key. The certificate is its own CA, so clients
// trust it by putting it in certificate-authority-data. A host that is empty
// or holds a comma or whitespace is kInvalid. Thread-safe.
StatusOr<CertAndKey> GenerateSelfSignedCert(const std::vector<std::string>& extra_hosts = {});

}  // namespace routestatus::apiserver
