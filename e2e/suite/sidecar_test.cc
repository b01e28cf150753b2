// Issue 60: replicas deployed beside the router they report for
// (--router-ready-url): a replica whose router does not serve writes nothing
// and takes over nothing; another replica takes over within the failover
// bound; with every router down nothing is written and no replica is
// ready; a router back writes what changed meanwhile, once each.

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "e2e/harness/route_churn.h"
#include "e2e/harness/stand_in_router.h"
#include "e2e/suite/e2e_test_base.h"

namespace routestatus::e2e {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using SteadyClock = std::chrono::steady_clock;

class SidecarTest : public E2eTest {
 protected:
  // N replicas of `router`, each beside a stand-in router of its own; the
  // product's defaults plus the router's readiness URL.
  ReplicaSet& Sidecars(const std::string& router, int n) {
    ReplicaSet& set = Replicas(router, 0, ReplicaOptions{});
    for (int i = 0; i < n; ++i) {
      auto& stand_in = *stand_ins_.emplace_back(std::make_unique<StandInRouter>());
      EXPECT_TRUE(stand_in.Start().ok());
      ReplicaOptions o;
      o.router_name = router;
      o.flags = {{"router-canonical-hostname", "router-" + router + ".apps.example.com"},
                 {"router-ready-url", stand_in.ReadyUrl()}};
      set.Add(router + "-" + std::to_string(i), o);
    }
    return set;
  }

  // Waits (bounded) until replica `i` reports its router as `ready`.
  bool WaitRouterReady(ReplicaSet& set, int i, bool ready) {
    return WaitFor([&] { return RouterReadyMetric(set.at(i)) == (ready ? 1 : 0); }, seconds(10),
                   milliseconds(50));
  }

  static double RouterReadyMetric(Replica& r) {
    auto samples = r.Scrape();
    if (!samples.ok()) return -1;
    for (const auto& s : *samples) {
      if (s.name == "routestatus_router_ready") return s.value;
    }
    return -1;
  }

  void CreateRoute(const std::string& ns, const std::string& name) {
    RouteChange c;
    c.kind = ChangeKind::kCreate;
    c.ns = ns;
    c.name = name;
    c.host = name + "." + ns + ".apps.example.com";
    auto applied = ApplyChanges(cluster(), {c}, 0);
    ASSERT_TRUE(applied.at(0).status.ok()) << applied.at(0).status.ToString();
  }

  std::vector<std::unique_ptr<StandInRouter>> stand_ins_;
};

TEST_F(SidecarTest, OnlyAReplicaWhoseRouterServesReports) {
  const std::string router = "e2e-sidecar";
  const std::string ns = Namespace("sidecar");
  CreateRoutes(ns, "r", 10);
  ReplicaSet& set = Sidecars(router, 3);
  set.StartAll();
  ExpectAllAdmitted({router}, 10);
  ASSERT_TRUE(WaitForWritesToSettle(cluster(), seconds(2), seconds(30)));
  RouteWatcher& watcher = *watchers_.emplace_back(std::make_unique<RouteWatcher>(cluster(), router));
  watcher.Start();

  // 1. The leader's router stops: that replica stops reporting and another
  // takes the next change within the failover bound.
  int leader = -1;
  ASSERT_TRUE(WaitFor([&] { return (leader = set.FindLeader()) >= 0; }, seconds(10),
                      milliseconds(50)));
  stand_ins_[static_cast<size_t>(leader)]->Stop();
  ASSERT_TRUE(WaitRouterReady(set, leader, false)) << "the replica did not notice its router";
  EXPECT_FALSE(set.at(leader).Ready()) << "/readyz says ready with the router down";
  const double leader_writes = set.at(leader).Writes().attempts();
  const auto changed = SteadyClock::now();
  ASSERT_NO_FATAL_FAILURE(CreateRoute(ns, "after-leader-router-down"));
  auto admitted = watcher.WaitForEntry(ns + "/after-leader-router-down",
                                       [](const auto& e) { return e.has_value(); }, seconds(10));
  ASSERT_TRUE(admitted.has_value()) << "no replica took over";
  const double failover_ms =
      std::chrono::duration<double, std::milli>(*admitted - changed).count();
  Figure("failover_after_router_down_ms", failover_ms);
  EXPECT_LE(failover_ms, 3000);
  EXPECT_EQ(set.at(leader).Writes().attempts(), leader_writes)
      << "the replica whose router is down wrote";

  // 2. Every router down: nothing is written, no replica is ready.
  for (auto& s : stand_ins_) s->Stop();
  for (int i = 0; i < set.size(); ++i) ASSERT_TRUE(WaitRouterReady(set, i, false)) << i;
  const WriteCounts before = cluster().StatusWrites();
  for (const char* name : {"while-down-1", "while-down-2", "while-down-3"}) {
    ASSERT_NO_FATAL_FAILURE(CreateRoute(ns, name));
  }
  std::this_thread::sleep_for(seconds(5));
  EXPECT_EQ((cluster().StatusWrites() - before).total(), 0) << "written with every router down";
  for (int i = 0; i < set.size(); ++i) EXPECT_FALSE(set.at(i).Ready()) << set.at(i).id();
  EXPECT_GT(set.SumMetric("routestatus_status_writes_withheld_total"), 0);

  // 3. One router back: the changes made meanwhile are written, once each.
  const int back = (leader + 1) % set.size();
  ASSERT_TRUE(stand_ins_[static_cast<size_t>(back)]->Start().ok());
  const auto restarted = SteadyClock::now();
  ASSERT_TRUE(WaitRouterReady(set, back, true));
  Figure("router_back_to_replica_reporting_ms",
         std::chrono::duration<double, std::milli>(SteadyClock::now() - restarted).count());
  double written_ms = 0;
  for (const char* name : {"while-down-1", "while-down-2", "while-down-3"}) {
    auto e = watcher.WaitForEntry(ns + "/" + name, [](const auto& x) { return x.has_value(); },
                                  seconds(10));
    EXPECT_TRUE(e.has_value()) << name << " was not written when a router came back";
    if (e) {
      written_ms = std::max(written_ms,
                            std::chrono::duration<double, std::milli>(*e - restarted).count());
    }
  }
  Figure("router_back_to_changes_written_ms", written_ms);
  ASSERT_TRUE(WaitForWritesToSettle(cluster(), seconds(2), seconds(30)));
  const WriteCounts w = cluster().StatusWrites() - before;
  Figure("writes_after_router_back", w.success);
  EXPECT_EQ(w.success, 3) << "one write per change made while every router was down";
  EXPECT_TRUE(set.at(back).Ready());
}

// Every router flaps (ready, then not, each for 1 s; the three out of
// phase) while 20 routes are created at 2 a second: each is written once,
// and none twice.
TEST_F(SidecarTest, FlappingRoutersWriteOncePerChange) {
  const std::string router = "e2e-flap";
  const std::string ns = Namespace("flap");
  ReplicaSet& set = Sidecars(router, 3);
  set.StartAll();
  for (int i = 0; i < set.size(); ++i) ASSERT_TRUE(WaitRouterReady(set, i, true)) << i;
  RouteWatcher& watcher = *watchers_.emplace_back(std::make_unique<RouteWatcher>(cluster(), router));
  watcher.Start();
  const WriteCounts before = cluster().StatusWrites();
  std::atomic<bool> flapping{true};
  std::thread flapper([&] {
    for (int tick = 0; flapping.load(); ++tick) {
      for (size_t i = 0; i < stand_ins_.size(); ++i) {
        stand_ins_[i]->SetReady(((tick + static_cast<int>(i)) / 2) % 2 == 0);
      }
      std::this_thread::sleep_for(milliseconds(500));
    }
  });
  std::vector<std::string> names;
  for (int i = 0; i < 20; ++i) {
    names.push_back("flap-" + std::to_string(i));
    CreateRoute(ns, names.back());
    std::this_thread::sleep_for(milliseconds(500));
  }
  flapping = false;
  flapper.join();
  for (auto& r : stand_ins_) r->SetReady(true);
  ExpectAllAdmitted({router}, 20, seconds(30));
  ASSERT_TRUE(WaitForWritesToSettle(cluster(), seconds(2), seconds(30)));
  const WriteCounts w = cluster().StatusWrites() - before;
  Figure("writes_success", w.success);
  Figure("writes_conflict", w.conflict);
  Figure("withheld", set.SumMetric("routestatus_status_writes_withheld_total"));
  EXPECT_EQ(w.success, 20) << "more than one write per change";
  for (const auto& name : names) EXPECT_EQ(watcher.Changes(ns + "/" + name), 1) << name;
}

}  // namespace
}  // namespace routestatus::e2e
