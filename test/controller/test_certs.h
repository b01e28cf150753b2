#pragma once

#include <memory>
#include <string>

#include <openssl/evp.h>
#include <openssl/x509.h>

namespace routestatus::controller::testing {

// A key pair and its certificate, made by the test (EC P-256 keys: fast).
struct TestCert {
  std::string cert_pem;
  std::string key_pem;
  std::string public_key_pem;  // the key's public half, a "PUBLIC KEY" block
  std::shared_ptr<EVP_PKEY> key;
  std::shared_ptr<X509> cert;
};

// What MakeCert makes. Value type.
struct CertSpec {
  std::string common_name = "www.example.com";
  const TestCert* issuer = nullptr;  // null: self-signed
  bool ca = false;                   // basicConstraints CA:TRUE and keyCertSign
  int valid_from_days = -1;          // relative to now
  int valid_until_days = 365;        // negative: already expired
  bool sha1 = false;                 // signed with SHA-1 instead of SHA-256
};

// Generates a fresh key and a certificate for it as `spec` says. Aborts the
// test program on an OpenSSL failure (a broken test environment).
TestCert MakeCert(const CertSpec& spec);

}  // namespace routestatus::controller::testing
