// Extended validation of spec.tls (openshift-router's extended validator)
// with certificates the test makes: each case names the field at fault,
// or passes; then the decision through Admit.
#include "controller/extended_validation.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "controller/admission.h"
#include "test/controller/test_certs.h"

namespace routestatus::controller {
namespace {

using kubeclient::Route;
using kubeclient::RouteTlsMaterial;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::CertSpec;
using testing::MakeCert;
using testing::TestCert;

Route TlsRoute(const std::string& termination, RouteTlsMaterial m, const std::string& ns = "ns",
               const std::string& name = "r", int64_t created = 10) {
  Route r;
  r.metadata.namespace_name = ns;
  r.metadata.name = name;
  r.metadata.uid = ns + "-" + name;
  r.metadata.creation_unix = created;
  r.spec.host = "www.example.com";
  r.spec.tls_termination = termination;
  r.spec.tls_material = std::make_shared<const RouteTlsMaterial>(std::move(m));
  return r;
}

RouteTlsMaterial Pair(const TestCert& c) {
  RouteTlsMaterial m;
  m.certificate = c.cert_pem;
  m.key = c.key_pem;
  return m;
}

// One root CA and an intermediate it signs, made once per test program
// (making keys is the slow part) and never changed.
const TestCert& Root() {
  static const TestCert root = MakeCert({.common_name = "root", .ca = true});
  return root;
}
const TestCert& Intermediate() {
  static const TestCert intermediate =
      MakeCert({.common_name = "intermediate", .issuer = &Root(), .ca = true});
  return intermediate;
}

TEST(ExtendedValidationTest, RoutesWithoutCertificatesPass) {
  Route plain;
  plain.spec.host = "www.example.com";
  EXPECT_THAT(ExtendedValidationProblem(plain), IsEmpty());
  for (const char* termination : {"edge", "passthrough", "reencrypt"}) {
    EXPECT_THAT(ExtendedValidationProblem(TlsRoute(termination, {})), IsEmpty()) << termination;
  }
}

TEST(ExtendedValidationTest, SelfSignedPairPasses) {
  TestCert c = MakeCert({});
  EXPECT_THAT(ExtendedValidationProblem(TlsRoute("edge", Pair(c))), IsEmpty());
  EXPECT_THAT(ExtendedValidationProblem(TlsRoute("reencrypt", Pair(c))), IsEmpty());
}

TEST(ExtendedValidationTest, KeyOfAnotherCertificate) {
  TestCert c = MakeCert({});
  TestCert other = MakeCert({});
  RouteTlsMaterial m = Pair(c);
  m.key = other.key_pem;
  EXPECT_EQ(ExtendedValidationProblem(TlsRoute("edge", m)),
            "spec.tls.key: private key does not match the certificate's public key");
}

TEST(ExtendedValidationTest, KeyInTheCertificateFieldCounts) {
  TestCert c = MakeCert({});
  RouteTlsMaterial m;
  m.certificate = c.cert_pem + c.key_pem;
  EXPECT_THAT(ExtendedValidationProblem(TlsRoute("edge", m)), IsEmpty());
}

TEST(ExtendedValidationTest, GarbagePem) {
  TestCert c = MakeCert({});
  RouteTlsMaterial bad_cert = Pair(c);
  bad_cert.certificate = "not a certificate";
  EXPECT_THAT(ExtendedValidationProblem(TlsRoute("edge", bad_cert)),
              HasSubstr("spec.tls.certificate: no PEM certificate found"));
  RouteTlsMaterial bad_body = Pair(c);
  bad_body.certificate = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
  EXPECT_THAT(ExtendedValidationProblem(TlsRoute("edge", bad_body)),
              HasSubstr("spec.tls.certificate: a certificate does not parse"));
  // Text without any PEM block in the key field leaves no key at all.
  RouteTlsMaterial no_key = Pair(c);
  no_key.key = "garbage";
  EXPECT_EQ(ExtendedValidationProblem(TlsRoute("edge", no_key)), "spec.tls.key: no key specified");
  RouteTlsMaterial odd_block = Pair(c);
  odd_block.key = "-----BEGIN SECRET THING-----\nAAAA\n-----END SECRET THING-----\n";
  EXPECT_THAT(ExtendedValidationProblem(TlsRoute("edge", odd_block)),
              HasSubstr("spec.tls.key: unrecognized PEM block SECRET THING"));
  RouteTlsMaterial missing_key;
  missing_key.certificate = c.cert_pem;
  EXPECT_EQ(ExtendedValidationProblem(TlsRoute("edge", missing_key)),
            "spec.tls.key: no key specified");
  RouteTlsMaterial bad_ca = Pair(c);
  bad_ca.ca_certificate = "junk";
  EXPECT_THAT(ExtendedValidationProblem(TlsRoute("edge", bad_ca)),
              HasSubstr("spec.tls.caCertificate: failed to parse CA certificate"));
}

// openshift-router's Go decoder skips a PEM block it cannot read and goes
// on at the next BEGIN line: a broken entry in a CA bundle, or junk before
// the key, costs nothing there.
TEST(ExtendedValidationTest, AnUnreadablePemBlockBeforeAGoodOneIsSkipped) {
  const std::string broken =
      "-----BEGIN CERTIFICATE-----\n!!!! not base64 !!!!\n-----END CERTIFICATE-----\n";
  TestCert leaf = MakeCert({.issuer = &Root()});
  RouteTlsMaterial bundle = Pair(leaf);
  bundle.ca_certificate = Intermediate().cert_pem + broken + Root().cert_pem;
  EXPECT_THAT(ExtendedValidationProblem(TlsRoute("edge", bundle)), IsEmpty());
  RouteTlsMaterial junk_key = Pair(leaf);
  junk_key.key = "-----BEGIN EC PRIVATE KEY-----\nnot a key\n-----END EC PRIVATE KEY-----\n" +
                 leaf.key_pem;
  EXPECT_THAT(ExtendedValidationProblem(TlsRoute("edge", junk_key)), IsEmpty());
  // A block without its END line: the next BEGIN line starts the next one.
  RouteTlsMaterial cut = Pair(leaf);
  cut.certificate = "-----BEGIN CERTIFICATE-----\nMIIB\n" + leaf.cert_pem;
  EXPECT_THAT(ExtendedValidationProblem(TlsRoute("edge", cut)), IsEmpty());
  // A block that decodes but is no certificate is no reason to skip it.
  RouteTlsMaterial not_der = Pair(leaf);
  not_der.certificate = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n" +
                        leaf.cert_pem;
  EXPECT_THAT(ExtendedValidationProblem(TlsRoute("edge", not_der)),
              HasSubstr("spec.tls.certificate: a certificate does not parse"));
  // client-go's certificate reader passes over a CERTIFICATE block with
  // headers, so such a block alone is no certificate.
  RouteTlsMaterial headers = Pair(leaf);
  headers.certificate = leaf.cert_pem;
  headers.certificate.insert(headers.certificate.find('\n') + 1, "Comment: x\n\n");
  EXPECT_THAT(ExtendedValidationProblem(TlsRoute("edge", headers)),
              HasSubstr("spec.tls.certificate: no PEM certificate found"));
}

// openshift-router (openshift/router#669) refuses a route whose key
// material holds anything but private keys, or whose certificate material
// holds a public key, once it has a certificate and a key to pair.
TEST(ExtendedValidationTest, KeyMaterialHoldsPrivateKeysOnlyCertificateMaterialNoPublicKey) {
  TestCert c = MakeCert({});
  RouteTlsMaterial in_cert = Pair(c);
  in_cert.certificate = c.cert_pem + c.public_key_pem;
  EXPECT_EQ(ExtendedValidationProblem(TlsRoute("edge", in_cert)),
            "spec.tls.certificate: holds a PUBLIC KEY block; give the certificate chain (and "
            "perhaps its private key) only");
  RouteTlsMaterial in_key = Pair(c);
  in_key.key = c.key_pem + c.public_key_pem;
  EXPECT_EQ(ExtendedValidationProblem(TlsRoute("edge", in_key)),
            "spec.tls.key: holds a PUBLIC KEY block; give the private key only");
  RouteTlsMaterial cert_in_key = Pair(c);
  cert_in_key.key = c.key_pem + c.cert_pem;
  EXPECT_THAT(ExtendedValidationProblem(TlsRoute("edge", cert_in_key)),
              HasSubstr("spec.tls.key: holds a CERTIFICATE block"));
  // The private key may still come with the certificate.
  RouteTlsMaterial key_in_cert;
  key_in_cert.certificate = c.cert_pem + c.key_pem;
  EXPECT_THAT(ExtendedValidationProblem(TlsRoute("edge", key_in_cert)), IsEmpty());
  // Without a certificate to pair there is no such check; in a CA bundle
  // its sanitizer keeps a public key.
  RouteTlsMaterial key_only;
  key_only.key = c.key_pem + c.public_key_pem;
  EXPECT_THAT(ExtendedValidationProblem(TlsRoute("edge", key_only)), IsEmpty());
  RouteTlsMaterial in_ca = Pair(c);
  in_ca.ca_certificate = c.cert_pem + c.public_key_pem;
  EXPECT_THAT(ExtendedValidationProblem(TlsRoute("edge", in_ca)), IsEmpty());
}

// openshift-router serves expired certificates (the client decides), so
// expiry is no reason to reject.
TEST(ExtendedValidationTest, ExpiredCertificatePasses) {
  TestCert expired = MakeCert({.issuer = &Root(), .valid_from_days = -30, .valid_until_days = -1});
  RouteTlsMaterial m = Pair(expired);
  m.ca_certificate = Root().cert_pem;
  EXPECT_THAT(ExtendedValidationProblem(TlsRoute("edge", m)), IsEmpty());
}

TEST(ExtendedValidationTest, Chain) {
  TestCert leaf = MakeCert({.issuer = &Intermediate()});
  RouteTlsMaterial m = Pair(leaf);
  m.ca_certificate = Intermediate().cert_pem + Root().cert_pem;
  EXPECT_THAT(ExtendedValidationProblem(TlsRoute("edge", m)), IsEmpty());
  // The intermediate alone is a trust anchor there (Go's roots).
  m.ca_certificate = Intermediate().cert_pem;
  EXPECT_THAT(ExtendedValidationProblem(TlsRoute("edge", m)), IsEmpty());
  // The leaf does not chain to a CA that did not sign it.
  TestCert stranger = MakeCert({.common_name = "stranger", .ca = true});
  m.ca_certificate = stranger.cert_pem;
  EXPECT_THAT(ExtendedValidationProblem(TlsRoute("edge", m)),
              HasSubstr("spec.tls.certificate: error verifying certificate"));
  // Without a CA certificate nothing is verified.
  m.ca_certificate.clear();
  EXPECT_THAT(ExtendedValidationProblem(TlsRoute("edge", m)), IsEmpty());
}

TEST(ExtendedValidationTest, Sha1SignedByACaIsRefusedSelfSignedIsNot) {
  TestCert weak = MakeCert({.issuer = &Root(), .sha1 = true});
  EXPECT_THAT(ExtendedValidationProblem(TlsRoute("edge", Pair(weak))),
              HasSubstr("spec.tls.certificate: router does not support CA-signed certs using SHA1"));
  TestCert self = MakeCert({.sha1 = true});
  EXPECT_THAT(ExtendedValidationProblem(TlsRoute("edge", Pair(self))), IsEmpty());
}

TEST(ExtendedValidationTest, Reencrypt) {
  TestCert c = MakeCert({});
  // No destination CA is fine: the router then trusts the service's
  // certificate by its own means.
  EXPECT_THAT(ExtendedValidationProblem(TlsRoute("reencrypt", Pair(c))), IsEmpty());
  RouteTlsMaterial m = Pair(c);
  m.destination_ca_certificate = Root().cert_pem;
  EXPECT_THAT(ExtendedValidationProblem(TlsRoute("reencrypt", m)), IsEmpty());
  m.destination_ca_certificate = "junk";
  EXPECT_THAT(ExtendedValidationProblem(TlsRoute("reencrypt", m)),
              HasSubstr("spec.tls.destinationCACertificate: failed to parse destination CA"));
}

TEST(ExtendedValidationTest, WhatEachTerminationMayCarry) {
  TestCert c = MakeCert({});
  EXPECT_EQ(ExtendedValidationProblem(TlsRoute("passthrough", Pair(c))),
            "spec.tls.certificate: passthrough termination does not support certificates; "
            "spec.tls.key: passthrough termination does not support certificates");
  RouteTlsMaterial dest;
  dest.destination_ca_certificate = Root().cert_pem;
  EXPECT_THAT(ExtendedValidationProblem(TlsRoute("edge", dest)),
              HasSubstr("spec.tls.destinationCACertificate: edge termination does not support "
                        "destination certificates"));
  EXPECT_THAT(ExtendedValidationProblem(TlsRoute("bogus", {})),
              HasSubstr("spec.tls.termination: unsupported value \"bogus\""));
  RouteTlsMaterial allow;
  allow.insecure_edge_termination_policy = "Allow";
  EXPECT_THAT(ExtendedValidationProblem(TlsRoute("edge", allow)), IsEmpty());
  EXPECT_THAT(ExtendedValidationProblem(TlsRoute("passthrough", allow)),
              HasSubstr("spec.tls.insecureEdgeTerminationPolicy"));
}

// Through Admit: the reason and rule, the switch, and the claim the route
// keeps (openshift-router validates after the unique-host index).
TEST(ExtendedValidationTest, AdmitRejectsAndTheRouteKeepsItsHost) {
  TestCert c = MakeCert({});
  TestCert other = MakeCert({});
  RouteTlsMaterial m = Pair(c);
  m.key = other.key_pem;
  const Route bad = TlsRoute("edge", m, "a", "bad", 10);
  AdmissionOptions o;
  o.router_name = "default";
  AdmissionDecision d = Admit(bad, {}, o);
  EXPECT_FALSE(d.admitted);
  EXPECT_EQ(d.reason, kReasonExtendedValidationFailed);
  EXPECT_EQ(d.rule, AdmissionRule::kExtendedValidation);
  EXPECT_THAT(d.message, HasSubstr("spec.tls.key"));
  EXPECT_THAT(d.host_problem, HasSubstr("spec.tls.key"));

  Route younger;
  younger.metadata.namespace_name = "b";
  younger.metadata.name = "y";
  younger.metadata.uid = "b-y";
  younger.metadata.creation_unix = 20;
  younger.spec.host = "www.example.com";
  AdmissionDecision dy = Admit(younger, {std::make_shared<const Route>(bad)}, o);
  EXPECT_EQ(dy.reason, kReasonHostAlreadyClaimed);

  o.extended_validation = false;
  EXPECT_TRUE(Admit(bad, {}, o).admitted);
}

// openshift-router hands a route its admission function rejects, or one
// with no host or an invalid host, on down its chain as a deletion, and
// the extended validator still checks it: a failing spec.tls is recorded
// last. Only a route that lost its host to an older one is not handed on.
TEST(ExtendedValidationTest, FailingTlsIsRecordedAfterEveryEarlierReasonButAClaim) {
  TestCert c = MakeCert({});
  RouteTlsMaterial bad_key = Pair(c);
  bad_key.key = MakeCert({}).key_pem;
  AdmissionOptions o;
  o.router_name = "default";
  o.denied_domains = {"denied.example.com"};
  struct Case {
    const char* name;
    std::string host;
    std::string wildcard_policy;
    const char* without_validation;  // the reason with extended validation off
  } cases[] = {
      {"no host", "", "", kReasonNoHostValue},
      {"invalid host", "WWW.example.com", "", kReasonInvalidHost},
      {"denied domain", "www.denied.example.com", "", kReasonRouteNotAdmitted},
      {"wildcards not allowed", "www.example.com", "Subdomain", kReasonRouteNotAdmitted},
      {"unknown wildcard policy", "www.example.com", "Sometimes", kReasonRouteNotAdmitted},
  };
  for (const Case& k : cases) {
    Route r = TlsRoute("edge", bad_key, "a", "r", 10);
    r.spec.host = k.host;
    r.spec.wildcard_policy = k.wildcard_policy;
    o.extended_validation = true;
    AdmissionDecision d = Admit(r, {}, o);
    EXPECT_EQ(d.reason, kReasonExtendedValidationFailed) << k.name;
    EXPECT_EQ(d.rule, AdmissionRule::kExtendedValidation) << k.name;
    EXPECT_THAT(d.message, HasSubstr("spec.tls.key")) << k.name;
    // The message also says what fixing spec.tls leaves.
    EXPECT_THAT(d.message, HasSubstr(k.without_validation)) << k.name;
    o.extended_validation = false;
    EXPECT_EQ(Admit(r, {}, o).reason, k.without_validation) << k.name;
  }

  // Still no claim: a younger route of another namespace takes the host.
  o.extended_validation = true;
  Route wildcard = TlsRoute("edge", bad_key, "a", "wildcard", 10);
  wildcard.spec.wildcard_policy = "Subdomain";
  ASSERT_EQ(Admit(wildcard, {}, o).reason, kReasonExtendedValidationFailed);
  Route younger = TlsRoute("edge", Pair(c), "b", "younger", 20);
  EXPECT_TRUE(Admit(younger, {std::make_shared<const Route>(wildcard)}, o).admitted);

  // HostAlreadyClaimed stays: openshift-router stops such a route there.
  Route older = TlsRoute("edge", Pair(c), "b", "older", 5);
  Route loser = TlsRoute("edge", bad_key, "a", "loser", 10);
  EXPECT_EQ(Admit(loser, {std::make_shared<const Route>(older)}, o).reason,
            kReasonHostAlreadyClaimed);
  o.allow_wildcard_routes = true;
  EXPECT_EQ(Admit(loser, {std::make_shared<const Route>(older)}, o).reason,
            kReasonHostAlreadyClaimed);
}

}  // namespace
}  // namespace routestatus::controller
