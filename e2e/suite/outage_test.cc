// Issue 15: an API server restart costs no more than the outage itself. The
// replicas run with the product's default flags (no --lease-* flags, the
// default verbosity) against the embedded server's restart fault
// (POST /admin/restart): every connection dropped, new ones refused, then
// the same objects with a fresh watch history (older resourceVersions get
// 410, as from a restarted kube-apiserver's new watch cache).

#include <algorithm>
#include <atomic>
#include <optional>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "e2e/harness/route_churn.h"
#include "e2e/suite/e2e_test_base.h"

namespace routestatus::e2e {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using SteadyClock = std::chrono::steady_clock;

double Ms(SteadyClock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// Wall time of a steady-clock instant of this process, in seconds since the
// epoch (to compare with the replicas' *_timestamp_seconds metrics).
double WallSeconds(SteadyClock::time_point t) {
  auto wall = std::chrono::system_clock::now() - (SteadyClock::now() - t);
  return std::chrono::duration<double>(wall.time_since_epoch()).count();
}

// The product's defaults plus only what the scenario needs: the router's
// canonical hostname and the churn's shard (label shard != out).
ReplicaOptions DefaultFlags(const std::string& router) {
  ReplicaOptions o;
  o.router_name = router;
  o.flags = {{"router-canonical-hostname", "router-" + router + ".apps.example.com"},
             {"route-labels", "shard!=out"}};
  return o;
}

// Once every replica's route and namespace caches have been listed after
// `after` (wall seconds), the latest of those list times; nullopt on timeout
// (*why then names a cache that was not).
std::optional<double> CachesCurrentAt(ReplicaSet& set, double after, milliseconds timeout,
                                      std::string* why) {
  double latest = 0;
  bool ok = WaitFor(
      [&] {
        latest = 0;
        for (int i = 0; i < set.size(); ++i) {
          auto samples = set.at(i).Scrape();
          if (!samples.ok()) {
            *why = set.at(i).id() + ": " + samples.status().ToString();
            return false;
          }
          for (const char* resource : {"routes", "namespaces"}) {
            double t = SumSamples(*samples, "routestatus_informer_last_sync_timestamp_seconds",
                                  {{"resource", resource}});
            if (t < after) {
              *why = set.at(i).id() + " " + resource + ": last list " +
                     std::to_string(after - t) + " s before the server was back";
              return false;
            }
            latest = std::max(latest, t);
          }
        }
        return true;
      },
      timeout, milliseconds(20));
  if (!ok) return std::nullopt;
  return latest;
}

// glog lines of `severity` ('W', 'I', ...) in `replica`'s log that contain
// `needle`.
std::vector<std::string> LogLines(const Replica& replica, char severity,
                                  const std::string& needle) {
  std::vector<std::string> lines;
  std::istringstream in(replica.Log());
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] == severity && line.find(needle) != std::string::npos) {
      lines.push_back(line);
    }
  }
  return lines;
}

// Creates route `name` in `ns` (shard=in), retrying transport failures;
// ASSERTs success.
void CreateMarker(TestCluster& cluster, const std::string& ns, const std::string& name) {
  RouteChange c;
  c.kind = ChangeKind::kCreate;
  c.ns = ns;
  c.name = name;
  c.host = name + "." + ns + ".apps.example.com";
  c.labels = {{"shard", "in"}};
  auto applied = ApplyChanges(cluster, {c}, 0);
  ASSERT_TRUE(applied.at(0).status.ok()) << applied.at(0).status.ToString();
}

class OutageTest : public E2eTest {
 protected:
  // Every replica logged exactly one outage WARNING and one recovery INFO
  // (the operator's view at the default verbosity); prints them.
  void ExpectOneLinePairPerReplica(ReplicaSet& set) {
    for (int i = 0; i < set.size(); ++i) {
      auto down = LogLines(set.at(i), 'W', "unreachable");
      auto back = LogLines(set.at(i), 'I', "answers again");
      EXPECT_EQ(down.size(), 1u) << set.at(i).id() << ": outage warnings";
      EXPECT_EQ(back.size(), 1u) << set.at(i).id() << ": recovery lines";
      std::cout << "operator log " << set.at(i).id() << ":\n";
      for (const auto& l : down) std::cout << "  " << l << "\n";
      for (const auto& l : back) std::cout << "  " << l << "\n";
    }
    EXPECT_EQ(set.SumMetric("routestatus_api_outages_total"), set.size());
    EXPECT_GT(set.SumMetric("routestatus_api_request_failures_total",
                            {{"class", "connection_refused"}}),
              0);
    EXPECT_EQ(set.SumMetric("routestatus_api_reachable"), set.size());
  }

  // The timeline after the server answers again at `ready`, in ms: every
  // replica relisted both caches (*caches_ms), and route `key` admitted
  // (*admitted_ms). Records both as figures. A relist counts from
  // `restarting` (the earliest the server can answer again, before
  // `ready`). Why: RestartServer returns when its /readyz poll (every 10
  // ms) first succeeds, so a replica's list can complete before that (a
  // CI run failed by 4 ms).
  void CachesCurrent(ReplicaSet& set, SteadyClock::time_point restarting,
                     SteadyClock::time_point ready, double* caches_ms) {
    std::string why;
    auto caches = CachesCurrentAt(set, WallSeconds(restarting), seconds(15), &why);
    ASSERT_TRUE(caches.has_value()) << "the replicas did not relist after the restart: " << why;
    *caches_ms = (*caches - WallSeconds(ready)) * 1000;
    Figure("ready_to_caches_current_ms", *caches_ms);
  }
  void Admitted(RouteWatcher& watcher, SteadyClock::time_point ready, const std::string& key,
                double* admitted_ms) {
    auto admitted = watcher.WaitForEntry(
        key, [](const auto& e) { return e.has_value(); }, seconds(15));
    ASSERT_TRUE(admitted.has_value()) << key << " was not admitted";
    *admitted_ms = Ms(*admitted - ready);
    Figure("ready_to_new_route_admitted_ms", *admitted_ms);
  }
};

// 3 replicas (default flags), 20 routes converged; 100 random changes at
// 10/s; 4 s in, the server restarts and stays down 3 s (the churn stalls
// and resumes). A route created as soon as the server answers is admitted,
// and every route's final state is reached, <= 2 s after the server is back
// (or after its last change, if later); nothing is lost; no route's entry
// changes more often than its changes needed, and the server counts no
// more successful status writes than changes that needed one.
TEST_F(OutageTest, RestartDuringChurnConvergesWithinTwoSeconds) {
  if (!cluster().embedded()) GTEST_SKIP() << "the restart fault needs the embedded API server";
  const std::string router = "e2e-restart";
  const auto down = seconds(3);
  const std::string ns = Namespace("restart");
  std::vector<std::string> seeds;
  for (int i = 0; i < 20; ++i) seeds.push_back("seed-" + std::to_string(i));
  CreateRoutes(ns, "seed", 20, {{"shard", "in"}});
  ReplicaSet& set = Replicas("restart", 3, DefaultFlags(router));
  set.StartAll();
  auto desired = [&](const kubeclient::Route& r) { return InDesiredState(r, router); };
  std::string why;
  ASSERT_TRUE(WaitForRoutes(cluster(), desired, seconds(60), 20, &why)) << why;
  ASSERT_TRUE(WaitForWritesToSettle(cluster(), seconds(2), seconds(30)));
  RouteWatcher& watcher =
      *watchers_.emplace_back(std::make_unique<RouteWatcher>(cluster(), router));
  watcher.Start();

  const std::vector<RouteChange> changes = RandomChanges(ns, "r", 100, 15, {}, seeds);
  const WriteCounts before = cluster().StatusWrites();
  const auto t0 = SteadyClock::now();
  std::vector<AppliedChange> applied;
  std::thread churn([&] { applied = ApplyChanges(cluster(), changes, 10); });
  // Why: an ASSERT below returns early; the churn thread must still end.
  struct Joiner {
    std::thread& t;
    ~Joiner() {
      if (t.joinable()) t.join();
    }
  } joiner{churn};
  std::this_thread::sleep_until(t0 + seconds(4));
  // New connections are refused for `down` from the restart on.
  const SteadyClock::time_point restarting = SteadyClock::now() + down;
  auto restarted = cluster().RestartServer(down);
  ASSERT_TRUE(restarted.ok()) << restarted.status().ToString();
  const SteadyClock::time_point ready = *restarted;
  const std::string marker = "after-restart";
  ASSERT_NO_FATAL_FAILURE(CreateMarker(cluster(), ns, marker));
  double caches_ms = 0, admitted_ms = 0;
  ASSERT_NO_FATAL_FAILURE(CachesCurrent(set, restarting, ready, &caches_ms));
  ASSERT_NO_FATAL_FAILURE(Admitted(watcher, ready, ns + "/" + marker, &admitted_ms));
  churn.join();
  for (const auto& a : applied) ASSERT_TRUE(a.status.ok()) << a.change.name << a.status.ToString();
  ASSERT_TRUE(WaitForRoutes(cluster(), desired, seconds(30), -1, &why)) << "lost changes: " << why;
  ASSERT_TRUE(WaitForWritesToSettle(cluster(), seconds(3), seconds(30)));
  const WriteCounts w = cluster().StatusWrites() - before;

  // Per route: the changes that needed a write, and when its last change
  // was applied.
  std::map<std::string, int> needing;
  std::map<std::string, SteadyClock::time_point> last_change;
  for (const auto& a : applied) {
    const std::string key = a.change.ns + "/" + a.change.name;
    needing[key] += a.change.needs_write ? 1 : 0;
    last_change[key] = a.at;
  }
  needing[ns + "/" + marker] = 1;
  int total_needing = 0;
  for (const auto& [key, n] : needing) total_needing += n;
  double worst_ms = 0;
  std::string worst;
  auto routes = cluster().ListRoutes();
  ASSERT_TRUE(routes.ok()) << routes.status().ToString();
  for (const auto& r : *routes) {
    const bool out = r.metadata.labels.count("shard") && r.metadata.labels.at("shard") == "out";
    auto reached = watcher.WaitForEntry(
        r.Key(),
        [&](const auto& e) {
          return out ? !e.has_value() : e.has_value() && e->host == r.spec.host;
        },
        seconds(5));
    ASSERT_TRUE(reached.has_value()) << r.Key() << ": our watch never saw its final entry";
    auto from = std::max(ready, last_change.count(r.Key()) ? last_change[r.Key()] : t0);
    double ms = Ms(*reached - from);
    if (ms > worst_ms) {
      worst_ms = ms;
      worst = r.Key();
    }
  }
  int rewritten = 0;
  for (const auto& [key, h] : watcher.Snapshot()) {
    if (h.changes > needing[key]) {
      ++rewritten;
      ADD_FAILURE() << key << ": entry changed " << h.changes << " times for " << needing[key]
                    << " changes that needed a write";
    }
  }
  Figure("down_ms", Ms(down));
  Figure("changes", static_cast<double>(changes.size()) + 1);
  Figure("changes_needing_write", total_needing);
  Figure("writes_success", w.success);
  Figure("writes_conflict", w.conflict);
  Figure("put_attempts", w.total());
  Figure("worst_converge_after_ready_or_change_ms", worst_ms);
  Figure("routes_with_extra_entry_changes", rewritten);
  Figure("controller_relists", set.SumMetric("routestatus_informer_relists_total"));
  std::cout << "slowest route after the restart: " << worst << " (" << worst_ms << " ms)\n";
  EXPECT_LE(caches_ms, 2000);
  EXPECT_LE(admitted_ms, 2000);
  EXPECT_LE(worst_ms, 2000) << worst;
  EXPECT_LE(w.success, total_needing) << "a correct entry was rewritten";
  ExpectOneLinePairPerReplica(set);
}

// LIST and WATCH requests of routes the replicas made that succeeded, from
// their own routestatus_api_requests_total (a 503 retried once the server
// is ready is one request).
double RouteReadsOk(ReplicaSet& set) {
  double n = 0;
  for (const char* verb : {"list", "watch"}) {
    n += set.SumMetric("routestatus_api_requests_total",
                       {{"verb", verb}, {"resource", "routes"}, {"result", "ok"}});
  }
  return n;
}

// Issue 57: 3 replicas (default flags), 10 routes converged; the server
// restarts, stays down 10 s, then starts as kube-apiserver does (routes
// 503 "server is starting" with Retry-After 10 for 1.5 s, /readyz 500). A
// route created as soon as it is ready is admitted within 2 s (it was 3.7 s
// on a real 1.26: the replicas waited out the Retry-After). Figures: the
// LIST/WATCH requests and /readyz probes each replica spent on the way.
TEST_F(OutageTest, RouteCreatedWhenTheServerIsReadyAgainIsAdmittedWithinTwoSeconds) {
  if (!cluster().embedded()) GTEST_SKIP() << "the restart fault needs the embedded API server";
  const std::string router = "e2e-ready-again";
  const auto down = seconds(10);
  const std::string ns = Namespace("ready-again");
  CreateRoutes(ns, "seed", 10, {{"shard", "in"}});
  ReplicaSet& set = Replicas("ready-again", 3, DefaultFlags(router));
  set.StartAll();
  ExpectAllAdmitted({router}, 10);
  ASSERT_TRUE(WaitForWritesToSettle(cluster(), seconds(2), seconds(30)));
  RouteWatcher& watcher =
      *watchers_.emplace_back(std::make_unique<RouteWatcher>(cluster(), router));
  watcher.Start();
  const double reads_before = RouteReadsOk(set);

  const double probes_before = set.SumMetric("routestatus_api_readiness_probes_total");
  const SteadyClock::time_point restarting = SteadyClock::now() + down;
  auto restarted = cluster().RestartServer(down);
  ASSERT_TRUE(restarted.ok()) << restarted.status().ToString();
  const SteadyClock::time_point ready = *restarted;
  const std::string marker = "when-ready";
  ASSERT_NO_FATAL_FAILURE(CreateMarker(cluster(), ns, marker));
  double caches_ms = 0, admitted_ms = 0;
  ASSERT_NO_FATAL_FAILURE(CachesCurrent(set, restarting, ready, &caches_ms));
  ASSERT_NO_FATAL_FAILURE(Admitted(watcher, ready, ns + "/" + marker, &admitted_ms));
  ASSERT_TRUE(WaitForWritesToSettle(cluster(), seconds(2), seconds(30)));
  const double reads = RouteReadsOk(set) - reads_before;

  const double probes = set.SumMetric("routestatus_api_readiness_probes_total") - probes_before;
  Figure("down_ms", Ms(down));
  Figure("startup_ms", Ms(TestCluster::kRestartStartup));
  Figure("route_reads_ok_per_replica", reads / set.size());
  Figure("readiness_probes_per_replica", probes / set.size());
  EXPECT_LE(admitted_ms, 2000);
  EXPECT_LE(caches_ms, 2000);
  // Why 3 a replica: the watch (retried in place once /readyz says ready),
  // which gets a 410 (a fresh watch cache), then the streamed relist; and
  // one for a watch the server ended as it went down, re-opened before it
  // stopped listening (seen in some runs).
  EXPECT_LE(reads / set.size(), 3) << "a replica read more than it needed";
  // Why at most 2 x start-up / interval + 1: probes 0.5 s apart on average
  // while one request waits on its 503.
  EXPECT_LE(probes / set.size(), 7);
  EXPECT_EQ(watcher.Changes(ns + "/" + marker), 1);
  ExpectOneLinePairPerReplica(set);
}

// 3 replicas (default flags), 10 routes converged, then one change; the
// server restarts and stays down 32 s, longer than the lease interval (15 s
// by default) and than 30 s. No replica attempts a status write during the
// outage (their own counters, failures included); the caches are current
// and the first change after it, a route created then, is written exactly
// once, <= 2 s after the server is back, with at most one PUT per replica
// (one PUT in most runs: the figure put_attempts).
TEST_F(OutageTest, OutageLongerThanLeaseIntervalThenOneWrite) {
  if (!cluster().embedded()) GTEST_SKIP() << "the restart fault needs the embedded API server";
  const std::string router = "e2e-long-outage";
  const auto down = seconds(32);
  const std::string ns = Namespace("long-outage");
  CreateRoutes(ns, "seed", 10, {{"shard", "in"}});
  ReplicaSet& set = Replicas("long-outage", 3, DefaultFlags(router));
  set.StartAll();
  ExpectAllAdmitted({router}, 10);
  // Why: a replica that started after the leader wrote every route stays in
  // election until it sees a write through its watch, and then its first
  // change races the leader's (one 409); one change settles the roles, so
  // what follows measures the outage only.
  ASSERT_NO_FATAL_FAILURE(CreateMarker(cluster(), ns, "before-outage"));
  ExpectAllAdmitted({router}, 11);
  ASSERT_TRUE(WaitForWritesToSettle(cluster(), seconds(2), seconds(30)));
  RouteWatcher& watcher =
      *watchers_.emplace_back(std::make_unique<RouteWatcher>(cluster(), router));
  watcher.Start();
  const WriteCounts before = cluster().StatusWrites();
  const double replica_attempts_before = set.SumMetric("routestatus_status_writes_total");

  // New connections are refused for `down` from the restart on.
  const SteadyClock::time_point restarting = SteadyClock::now() + down;
  auto restarted = cluster().RestartServer(down);
  ASSERT_TRUE(restarted.ok()) << restarted.status().ToString();
  const SteadyClock::time_point ready = *restarted;
  for (int i = 0; i < set.size(); ++i) EXPECT_TRUE(set.at(i).Running()) << set.at(i).id();
  const double replica_attempts_during = set.SumMetric("routestatus_status_writes_total") -
                                         replica_attempts_before;
  // Why: created once the caches are current, the change reaches every
  // replica through its watch; created earlier, a replica that relists
  // before the leader may spend a conflicting PUT (the 3 s restart above
  // probes that case).
  double caches_ms = 0, admitted_ms = 0;
  ASSERT_NO_FATAL_FAILURE(CachesCurrent(set, restarting, ready, &caches_ms));
  const std::string marker = "after-outage";
  ASSERT_NO_FATAL_FAILURE(CreateMarker(cluster(), ns, marker));
  ASSERT_NO_FATAL_FAILURE(Admitted(watcher, ready, ns + "/" + marker, &admitted_ms));
  ExpectAllAdmitted({router}, 12, seconds(10));
  ASSERT_TRUE(WaitForWritesToSettle(cluster(), seconds(3), seconds(30)));
  const WriteCounts w = cluster().StatusWrites() - before;
  const double replica_attempts =
      set.SumMetric("routestatus_status_writes_total") - replica_attempts_before;
  Figure("down_ms", Ms(down));
  Figure("replica_write_attempts_during_outage", replica_attempts_during);
  Figure("writes_success", w.success);
  Figure("put_attempts", w.total());
  Figure("replica_write_attempts", replica_attempts);
  EXPECT_EQ(replica_attempts_during, 0) << "a replica tried to write while the server was down";
  Figure("writes_conflict", w.conflict);
  // Why not exactly one PUT: after a whole-server outage every replica
  // follows, and the one whose jittered takeover deadline (D x (1 + U):
  // 500-1000 ms) comes first writes. Another whose deadline falls within
  // that write's PUT and watch echo (about 10 ms here) writes too and gets
  // a 409: about 3 x 10 / 500 = 6% of runs (CI at 22f82d8 saw one). Each
  // replica spends at most one PUT on it (one probe at a time, then the
  // lost-write pause), and exactly one write lands.
  EXPECT_EQ(w.success, 1) << "the first change after the outage was not written exactly once";
  EXPECT_EQ(w.other, 0);
  EXPECT_LE(w.total(), set.size()) << "a replica spent more than one PUT on the first change";
  EXPECT_EQ(replica_attempts, w.total());
  EXPECT_EQ(watcher.Changes(ns + "/" + marker), 1);
  EXPECT_LE(caches_ms, 2000);
  EXPECT_LE(admitted_ms, 2000);
  ExpectOneLinePairPerReplica(set);
}

}  // namespace
}  // namespace routestatus::e2e
