// What the controller hands the contention gate once the caches have
// synced (ContentionGate::EntriesListed).
#include <algorithm>
#include <deque>
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

// Stores `route` on the server with `entries` (router name -> entry, in
// that order) as its status.ingress and delivers it as the first list does
// (nothing queued: the start-up report stands for its first reconcile).
// Returns the key.
std::string ListWithEntries(Harness& h, const nlohmann::json& route,
                            const std::vector<kubeclient::RouteIngress>& entries) {
  nlohmann::json stored = h.api.Put(route);
  stored["status"]["ingress"] = nlohmann::json::array();
  for (const auto& e : entries) stored["status"]["ingress"].push_back(kubeclient::IngressToJson(e));
  h.api.Put(stored);
  const std::string ns = route["metadata"]["namespace"], name = route["metadata"]["name"];
  h.DeliverInFirstList(ns, name);
  return ns + "/" + name;
}

// Our desired entry for `route` as the harness's syncer computes it from
// the routes cached so far.
kubeclient::RouteIngress DesiredAlone(Harness& h, const nlohmann::json& route) {
  auto typed = kubeclient::RouteFromJson(h.api.Put(route)).value();
  return h.syncer.Desired(typed, nullptr).value();
}

std::vector<std::string> Sorted(const std::deque<std::string>& keys) {
  std::vector<std::string> v(keys.begin(), keys.end());
  std::sort(v.begin(), v.end());
  return v;
}

// A restart with every status correct: the start-up report decides each
// route once and settles it (admission recorded, no queue add, no
// reconcile). Before, the first list queued every route and each was
// reconciled once more (~20% of a 100,000-route restart's CPU).
TEST(ListedEntriesTest, ARouteAlreadyCorrectIsSettledByTheReport) {
  Harness h;
  for (int i = 0; i < 3; ++i) {
    std::string name = "r" + std::to_string(i);
    nlohmann::json route = Harness::RouteJson("ns", name, name + ".example.com");
    ListWithEntries(h, route, {DesiredAlone(h, route)});
  }
  EXPECT_TRUE(h.queue.keys.empty()) << "the first list queues nothing";
  EXPECT_FALSE(h.controller.StartupReported()) << "an empty queue is not yet done";
  h.controller.ReportListedEntries();
  EXPECT_TRUE(h.controller.StartupReported());
  const int decided = h.routes.by_index_calls.load();
  EXPECT_GT(decided, 0);
  EXPECT_TRUE(h.queue.keys.empty()) << "a route already correct needs no reconcile";
  EXPECT_EQ(h.Drain(), 0);
  EXPECT_EQ(h.stats.skipped_no_change.load(), 3);
  EXPECT_EQ(h.api.puts.size(), 0u);
  EXPECT_EQ(h.stats.AdmissionCounts()["true/Admitted"], 3);
  // Later reconciles decide again.
  h.queue.Add("ns/r0");
  h.Drain();
  EXPECT_GT(h.routes.by_index_calls.load(), decided);
  EXPECT_EQ(h.stats.AdmissionCounts()["true/Admitted"], 3);
}

// A rejection already written is settled too, and its reason counted.
TEST(ListedEntriesTest, ARejectionAlreadyWrittenIsSettledWithItsReason) {
  Harness h;
  nlohmann::json old = Harness::RouteJson("a", "old", "www.example.com", "2026-01-01T00:00:00Z");
  ListWithEntries(h, old, {DesiredAlone(h, old)});
  nlohmann::json young = Harness::RouteJson("b", "young", "www.example.com", "2026-01-02T00:00:00Z");
  kubeclient::RouteIngress rejected = DesiredAlone(h, young);
  ASSERT_EQ(rejected.conditions[0].reason, "HostAlreadyClaimed");
  ListWithEntries(h, young, {rejected});
  h.controller.ReportListedEntries();
  EXPECT_TRUE(h.queue.keys.empty());
  auto counts = h.stats.AdmissionCounts();
  EXPECT_EQ(counts["true/Admitted"], 1);
  EXPECT_EQ(counts["false/HostAlreadyClaimed"], 1);
}

// Every route the report cannot settle is queued for its reconcile: no
// entry of ours, only another router's, a wrong one, two of ours.
TEST(ListedEntriesTest, OnlyRoutesThatNeedAWriteAreQueued) {
  Harness h;
  nlohmann::json ok = Harness::RouteJson("ns", "ok", "ok.example.com");
  ListWithEntries(h, ok, {DesiredAlone(h, ok)});
  ListWithEntries(h, Harness::RouteJson("ns", "none", "none.example.com"), {});
  nlohmann::json theirs = Harness::RouteJson("ns", "theirs", "theirs.example.com");
  kubeclient::RouteIngress other = DesiredAlone(h, theirs);
  other.router_name = "other";
  ListWithEntries(h, theirs, {other});
  nlohmann::json wrong = Harness::RouteJson("ns", "wrong", "wrong.example.com");
  kubeclient::RouteIngress stale = DesiredAlone(h, wrong);
  stale.host = "stale.example.com";
  ListWithEntries(h, wrong, {stale});
  nlohmann::json dup = Harness::RouteJson("ns", "dup", "dup.example.com");
  ListWithEntries(h, dup, {DesiredAlone(h, dup), DesiredAlone(h, dup)});
  h.controller.ReportListedEntries();
  EXPECT_EQ(Sorted(h.queue.keys),
            (std::vector<std::string>{"ns/dup", "ns/none", "ns/theirs", "ns/wrong"}));
  EXPECT_EQ(h.Drain(), 4);
  EXPECT_EQ(h.api.puts.size(), 4u);
  EXPECT_EQ(h.stats.AdmissionCounts()["true/Admitted"], 5);
}

// A route created after the report (an older claim of the same host)
// changes another route's decision: its handler queues that route, which
// is decided again and rejected.
TEST(ListedEntriesTest, ACacheChangeAfterTheReportIsDecidedAgain) {
  Harness h;
  nlohmann::json young = Harness::RouteJson("b", "young", "www.example.com", "2026-01-02T00:00:00Z");
  ListWithEntries(h, young, {DesiredAlone(h, young)});
  h.controller.ReportListedEntries();
  ASSERT_TRUE(h.queue.keys.empty());
  h.Create(Harness::RouteJson("a", "old", "www.example.com", "2026-01-01T00:00:00Z"));
  h.Drain();
  auto e = h.ServerEntry("b", "young");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->conditions[0].reason, "HostAlreadyClaimed");
  EXPECT_EQ(h.stats.AdmissionCounts()["false/HostAlreadyClaimed"], 1);
}

// A route changed after the report (its host) is decided again.
TEST(ListedEntriesTest, ARouteChangedAfterTheReportIsDecidedAgain) {
  Harness h;
  nlohmann::json route = Harness::RouteJson("ns", "web", "www.example.com");
  ListWithEntries(h, route, {DesiredAlone(h, route)});
  h.controller.ReportListedEntries();
  nlohmann::json moved = h.api.Object("ns", "web");
  moved["spec"]["host"] = "moved.example.com";
  h.api.Put(moved);
  h.Deliver("ns", "web");
  h.Drain();
  auto e = h.ServerEntry("ns", "web");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->host, "moved.example.com");
}

// A route deleted after the report leaves no admission record behind.
TEST(ListedEntriesTest, ARouteDeletedAfterTheReportIsForgotten) {
  Harness h;
  nlohmann::json route = Harness::RouteJson("ns", "web", "www.example.com");
  ListWithEntries(h, route, {DesiredAlone(h, route)});
  h.controller.ReportListedEntries();
  ASSERT_EQ(h.stats.AdmissionCounts()["true/Admitted"], 1);
  h.DeleteRoute("ns", "web");
  h.Drain();
  EXPECT_EQ(h.stats.AdmissionCounts()["true/Admitted"], 0);
}

// Two entries of ours, both desired: a reconcile still reduces them to one
// (one write).
TEST(ListedEntriesTest, DuplicatedEntriesAreStillWrittenOnce) {
  Harness h;
  nlohmann::json route = Harness::RouteJson("ns", "web", "www.example.com");
  kubeclient::RouteIngress ours = DesiredAlone(h, route);
  ListWithEntries(h, route, {ours, ours});
  const size_t puts = h.api.puts.size();
  h.controller.ReportListedEntries();
  h.Drain();
  EXPECT_EQ(h.api.puts.size(), puts + 1);
  nlohmann::json stored = h.api.Object("ns", "web");
  EXPECT_EQ(stored["status"]["ingress"].size(), 1u);
}

// An entry that differs (a wrong host) is written as before.
TEST(ListedEntriesTest, AWrongEntryIsStillWritten) {
  Harness h;
  nlohmann::json route = Harness::RouteJson("ns", "web", "www.example.com");
  kubeclient::RouteIngress wrong = DesiredAlone(h, route);
  wrong.host = "stale.example.com";
  ListWithEntries(h, route, {wrong});
  const size_t puts = h.api.puts.size();
  h.controller.ReportListedEntries();
  h.Drain();
  EXPECT_EQ(h.api.puts.size(), puts + 1);
  EXPECT_EQ(h.ServerEntry("ns", "web")->host, "www.example.com");
}

}  // namespace
}  // namespace routestatus::controller::testing
