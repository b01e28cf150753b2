#include "controller/status_syncer.h"

#include <gtest/gtest.h>

#include "test/controller/harness.h"

namespace routestatus::controller::testing {
namespace {

using kubeclient::Status;
using kubeclient::StatusCode;
using lease::WorkResult;
using nlohmann::json;

json OtherEntry() {
  return json{{"routerName", "internal"},
              {"host", "www.internal.example.com"},
              {"futureField", "keep me"},
              {"conditions",
               {{{"type", "Admitted"}, {"status", "True"},
                 {"lastTransitionTime", "2025-01-01T00:00:00Z"}}}}};
}

TEST(StatusSyncerTest, NewRouteIsAdmittedWithOneWrite) {
  Harness h;
  h.Create(Harness::RouteJson("ns", "web", "www.example.com"));
  EXPECT_EQ(h.syncer.Sync("ns/web"), SyncResult::kQueued);
  EXPECT_EQ(h.api.successful_puts, 1);
  auto e = h.ServerEntry("ns", "web");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->host, "www.example.com");
  EXPECT_EQ(e->router_canonical_hostname, "router-default.apps.example.com");
  EXPECT_EQ(e->conditions[0].status, "True");
  EXPECT_EQ(h.lease.results, std::vector<WorkResult>{WorkResult::kExtend});
  EXPECT_EQ(h.gate.cleared.size(), 1u);
  EXPECT_EQ(h.stats.writes_success.load(), 1);
  // The watch brings our write back: already correct, ours newest -> Extend,
  // counted as our own write's echo, not as a peer's write.
  h.queue.Take();
  h.Deliver("ns", "web");
  h.Drain();
  EXPECT_EQ(h.lease.extended, std::vector<std::string>{"ns/web"});
  EXPECT_EQ(h.stats.skipped_own_write.load(), 1);
  EXPECT_EQ(h.stats.skipped_follower.load(), 0);
  EXPECT_EQ(h.api.puts.size(), 1u);
  // A later reconcile (resync) of the same object does not extend again.
  h.queue.Add("ns/web");
  h.Drain();
  EXPECT_EQ(h.lease.extended.size(), 1u);
  EXPECT_EQ(h.stats.skipped_no_change.load(), 1);
}

TEST(StatusSyncerTest, InitialListWithOurNewestEntryDoesNotExtend) {
  Harness h;
  json r = Harness::RouteJson("ns", "web", "www.example.com");
  r["status"]["ingress"] = {
      {{"routerName", "default"}, {"host", "www.example.com"},
       {"routerCanonicalHostname", "router-default.apps.example.com"}, {"wildcardPolicy", "None"},
       {"conditions", {{{"type", "Admitted"}, {"status", "True"},
                        {"lastTransitionTime", "2026-01-01T00:00:00Z"}}}}}};
  h.Create(r, /*initial_list=*/true);
  h.Drain();
  EXPECT_TRUE(h.lease.extended.empty()) << "a previous incarnation's entry is not a live leader";
  EXPECT_EQ(h.syncer.Sync("ns/web", /*watched_entry_change=*/true), SyncResult::kFollower);
  EXPECT_EQ(h.api.puts.size(), 0u);
}

TEST(StatusSyncerTest, AlreadyCorrectMeansNoWrite) {
  Harness h;
  json r = Harness::RouteJson("ns", "web", "www.example.com");
  r["status"]["ingress"] = {
      {{"routerName", "default"}, {"host", "www.example.com"},
       {"routerCanonicalHostname", "router-default.apps.example.com"}, {"wildcardPolicy", "None"},
       {"conditions", {{{"type", "Admitted"}, {"status", "True"},
                        {"lastTransitionTime", "2024-01-01T00:00:00Z"}}}}},
      OtherEntry()};
  h.Create(r, /*initial_list=*/true);
  EXPECT_EQ(h.syncer.Sync("ns/web"), SyncResult::kNoChange) << "internal's entry is newer";
  EXPECT_EQ(h.api.puts.size(), 0u);
  EXPECT_TRUE(h.lease.extended.empty());
}

TEST(StatusSyncerTest, WrongHostRewrittenOthersAndUnknownFieldsKept) {
  Harness h;
  json r = Harness::RouteJson("ns", "web", "www.example.com");
  r["status"]["ingress"] = {OtherEntry(),
                            {{"routerName", "default"}, {"host", "stale.example.com"},
                             {"conditions", {{{"type", "Admitted"}, {"status", "True"}}}}}};
  r["status"]["unknownStatusField"] = 7;
  h.Create(r);
  EXPECT_EQ(h.syncer.Sync("ns/web"), SyncResult::kQueued);
  ASSERT_EQ(h.api.successful_puts, 1);
  json stored = h.api.Object("ns", "web");
  ASSERT_EQ(stored["status"]["ingress"].size(), 2u);
  EXPECT_EQ(stored["status"]["ingress"][0], OtherEntry()) << "other router's entry untouched";
  EXPECT_EQ(stored["status"]["ingress"][1]["host"], "www.example.com");
  EXPECT_EQ(stored["status"]["unknownStatusField"], 7);
  EXPECT_EQ(stored["spec"]["unknownSpecField"], json({1, 2, 3}));
  EXPECT_EQ(stored["metadata"]["annotations"]["x"], "y");
}

TEST(StatusSyncerTest, RejectToAcceptKeepsOneEntry) {
  Harness h;
  h.Create(Harness::RouteJson("a", "old", "www.example.com", "2026-01-01T00:00:00Z"));
  h.Create(Harness::RouteJson("b", "new", "www.example.com", "2026-01-02T00:00:00Z"));
  h.Drain();
  h.Deliver("a", "old");
  h.Deliver("b", "new");
  auto e = h.ServerEntry("b", "new");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->conditions[0].reason, "HostAlreadyClaimed");
  EXPECT_EQ(e->conditions[0].message,
            "route a/old already exposes www.example.com and is older; namespace a owns this "
            "host, so use another host or move route b/new into that namespace");
  EXPECT_EQ(e->host, "www.example.com");
  EXPECT_EQ(e->wildcard_policy, "None");
  h.Drain();
  int puts_before = h.api.successful_puts;
  // The holder goes away: the controller re-enqueues b/new without a resync.
  h.DeleteRoute("a", "old");
  EXPECT_NE(std::find(h.queue.keys.begin(), h.queue.keys.end(), "b/new"), h.queue.keys.end());
  h.clock.Advance(std::chrono::seconds(30));
  h.Drain();
  EXPECT_EQ(h.api.successful_puts, puts_before + 1);
  json stored = h.api.Object("b", "new");
  ASSERT_EQ(stored["status"]["ingress"].size(), 1u);
  e = h.ServerEntry("b", "new");
  EXPECT_EQ(e->conditions[0].status, "True");
  EXPECT_NE(h.lease.removed.end(),
            std::find(h.lease.removed.begin(), h.lease.removed.end(), "a/old"));
}

TEST(StatusSyncerTest, HolderChangesHostNextInLineAdmitted) {
  Harness h;
  h.Create(Harness::RouteJson("a", "old", "www.example.com", "2026-01-01T00:00:00Z"));
  h.Create(Harness::RouteJson("b", "new", "www.example.com", "2026-01-02T00:00:00Z"));
  h.Drain();
  h.Deliver("a", "old");
  h.Deliver("b", "new");
  h.Drain();
  EXPECT_EQ(h.ServerEntry("b", "new")->conditions[0].status, "False");
  json moved = h.api.Object("a", "old");
  moved["spec"]["host"] = "elsewhere.example.com";
  h.api.Put(moved);
  h.Deliver("a", "old");
  auto keys = h.queue.Take();
  EXPECT_EQ(keys, (std::vector<std::string>{"a/old", "b/new"}));
  for (const auto& k : keys) h.queue.Add(k);
  h.Drain();
  EXPECT_EQ(h.ServerEntry("b", "new")->conditions[0].status, "True");
  EXPECT_EQ(h.ServerEntry("a", "old")->host, "elsewhere.example.com");
}

TEST(StatusSyncerTest, ConflictThenAlreadyCorrectNoExtraWrite) {
  Harness h;
  h.Create(Harness::RouteJson("ns", "web", "www.example.com"));
  // Another replica writes the correct entry first; our cache is stale.
  json other = h.api.Object("ns", "web");
  kubeclient::Route typed = kubeclient::RouteFromJson(other).value();
  auto desired = h.syncer.Desired(typed, nullptr);
  other = kubeclient::WithIngressEntry(typed, "default", desired).value();
  h.api.Put(other);
  EXPECT_EQ(h.syncer.Sync("ns/web"), SyncResult::kQueued);
  EXPECT_EQ(h.stats.writes_conflict.load(), 1);
  EXPECT_EQ(h.lease.results, std::vector<WorkResult>{WorkResult::kRelease});
  ASSERT_EQ(h.lease.pending.count("ns/web"), 1u) << "409 keeps the work for a retry";
  // The retry runs after the watch delivered the newer object: done, no PUT.
  h.routes.Set(h.api.Typed("ns", "web"));
  EXPECT_EQ(h.lease.RunRetries(), 1);
  EXPECT_EQ(h.api.puts.size(), 1u);
  EXPECT_EQ(h.stats.skipped_done.load(), 1);
  EXPECT_TRUE(h.lease.pending.empty());
}

TEST(StatusSyncerTest, ConflictThenWatchEventExtendsAndDropsWork) {
  Harness h;
  h.Create(Harness::RouteJson("ns", "web", "www.example.com"));
  json other = h.api.Object("ns", "web");
  kubeclient::Route typed = kubeclient::RouteFromJson(other).value();
  h.api.Put(kubeclient::WithIngressEntry(typed, "default", h.syncer.Desired(typed, nullptr)).value());
  h.syncer.Sync("ns/web");
  ASSERT_EQ(h.lease.pending.count("ns/web"), 1u);
  h.queue.Take();
  h.Deliver("ns", "web");
  h.Drain();
  EXPECT_EQ(h.lease.extended, std::vector<std::string>{"ns/web"});
  EXPECT_TRUE(h.lease.pending.empty());
  EXPECT_EQ(h.api.puts.size(), 1u);
  EXPECT_EQ(h.stats.skipped_follower.load(), 1) << "a peer's write";
  EXPECT_EQ(h.stats.skipped_own_write.load(), 0);
}

TEST(StatusSyncerTest, NotFoundIsDone) {
  Harness h;
  h.Create(Harness::RouteJson("ns", "web", "www.example.com"));
  h.api.Remove("ns", "web");
  EXPECT_EQ(h.syncer.Sync("ns/web"), SyncResult::kQueued);
  EXPECT_EQ(h.lease.results, std::vector<WorkResult>{WorkResult::kNone});
  EXPECT_TRUE(h.lease.pending.empty());
  EXPECT_EQ(h.stats.writes_not_found.load(), 1);
}

// A failed write shows no other writer (only a 409 does): the lease is
// kept (kNone) and the write retried, whether the server answered 5xx/429 or
// did not answer at all.
TEST(StatusSyncerTest, FailedWriteKeepsTheLeaseAndRetries) {
  Harness h;
  h.Create(Harness::RouteJson("ns", "web", "www.example.com"));
  h.api.next_status_errors.push_back(Status(StatusCode::kUnavailable, "503", std::nullopt, 503));
  h.api.next_status_errors.push_back(Status(StatusCode::kInternal, "500", std::nullopt, 500));
  h.api.next_status_errors.push_back(Status(StatusCode::kUnavailable, "Connection refused"));
  h.api.next_status_errors.push_back(Status(StatusCode::kUnavailable, "Connection reset by peer"));
  h.api.next_status_errors.push_back(Status(StatusCode::kTimeout, "request timed out"));
  h.syncer.Sync("ns/web");
  for (int i = 0; i < 5; ++i) EXPECT_EQ(h.lease.RunRetries(), 1);
  EXPECT_EQ(h.lease.results,
            (std::vector<WorkResult>{WorkResult::kNone, WorkResult::kNone, WorkResult::kNone,
                                     WorkResult::kNone, WorkResult::kNone, WorkResult::kExtend}));
  EXPECT_EQ(h.stats.writes_error.load(), 5);
  EXPECT_EQ(h.api.successful_puts, 1);
  EXPECT_TRUE(h.lease.pending.empty());
}

TEST(StatusSyncerTest, RouteDeletedOrReplacedWhileQueuedIsNotWritten) {
  Harness h;
  h.lease.run_immediately = false;
  h.Create(Harness::RouteJson("ns", "web", "www.example.com"));
  h.Create(Harness::RouteJson("ns", "api", "api.example.com"));
  h.syncer.Sync("ns/web");
  h.syncer.Sync("ns/api");
  h.DeleteRoute("ns", "web");
  // api is deleted and recreated with a new UID before the work runs.
  h.DeleteRoute("ns", "api");
  json again = Harness::RouteJson("ns", "api", "api.example.com");
  again["metadata"]["uid"] = "uid-new";
  h.Create(again);
  h.lease.RunRetries();
  EXPECT_EQ(h.api.puts.size(), 0u);
  EXPECT_EQ(h.stats.skipped_gone.load(), 2);
  EXPECT_EQ(h.syncer.Sync("ns/web"), SyncResult::kGone);
  EXPECT_EQ(h.lease.removed.back(), "ns/web");
}

TEST(StatusSyncerTest, ShardExitRemovesOnlyOurEntry) {
  ShardOptions shard;
  shard.route_selector = kubeclient::LabelSelector::Parse("shard=a").value();
  Harness h(shard);
  json r = Harness::RouteJson("ns", "web", "www.example.com");
  r["metadata"]["labels"] = {{"shard", "a"}};
  r["status"]["ingress"] = {OtherEntry()};
  h.Create(r);
  h.Drain();
  ASSERT_TRUE(h.ServerEntry("ns", "web").has_value());
  json moved = h.api.Object("ns", "web");
  moved["metadata"]["labels"]["shard"] = "b";
  h.api.Put(moved);
  h.Deliver("ns", "web");
  h.Drain();
  EXPECT_FALSE(h.ServerEntry("ns", "web").has_value());
  json stored = h.api.Object("ns", "web");
  EXPECT_EQ(stored["status"]["ingress"], json::array({OtherEntry()}));
  EXPECT_EQ(h.api.successful_puts, 2);
  EXPECT_EQ(h.stats.AdmissionCounts()["out_of_shard/"], 1);
}

// A follower queued the removal of our entry (the route left the shard);
// the leader's removal reaches its watch: that is the leader's write
// (progress for the lease's takeover), so the work is dropped by Extend
// instead of waiting to run as a no-op.
TEST(StatusSyncerTest, PeerRemovingOurEntryExtendsAndDropsWork) {
  ShardOptions shard;
  shard.route_selector = kubeclient::LabelSelector::Parse("shard=a").value();
  Harness h(shard);
  json r = Harness::RouteJson("ns", "web", "www.example.com");
  r["metadata"]["labels"] = {{"shard", "a"}};
  h.Create(r);
  h.Drain();
  ASSERT_TRUE(h.ServerEntry("ns", "web").has_value());
  h.queue.Take();
  h.Deliver("ns", "web");  // our own write's echo
  h.Drain();
  h.lease.run_immediately = false;  // from now on we follow
  json moved = h.api.Object("ns", "web");
  moved["metadata"]["labels"]["shard"] = "b";
  h.api.Put(moved);
  h.Deliver("ns", "web");
  h.Drain();
  ASSERT_EQ(h.lease.pending.count("ns/web"), 1u);
  json removed = h.api.Object("ns", "web");
  removed["status"]["ingress"] = json::array();
  h.api.Put(removed);  // the leader's removal
  h.Deliver("ns", "web");
  h.Drain();
  EXPECT_TRUE(h.lease.pending.empty());
  EXPECT_EQ(h.lease.extended, (std::vector<std::string>{"ns/web", "ns/web"}));
  EXPECT_EQ(h.stats.skipped_follower.load(), 1);
  EXPECT_EQ(h.api.successful_puts, 1);
}

TEST(StatusSyncerTest, OutOfShardWithoutEntryNeverWritten) {
  ShardOptions shard;
  shard.namespaces = {"mine"};
  Harness h(shard);
  h.Create(Harness::RouteJson("theirs", "web", "www.example.com"));
  EXPECT_EQ(h.syncer.Sync("theirs/web"), SyncResult::kOutOfShard);
  EXPECT_EQ(h.api.puts.size(), 0u);
  EXPECT_EQ(h.stats.skipped_out_of_shard.load(), 1);
}

TEST(StatusSyncerTest, NamespaceSelectorAndLabelChange) {
  ShardOptions shard;
  shard.namespace_selector = kubeclient::LabelSelector::Parse("env in (prod)").value();
  Harness h(shard);
  kubeclient::Namespace ns;
  ns.metadata.name = "team";
  ns.metadata.labels = {{"env", "dev"}};
  h.namespaces.Set(ns);
  h.Create(Harness::RouteJson("team", "web", "www.example.com"));
  h.Create(Harness::RouteJson("other", "web", "x.example.com"));
  h.Drain();
  EXPECT_EQ(h.api.puts.size(), 0u);
  auto old_ns = h.namespaces.Get("team");
  ns.metadata.labels["env"] = "prod";
  h.namespaces.Set(ns);
  h.controller.namespace_handler().OnUpdate(old_ns, h.namespaces.Get("team"));
  EXPECT_EQ(h.queue.Take(), std::vector<std::string>{"team/web"});
  h.queue.Add("team/web");
  h.Drain();
  EXPECT_EQ(h.api.successful_puts, 1);
  EXPECT_TRUE(h.ServerEntry("team", "web").has_value());
}

TEST(StatusSyncerTest, ContendedChangeBlockedCreationNot) {
  Harness h;
  json r = Harness::RouteJson("ns", "web", "www.example.com");
  r["metadata"]["uid"] = "u-web";
  r["status"]["ingress"] = {{{"routerName", "default"}, {"host", "theirs.example.com"},
                             {"conditions", {{{"type", "Admitted"}, {"status", "True"}}}}}};
  h.Create(r);
  json n = Harness::RouteJson("ns", "new", "new.example.com");
  n["metadata"]["uid"] = "u-new";
  h.Create(n);
  h.gate.contended = {"u-web", "u-new"};
  EXPECT_EQ(h.syncer.Sync("ns/web"), SyncResult::kContended);
  EXPECT_EQ(h.syncer.Sync("ns/new"), SyncResult::kQueued) << "creating our entry is never blocked";
  EXPECT_EQ(h.api.successful_puts, 1);
  EXPECT_EQ(h.stats.skipped_contended.load(), 1);
}

TEST(StatusSyncerTest, ContendedWhenWorkRunsReleases) {
  Harness h;
  h.lease.run_immediately = false;
  json r = Harness::RouteJson("ns", "web", "www.example.com");
  r["metadata"]["uid"] = "u-web";
  r["status"]["ingress"] = {{{"routerName", "default"}, {"host", "theirs.example.com"},
                             {"conditions", {{{"type", "Admitted"}, {"status", "True"}}}}}};
  h.Create(r);
  EXPECT_EQ(h.syncer.Sync("ns/web"), SyncResult::kQueued);
  h.gate.contended = {"u-web"};
  h.lease.RunRetries();
  EXPECT_EQ(h.api.puts.size(), 0u);
  EXPECT_EQ(h.lease.results, std::vector<WorkResult>{WorkResult::kRelease});
}

TEST(ControllerTest, FeedsTrackerOnlyOnChangedEntries) {
  Harness h;
  h.Create(Harness::RouteJson("ns", "web", "www.example.com"), /*initial_list=*/true);
  h.Drain();
  EXPECT_TRUE(h.gate.changed.empty()) << "absent -> present is creation, not a change";
  h.Deliver("ns", "web");
  EXPECT_TRUE(h.gate.changed.empty());
  EXPECT_EQ(h.gate.appeared, std::vector<std::string>{h.api.Object("ns", "web")["metadata"]["uid"]})
      << "the watch showing our entry created is reported as an appearance";
  json theirs = h.api.Object("ns", "web");
  theirs["status"]["ingress"][0]["host"] = "theirs.example.com";
  h.api.Put(theirs);
  h.Deliver("ns", "web");
  EXPECT_EQ(h.gate.changed.size(), 1u);
  // A change to lastTransitionTime only is not a change.
  json t = h.api.Object("ns", "web");
  t["status"]["ingress"][0]["conditions"][0]["lastTransitionTime"] = "2020-01-01T00:00:00Z";
  h.api.Put(t);
  h.Deliver("ns", "web");
  EXPECT_EQ(h.gate.changed.size(), 1u);
}

TEST(ControllerTest, StatusOnlyUpdateDoesNotFanOut) {
  Harness h;
  h.Create(Harness::RouteJson("a", "x", "www.example.com"));
  h.Create(Harness::RouteJson("a", "y", "www.example.com", "2026-01-05T00:00:00Z"));
  h.Drain();
  h.Deliver("a", "x");
  EXPECT_EQ(h.queue.Take(), std::vector<std::string>{"a/x"});
}

TEST(ControllerTest, WaitsForSync) {
  Harness h;
  h.routes.SetSynced(false);
  h.Create(Harness::RouteJson("a", "x", "www.example.com"), true);
  EXPECT_TRUE(h.controller.ProcessNextItem());
  EXPECT_EQ(h.queue.delayed, std::vector<std::string>{"a/x"});
  EXPECT_EQ(h.api.puts.size(), 0u);
}

TEST(StatusSyncerTest, AdmissionGauge) {
  Harness h;
  h.Create(Harness::RouteJson("a", "x", "www.example.com"));
  h.Create(Harness::RouteJson("b", "y", "www.example.com", "2026-01-05T00:00:00Z"));
  h.Create(Harness::RouteJson("b", "z", "Bad_Host"));
  h.Drain();
  auto counts = h.stats.AdmissionCounts();
  EXPECT_EQ(counts["true/Admitted"], 1);
  EXPECT_EQ(counts["false/HostAlreadyClaimed"], 1);
  EXPECT_EQ(counts["false/InvalidHost"], 1);
  h.DeleteRoute("b", "z");
  h.Drain();
  EXPECT_EQ(h.stats.AdmissionCounts().count("false/InvalidHost"), 0u);
}

}  // namespace
}  // namespace routestatus::controller::testing
