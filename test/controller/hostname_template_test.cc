// Hostname templates expanded as openshift-router expands ROUTER_SUBDOMAIN
// (Go's os.Expand, then quotes trimmed).
#include "controller/hostname_template.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace routestatus::controller {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

kubeclient::ObjectMeta Meta() {
  kubeclient::ObjectMeta m;
  m.name = "web";
  m.namespace_name = "team";
  return m;
}

TEST(HostnameTemplateTest, GoExpandSyntax) {
  struct Case {
    const char* tmpl;
    std::optional<std::string> want;
  } cases[] = {
      {"${name}-${namespace}.apps.example.com", "web-team.apps.example.com"},
      {"$name-$namespace.apps.example.com", "web-team.apps.example.com"},
      {"$name.$namespace.example.com", "web.team.example.com"},
      {"\"${name}.example.com\"", "web.example.com"},
      {"'${name}.example.com'", "web.example.com"},
      {"${name}.example.com$", "web.example.com$"},     // a trailing '$' stays
      {"${}${name}.example.com", "web.example.com"},    // "${}" is dropped
      {"$ ${name}", "$ web"},                            // '$' before no name stays
      {"${name}.example.com${", "web.example.com"},     // an unclosed "${" is dropped
      {"${nam}.example.com", std::nullopt},             // unknown key: no host
      {"$names.example.com", std::nullopt},             // the key is "names"
      {"$$.example.com", std::nullopt},                 // "$$" names the key "$"
      {"plain.example.com", "plain.example.com"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(ExpandHostnameTemplate(c.tmpl, Meta()), c.want) << c.tmpl;
  }
}

TEST(HostnameTemplateTest, UnknownKeys) {
  EXPECT_THAT(UnknownTemplateKeys("${name}-$namespace.x"), IsEmpty());
  EXPECT_THAT(UnknownTemplateKeys("${cluster}-$zone.${name}"), ElementsAre("cluster", "zone"));
}

}  // namespace
}  // namespace routestatus::controller
