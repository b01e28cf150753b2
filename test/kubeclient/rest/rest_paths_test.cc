#include "kubeclient/rest/rest_paths.h"

#include <gtest/gtest.h>

namespace routestatus::kubeclient::rest {
namespace {

TEST(RestPathsTest, ResourcePaths) {
  EXPECT_EQ(ResourcePath(RoutesResource(), "ns1"), "/apis/route.openshift.io/v1/namespaces/ns1/routes");
  EXPECT_EQ(ResourcePath(RoutesResource(), ""), "/apis/route.openshift.io/v1/routes");
  EXPECT_EQ(ResourcePath(RoutesResource(), "ns1", "r1", "status"),
            "/apis/route.openshift.io/v1/namespaces/ns1/routes/r1/status");
  EXPECT_EQ(ResourcePath(NamespacesResource(), "ignored", "default"), "/api/v1/namespaces/default");
  EXPECT_EQ(ResourcePath(NamespacesResource(), ""), "/api/v1/namespaces");
  EXPECT_EQ(ResourcePath(RoutesResource(), "a b", "x/y"),
            "/apis/route.openshift.io/v1/namespaces/a%20b/routes/x%2Fy");
}

TEST(RestPathsTest, ListQuery) {
  EXPECT_EQ(ListQuery({}), "");
  ListOptions o;
  o.limit = 500;
  o.continue_token = "abc=";
  o.label_selector = "a in (x,y),!b";
  o.field_selector = "metadata.name=r";
  o.resource_version = "42";
  EXPECT_EQ(ListQuery(o),
            "?limit=500&continue=abc%3D&labelSelector=a%20in%20%28x%2Cy%29%2C%21b"
            "&fieldSelector=metadata.name%3Dr&resourceVersion=42");
}

TEST(RestPathsTest, WatchQuery) {
  WatchOptions o;
  o.resource_version = "7";
  o.timeout = std::chrono::seconds(60);
  EXPECT_EQ(WatchQuery(o), "?watch=true&allowWatchBookmarks=true&timeoutSeconds=60&resourceVersion=7");
  o.allow_bookmarks = false;
  o.timeout = std::chrono::seconds(0);
  o.resource_version.clear();
  o.label_selector = "a=b";
  EXPECT_EQ(WatchQuery(o), "?watch=true&labelSelector=a%3Db");
}

TEST(RestPathsTest, UserAgentAndRetryAfter) {
  EXPECT_EQ(DefaultUserAgent("1.2.3").rfind("routestatus/1.2.3 (", 0), 0u);
  EXPECT_EQ(DefaultUserAgent("").rfind("routestatus/dev (", 0), 0u);
  EXPECT_EQ(ParseRetryAfter("3"), std::chrono::milliseconds(3000));
  EXPECT_EQ(ParseRetryAfter(" 0 "), std::chrono::milliseconds(0));
  EXPECT_EQ(ParseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT"), std::nullopt);
  EXPECT_EQ(ParseRetryAfter("-1"), std::nullopt);
  EXPECT_EQ(ParseRetryAfter(""), std::nullopt);
  EXPECT_EQ(ParseRetryAfter("99999999999"), std::nullopt);
}

}  // namespace
}  // namespace routestatus::kubeclient::rest
