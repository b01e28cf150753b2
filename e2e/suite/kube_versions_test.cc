// Issue 57: a fleet syncs, admits and writes once per change whatever a
// Kubernetes version answers to a streamed initial state (a watch list,
// sendInitialEvents=true), as test/apiserver/golden/kube-apiserver-1.32/ recorded it:
// 1.27+ with WatchList streams (1.32 adds a list blueprint to the end
// bookmark), 1.33 answers 422 (its WatchList gate is off), 1.32 over an
// etcd without RequestWatchProgress answers 200 then a 500 ERROR event, and
// 1.26 answers 422 (resourceVersionMatch is forbidden for watch). The
// replicas' metrics say how each got its initial state.

#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "e2e/suite/e2e_test_base.h"

namespace routestatus::e2e {
namespace {

using std::chrono::seconds;

// One server behaviour: the local-apiserver flags that give it, how the
// replicas must get their initial state, and the fallback they must count.
struct ServerMode {
  std::string name;
  std::vector<std::string> apiserver_args;
  std::string source;    // routestatus_informer_initial_states_total{source}
  std::string fallback;  // routestatus_informer_stream_fallbacks_total{reason}; "" = none
};

std::ostream& operator<<(std::ostream& out, const ServerMode& m) { return out << m.name; }

class KubeVersionsTest : public E2eTest, public ::testing::WithParamInterface<ServerMode> {
 protected:
  void SetUp() override {
    env_ = E2eEnvFromProcess();
    if (!env_.kubeconfig.empty()) GTEST_SKIP() << "the server's answers are the embedded server's";
    env_.apiserver_args = GetParam().apiserver_args;
    std::string error;
    cluster_ = TestCluster::Start(env_, &error);
    ASSERT_NE(cluster_, nullptr) << "cannot start the test cluster: " << error;
  }
};

// The INFO lines of a replica's log that hold `needle`.
int InfoLines(const Replica& replica, const std::string& needle) {
  std::istringstream in(replica.Log());
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    n += !line.empty() && line[0] == 'I' && line.find(needle) != std::string::npos ? 1 : 0;
  }
  return n;
}

// 3 replicas start on 10 routes, then 5 routes are created: every route is
// admitted with exactly one successful write each (15), no replica lists
// more often than it must, and each replica's metrics name how it got its
// initial state (and, where the stream failed, why, with one INFO line).
TEST_P(KubeVersionsTest, ThreeReplicasSyncAdmitAndWriteOncePerChange) {
  const ServerMode& mode = GetParam();
  const std::string router = "e2e-versions";
  const std::string ns = Namespace("versions");
  CreateRoutes(ns, "r", 10);
  const WriteCounts before = cluster().StatusWrites();
  ReplicaSet& set = Replicas("versions", 3, TestReplicaOptions(router));
  set.StartAll();
  ExpectAllAdmitted({router}, 10);
  ASSERT_TRUE(WaitForWritesToSettle(cluster(), seconds(2), seconds(30)));
  CreateRoutes(ns, "late", 5);
  ExpectAllAdmitted({router}, 15);
  ASSERT_TRUE(WaitForWritesToSettle(cluster(), seconds(2), seconds(30)));
  const WriteCounts writes = cluster().StatusWrites() - before;
  Figure("writes_success", writes.success);
  Figure("writes_conflict", writes.conflict);
  EXPECT_EQ(writes.success, 15) << "one write per change";

  const std::map<std::string, std::string> routes = {{"resource", "routes"}};
  auto with = [&](const char* key, const std::string& value) {
    std::map<std::string, std::string> m = routes;
    m[key] = value;
    return m;
  };
  for (const char* source : {"streamed", "watch_cache", "storage"}) {
    const double n = set.SumMetric("routestatus_informer_initial_states_total", with("source", source));
    Figure(std::string("initial_states_") + source, n);
    EXPECT_EQ(n, source == mode.source ? 3 : 0) << source;
  }
  for (const char* reason :
       {"refused", "error_event", "server_error", "no_end_bookmark", "stream_ended"}) {
    const double n = set.SumMetric("routestatus_informer_stream_fallbacks_total", with("reason", reason));
    EXPECT_EQ(n, reason == mode.fallback ? 3 : 0) << reason;
  }
  EXPECT_EQ(set.SumMetric("routestatus_informer_streaming_paused", routes),
            mode.fallback.empty() ? 0 : 3);
  EXPECT_EQ(set.SumMetric("routestatus_informer_list_failures_total", routes), 0);
  for (int i = 0; i < set.size(); ++i) {
    EXPECT_EQ(InfoLines(set.at(i), "did not stream the initial state"),
              mode.fallback.empty() ? 0 : 1)
        << set.at(i).id() << ": one INFO line a process";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Servers, KubeVersionsTest,
    ::testing::Values(
        ServerMode{"WatchList", {}, "streamed", ""},
        ServerMode{"WatchListWithBlueprint", {"--initial-events-blueprint"}, "streamed", ""},
        ServerMode{"OldEtcdNoProgressNotify", {"--watch-list=no-progress-notify"}, "watch_cache",
                   "error_event"},
        ServerMode{"Kube133GateOff", {"--watch-list=gate-off"}, "watch_cache", "refused"},
        ServerMode{"Kube126", {"--watch-list=false"}, "watch_cache", "refused"}),
    [](const ::testing::TestParamInfo<ServerMode>& info) { return info.param.name; });

}  // namespace
}  // namespace routestatus::e2e
