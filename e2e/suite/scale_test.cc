// Scenarios 4 and 8 of issue 8: writes per change do not grow with the
// number of replicas, and a random stress load converges with <= 1.1
// writes per change. Sizes: the in full with E2E_FULL=1; `make test`
// runs the scale scenario in full (200 changes at N = 1, 3, 10) and stress
// for 15 s instead of 60 s.

#include <gtest/gtest.h>

#include "e2e/harness/route_churn.h"
#include "e2e/suite/e2e_test_base.h"

namespace routestatus::e2e {
namespace {

using std::chrono::seconds;

// Every applied change was accepted, then every route reached its desired
// state for `router` and the server saw no status write for 3 s. Call with
// ASSERT_NO_FATAL_FAILURE.
void ExpectAcceptedAndConverged(TestCluster& cluster, const std::vector<AppliedChange>& applied,
                                const std::string& router) {
  int failed = 0;
  for (const auto& a : applied) failed += a.status.ok() ? 0 : 1;
  ASSERT_EQ(failed, 0) << "changes the API server rejected";
  std::string why;
  ASSERT_TRUE(WaitForRoutes(
      cluster, [&](const kubeclient::Route& r) { return InDesiredState(r, router); }, seconds(60),
      -1, &why))
      << why;
  ASSERT_TRUE(WaitForWritesToSettle(cluster, seconds(3), seconds(30)));
}

class ScaleTest : public E2eTest, public ::testing::WithParamInterface<int> {};

// N replicas; 10 routes converge first (the start-up election, reported
// separately); then 200 random changes (create, host change, label change
// in/out of the shard, delete) at 25/s. Successful writes per change that
// needs a write <= 1.05, PUT attempts per such change <= 1.1.
TEST_P(ScaleTest, WritesPerChangeDoNotGrowWithReplicas) {
  const int n = GetParam();
  const std::string router = "e2e-scale";
  std::string ns = Namespace("scale");
  std::vector<std::string> seeds;
  for (int i = 0; i < 10; ++i) seeds.push_back("seed-" + std::to_string(i));
  CreateRoutes(ns, "seed", 10, {{"shard", "in"}});
  WriteCounts start = cluster().StatusWrites();
  ReplicaSet& set = Replicas("scale", n, TestReplicaOptions(router, {{"route-labels", "shard!=out"}}));
  set.StartAll();
  std::string why;
  ASSERT_TRUE(WaitForRoutes(
      cluster(), [&](const kubeclient::Route& r) { return InDesiredState(r, router); }, seconds(60),
      10, &why))
      << why;
  ASSERT_TRUE(WaitForWritesToSettle(cluster(), seconds(2), seconds(30)));
  WriteCounts election = cluster().StatusWrites() - start;
  Figure("election_writes_success", election.success);
  Figure("election_put_attempts", election.total());

  const int changes_count = 200;
  std::vector<RouteChange> changes = RandomChanges(ns, "r", changes_count, 1000 + n, {}, seeds);
  const int needing = CountNeedingWrites(changes);
  WriteCounts before = cluster().StatusWrites();
  auto applied = ApplyChanges(cluster(), changes, 25);
  ASSERT_NO_FATAL_FAILURE(ExpectAcceptedAndConverged(cluster(), applied, router));
  WriteCounts w = cluster().StatusWrites() - before;
  Figure("replicas", n);
  Figure("changes", changes_count);
  Figure("changes_needing_write", needing);
  Figure("writes_success", w.success);
  Figure("writes_conflict", w.conflict);
  Figure("put_attempts", w.total());
  Figure("writes_per_change", w.success / needing);
  Figure("puts_per_change", w.total() / needing);
  EXPECT_LE(w.success / needing, 1.05);
  EXPECT_LE(w.total() / needing, 1.1);
}

INSTANTIATE_TEST_SUITE_P(Replicas, ScaleTest, ::testing::Values(1, 3, 10),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return "N" + std::to_string(info.param);
                         });

class StressTest : public E2eTest {};

// 5 replicas; random creates, host updates and deletes at 50 changes/s
// for 15 s (60 s with E2E_FULL=1) -> converges; successful writes per change
// <= 1.1 (over every change, as the issue states; also reported per change
// that needs a write).
TEST_F(StressTest, RandomChurnFiftyPerSecondFiveReplicas) {
  const std::string router = "e2e-stress";
  const int seconds_of_load = env().full ? 60 : 15;
  std::string ns = Namespace("stress");
  ReplicaSet& set = Replicas("stress", 5, TestReplicaOptions(router));
  set.StartAll();
  ASSERT_TRUE(set.WaitReady(seconds(30))) << "replicas not ready";
  ChurnMix mix;
  mix.create = 4;
  mix.host_change = 4;
  mix.label_change = 0;
  mix.del = 2;
  std::vector<RouteChange> changes = RandomChanges(ns, "r", 50 * seconds_of_load, 42, mix);
  const int needing = CountNeedingWrites(changes);
  WriteCounts before = cluster().StatusWrites();
  auto t0 = std::chrono::steady_clock::now();
  auto applied = ApplyChanges(cluster(), changes, 50);
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_NO_FATAL_FAILURE(ExpectAcceptedAndConverged(cluster(), applied, router));
  WriteCounts w = cluster().StatusWrites() - before;
  Figure("changes", static_cast<double>(changes.size()));
  Figure("apply_seconds", took);
  Figure("changes_needing_write", needing);
  Figure("writes_success", w.success);
  Figure("writes_conflict", w.conflict);
  Figure("put_attempts", w.total());
  Figure("writes_per_change", w.success / static_cast<double>(changes.size()));
  Figure("writes_per_needing_change", w.success / needing);
  EXPECT_LE(w.success / static_cast<double>(changes.size()), 1.1);
  EXPECT_LE(w.success / needing, 1.1) << "stricter: per change that needs a write";
}

}  // namespace
}  // namespace routestatus::e2e
