#include "apiserver/self_signed_cert.h"

#include <arpa/inet.h>

#include <memory>

#include <openssl/bio.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

namespace routestatus::apiserver {

namespace {


template <typename T, void (*F)(T*)>
struct Deleter {
  void operator()(T* p) const { F(p); }
};
using PkeyPtr = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY, EVP_PKEY_free>>;
using X509Ptr = std::unique_ptr<X509, Deleter<X509, X509_free>>;
using BioPtr = std::unique_ptr<BIO, Deleter<BIO, BIO_free_all>>;

bool AddExt(X509* cert, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (ext == nullptr) return false;
  bool ok = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return ok;
}

// The subjectAltName value: the loopback names, then extra_hosts.
StatusOr<std::string> SubjectAltNames(const std::vector<std::string>& extra_hosts) {
  std::string names = "IP:127.0.0.1,IP:::1,DNS:localhost";
  for (const std::string& host : extra_hosts) {
    if (host.empty() || host.find_first_of(", \t\r\n") != std::string::npos) {
      return Status(StatusCode::kInvalid,
                    "certificate host name \"" + host + "\": empty or has a comma or space");
    }
    unsigned char address[16];
    bool ip = inet_pton(AF_INET, host.c_str(), address) == 1 ||
              inet_pton(AF_INET6, host.c_str(), address) == 1;
    names += (ip ? ",IP:" : ",DNS:") + host;
  }
  return names;
}

std::string BioString(BIO* bio) {
  char* data = nullptr;
  long len = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<size_t>(len));
}

}  // namespace

StatusOr<CertAndKey> GenerateSelfSignedCert(const std::vector<std::string>& extra_hosts) {
  StatusOr<std::string> alt_names = SubjectAltNames(extra_hosts);
  if (!alt_names.ok()) return alt_names.status();
  PkeyPtr key(EVP_EC_gen("P-256"));
  if (!key) return Status(StatusCode::kInternal, "EC key generation failed");
  X509Ptr cert(X509_new());
  X509_set_version(cert.get(), 2);
  unsigned char serial[16];
  RAND_bytes(serial, sizeof(serial));
  serial[0] &= 0x7f;
  BIGNUM* bn = BN_bin2bn(serial, sizeof(serial), nullptr);
  BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert.get()));
  BN_free(bn);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 365L * 24 * 3600);
  X509_set_pubkey(cert.get(), key.get());
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("local-apiserver"), -1, -1, 0);
  X509_set_issuer_name(cert.get(), name);
  if (!AddExt(cert.get(), NID_basic_constraints, "critical,CA:TRUE") ||
      !AddExt(cert.get(), NID_key_usage, "critical,digitalSignature,keyEncipherment,keyCertSign") ||
      !AddExt(cert.get(), NID_ext_key_usage, "serverAuth") ||
      !AddExt(cert.get(), NID_subject_alt_name, alt_names.value().c_str())) {
    return Status(StatusCode::kInternal, "adding certificate extensions failed");
  }
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0) {
    return Status(StatusCode::kInternal, "signing the certificate failed");
  }
  BioPtr cert_bio(BIO_new(BIO_s_mem()));
  BioPtr key_bio(BIO_new(BIO_s_mem()));
  if (PEM_write_bio_X509(cert_bio.get(), cert.get()) != 1 ||
      PEM_write_bio_PrivateKey(key_bio.get(), key.get(), nullptr, nullptr, 0, nullptr,
                               nullptr) != 1) {
    return Status(StatusCode::kInternal, "PEM encoding failed");
  }
  return CertAndKey{BioString(cert_bio.get()), BioString(key_bio.get())};
}

}  // namespace routestatus::apiserver
