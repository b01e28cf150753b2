#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "e2e/harness/cluster.h"
#include "e2e/harness/replica.h"
#include "e2e/harness/route_watcher.h"

namespace routestatus::e2e {

// Fixture of every scenario: a fresh TestCluster per test (a new
// local-apiserver unless E2E_KUBECONFIG is set), replica sets that are
// stopped before the cluster, and on failure the tails of every log printed
// and the temp dir kept. Figures go to stdout as "E2E-FIGURE <test> k=v"
// lines and to the gtest XML as properties.
class E2eTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  TestCluster& cluster() { return *cluster_; }
  const E2eEnv& env() const { return env_; }
  std::chrono::milliseconds Quiet() const { return std::chrono::seconds(env_.quiet_seconds); }

  // A namespace (created now) for this test's routes.
  std::string Namespace(const std::string& base, const std::map<std::string, std::string>& labels = {});
  // A replica set owned by the fixture (not started).
  ReplicaSet& Replicas(const std::string& prefix, int n, const ReplicaOptions& options);
  // Records one measured figure.
  void Figure(const std::string& key, double value);
  // Creates `count` routes "<prefix>-<i>" in `ns` with host
  // "<prefix>-<i>.<ns>.apps.example.com"; ASSERTs success.
  void CreateRoutes(const std::string& ns, const std::string& prefix, int count,
                    const std::map<std::string, std::string>& labels = {});
  // Creates `count` routes "<prefix>-<i>" in `ns` without spec.host (the
  // hostname template decides it); ASSERTs success.
  void CreateHostlessRoutes(const std::string& ns, const std::string& prefix, int count);
  // Waits (bounded) until every route has an admitted entry of each of
  // `router_names`; on timeout adds a failure naming what is missing.
  void ExpectAllAdmitted(const std::vector<std::string>& router_names, int expected_routes,
                         std::chrono::milliseconds timeout = std::chrono::seconds(60));

  E2eEnv env_;
  std::unique_ptr<TestCluster> cluster_;
  std::vector<std::unique_ptr<ReplicaSet>> sets_;
  std::vector<std::unique_ptr<RouteWatcher>> watchers_;
};

}  // namespace routestatus::e2e
