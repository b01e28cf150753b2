#include "controller/clear.h"

#include <gtest/gtest.h>

#include "test/controller/fakes.h"
#include "test/testing/fake_clock.h"

namespace routestatus::controller::testing {
namespace {

using nlohmann::json;

json Entry(const std::string& router) {
  return json{{"routerName", router}, {"host", "h.example.com"},
              {"conditions", {{{"type", "Admitted"}, {"status", "True"}}}}};
}

void Fill(FakeKubeClient& api, int n) {
  for (int i = 0; i < n; ++i) {
    json r = {{"metadata", {{"namespace", "ns" + std::to_string(i % 3)},
                            {"name", "r" + std::to_string(i)}}},
              {"spec", {{"host", "h.example.com"}}}};
    if (i % 2 == 0) r["status"]["ingress"] = {Entry("other"), Entry("old")};
    if (i % 5 == 0) r["status"]["ingress"] = json::array({Entry("other")});
    api.Put(r);
  }
}

int CountEntries(FakeKubeClient& api, const std::string& router) {
  int n = 0;
  auto page = api.List(kubeclient::RoutesResource(), "", {});
  for (const auto& item : page->items) {
    auto route = kubeclient::RouteFromJson(item).value();
    if (route.FindIngress(router).has_value()) ++n;
  }
  return n;
}

TEST(ClearTest, RemovesOnlyOurEntriesIdempotently) {
  routestatus::testing::FakeClock clock;
  FakeKubeClient api;
  Fill(api, 50);
  int ours = CountEntries(api, "old");
  int others = CountEntries(api, "other");
  ASSERT_GT(ours, 0);
  ClearOptions options;
  options.router_name = "old";
  options.page_size = 7;
  options.qps = 0;
  std::vector<ClearProgress> seen;
  auto result = ClearRouterEntries(api, clock, options,
                                   [&](const ClearProgress& p) { seen.push_back(p); });
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->scanned, 50);
  EXPECT_EQ(result->cleared, ours);
  EXPECT_EQ(CountEntries(api, "old"), 0);
  EXPECT_EQ(CountEntries(api, "other"), others);
  ASSERT_FALSE(seen.empty());
  EXPECT_TRUE(seen.back().done);
  EXPECT_EQ(seen.size(), 8u);  // 7 full pages + the final call
  // Our entry is removed, the other router's stays first and untouched.
  EXPECT_EQ(api.Object("ns0", "r0")["status"]["ingress"], json::array({Entry("other")}));
  // Re-running writes nothing.
  size_t puts = api.puts.size();
  auto again = ClearRouterEntries(api, clock, options, nullptr);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->cleared, 0);
  EXPECT_EQ(api.puts.size(), puts);
}

TEST(ClearTest, ConflictsReReadAndRetry) {
  routestatus::testing::FakeClock clock;
  FakeKubeClient api;
  Fill(api, 4);
  ClearOptions options;
  options.router_name = "old";
  options.qps = 0;
  api.next_status_errors.push_back(Status(StatusCode::kConflict, "modified"));
  api.next_status_errors.push_back(Status(StatusCode::kConflict, "modified"));
  auto result = ClearRouterEntries(api, clock, options, nullptr);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->conflicts, 2);
  EXPECT_EQ(api.gets, 2);
  EXPECT_EQ(CountEntries(api, "old"), 0);
}

TEST(ClearTest, PersistentErrorsReportedAndResumable) {
  routestatus::testing::FakeClock clock;
  FakeKubeClient api;
  Fill(api, 4);  // r0 (other only), r2 has old
  ClearOptions options;
  options.router_name = "old";
  options.qps = 0;
  api.next_status_errors.push_back(Status(StatusCode::kUnavailable, "down"));
  auto result = ClearRouterEntries(api, clock, options, nullptr);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("run clear again"), std::string::npos);
  EXPECT_GT(CountEntries(api, "old"), 0);
  ASSERT_TRUE(ClearRouterEntries(api, clock, options, nullptr).ok());
  EXPECT_EQ(CountEntries(api, "old"), 0);
}

TEST(ClearTest, RequiresRouterName) {
  routestatus::testing::FakeClock clock;
  FakeKubeClient api;
  EXPECT_EQ(ClearRouterEntries(api, clock, {}, nullptr).status().code(), StatusCode::kInvalid);
}

}  // namespace
}  // namespace routestatus::controller::testing
