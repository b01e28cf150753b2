// The labels and annotations type checks of decoding into ObjectMeta, in the
// words kube-apiserver answers with.

#include "apiserver/object_meta_types.h"

#include <gtest/gtest.h>

namespace routestatus::apiserver {
namespace {

using nlohmann::json;

TEST(ObjectMetaTypeErrorTest, StringMapsAndAbsentOrNullMapsAreFine) {
  for (const json& ok :
       {json::object(), json{{"metadata", {{"name", "a"}}}},
        json{{"metadata", {{"labels", {{"a", "b"}}}, {"annotations", {{"c", "d"}, {"e", nullptr}}}}}},
        json{{"metadata", {{"labels", nullptr}, {"annotations", json::object()}}}},
        json::array(), json{{"metadata", "not an object: another check's business"}}}) {
    EXPECT_EQ(ObjectMetaTypeError(ok), std::nullopt) << ok.dump();
  }
}

TEST(ObjectMetaTypeErrorTest, NamesTheGoKindOfTheFirstBadValue) {
  auto meta = [](json m) { return json{{"metadata", std::move(m)}}; };
  EXPECT_EQ(ObjectMetaTypeError(meta({{"annotations", {{"a", {{"b", 1}}}}}})),
            "json: cannot unmarshal object into Go struct field ObjectMeta.metadata.annotations "
            "of type string");
  EXPECT_EQ(ObjectMetaTypeError(meta({{"labels", {{"tier", 3}}}})),
            "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels "
            "of type string");
  EXPECT_EQ(ObjectMetaTypeError(meta({{"labels", {{"on", true}}}})),
            "json: cannot unmarshal bool into Go struct field ObjectMeta.metadata.labels "
            "of type string");
  EXPECT_EQ(ObjectMetaTypeError(meta({{"annotations", json::array({"a"})}})),
            "json: cannot unmarshal array into Go struct field ObjectMeta.metadata.annotations "
            "of type map[string]string");
  EXPECT_EQ(ObjectMetaTypeError(meta({{"labels", "a=b"}})),
            "json: cannot unmarshal string into Go struct field ObjectMeta.metadata.labels "
            "of type map[string]string");
}

TEST(NormalizeObjectMetaMapsTest, NullValuesBecomeEmptyStringsAndNullMapsGo) {
  json object = {{"metadata",
                  {{"labels", nullptr}, {"annotations", {{"a", nullptr}, {"b", "c"}}}}}};
  NormalizeObjectMetaMaps(&object);
  EXPECT_EQ(object, (json{{"metadata", {{"annotations", {{"a", ""}, {"b", "c"}}}}}}));
  json untouched = {{"metadata", {{"labels", json::object()}}}, {"spec", {{"x", nullptr}}}};
  json copy = untouched;
  NormalizeObjectMetaMaps(&copy);
  EXPECT_EQ(copy, untouched);
}

TEST(CannotBeHandledMessageTest, TakesKindAndVersionFromTheBodyElseTheResource) {
  EXPECT_EQ(CannotBeHandledMessage({{"apiVersion", "route.openshift.io/v1"}, {"kind", "Route"}},
                                   "Route", "v1", "D"),
            "Route in version \"v1\" cannot be handled as a Route: D");
  EXPECT_EQ(CannotBeHandledMessage({{"apiVersion", "v1"}, {"kind", "Namespace"}}, "Namespace",
                                   "v1", "D"),
            "Namespace in version \"v1\" cannot be handled as a Namespace: D");
  EXPECT_EQ(CannotBeHandledMessage(json::object(), "Route", "v1", "D"),
            "Route in version \"v1\" cannot be handled as a Route: D");
}

}  // namespace
}  // namespace routestatus::apiserver
