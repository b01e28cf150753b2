#pragma once

#include <string>

#include "base/status.h"
#include "kubeclient/rest/kube_config.h"

namespace routestatus::kubeclient::rest {

// The PEM material of a client's TLS: whom to trust and who we are. Value
// type.
struct TlsMaterial {
  std::string ca;    // CA certificates; "" = the system's roots
  std::string cert;  // client certificate chain
  std::string key;   // its private key
};

// Reads the CA, client certificate and key of `cfg` (data fields win over
// files) and checks each: a missing file, unusable PEM or a key that does
// not match the certificate is kInvalid naming the field and cfg.origin.
StatusOr<TlsMaterial> LoadTlsMaterial(const RestConfig& cfg);

// Checks a client certificate chain and its key (e.g. from an exec plugin):
// kInvalid saying what is wrong.
Status CheckClientCertificate(const std::string& cert_pem, const std::string& key_pem);

// Configures an OpenSSL client context (SSL_CTX*; void* keeps OpenSSL out
// of this header) from `tls`. Why it replaces the trust store: when a CA is
// named, it must be the only one trusted (as in client-go), but the caller
// may already have loaded the system's default verify paths into the
// context (cpprestsdk does, before its context callback runs). Without a CA
// the store is left alone: the system roots. kInvalid on unusable PEM.
Status ApplyTlsMaterial(const TlsMaterial& tls, void* ssl_ctx);

}  // namespace routestatus::kubeclient::rest
