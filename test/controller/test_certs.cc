#include "test/controller/test_certs.h"

#include <cstdlib>

#include <glog/logging.h>
#include <openssl/bio.h>
#include <openssl/ec.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

namespace routestatus::controller::testing {
namespace {

std::string ToPem(int (*write)(BIO*, void*), void* object) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), BIO_free);
  CHECK(bio && write(bio.get(), object) == 1) << "PEM encoding failed";
  char* data = nullptr;
  long len = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(len));
}

int WriteCert(BIO* bio, void* x) { return PEM_write_bio_X509(bio, static_cast<X509*>(x)); }
int WriteKey(BIO* bio, void* k) {
  return PEM_write_bio_PrivateKey(bio, static_cast<EVP_PKEY*>(k), nullptr, nullptr, 0, nullptr,
                                  nullptr);
}
int WritePublicKey(BIO* bio, void* k) { return PEM_write_bio_PUBKEY(bio, static_cast<EVP_PKEY*>(k)); }

void AddExtension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  CHECK(ext != nullptr) << "extension " << value;
  X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
}

}  // namespace

TestCert MakeCert(const CertSpec& spec) {
  TestCert out;
  out.key.reset(EVP_EC_gen("P-256"), EVP_PKEY_free);
  CHECK(out.key) << "key generation failed";
  out.cert.reset(X509_new(), X509_free);
  X509* cert = out.cert.get();
  X509_set_version(cert, 2);
  // Why random: issuer and serial must differ between certificates; the
  // outcome of no test depends on the value.
  uint64_t serial = 0;
  CHECK(RAND_bytes(reinterpret_cast<unsigned char*>(&serial), sizeof(serial)) == 1);
  ASN1_INTEGER_set_uint64(X509_get_serialNumber(cert), serial >> 1);
  X509_gmtime_adj(X509_getm_notBefore(cert), static_cast<long>(spec.valid_from_days) * 86400);
  X509_gmtime_adj(X509_getm_notAfter(cert), static_cast<long>(spec.valid_until_days) * 86400);
  X509_set_pubkey(cert, out.key.get());
  X509_NAME* name = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(spec.common_name.c_str()), -1,
                             -1, 0);
  X509* issuer = spec.issuer ? spec.issuer->cert.get() : cert;
  X509_set_issuer_name(cert, X509_get_subject_name(issuer));
  AddExtension(cert, issuer, NID_subject_key_identifier, "hash");
  AddExtension(cert, issuer, NID_authority_key_identifier, "keyid:always");
  if (spec.ca) {
    AddExtension(cert, issuer, NID_basic_constraints, "critical,CA:TRUE");
    AddExtension(cert, issuer, NID_key_usage, "critical,keyCertSign,cRLSign");
  } else {
    AddExtension(cert, issuer, NID_subject_alt_name, ("DNS:" + spec.common_name).c_str());
  }
  EVP_PKEY* signer = spec.issuer ? spec.issuer->key.get() : out.key.get();
  CHECK(X509_sign(cert, signer, spec.sha1 ? EVP_sha1() : EVP_sha256()) > 0) << "signing failed";
  out.cert_pem = ToPem(WriteCert, cert);
  out.key_pem = ToPem(WriteKey, out.key.get());
  out.public_key_pem = ToPem(WritePublicKey, out.key.get());
  return out;
}

}  // namespace routestatus::controller::testing
