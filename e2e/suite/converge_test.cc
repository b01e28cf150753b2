// Scenarios 1 and 2 of issue 8: convergence of one router name with 3
// replicas, and of 3 router names with 2 replicas each; writes counted by the
// API server.

#include <gtest/gtest.h>

#include "e2e/suite/e2e_test_base.h"

namespace routestatus::e2e {
namespace {

using std::chrono::seconds;

class ConvergeTest : public E2eTest {};

// 3 replicas, one router name, 10 routes -> every route Admitted by our
// router name with exactly 10 successful status writes; then no write at all
// during the quiet period.
TEST_F(ConvergeTest, ThreeReplicasTenRoutesExactlyTenWrites) {
  std::string ns = Namespace("converge");
  CreateRoutes(ns, "r", 10);
  WriteCounts before = cluster().StatusWrites();
  ReplicaSet& set = Replicas("default", 3, TestReplicaOptions("e2e-default"));
  set.StartAll();
  ExpectAllAdmitted({"e2e-default"}, 10);
  ASSERT_TRUE(WaitForWritesToSettle(cluster(), seconds(2), seconds(30)));
  WriteCounts writes = cluster().StatusWrites() - before;
  Figure("writes_success", writes.success);
  Figure("writes_conflict", writes.conflict);
  Figure("writes_other", writes.other);
  EXPECT_EQ(writes.success, 10);
  double quiet = WritesDuring(cluster(), Quiet());
  Figure("quiet_writes", quiet);
  Figure("quiet_seconds", env().quiet_seconds);
  EXPECT_EQ(quiet, 0) << "status writes during " << env().quiet_seconds << " s of quiet";
  EXPECT_GE(set.FindLeader(), 0) << "no replica reports itself leader";
}

// 3 router names x 2 replicas, 20 routes -> every route has 3 admitted
// entries, and writes == 3 x 20.
TEST_F(ConvergeTest, ThreeRouterNamesTwoReplicasEach) {
  std::string ns = Namespace("names");
  CreateRoutes(ns, "r", 20);
  WriteCounts before = cluster().StatusWrites();
  std::vector<std::string> names = {"e2e-a", "e2e-b", "e2e-c"};
  for (const auto& name : names) Replicas(name, 2, TestReplicaOptions(name)).StartAll();
  ExpectAllAdmitted(names, 20);
  ASSERT_TRUE(WaitForWritesToSettle(cluster(), seconds(2), seconds(30)));
  WriteCounts writes = cluster().StatusWrites() - before;
  Figure("writes_success", writes.success);
  Figure("writes_conflict", writes.conflict);
  EXPECT_EQ(writes.success, 3 * 20);
  auto routes = cluster().ListRoutes();
  ASSERT_TRUE(routes.ok());
  for (const auto& r : *routes) {
    EXPECT_EQ(r.Ingress().size(), 3u) << r.Key();
    for (const auto& name : names) {
      const auto e = r.FindIngress(name);
      ASSERT_TRUE(e.has_value()) << r.Key() << " " << name;
      EXPECT_EQ(e->host, r.spec.host) << r.Key();
      EXPECT_EQ(e->router_canonical_hostname, "router-" + name + ".apps.example.com");
    }
  }
}

}  // namespace
}  // namespace routestatus::e2e
