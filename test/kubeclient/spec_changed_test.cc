// SpecChanged: what makes an API server bump metadata.generation.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kubeclient/kube_client.h"

namespace routestatus::kubeclient {
namespace {

using nlohmann::json;

TEST(SpecChangedTest, OnlyMembersOtherThanMetadataAndStatusCount) {
  const json route = {{"apiVersion", "route.openshift.io/v1"},
                      {"metadata", {{"name", "r"}, {"labels", {{"a", "1"}}}}},
                      {"spec", {{"host", "a.example.com"}}},
                      {"status", {{"ingress", json::array()}}}};
  json relabelled = route;
  relabelled["metadata"]["labels"]["a"] = "2";
  relabelled["status"]["ingress"].push_back({{"routerName", "default"}});
  EXPECT_FALSE(SpecChanged(route, relabelled));
  EXPECT_FALSE(SpecChanged(route, route));

  json rehosted = route;
  rehosted["spec"]["host"] = "b.example.com";
  EXPECT_TRUE(SpecChanged(route, rehosted));
  json added = route;
  added["extra"] = 1;  // a member only the new version has
  EXPECT_TRUE(SpecChanged(route, added));
  EXPECT_TRUE(SpecChanged(added, route));  // one only the old version had
  json no_status = route;
  no_status.erase("status");
  EXPECT_FALSE(SpecChanged(route, no_status));
  EXPECT_TRUE(SpecChanged(json(1), json(2)));  // not objects: plain comparison
}

}  // namespace
}  // namespace routestatus::kubeclient
