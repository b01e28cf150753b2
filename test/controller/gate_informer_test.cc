// The contention path fed by the real informer, wired as cmd/ wires it: a
// relist (after 410 Gone) that brings several changed entries at once must
// report each of them to the tracker with its own old and new entry.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "conflict/contention_tracker.h"
#include "controller/controller.h"
#include "controller/status_syncer.h"
#include "controller/tracker_gate.h"
#include "kubeclient/cache/informer.h"
#include "test/controller/fakes.h"
#include "test/kubeclient/cache/fake_kube_client.h"
#include "test/testing/fake_clock.h"

namespace routestatus::controller {
namespace {

using nlohmann::json;

// A route of namespace "ns" with host `host` and, unless `entry_host` is
// empty, our router name's entry for `entry_host`.
json RouteWith(const std::string& name, const std::string& host, const std::string& entry_host,
               int64_t rv) {
  json r = kubeclient::cache::testing::MakeRouteJson("ns", name, rv, host);
  r["status"] = json::object();
  if (!entry_host.empty()) {
    r["status"]["ingress"] = {{{"routerName", "default"},
                               {"host", entry_host},
                               {"routerCanonicalHostname", "router.example.com"},
                               {"wildcardPolicy", "None"},
                               {"conditions",
                                {{{"type", "Admitted"},
                                  {"status", "True"},
                                  {"lastTransitionTime", "2026-11-29T14:00:00Z"}}}}}};
  }
  return r;
}

// A route of namespace "ns" without spec.host (its host comes from the
// hostname template: "<name>-ns.apps.example.com") and, unless `entry_host`
// is empty, our router name's entry for `entry_host`.
json TemplateRoute(const std::string& name, const std::string& entry_host, int64_t rv) {
  json r = RouteWith(name, "", entry_host, rv);
  r["spec"].erase("host");
  return r;
}

// `route` with metadata.generation `generation` (the API server's count of
// spec changes).
json WithGeneration(json route, int64_t generation) {
  route["metadata"]["generation"] = generation;
  return route;
}

// `n` listed routes "<prefix><i>" of namespace "ns" whose entry of ours,
// written at `written_unix`, differs from ours: with `spec_host`, a route
// with spec.host whose entry names another canonical hostname; without, a
// route without spec.host whose entry names another host (another
// hostname template).
std::vector<ContentionGate::ListedEntry> ListedEntries(const std::string& prefix, int n,
                                                        int64_t written_unix, bool spec_host) {
  std::vector<ContentionGate::ListedEntry> v;
  for (int i = 0; i < n; ++i) {
    auto route = std::make_shared<kubeclient::Route>();
    route->metadata.namespace_name = "ns";
    route->metadata.name = prefix + std::to_string(i);
    route->metadata.uid = "uid-" + route->metadata.name;
    kubeclient::RouteIngress ours;
    ours.router_name = "default";
    ours.host = route->metadata.name + (spec_host ? ".example.com" : "-ns.apps.example.com");
    if (spec_host) route->spec.host = ours.host;
    ours.router_canonical_hostname = "router.example.com";
    ours.wildcard_policy = "None";
    ours.conditions = {{"Admitted", "True", "", "", kubeclient::FormatRfc3339(written_unix)}};
    kubeclient::RouteIngress theirs = ours;
    if (spec_host) {
      theirs.router_canonical_hostname = "router.theirs.example.com";
    } else {
      theirs.host = route->metadata.name + "-ns.apps.theirs.example.com";
    }
    v.push_back({std::move(route), std::move(theirs), std::move(ours)});
  }
  return v;
}

// Expires the informer's watch (410 Gone) after its first list, so that the
// next Step relists.
void ExpireWatchAfterList(kubeclient::cache::testing::FakeKubeClient& source,
                          kubeclient::cache::RouteInformer& informer) {
  kubeclient::cache::testing::WatchScript gone;
  kubeclient::WatchEvent error;
  error.type = kubeclient::WatchEventType::kError;
  error.object = {{"kind", "Status"}, {"code", 410}, {"reason", "Expired"},
                  {"message", "too old resource version"}};
  gone.events = {error};
  source.AddWatch(gone);
  informer.reflector().Step();  // list
  informer.reflector().Step();  // watch: 410
}

class GateInformerTest : public ::testing::Test {
 protected:
  GateInformerTest()
      : informer_(source_, clock_, InformerOptions()),
        shard_({}, nullptr),
        tracker_(clock_, TrackerOptions()),
        gate_(tracker_),
        syncer_(Admission(), shard_, informer_, source_, lease_, gate_, clock_, stats_),
        controller_(syncer_, informer_, nullptr, shard_, queue_, gate_, clock_) {
    lease_.run_immediately = false;
    // The wiring of cmd/route-status-controller/controller_app.cc.
    informer_.AddIndex(kRoutesByHostIndex, RoutesByHostIndexFunc(Admission()));
    informer_.AddEventHandler(&controller_.route_handler());
  }
  static AdmissionOptions Admission() {
    AdmissionOptions o;
    o.router_name = "default";
    o.canonical_hostname = "router.example.com";
    o.hostname_template = "${name}-${namespace}.apps.example.com";
    return o;
  }
  static kubeclient::cache::InformerOptions InformerOptions() {
    kubeclient::cache::InformerOptions o;
    o.name = "routes";
    return o;
  }
  static conflict::ContentionTrackerOptions TrackerOptions() {
    conflict::ContentionTrackerOptions o;
    o.router_name = "default";
    o.limit = 5;
    return o;
  }

  // Lists `before` (at resourceVersion 10), expires the watch (410), and
  // relists `after` (at 30).
  void RelistAfterExpiry(const std::vector<std::pair<std::string, json>>& before,
                         const std::vector<std::pair<std::string, json>>& after) {
    for (const auto& [key, object] : before) source_.SetObject(key, object);
    source_.SetListResourceVersion(10);
    ExpireWatchAfterList(source_, informer_);
    ASSERT_TRUE(informer_.reflector().NeedsList());
    for (const auto& [key, object] : after) source_.SetObject(key, object);
    source_.SetListResourceVersion(30);
    informer_.reflector().Step();  // relist
  }

  routestatus::testing::FakeClock clock_;
  kubeclient::cache::testing::FakeKubeClient source_;
  kubeclient::cache::RouteInformer informer_;
  testing::PassThroughLease lease_;
  testing::FakeWorkQueue queue_;
  StatusStats stats_;
  ShardFilter shard_;
  conflict::ContentionTracker tracker_;
  TrackerGate gate_;
  StatusSyncer syncer_;
  Controller controller_;
};

TEST_F(GateInformerTest, RelistReportsEveryChangedEntry) {
  // Three routes carry (or lack) our entry as we compute it.
  source_.SetObject("ns/a", RouteWith("a", "a.example.com", "a.example.com", 5));
  source_.SetObject("ns/b", RouteWith("b", "b.example.com", "b.example.com", 6));
  source_.SetObject("ns/c", RouteWith("c", "c.example.com", "", 7));
  source_.SetListResourceVersion(10);
  ExpireWatchAfterList(source_, informer_);
  ASSERT_TRUE(informer_.reflector().NeedsList());
  // While our watch was expired, a router sharing our name but configured
  // differently changed a's and b's entries and created c's.
  source_.SetObject("ns/a", RouteWith("a", "a.example.com", "a.theirs.example.com", 21));
  source_.SetObject("ns/b", RouteWith("b", "b.example.com", "b.theirs.example.com", 22));
  source_.SetObject("ns/c", RouteWith("c", "c.example.com", "c.theirs.example.com", 23));
  source_.SetListResourceVersion(30);
  informer_.reflector().Step();  // relist: three updates in one batch
  EXPECT_TRUE(gate_.IsChangeContended("uid-ns-a", false));
  EXPECT_TRUE(gate_.IsChangeContended("uid-ns-b", false));
  EXPECT_TRUE(gate_.IsChangeContended("uid-ns-c", false));
  EXPECT_EQ(tracker_.Snapshot().contended_routes, 3u);
}

// Issue 13, start-up race: a replica that lists after a router configured
// differently has written every route must not overwrite them all once
// before noticing the fight. The first worker hands the gate every listed
// entry before any reconcile: one another configuration wrote since we
// started is contended; one written long before (a previous configuration
// of ours) and one equal to ours are not.
TEST_F(GateInformerTest, EntriesAnotherConfigurationWroteSinceWeStartedAreContended) {
  const int64_t now_unix =
      std::chrono::duration_cast<std::chrono::seconds>(clock_.WallNow().time_since_epoch())
          .count();
  // Why the canonical hostname: only the configuration decides it (an
  // entry whose host differs from spec.host was written for an older spec).
  json fresh = RouteWith("a", "a.example.com", "a.example.com", 5);
  fresh["status"]["ingress"][0]["routerCanonicalHostname"] = "router.theirs.example.com";
  fresh["status"]["ingress"][0]["conditions"][0]["lastTransitionTime"] =
      kubeclient::FormatRfc3339(now_unix - 1);
  source_.SetObject("ns/a", fresh);
  json old = RouteWith("b", "b.example.com", "b.example.com", 6);
  old["status"]["ingress"][0]["routerCanonicalHostname"] = "router.theirs.example.com";
  old["status"]["ingress"][0]["conditions"][0]["lastTransitionTime"] =
      kubeclient::FormatRfc3339(now_unix - 600);
  source_.SetObject("ns/b", old);
  source_.SetObject("ns/c", RouteWith("c", "c.example.com", "c.example.com", 7));
  source_.SetListResourceVersion(10);
  informer_.reflector().Step();  // the initial list: no change events
  ASSERT_TRUE(controller_.CachesSynced());
  EXPECT_FALSE(gate_.IsChangeContended("uid-ns-a", false));
  // The fake queue's Get returns false once empty: the worker reconciles
  // the listed keys, then returns.
  controller_.RunWorker();
  EXPECT_TRUE(gate_.IsChangeContended("uid-ns-a", false));
  EXPECT_FALSE(gate_.IsChangeContended("uid-ns-b", false));
  EXPECT_FALSE(gate_.IsChangeContended("uid-ns-c", false));
  EXPECT_EQ(tracker_.Snapshot().contentions, 1);
  EXPECT_EQ(syncer_.Sync("ns/a"), SyncResult::kContended);
  EXPECT_EQ(syncer_.Sync("ns/b"), SyncResult::kQueued);
}

// Issue 13: a listed entry of a route without spec.host whose host alone
// differs from ours is another hostname template, or a spec.host cleared
// after the entry was written. Up to the tracker's limit of them are not
// counted (a few spec changes; overwriting them stays within a fight's
// bound); more are (a router configured differently wrote them all).
TEST_F(GateInformerTest, ListedEntriesWhoseHostAloneDiffersCountOnlyBeyondTheLimit) {
  const int64_t now_unix =
      std::chrono::duration_cast<std::chrono::seconds>(clock_.WallNow().time_since_epoch())
          .count();
  auto listed = [&](const std::string& prefix, int n) {
    return ListedEntries(prefix, n, now_unix, /*spec_host=*/false);
  };
  gate_.EntriesListed(listed("few-", 5));
  EXPECT_EQ(tracker_.Snapshot().contentions, 0);
  EXPECT_FALSE(gate_.IsChangeContended("uid-few-0", false));

  gate_.EntriesListed(listed("many-", 6));
  EXPECT_EQ(tracker_.Snapshot().contentions, 6);
  EXPECT_TRUE(gate_.IsChangeContended("uid-many-0", false));
}

// Issue 59, a fight on a loaded node: replicas started at once start
// seconds apart, and the last one listed every entry the first had written
// just before it started. Such entries (written in the tracker's
// listed_recent before it was made) are a live router started with us or a
// configuration of ours that just stopped: counted only when more than the
// limit were listed, as the ambiguous ones. Entries that differ in the
// canonical hostname (not the host alone) written since we started count
// however few; written well before (a previous configuration), never.
TEST_F(GateInformerTest, ListedEntriesWrittenJustBeforeWeStartedCountOnlyBeyondTheLimit) {
  const int64_t started_unix =
      std::chrono::duration_cast<std::chrono::seconds>(clock_.WallNow().time_since_epoch())
          .count();
  auto listed = [&](const std::string& prefix, int n, int64_t written_unix) {
    return ListedEntries(prefix, n, written_unix, /*spec_host=*/true);
  };
  clock_.Advance(std::chrono::seconds(3));  // a slow start: we list 3 s later
  gate_.EntriesListed(listed("few-", 5, started_unix - 4));
  EXPECT_EQ(tracker_.Snapshot().contentions, 0);
  EXPECT_FALSE(gate_.IsChangeContended("uid-few-0", false));
  gate_.EntriesListed(listed("old-", 6, started_unix - 60));
  EXPECT_EQ(tracker_.Snapshot().contentions, 0);
  gate_.EntriesListed(listed("since-", 1, started_unix + 1));
  EXPECT_EQ(tracker_.Snapshot().contentions, 1);
  gate_.EntriesListed(listed("many-", 6, started_unix - 4));
  EXPECT_EQ(tracker_.Snapshot().contentions, 6);  // the sixth engages the cut-off
  EXPECT_TRUE(gate_.IsChangeContended("uid-many-0", false));
}

// A route whose entry the other routes' claims decide.
json ClaimRoute(const std::string& ns, const std::string& name, const std::string& host,
                const std::string& created, int64_t rv) {
  json r = kubeclient::cache::testing::MakeRouteJson(ns, name, rv, host);
  r["metadata"]["creationTimestamp"] = created;
  return r;
}

void SetEntry(json& route, bool admitted, const std::string& holder = "") {
  json condition = {{"type", "Admitted"},
                    {"status", admitted ? "True" : "False"},
                    {"lastTransitionTime", "2026-11-29T14:00:00Z"}};
  if (!admitted) {
    condition["reason"] = "HostAlreadyClaimed";
    condition["message"] = "route " + holder + " already exposes the host";
  }
  route["status"]["ingress"] = {{{"routerName", "default"},
                                 {"host", route["spec"]["host"]},
                                 {"routerCanonicalHostname", "router.example.com"},
                                 {"wildcardPolicy", "None"},
                                 {"conditions", {condition}}}};
}

kubeclient::WatchEvent Event(kubeclient::WatchEventType type, json object) {
  kubeclient::WatchEvent e;
  e.type = type;
  e.object = std::move(object);
  return e;
}

// Issue 13 item 2. A leader with our configuration computed "rejected:
// HostAlreadyClaimed by p<i>" before p<i> went away (its cache was a moment
// older, or its PUT waited for QPS tokens), and wrote it after our cache
// saw p<i> deleted. That is a stale but legitimate write, not a router
// configured differently: it must not count toward the cut-off nor be
// blamed on the configuration; and once the leader writes the entry we
// compute, the route is not blocked.
TEST_F(GateInformerTest, PeerWriteFromAStaleViewIsNotContention) {
  const int n = 6;  // more than the limit (5): would stop every change
  for (int i = 0; i < n; ++i) {
    const std::string h = "h" + std::to_string(i) + ".example.com";
    json r = ClaimRoute("b", "r" + std::to_string(i), h, "2026-11-29T14:00:00Z", 100 + i);
    SetEntry(r, true);
    source_.SetObject("b/r" + std::to_string(i), r);
    // p<i>: older, in another namespace, on another host for now.
    source_.SetObject("a/p" + std::to_string(i),
                      ClaimRoute("a", "p" + std::to_string(i), "x" + h, "2026-11-28T00:00:00Z",
                                 200 + i));
  }
  source_.SetListResourceVersion(300);
  kubeclient::cache::testing::WatchScript w;
  int64_t rv = 300;
  for (int i = 0; i < n; ++i) {
    const std::string h = "h" + std::to_string(i) + ".example.com";
    const std::string p = "p" + std::to_string(i);
    // p<i> moves onto r<i>'s host (r<i> should now be rejected) and is
    // deleted again; then the stale leader's write of r<i> arrives...
    w.events.push_back(Event(kubeclient::WatchEventType::kModified,
                             ClaimRoute("a", p, h, "2026-11-28T00:00:00Z", ++rv)));
    w.events.push_back(Event(kubeclient::WatchEventType::kDeleted,
                             ClaimRoute("a", p, h, "2026-11-28T00:00:00Z", ++rv)));
    json stale = ClaimRoute("b", "r" + std::to_string(i), h, "2026-11-29T14:00:00Z", ++rv);
    SetEntry(stale, false, "a/" + p);
    w.events.push_back(Event(kubeclient::WatchEventType::kModified, stale));
  }
  source_.AddWatch(w);
  informer_.reflector().Step();  // list
  informer_.reflector().Step();  // the watch above
  conflict::ContentionSnapshot s = tracker_.Snapshot();
  EXPECT_EQ(s.contentions_in_window, 0) << "a stale peer write is not a contention";
  EXPECT_FALSE(s.cutoff_active);
  EXPECT_TRUE(gate_.IsChangeContended("uid-b-r0", false)) << "but we do not overwrite it meanwhile";
  // ...and the leader, having seen p0 go, writes the entry we compute.
  kubeclient::cache::testing::WatchScript fix;
  json fixed = ClaimRoute("b", "r0", "h0.example.com", "2026-11-29T14:00:00Z", ++rv);
  SetEntry(fixed, true);
  fix.events.push_back(Event(kubeclient::WatchEventType::kModified, fixed));
  source_.AddWatch(fix);
  informer_.reflector().Step();
  EXPECT_FALSE(gate_.IsChangeContended("uid-b-r0", false));
  EXPECT_EQ(tracker_.Snapshot().contentions_in_window, 0);
}

// The partitioned slow-leader seed 187181658494969: while our watch was
// expired, the owner of a route without spec.host set spec.host to h78 (a
// replica of ours wrote h78's entry) and cleared it again. The relist shows
// the template spec beside h78's entry, and a generation two spec changes
// on: an entry written for a spec we never saw, not a router with another
// hostname template. It is not counted, and we rewrite ours at once.
TEST_F(GateInformerTest, RelistedEntryOfASpecWeNeverSawIsNotContention) {
  // "a": the same with spec.host a -> b -> a.
  RelistAfterExpiry(
      {{"ns/t", WithGeneration(TemplateRoute("t", "t-ns.apps.example.com", 5), 1)},
       {"ns/a", WithGeneration(RouteWith("a", "a.example.com", "a.example.com", 6), 1)}},
      {{"ns/t", WithGeneration(TemplateRoute("t", "h78.example.com", 23), 3)},
       {"ns/a", WithGeneration(RouteWith("a", "a.example.com", "b.example.com", 24), 3)}});
  EXPECT_EQ(tracker_.Snapshot().contentions, 0);
  EXPECT_FALSE(gate_.IsChangeContended("uid-ns-t", false));
  EXPECT_FALSE(gate_.IsChangeContended("uid-ns-a", false));
  EXPECT_EQ(syncer_.Sync("ns/t"), SyncResult::kQueued) << "our entry is written again";
  EXPECT_EQ(syncer_.Sync("ns/a"), SyncResult::kQueued) << "our entry is written again";
}

// The same relist with the generation unchanged: no spec changed, so an
// entry whose host alone differs from ours was written by a router with
// another hostname template (fight seed 13 first sees its fight in a relist
// after a 410), and one that differs in its canonical hostname is another
// configuration's whatever the generation.
TEST_F(GateInformerTest, RelistedEntryOfAnotherConfigurationIsContention) {
  json c = WithGeneration(RouteWith("c", "c.example.com", "c.example.com", 24), 3);
  c["status"]["ingress"][0]["routerCanonicalHostname"] = "router.theirs.example.com";
  RelistAfterExpiry(
      {{"ns/t", WithGeneration(TemplateRoute("t", "t-ns.apps.example.com", 5), 1)},
       {"ns/c", WithGeneration(RouteWith("c", "c.example.com", "c.example.com", 6), 1)}},
      {{"ns/t", WithGeneration(TemplateRoute("t", "t-ns.apps.theirs.example.com", 23), 1)},
       {"ns/c", c}});
  EXPECT_EQ(tracker_.Snapshot().contentions, 2);
  EXPECT_TRUE(gate_.IsChangeContended("uid-ns-t", false));
  EXPECT_TRUE(gate_.IsChangeContended("uid-ns-c", false));
}

}  // namespace
}  // namespace routestatus::controller
