// Scenarios 3 and 7 of issue 8: routers that share a name but disagree
// (bounded writes, then silence, a warning and a metric), and routes that
// leave the shard (our entry removed once) plus the `clear` command.

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <ctime>
#include <regex>
#include <thread>

#include <gtest/gtest.h>

#include "e2e/suite/e2e_test_base.h"

namespace routestatus::e2e {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

class ContentionTest : public E2eTest {};

// Seconds since local midnight of the earliest glog line among `lines`
// ("id: W20261201 01:23:45.678901 ...", with or without the year), or -1
// when none parses.
double EarliestLogSecondOfDay(const std::vector<std::string>& lines) {
  static const std::regex kStamp(R"([IWEF]\d{4,8} (\d\d):(\d\d):(\d\d)\.(\d{6}))");
  double earliest = -1;
  for (const std::string& line : lines) {
    std::smatch m;
    if (!std::regex_search(line, m, kStamp)) continue;
    double t = std::stoi(m[1]) * 3600.0 + std::stoi(m[2]) * 60.0 + std::stoi(m[3]) +
               std::stoi(m[4]) / 1e6;
    if (earliest < 0 || t < earliest) earliest = t;
  }
  return earliest;
}

// Seconds since local midnight of `t` (glog stamps local time).
double SecondOfDay(std::chrono::system_clock::time_point t) {
  std::time_t secs = std::chrono::system_clock::to_time_t(t);
  std::tm local{};
  localtime_r(&secs, &local);
  double frac = std::chrono::duration<double>(t - std::chrono::system_clock::from_time_t(secs)).count();
  return local.tm_hour * 3600.0 + local.tm_min * 60.0 + local.tm_sec + frac;
}

// The status writes of route `ns`/`name` that landed after `since` (a
// resourceVersion of that route), read from the server's watch history:
// one MODIFIED event per write that changed the route. Counts what the
// server stored, whoever wrote it, without sampling counters around a
// write of our own (the replica's write could land before the sample).
// -1 when the watch fails.
int WritesSince(TestCluster& cluster, const std::string& ns, const std::string& name,
                const std::string& since) {
  kubeclient::WatchOptions o;
  o.resource_version = since;
  o.field_selector = "metadata.name=" + name;
  o.allow_bookmarks = false;
  o.timeout = std::chrono::seconds(2);  // the history is replayed at once
  auto stream = cluster.client().Watch(kubeclient::RoutesResource(), ns, o);
  if (!stream.ok()) return -1;
  int writes = 0;
  while (true) {
    auto event = (*stream)->Next();
    if (!event.ok()) return event.status().code() == StatusCode::kClosed ? writes : -1;
    if (event->type == kubeclient::WatchEventType::kModified) ++writes;
    if (event->type == kubeclient::WatchEventType::kError) return -1;
  }
}

// 3 replicas of one router name with different hostname templates, 20
// routes without spec.host. Timeline (window I = quiet + 10 s, first flush at
// 2I): the fight is bounded (<= 30 writes, issue 13, even for the replica
// whose list comes after another has written every route; `make soak`
// repeats this test 10 times) and settles; the first
// contention warning is logged during the fight; 0 writes
// during the quiet period; another process clears route 9's status -> exactly
// one write re-creates it; the contention metric is set during the window
// and the warning is logged (once) at the flush.
TEST_F(ContentionTest, FightingRoutersAreBoundedThenQuiet) {
  std::string ns = Namespace("fight");
  CreateHostlessRoutes(ns, "r", 20);
  if (HasFatalFailure()) return;
  const int interval_s = env().quiet_seconds + 10;
  WriteCounts before = cluster().StatusWrites();
  ReplicaSet& set = Replicas("fight", 0, ReplicaOptions());
  for (int i = 0; i < 3; ++i) {
    set.Add("fight-" + std::to_string(i),
            TestReplicaOptions("e2e-fight",
                               {{"hostname-template",
                                 "${name}-${namespace}.apps-" + std::to_string(i) + ".example.com"},
                                {"contention-interval", std::to_string(interval_s) + "s"}}));
  }
  // The start-up race of issue 13, every run: the first replica to list
  // routes gets its list 1.5 s late, after another replica has written every
  // route. It must notice the fight from what it lists instead of
  // overwriting every route once.
  if (cluster().embedded()) {
    ASSERT_TRUE(cluster()
                    .AddFault({{"verb", "LIST"}, {"resource", "routes"}, {"count", 1},
                               {"code", 0}, {"latencyMs", 1500}})
                    .ok());
  }
  auto start = std::chrono::steady_clock::now();
  const auto start_wall = std::chrono::system_clock::now();
  set.StartAll();
  // Every route gets some entry of ours (whichever replica's host).
  std::string why;
  ASSERT_TRUE(WaitForRoutes(
      cluster(), [](const kubeclient::Route& r) { return IsAdmittedBy(r, "e2e-fight"); },
      seconds(30), 20, &why))
      << why;
  ASSERT_TRUE(WaitForWritesToSettle(cluster(), seconds(2), seconds(interval_s)));
  WriteCounts fight = cluster().StatusWrites() - before;
  double settled_after =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  Figure("fight_writes_success", fight.success);
  Figure("fight_writes_conflict", fight.conflict);
  Figure("fight_settled_after_seconds", settled_after);
  // Issue 13: <= 30. Before the initial list was read as contention
  // evidence, the late-listing replica overwrote every route once (40).
  EXPECT_LE(fight.success, 30) << "writes in the first window of a fight";
  EXPECT_LT(settled_after, 2 * interval_s - env().quiet_seconds - 4)
      << "the fight did not settle early in the window; the rest of the timeline cannot run";

  // The operator is told at once: a replica logs the contention warning
  // during the fight, not at the window's flush. The delay is counted from
  // the replicas' start (an upper bound on the delay from the first
  // contended write).
  std::vector<std::string> first_warnings;
  WaitFor(
      [&] {
        first_warnings = set.GrepLogs("another writer using router name");
        return !first_warnings.empty();
      },
      seconds(5));
  ASSERT_FALSE(first_warnings.empty()) << "no contention warning during the fight";
  double warned_at = EarliestLogSecondOfDay(first_warnings);
  ASSERT_GE(warned_at, 0) << first_warnings.front();
  double warning_delay = warned_at - SecondOfDay(start_wall);
  if (warning_delay < -43200) warning_delay += 86400;  // across midnight
  Figure("warning_after_start_seconds", warning_delay);
  EXPECT_LT(warning_delay, settled_after + 2) << "the warning came after the fight settled";

  // The contention metric is set while the window lasts.
  double contentions = set.SumMetric("routestatus_contentions_current_window");
  double cutoff = set.SumMetric("routestatus_contention_cutoff_active");
  Figure("contentions_current_window_sum", contentions);
  Figure("cutoff_active_replicas", cutoff);
  EXPECT_GT(contentions, 0);

  double quiet = WritesDuring(cluster(), Quiet());
  Figure("quiet_writes", quiet);
  EXPECT_EQ(quiet, 0) << "writes during " << env().quiet_seconds << " s after the fight settled";

  // Another process clears route 9's status: exactly one write re-creates
  // our entry (creating is never blocked; changing it back is). Counted
  // from the server's history after our clear's version (issue 23: a
  // before/after sample of the server's counters around our own clear
  // raced the replica, whose write could land before the sample, and
  // counted 0 in 2 of 4 runs against kube-apiserver 1.26).
  auto cleared = cluster().UpdateRouteStatus(
      ns, "r-9", [](nlohmann::json& r) { r["status"] = {{"ingress", nlohmann::json::array()}}; });
  ASSERT_TRUE(cleared.ok()) << cleared.status().ToString();
  const std::string cleared_at = (*cleared)["metadata"].value("resourceVersion", "");
  ASSERT_FALSE(cleared_at.empty());
  ASSERT_TRUE(WaitForRoutes(
      cluster(), [](const kubeclient::Route& r) { return IsAdmittedBy(r, "e2e-fight"); },
      seconds(10), 20, &why))
      << why;
  ASSERT_TRUE(WaitForWritesToSettle(cluster(), seconds(2), seconds(10)));
  const int recreate = WritesSince(cluster(), ns, "r-9", cleared_at);
  Figure("recreate_writes_success", recreate);
  EXPECT_EQ(recreate, 1) << "writes re-creating route 9's entry (-1: the watch failed)";
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_LT(elapsed, seconds(2 * interval_s)) << "the clear ran after the window's flush";

  // The warning is logged at the window's flush (2 x interval after start).
  bool warned = WaitFor(
      [&] { return set.SumMetric("routestatus_contention_warnings_total") >= 1; },
      seconds(2 * interval_s + 10));
  EXPECT_TRUE(warned) << "routestatus_contention_warnings_total stayed 0";
  std::vector<std::string> lines = set.GrepLogs("status contention(s) in the last");
  Figure("warning_lines", static_cast<double>(lines.size()));
  EXPECT_GE(lines.size(), 1u);
  if (!lines.empty()) std::cout << "contention warning: " << lines.front().substr(0, 600) << "\n";
}

// Busy loops on this machine's cores for as long as the object lives, at
// most `limit`: CPU load we create and bound in time, beside the replicas.
class BusyLoops {
 public:
  BusyLoops(int n, std::chrono::milliseconds limit) {
    const auto until = std::chrono::steady_clock::now() + limit;
    for (int i = 0; i < n; ++i) {
      threads_.emplace_back([this, until] {
        volatile uint64_t x = 0;
        while (!stop_.load(std::memory_order_relaxed) &&
               std::chrono::steady_clock::now() < until) {
          for (int k = 0; k < 100000; ++k) x = x + static_cast<uint64_t>(k);
        }
      });
    }
  }
  ~BusyLoops() {
    stop_ = true;
    for (auto& t : threads_) t.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

// Issue 59: two routers fighting on a loaded machine. 3 replicas of one
// router name with different hostname templates start together on 20
// routes without spec.host, with the product's default flags besides
// --lease-interval=5s --contention-interval=1m, while E2E_FIGHT_LOAD_LOOPS
// (default 2) busy loops run beside them for the first 30 s, and the last
// replica's process starts E2E_FIGHT_LATE_MS (default 1500) later. Why the
// late start: that is what a loaded node does to processes started
// together (and what the harness does when a metrics port was taken); the
// busy loops alone did not spread the starts here (0.0-0.2 s; 20 writes in
// 10 of 10 runs), while with the third replica 1.5 s late the fleet wrote
// 40 in 8 of 10 (the late one read the first writer's entries as a
// previous configuration's and overwrote all 20). The status writes the server stored in those
// 30 s are the figure; `make soak` runs it 10 times and wants at most 30
// (1.5 a route) in at least 9 (e2e/suite/fight_soak_summary.py). One run
// here asserts what every run must: each replica writes each route at most
// once (60), and the fight ends.
TEST_F(ContentionTest, LoadedFightWithDefaultLeaseFlags) {
  const char* loops_env = std::getenv("E2E_FIGHT_LOAD_LOOPS");
  const int loops = loops_env != nullptr ? std::atoi(loops_env) : 2;
  const char* late_env = std::getenv("E2E_FIGHT_LATE_MS");
  const int late_ms = late_env != nullptr ? std::atoi(late_env) : 1500;
  std::string ns = Namespace("loaded");
  CreateHostlessRoutes(ns, "r", 20);
  if (HasFatalFailure()) return;
  WriteCounts before = cluster().StatusWrites();
  ReplicaSet& set = Replicas("loaded", 0, ReplicaOptions());
  for (int i = 0; i < 3; ++i) {
    ReplicaOptions o;
    o.router_name = "e2e-loaded";
    o.flags = {{"router-canonical-hostname", "router-e2e-loaded.apps.example.com"},
               {"hostname-template",
                "${name}-${namespace}.apps-" + std::to_string(i) + ".example.com"},
               {"lease-interval", "5s"},
               {"contention-interval", "1m"},
               {"v", "2"}};
    if (i == 2 && late_ms > 0) {
      o.launch_prefix = {"/bin/sh", "-c",
                         "sleep " + std::to_string(late_ms / 1000.0) + "; exec \"$0\" \"$@\""};
    }
    set.Add("loaded-" + std::to_string(i), o);
  }
  const auto window = seconds(30);
  const auto start = std::chrono::steady_clock::now();
  {
    BusyLoops load(loops, window);
    set.StartAll();
    std::this_thread::sleep_until(start + window);
  }
  const WriteCounts fight = cluster().StatusWrites() - before;
  Figure("loaded_fight_writes_success", fight.success);
  Figure("loaded_fight_writes_conflict", fight.conflict);
  Figure("loaded_fight_load_loops", loops);
  Figure("loaded_fight_late_ms", late_ms);
  for (int i = 0; i < set.size(); ++i) {
    const ReplicaWrites w = set.at(i).Writes();
    Figure("loaded_fight_writes_by_" + std::to_string(i), w.success);
  }
  EXPECT_LE(fight.success, 60) << "a replica wrote a route twice in the first 30 s";
  // The fight ends: nothing is written in the next 5 s.
  EXPECT_EQ(WritesDuring(cluster(), seconds(5)), 0) << "the fight went on after 30 s";
}

// A route whose labels move it out of the shard loses our entry with exactly
// one write; `clear` then removes the router name everywhere and leaves
// other routers' entries alone.
TEST_F(ContentionTest, ShardExitAndClear) {
  std::string ns = Namespace("shard");
  CreateRoutes(ns, "r", 8, {{"shard", "in"}});
  ReplicaSet& shard =
      Replicas("shard", 2, TestReplicaOptions("e2e-shard", {{"route-labels", "shard=in"}}));
  ReplicaSet& keep = Replicas("keep", 1, TestReplicaOptions("e2e-keep"));
  shard.StartAll();
  keep.StartAll();
  ExpectAllAdmitted({"e2e-shard", "e2e-keep"}, 8);
  ASSERT_TRUE(WaitForWritesToSettle(cluster(), seconds(2), seconds(20)));

  RouteWatcher& watcher = *watchers_.emplace_back(std::make_unique<RouteWatcher>(cluster(), "e2e-shard"));
  watcher.Start();
  WriteCounts before = cluster().StatusWrites();
  ASSERT_TRUE(cluster()
                  .UpdateRoute(ns, "r-3",
                               [](nlohmann::json& r) { r["metadata"]["labels"]["shard"] = "out"; })
                  .ok());
  auto removed = watcher.WaitForEntry(
      ns + "/r-3", [](const auto& e) { return !e.has_value(); }, seconds(10));
  EXPECT_TRUE(removed.has_value()) << "our entry stayed on a route that left the shard";
  ASSERT_TRUE(WaitForWritesToSettle(cluster(), seconds(2), seconds(10)));
  WriteCounts exit = cluster().StatusWrites() - before;
  Figure("shard_exit_writes_success", exit.success);
  Figure("shard_exit_writes_conflict", exit.conflict);
  Figure("shard_exit_entry_changes", watcher.Changes(ns + "/r-3"));
  EXPECT_EQ(exit.success, 1);
  EXPECT_EQ(watcher.Changes(ns + "/r-3"), 1);

  // Decommission e2e-shard: stop its replicas, then `clear`.
  for (int i = 0; i < shard.size(); ++i) EXPECT_EQ(shard.at(i).Stop(), 0);
  WriteCounts before_clear = cluster().StatusWrites();
  ReplicaOptions clear_options = TestReplicaOptions("e2e-shard");
  clear_options.args = {"clear"};
  Replica& clear = shard.Add("clear", clear_options);
  clear.Start();
  EXPECT_EQ(clear.WaitExit(seconds(30)), 0) << clear.Log();
  WriteCounts cleared = cluster().StatusWrites() - before_clear;
  Figure("clear_writes_success", cleared.success);
  EXPECT_EQ(cleared.success, 7) << "one write per route that had an e2e-shard entry";
  auto routes = cluster().ListRoutes();
  ASSERT_TRUE(routes.ok());
  for (const auto& r : *routes) {
    EXPECT_FALSE(r.FindIngress("e2e-shard").has_value()) << r.Key();
    EXPECT_TRUE(IsAdmittedBy(r, "e2e-keep")) << r.Key();
  }
  EXPECT_EQ(WritesDuring(cluster(), seconds(2)), 0);
}

}  // namespace
}  // namespace routestatus::e2e
