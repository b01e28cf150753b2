#pragma once

#include <string>

#include "base/status.h"

namespace routestatus::apiserver {

// A PEM certificate and its private key.
struct CertAndKey {
  std::string cert_pem;
  std::string key_pem;
};

// Creates a self-signed (CA:TRUE) certificate for 127.0.0.1, ::1 and
// localhost, valid for a year, with an EC P-256 key. The certificate is its
// own CA, so clients trust it by putting it in certificate-authority-data.
// Thread-safe.
StatusOr<CertAndKey> GenerateSelfSignedCert();

}  // namespace routestatus::apiserver
