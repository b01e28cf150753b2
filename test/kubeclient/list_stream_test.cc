// ListStreamScanner: a list body split into its items in every split the
// network could produce, with the metadata before or after the items, and
// what is not a list refused.
#include "kubeclient/list_stream.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace routestatus::kubeclient {
namespace {

struct Scan {
  std::vector<std::string> items;
  std::string rv, cont, error;
  bool ok = false;
};

Scan ScanIn(const std::string& body, size_t step, size_t max_item = 1 << 20) {
  Scan out;
  ListStreamScanner s([&](std::string_view item) { out.items.emplace_back(item); }, max_item);
  bool ok = true;
  for (size_t i = 0; i < body.size() && ok; i += step) {
    ok = s.Feed(std::string_view(body).substr(i, step));
  }
  out.ok = ok && s.Finish();
  out.rv = s.resource_version();
  out.cont = s.continue_token();
  out.error = s.error();
  return out;
}

const char kItemA[] = R"({"metadata":{"name":"a","labels":{"x":"}]\"["}},"spec":{"tags":[1,[2]]}})";
const char kItemB[] = R"({"metadata":{"name":"b"}})";

TEST(ListStreamScannerTest, ItemsAndMetadataInEverySplit) {
  // kube-apiserver's order (metadata first) and the embedded server's.
  const std::string kube = std::string(R"({"kind":"RouteList","apiVersion":"route.openshift.io/v1",)") +
                           R"("metadata":{"resourceVersion":"42","continue":"c1"},"items":[)" +
                           kItemA + " , " + kItemB + "]}\n";
  const std::string embedded = std::string(R"( {"items":[)") + kItemA + "," + kItemB +
                               R"(],"kind":"RouteList","metadata":{"continue":"","resourceVersion":"7"}})";
  for (size_t step = 1; step <= kube.size(); ++step) {
    Scan k = ScanIn(kube, step);
    ASSERT_TRUE(k.ok) << step << " " << k.error;
    EXPECT_EQ(k.items, (std::vector<std::string>{kItemA, kItemB}));
    EXPECT_EQ(k.rv, "42");
    EXPECT_EQ(k.cont, "c1");
    Scan e = ScanIn(embedded, step);
    ASSERT_TRUE(e.ok) << step << " " << e.error;
    EXPECT_EQ(e.items.size(), 2u);
    EXPECT_EQ(e.rv, "7");
    EXPECT_EQ(e.cont, "");
  }
}

TEST(ListStreamScannerTest, EmptyAndNullItems) {
  EXPECT_TRUE(ScanIn(R"({"metadata":{"resourceVersion":"1"},"items":[]})", 3).ok);
  Scan n = ScanIn(R"({"metadata":{"resourceVersion":"1"},"items":null})", 3);
  EXPECT_TRUE(n.ok) << n.error;
  EXPECT_TRUE(n.items.empty());
}

TEST(ListStreamScannerTest, WhatIsNotAListIsRefused) {
  EXPECT_FALSE(ScanIn("<html>502 Bad Gateway</html>", 4).ok);
  EXPECT_FALSE(ScanIn(R"({"items":{"a":1}})", 4).ok) << "items not an array";
  EXPECT_FALSE(ScanIn(R"({"items":[1,2]})", 4).ok) << "elements not objects";
  EXPECT_FALSE(ScanIn(R"({"items":[{"a":1})", 4).ok) << "truncated";
  EXPECT_FALSE(ScanIn(R"({"items":[]}} )", 4).ok) << "unbalanced";
  EXPECT_FALSE(ScanIn(R"({"items":[]} x)", 4).ok) << "trailing text";
  EXPECT_FALSE(ScanIn(R"({"metadata":{"resourceVersion":},"items":[]})", 4).ok);
  Scan big = ScanIn(std::string(R"({"items":[{"a":")") + std::string(100, 'x') + "\"}]}", 7, 64);
  EXPECT_FALSE(big.ok);
  EXPECT_NE(big.error.find("larger than 64 bytes"), std::string::npos) << big.error;
}

}  // namespace
}  // namespace routestatus::kubeclient
