// What the controller hands the contention gate once the caches have
// synced (ContentionGate::EntriesListed).
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kubeclient/route.h"
#include "test/controller/harness.h"
#include "test/testing/status_patch.h"

namespace routestatus::controller::testing {
namespace {

// Only the routes whose listed entry of ours differs from what we would
// write: a restart with every status correct hands the gate nothing. (It
// handed over a typed copy of every entry at once: ~0.8 KB per route at
// the peak of a 10,000-route restart, 80 MB at 100,000.)
TEST(ListedEntriesTest, OnlyEntriesThatDifferFromOursReachTheGate) {
  Harness h;
  for (const char* name : {"same", "other-host", "theirs-only"}) {
    nlohmann::json route = h.api.Put(Harness::RouteJson("ns", name, std::string(name) + ".example.com"));
    auto typed = kubeclient::RouteFromJson(route).value();
    std::optional<kubeclient::RouteIngress> entry = h.syncer.Desired(typed, nullptr);
    ASSERT_TRUE(entry.has_value());
    if (std::string(name) == "other-host") entry->host = "elsewhere.example.com";
    if (std::string(name) == "theirs-only") entry->router_name = "other";
    h.api.Put(routestatus::testing::WithIngressEntry(route, "default", std::nullopt).value());
    h.api.Put(routestatus::testing::WithIngressEntry(h.api.Object("ns", name),
                                                     entry->router_name, entry)
                  .value());
    h.Deliver("ns", name);
  }
  h.controller.RunWorker();  // reports the listed entries, then drains the queue
  EXPECT_EQ(h.gate.listed, std::vector<std::string>{"ns/other-host"});
}

}  // namespace
}  // namespace routestatus::controller::testing
