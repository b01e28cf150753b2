// The structural-schema steps kube-apiserver applies to custom resources,
// checked against the built-in Route CRD (deploy/crd) and small schemas.

#include "apiserver/crd_schema.h"

#include <gtest/gtest.h>

#include "apiserver/builtin_crd.h"

namespace routestatus::apiserver {
namespace {

using nlohmann::json;

std::vector<std::string> Fields(const std::vector<FieldCause>& causes) {
  std::vector<std::string> out;
  for (const auto& c : causes) out.push_back(c.field + ": " + c.detail);
  return out;
}

const std::string kHostPattern =
    R"(^([a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9\-]{0,61}[a-zA-Z0-9])(\.([a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9\-]{0,61}[a-zA-Z0-9]))*$)";

TEST(BuiltinRouteCrdTest, IsDeployCrdsRoute) {
  const json& crd = BuiltinRouteCrd();
  EXPECT_EQ(crd["metadata"]["name"], "routes.route.openshift.io");
  EXPECT_EQ(crd["spec"]["versions"][0]["additionalPrinterColumns"][0]["name"], "Host");
  // YAML scalars keep their types.
  EXPECT_EQ(crd["spec"]["versions"][0]["served"], true);
  EXPECT_EQ(crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
               ["properties"]["host"]["maxLength"],
            253);
  EXPECT_EQ(YamlToJson("a: \"true\"\nb: 0x10\nc: ~\nd: '12'\n"),
            json({{"a", "true"}, {"b", "0x10"}, {"c", nullptr}, {"d", "12"}}));
}

TEST(CrdSchemaTest, RouteErrorsAreKubes) {
  CrdSchema schema = CrdSchema::FromCrd(BuiltinRouteCrd(), "v1");
  ASSERT_FALSE(schema.empty());
  std::vector<FieldCause> causes;
  schema.Validate(json::parse(R"({"apiVersion":"route.openshift.io/v1","kind":"Route",
      "metadata":{"name":"bad"},"spec":{"host":42}})"),
                  &causes);
  EXPECT_EQ(Fields(causes),
            (std::vector<std::string>{
                "spec.host: Invalid value: \"integer\": spec.host in body must be of type string: "
                "\"integer\"",
                "spec.to: Required value"}));
  causes.clear();
  schema.Validate(json::parse(R"({"spec":{"to":{"kind":"Service","name":"s"},
      "wildcardPolicy":"All","host":")" +
                              std::string(254, 'a') + R"("}})"),
                  &causes);
  EXPECT_EQ(Fields(causes),
            (std::vector<std::string>{
                "spec.host: Too long: may not be longer than 253",
                "spec.host: Invalid value: \"" + std::string(254, 'a') +
                    "\": spec.host in body should match '" + kHostPattern + "'",
                "spec.wildcardPolicy: Unsupported value: \"All\": supported values: \"None\", "
                "\"Subdomain\", \"\""}));
  causes.clear();
  schema.Validate(json::parse(R"({"metadata":{}})"), &causes);
  EXPECT_EQ(Fields(causes), (std::vector<std::string>{"spec: Required value"}));
}

// The real Route CRD refuses the wildcard syntax and empty labels in
// spec.host (its pattern), and accepts upper case (the router then rejects
// it InvalidHost).
TEST(CrdSchemaTest, RouteHostPattern) {
  CrdSchema schema = CrdSchema::FromCrd(BuiltinRouteCrd(), "v1");
  auto causes_for = [&](const std::string& host) {
    std::vector<FieldCause> causes;
    schema.Validate(json{{"spec", {{"to", {{"kind", "Service"}, {"name", "s"}}}, {"host", host}}}},
                    &causes);
    return Fields(causes);
  };
  for (const char* ok : {"www.example.com", "com", "Upper.Example.com", "a-b.x9"}) {
    EXPECT_TRUE(causes_for(ok).empty()) << ok;
  }
  for (const char* bad : {"*.x.example.com", "a..example.com", "-bad.example.com",
                          "bad_host.example.com", "example.com."}) {
    EXPECT_EQ(causes_for(bad),
              (std::vector<std::string>{"spec.host: Invalid value: \"" + std::string(bad) +
                                        "\": spec.host in body should match '" + kHostPattern +
                                        "'"}))
        << bad;
  }
}

TEST(CrdSchemaTest, PrunesUnknownFieldsKeepsPreservedOnesAndDefaults) {
  CrdSchema schema(json::parse(R"({"type":"object","properties":{
      "spec":{"type":"object","properties":{
        "to":{"type":"object","properties":{"weight":{"type":"integer","default":100},
                                            "name":{"type":"string"}}},
        "wildcardPolicy":{"type":"string","default":"None"},
        "extra":{"type":"object","x-kubernetes-preserve-unknown-fields":true},
        "when":{"type":"string","nullable":true}}}}})"));
  json obj = json::parse(R"({"apiVersion":"x/v1","kind":"K","metadata":{"name":"a","junk":1},
      "top":1,"spec":{"to":{"name":"s","bogus":true},"extra":{"any":{"thing":1}},
      "wildcardPolicy":null,"when":null}})");
  std::vector<std::string> pruned;
  schema.Normalize(&obj, &pruned);
  EXPECT_EQ(pruned, (std::vector<std::string>{"spec.to.bogus", "top"}));
  EXPECT_EQ(obj, json::parse(R"({"apiVersion":"x/v1","kind":"K","metadata":{"name":"a","junk":1},
      "spec":{"to":{"name":"s","weight":100},"extra":{"any":{"thing":1}},
      "wildcardPolicy":"None","when":null}})"));
}

}  // namespace
}  // namespace routestatus::apiserver
