#include "apiserver/self_signed_cert.h"

#include <memory>
#include <string>

#include <gtest/gtest.h>
#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

namespace routestatus::apiserver {
namespace {

struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
using X509Ptr = std::unique_ptr<X509, X509Free>;

X509Ptr Parse(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  X509Ptr cert(PEM_read_bio_X509(bio, nullptr, nullptr, nullptr));
  BIO_free(bio);
  return cert;
}

// What a TLS client checks: the name it dialled against the certificate.
bool MatchesIp(X509* cert, const char* ip) { return X509_check_ip_asc(cert, ip, 0) == 1; }
bool MatchesHost(X509* cert, const char* host) {
  return X509_check_host(cert, host, 0, 0, nullptr) == 1;
}

TEST(SelfSignedCertTest, NamesLoopbackOnlyByDefault) {
  auto cert = GenerateSelfSignedCert();
  ASSERT_TRUE(cert.ok()) << cert.status().ToString();
  X509Ptr x509 = Parse(cert.value().cert_pem);
  ASSERT_NE(x509, nullptr);
  EXPECT_TRUE(MatchesIp(x509.get(), "127.0.0.1"));
  EXPECT_TRUE(MatchesIp(x509.get(), "::1"));
  EXPECT_TRUE(MatchesHost(x509.get(), "localhost"));
  EXPECT_FALSE(MatchesIp(x509.get(), "10.0.2.2"));
  EXPECT_FALSE(MatchesHost(x509.get(), "kubernetes.default.svc"));
}

TEST(SelfSignedCertTest, ExtraHostsBecomeIpOrDnsNames) {
  auto cert = GenerateSelfSignedCert({"10.0.2.2", "fd00::2", "kubernetes.default.svc"});
  ASSERT_TRUE(cert.ok()) << cert.status().ToString();
  X509Ptr x509 = Parse(cert.value().cert_pem);
  ASSERT_NE(x509, nullptr);
  EXPECT_TRUE(MatchesIp(x509.get(), "127.0.0.1"));
  EXPECT_TRUE(MatchesIp(x509.get(), "10.0.2.2"));
  EXPECT_TRUE(MatchesIp(x509.get(), "fd00::2"));
  EXPECT_TRUE(MatchesHost(x509.get(), "kubernetes.default.svc"));
  // An address is an IP name, not a DNS one (clients dialling an IP check IP names).
  EXPECT_FALSE(MatchesHost(x509.get(), "10.0.2.2"));
  EXPECT_FALSE(MatchesIp(x509.get(), "10.0.2.3"));
}

TEST(SelfSignedCertTest, RejectsHostsThatWouldInjectNames) {
  for (const char* bad : {"", "a,IP:1.2.3.4", "two words"}) {
    auto cert = GenerateSelfSignedCert({bad});
    ASSERT_FALSE(cert.ok()) << "host \"" << bad << "\"";
    EXPECT_EQ(cert.status().code(), StatusCode::kInvalid);
  }
}

}  // namespace
}  // namespace routestatus::apiserver
