#include "kubeclient/rest/tls_material.h"

#include <memory>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

namespace routestatus::kubeclient::rest {
namespace {

Status Invalid(std::string m) { return Status(StatusCode::kInvalid, std::move(m)); }

// The last OpenSSL error as text ("" when none); clears the queue.
std::string OpenSslError() {
  unsigned long e = ERR_get_error();
  unsigned long last = e;
  while (e != 0) {
    last = e;
    e = ERR_get_error();
  }
  if (last == 0) return "no PEM data found";
  char buf[256];
  ERR_error_string_n(last, buf, sizeof(buf));
  return buf;
}

using Bio = std::unique_ptr<BIO, decltype(&BIO_free)>;
Bio MemBio(const std::string& pem) {
  return Bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), &BIO_free);
}

// Every certificate of `pem` (at least one) into `store`.
Status AddCertificates(const std::string& pem, X509_STORE* store) {
  Bio bio = MemBio(pem);
  int added = 0;
  while (X509* cert = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    int ok = X509_STORE_add_cert(store, cert);
    X509_free(cert);
    if (ok != 1) return Invalid(OpenSslError());
    ++added;
  }
  ERR_clear_error();  // the end-of-data "error" after the last certificate
  if (added == 0) return Invalid("no certificate in the PEM data");
  return Status::Ok();
}

// The chain and key into `ctx` (either may be empty).
Status UseCertificate(const std::string& cert_pem, const std::string& key_pem, SSL_CTX* ctx) {
  using X509Ptr = std::unique_ptr<X509, decltype(&X509_free)>;
  using KeyPtr = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;
  X509Ptr leaf(nullptr, &X509_free);
  KeyPtr key(nullptr, &EVP_PKEY_free);
  Bio cert_bio = MemBio(cert_pem);
  if (!cert_pem.empty()) {
    leaf.reset(PEM_read_bio_X509(cert_bio.get(), nullptr, nullptr, nullptr));
    if (!leaf) return Invalid("client-certificate: " + OpenSslError());
  }
  if (!key_pem.empty()) {
    Bio bio = MemBio(key_pem);
    key.reset(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
    if (!key) return Invalid("client-key: " + OpenSslError());
  }
  if (leaf && key && X509_check_private_key(leaf.get(), key.get()) != 1) {
    return Invalid("client-key does not match client-certificate (" + OpenSslError() + ")");
  }
  if (leaf) {
    if (SSL_CTX_use_certificate(ctx, leaf.get()) != 1) {
      return Invalid("client-certificate: " + OpenSslError());
    }
    SSL_CTX_clear_chain_certs(ctx);
    while (X509* extra = PEM_read_bio_X509(cert_bio.get(), nullptr, nullptr, nullptr)) {
      if (SSL_CTX_add0_chain_cert(ctx, extra) != 1) {
        X509_free(extra);
        return Invalid("client-certificate: " + OpenSslError());
      }
    }
    ERR_clear_error();
  }
  if (key && SSL_CTX_use_PrivateKey(ctx, key.get()) != 1) {
    return Invalid("client-key: " + OpenSslError());
  }
  return Status::Ok();
}

using Ctx = std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)>;
Ctx NewCtx() { return Ctx(SSL_CTX_new(TLS_client_method()), &SSL_CTX_free); }

}  // namespace

Status ApplyTlsMaterial(const TlsMaterial& tls, void* ssl_ctx) {
  SSL_CTX* ctx = static_cast<SSL_CTX*>(ssl_ctx);
  if (!tls.ca.empty()) {
    X509_STORE* store = X509_STORE_new();
    if (store == nullptr) return Invalid("certificate-authority: out of memory");
    Status s = AddCertificates(tls.ca, store);
    if (!s.ok()) {
      X509_STORE_free(store);
      return Invalid("certificate-authority: " + s.message());
    }
    SSL_CTX_set_cert_store(ctx, store);  // frees the old store and its lookups
  }
  return UseCertificate(tls.cert, tls.key, ctx);
}

Status CheckClientCertificate(const std::string& cert_pem, const std::string& key_pem) {
  if (cert_pem.empty() || key_pem.empty()) {
    return Invalid("client certificate and key come together");
  }
  Ctx ctx = NewCtx();
  if (!ctx) return Invalid("cannot create an OpenSSL context");
  return UseCertificate(cert_pem, key_pem, ctx.get());
}

StatusOr<TlsMaterial> LoadTlsMaterial(const RestConfig& cfg) {
  TlsMaterial tls;
  struct Item {
    const std::string& data;
    const std::string& file;
    std::string* out;
    const char* what;
  };
  const Item items[] = {{cfg.ca_data, cfg.ca_file, &tls.ca, "certificate-authority"},
                        {cfg.client_cert_data, cfg.client_cert_file, &tls.cert, "client-certificate"},
                        {cfg.client_key_data, cfg.client_key_file, &tls.key, "client-key"}};
  for (const Item& it : items) {
    if (!it.data.empty()) {
      *it.out = it.data;
    } else if (std::string why; !it.file.empty() && !ReadFileText(it.file, it.out, &why, kMaxPemFileBytes)) {
      return Invalid(cfg.origin + ": " + it.what + " " + it.file + ": cannot read the file: " + why);
    }
  }
  // Why each piece alone first: the message then says which one is bad.
  if (!tls.ca.empty()) {
    X509_STORE* store = X509_STORE_new();
    Status s = AddCertificates(tls.ca, store);
    X509_STORE_free(store);
    if (!s.ok()) return Invalid(cfg.origin + ": certificate-authority: not usable PEM (" + s.message() + ")");
  }
  Ctx ctx = NewCtx();
  if (!ctx) return Invalid("cannot create an OpenSSL context");
  if (Status s = UseCertificate(tls.cert, tls.key, ctx.get()); !s.ok()) {
    return Invalid(cfg.origin + ": " + s.message());
  }
  return tls;
}

}  // namespace routestatus::kubeclient::rest
