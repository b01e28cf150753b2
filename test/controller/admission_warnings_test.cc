// Start-up warnings for admission settings that openshift-router accepts
// but that cannot do what they seem to say.
#include "controller/admission_warnings.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace routestatus::controller {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST(AdmissionWarningsTest, NothingToSayForUsualSettings) {
  AdmissionOptions o;
  o.allowed_domains = {"example.com"};
  o.denied_domains = {"bad.example.com"};
  o.hostname_template = "${name}-${namespace}.apps.example.com";
  EXPECT_THAT(AdmissionOptionWarnings(o), IsEmpty());
  o.hostname_template = "'$name-$namespace.apps.example.com'";
  EXPECT_THAT(AdmissionOptionWarnings(o), IsEmpty());
}

TEST(AdmissionWarningsTest, WildcardDomainEntriesMatchNothing) {
  AdmissionOptions o;
  o.allowed_domains = {"*.example.com"};
  o.denied_domains = {"ok.io", ".bad.io"};
  EXPECT_THAT(AdmissionOptionWarnings(o),
              ElementsAre(AllOf(HasSubstr("--allowed-domains (ROUTER_ALLOWED_DOMAINS) entry "
                                          "\"*.example.com\" matches no valid host"),
                                HasSubstr("admits nothing"), HasSubstr("write \"example.com\"")),
                          AllOf(HasSubstr("\".bad.io\""), HasSubstr("denies nothing"))));
}

// Hosts are lower case (an upper-case one is InvalidHost), so such an
// entry, matched literally, matches no valid host.
TEST(AdmissionWarningsTest, UpperCaseDomainEntriesMatchNothing) {
  AdmissionOptions o;
  o.allowed_domains = {"X.EXAMPLE.COM", "y.example.com"};
  o.denied_domains = {"*.Bad.io"};
  EXPECT_THAT(AdmissionOptionWarnings(o),
              ElementsAre(AllOf(HasSubstr("--allowed-domains (ROUTER_ALLOWED_DOMAINS) entry "
                                          "\"X.EXAMPLE.COM\" matches no valid host"),
                                HasSubstr("lower case"), HasSubstr("admits nothing"),
                                HasSubstr("write \"x.example.com\"")),
                          AllOf(HasSubstr("\"*.Bad.io\""), HasSubstr("denies nothing"),
                                HasSubstr("write \"bad.io\""))));
}

TEST(AdmissionWarningsTest, TemplateWithAnUnknownKeyGivesNoHost) {
  AdmissionOptions o;
  o.hostname_template = "${name}-${cluster}.apps.example.com";
  EXPECT_THAT(AdmissionOptionWarnings(o),
              ElementsAre(AllOf(HasSubstr("unknown key \"cluster\""), HasSubstr("NoHostValue"))));
}

TEST(AdmissionWarningsTest, TemplateGivingInvalidHosts) {
  AdmissionOptions o;
  o.hostname_template = "${name}_${namespace}.apps.example.com";
  EXPECT_THAT(AdmissionOptionWarnings(o),
              ElementsAre(AllOf(HasSubstr("\"name_namespace.apps.example.com\""),
                                HasSubstr("InvalidHost"))));
}

}  // namespace
}  // namespace routestatus::controller
