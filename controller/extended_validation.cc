#include "controller/extended_validation.h"

#include <memory>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

#include "controller/pem_blocks.h"

namespace routestatus::controller {
namespace {

using kubeclient::RouteTlsMaterial;

// unique_ptr deleter calling OpenSSL's `Free`.
template <auto Free>
struct Deleter {
  template <typename T>
  void operator()(T* p) const {
    Free(p);
  }
};
using Cert = std::unique_ptr<X509, Deleter<X509_free>>;
using Pkey = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY_free>>;

const unsigned char* Bytes(const std::string& der) {
  return reinterpret_cast<const unsigned char*>(der.data());
}

// A DER certificate, null unless it parses and nothing follows it.
Cert ParseCert(const std::string& der) {
  const unsigned char* p = Bytes(der);
  Cert cert(d2i_X509(nullptr, &p, static_cast<long>(der.size())));
  if (cert && p != Bytes(der) + der.size()) cert.reset();
  ERR_clear_error();
  return cert;
}

// A DER private key as Go's x509 reads one: PKCS #8, then PKCS #1 (RSA),
// then SEC 1 (EC); only RSA and ECDSA keys are accepted.
Pkey ParsePrivateKey(const std::string& der) {
  Pkey key;
  for (int type : {EVP_PKEY_NONE, EVP_PKEY_RSA, EVP_PKEY_EC}) {
    const unsigned char* p = Bytes(der);
    key.reset(type == EVP_PKEY_NONE ? d2i_AutoPrivateKey(nullptr, &p, static_cast<long>(der.size()))
                                    : d2i_PrivateKey(type, nullptr, &p, static_cast<long>(der.size())));
    if (key) break;
  }
  ERR_clear_error();
  if (key && EVP_PKEY_get_base_id(key.get()) != EVP_PKEY_RSA &&
      EVP_PKEY_get_base_id(key.get()) != EVP_PKEY_EC) {
    key.reset();
  }
  return key;
}

bool IsPrivateKeyType(const std::string& type) {
  return type == "RSA PRIVATE KEY" || type == "ECDSA PRIVATE KEY" || type == "EC PRIVATE KEY" ||
         type == "PRIVATE KEY";
}

bool IsPublicKeyType(const std::string& type) {
  return type == "PUBLIC KEY" || type == "RSA PUBLIC KEY" || type == "DSA PUBLIC KEY" ||
         type == "ECDSA PUBLIC KEY";
}

// One PEM field of spec.tls, decoded once, each block parsed at most once:
// with OpenSSL 3 a parse costs a few hundred microseconds (its decoders),
// and the checks below read a block up to three times. Not thread-safe;
// one per validation.
class PemField {
 public:
  explicit PemField(const std::string& text)
      : blocks_(DecodePemBlocks(text)), certs_(blocks_.size()), keys_(blocks_.size()) {}

  const std::vector<PemBlock>& blocks() const { return blocks_; }
  // Block `i` as a certificate (ParseCert), null when it does not parse.
  // Owned by this field.
  X509* CertAt(size_t i) {
    if (!certs_[i]) certs_[i] = ParseCert(blocks_[i].der);
    return certs_[i]->get();
  }
  // Block `i` as a private key (ParsePrivateKey), null when it does not
  // parse. Owned by this field.
  EVP_PKEY* KeyAt(size_t i) {
    if (!keys_[i]) keys_[i] = ParsePrivateKey(blocks_[i].der);
    return keys_[i]->get();
  }

 private:
  const std::vector<PemBlock> blocks_;
  std::vector<std::optional<Cert>> certs_;
  std::vector<std::optional<Pkey>> keys_;
};

// "" when every block of `field` is of a type openshift-router knows and
// parses (its sanitizePEM), else what is wrong.
std::string SanitizeProblem(PemField& field) {
  for (size_t i = 0; i < field.blocks().size(); ++i) {
    const PemBlock& block = field.blocks()[i];
    if (block.type == "CERTIFICATE") {
      if (!field.CertAt(i)) return "a CERTIFICATE block does not parse";
    } else if (IsPrivateKeyType(block.type)) {
      if (!field.KeyAt(i)) return "block " + block.type + " is not valid";
    } else if (IsPublicKeyType(block.type)) {
      const unsigned char* p = Bytes(block.der);
      Pkey key(d2i_PUBKEY(nullptr, &p, static_cast<long>(block.der.size())));
      ERR_clear_error();
      if (!key) return "block " + block.type + " is not valid";
    } else if (block.type != "EC PARAMETERS") {
      return "unrecognized PEM block " + block.type;
    }
  }
  return "";
}

// The certificates of `field` (its CERTIFICATE blocks without headers, as
// client-go's ParseCertsPEM reads them), owned by `field`; `problem` says
// why there are none or one does not parse.
std::vector<X509*> ParseCerts(PemField& field, std::string* problem) {
  std::vector<X509*> certs;
  for (size_t i = 0; i < field.blocks().size(); ++i) {
    const PemBlock& block = field.blocks()[i];
    if (block.type != "CERTIFICATE" || block.has_headers) continue;
    X509* cert = field.CertAt(i);
    if (cert == nullptr) {
      *problem = "a certificate does not parse";
      return {};
    }
    certs.push_back(cert);
  }
  if (certs.empty()) *problem = "no PEM certificate found";
  return certs;
}

// "" unless a certificate signed by a CA (not self-signed) uses a
// signature digest openshift-router refuses (SHA-1, MD5, MD2).
std::string SignatureProblem(const std::vector<X509*>& certs) {
  for (X509* cert : certs) {
    if (X509_get_extension_flags(cert) & EXFLAG_SS) continue;
    int digest = NID_undef;
    int key_type = NID_undef;
    if (!OBJ_find_sigid_algs(X509_get_signature_nid(cert), &digest, &key_type)) continue;
    if (digest == NID_sha1) return "router does not support CA-signed certs using SHA1";
    if (digest == NID_md5) return "router does not support CA-signed certs using MD5";
    if (digest == NID_md2) return "router does not support CA-signed certs using MD2";
  }
  return "";
}

// "" when `leaf` chains to one of `cas` (each a trust anchor, as in Go's
// x509 Verify with the CAs as roots and intermediates), expiry ignored as
// openshift-router ignores it; else why not.
std::string VerifyProblem(X509* leaf, const std::vector<X509*>& cas) {
  std::unique_ptr<X509_STORE, Deleter<X509_STORE_free>> store(X509_STORE_new());
  std::unique_ptr<X509_STORE_CTX, Deleter<X509_STORE_CTX_free>> ctx(X509_STORE_CTX_new());
  if (!store || !ctx) return "out of memory";
  for (X509* ca : cas) X509_STORE_add_cert(store.get(), ca);
  X509_STORE_set_flags(store.get(), X509_V_FLAG_PARTIAL_CHAIN | X509_V_FLAG_NO_CHECK_TIME);
  if (X509_STORE_CTX_init(ctx.get(), store.get(), leaf, nullptr) != 1) return "out of memory";
  const bool ok = X509_verify_cert(ctx.get()) == 1;
  const int error = X509_STORE_CTX_get_error(ctx.get());
  ERR_clear_error();
  if (!ok) {
    return std::string("error verifying certificate against spec.tls.caCertificate: ") +
           X509_verify_cert_error_string(error);
  }
  // Why by hand: Go's Verify wants the leaf usable for a server (extended
  // key usage serverAuth when the leaf lists any); OpenSSL's purpose check
  // would also look at key usage bits, which Go ignores.
  const uint32_t flags = X509_get_extension_flags(leaf);
  if ((flags & EXFLAG_XKUSAGE) && !(X509_get_extended_key_usage(leaf) & XKU_SSL_SERVER) &&
      !(X509_get_extended_key_usage(leaf) & XKU_ANYEKU)) {
    return "error verifying certificate: its extended key usage does not allow a server";
  }
  return "";
}

// Collects "field: problem" lines in openshift-router's order.
class Problems {
 public:
  void Add(const char* field, const std::string& problem) {
    if (problem.empty()) return;
    text_ += (text_.empty() ? "" : "; ") + std::string("spec.tls.") + field + ": " + problem;
  }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

// openshift-router's validateTLS: what each termination may carry, and the
// insecure policy.
void CheckTermination(const std::string& termination, const RouteTlsMaterial& m,
                      Problems& problems) {
  if (termination == "passthrough") {
    const std::string no = "passthrough termination does not support certificates";
    problems.Add("certificate", m.certificate.empty() ? "" : no);
    problems.Add("key", m.key.empty() ? "" : no);
    problems.Add("caCertificate", m.ca_certificate.empty() ? "" : no);
    problems.Add("destinationCACertificate", m.destination_ca_certificate.empty() ? "" : no);
  } else if (termination == "edge") {
    problems.Add("destinationCACertificate",
                 m.destination_ca_certificate.empty()
                     ? ""
                     : "edge termination does not support destination certificates");
  } else if (termination != "reencrypt") {
    problems.Add("termination", "unsupported value \"" + termination +
                                    "\": supported values: \"edge\", \"passthrough\", "
                                    "\"reencrypt\"");
  }
  const std::string& policy = m.insecure_edge_termination_policy;
  if (policy.empty()) return;
  const bool passthrough = termination == "passthrough";
  const bool allowed = policy == "None" || policy == "Redirect" || (!passthrough && policy == "Allow");
  if ((passthrough || termination == "edge" || termination == "reencrypt") && !allowed) {
    problems.Add("insecureEdgeTerminationPolicy",
                 "invalid value \"" + policy + "\"; acceptable values are None, " +
                     (passthrough ? "Redirect" : "Allow, Redirect") + ", or empty");
  }
}

// caCertificate or destinationCACertificate (`name`, `what` for the
// message): certificates that parse, blocks openshift-router knows, no
// CA-signed certificate with a weak digest. Returns the certificates
// (owned by `field`).
std::vector<X509*> CheckCaField(const char* name, const char* what, PemField& field,
                                Problems& problems) {
  std::string problem;
  std::vector<X509*> certs = ParseCerts(field, &problem);
  if (!problem.empty()) {
    problems.Add(name, std::string("failed to parse ") + what + ": " + problem);
    return {};
  }
  problems.Add(name, SanitizeProblem(field));
  problems.Add(name, SignatureProblem(certs));
  return certs;
}

// openshift-router's checks of the certificate and its private key (in
// spec.tls.certificate or spec.tls.key), once there is a key: the key
// material holds private keys only and the certificate material no public
// key (openshift/router#669), and Go's tls.X509KeyPair on the first
// certificate and the first private key. `key_text` is the key field and
// `key` its blocks; `key_sanitized`: they passed SanitizeProblem.
void CheckKeyPair(PemField& cert, const std::string& key_text, PemField& key, bool key_sanitized,
                  Problems& problems) {
  // The private keys of both fields in order, as (field, block index).
  std::vector<std::pair<PemField*, size_t>> keys;
  std::optional<size_t> leaf_block;
  const PemBlock* public_key = nullptr;
  for (size_t i = 0; i < cert.blocks().size(); ++i) {
    const PemBlock& block = cert.blocks()[i];
    if (IsPrivateKeyType(block.type)) keys.emplace_back(&cert, i);
    if (block.type == "CERTIFICATE" && !leaf_block) leaf_block = i;
    if (IsPublicKeyType(block.type) && public_key == nullptr) public_key = &block;
  }
  // Why: openshift-router keeps of a key field it could sanitize only the
  // blocks it rewrites (text holding none becomes empty, EC PARAMETERS are
  // dropped), and the text as given otherwise.
  bool key_given = !key_sanitized && !key_text.empty();
  const PemBlock* not_private = nullptr;
  for (size_t i = 0; i < key.blocks().size(); ++i) {
    const PemBlock& block = key.blocks()[i];
    if (block.type == "EC PARAMETERS") continue;
    key_given = true;
    if (IsPrivateKeyType(block.type)) {
      keys.emplace_back(&key, i);
    } else if (not_private == nullptr) {
      not_private = &block;
    }
  }
  if (keys.empty() && !key_given) {
    problems.Add("key", "no key specified");
    return;
  }
  if (not_private != nullptr) {
    problems.Add("key", "holds a " + not_private->type + " block; give the private key only");
  }
  if (public_key != nullptr) {
    problems.Add("certificate", "holds a " + public_key->type + " block; give the certificate "
                                "chain (and perhaps its private key) only");
  }
  X509* leaf = leaf_block ? cert.CertAt(*leaf_block) : nullptr;
  if (leaf == nullptr) {
    problems.Add("key", "found no certificate in spec.tls.certificate to pair the key with");
    return;
  }
  if (keys.empty()) {
    problems.Add("key", "found no private key in the PEM data");
    return;
  }
  EVP_PKEY* first = keys.front().first->KeyAt(keys.front().second);
  if (first == nullptr) {
    problems.Add("key", "failed to parse the private key");
    return;
  }
  const bool match = EVP_PKEY_eq(X509_get0_pubkey(leaf), first) == 1;
  ERR_clear_error();
  if (!match) problems.Add("key", "private key does not match the certificate's public key");
}

}  // namespace

std::string ExtendedValidationProblem(const kubeclient::Route& route) {
  if (route.spec.tls_termination.empty() && !route.spec.tls_material) return "";
  static const RouteTlsMaterial kNone;
  const RouteTlsMaterial& m = route.spec.tls_material ? *route.spec.tls_material : kNone;
  Problems problems;
  CheckTermination(std::string(route.spec.tls_termination), m, problems);
  PemField ca(m.ca_certificate);
  std::vector<X509*> cas;
  if (!m.ca_certificate.empty()) cas = CheckCaField("caCertificate", "CA certificate", ca, problems);
  PemField cert(m.certificate);
  if (!m.certificate.empty()) {
    std::string problem;
    std::vector<X509*> certs = ParseCerts(cert, &problem);
    if (problem.empty()) problem = SignatureProblem(certs);
    if (problem.empty() && !cas.empty()) problem = VerifyProblem(certs.front(), cas);
    if (problem.empty()) problem = SanitizeProblem(cert);
    problems.Add("certificate", problem);
  }
  PemField key(m.key);
  const std::string key_problem = m.key.empty() ? "" : SanitizeProblem(key);
  problems.Add("key", key_problem);
  if (!m.certificate.empty()) CheckKeyPair(cert, m.key, key, key_problem.empty(), problems);
  if (!m.destination_ca_certificate.empty()) {
    PemField destination(m.destination_ca_certificate);
    CheckCaField("destinationCACertificate", "destination CA certificate", destination, problems);
  }
  return problems.text();
}

}  // namespace routestatus::controller
