// routestatus-failover-check: the failover measurement of the stale
// keep-alive connection issue, repeated N times (not part of `make test`).
// Each run: a fresh local-apiserver, 3 route-status-controller replicas with
// the product's default flags (only --router-name, --kubeconfig and
// --metrics-address are set), 20 routes converged, a few changes, an idle
// period longer than the server's 15 s keep-alive timeout, SIGKILL of the
// leader, one new route; it prints the time from that create to our
// Admitted=True entry, and counts "Failed to write request" in every log.
//
//   build/e2e/routestatus-failover-check [--runs=20] [--idle-seconds=20]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include <glog/logging.h>

#include "e2e/harness/cluster.h"
#include "e2e/harness/replica.h"
#include "e2e/harness/route_factory.h"
#include "kubeclient/route.h"

namespace routestatus::e2e {
namespace {

using Ms = std::chrono::milliseconds;
constexpr char kRouter[] = "default";
constexpr char kNeedle[] = "Failed to write request";

struct RunResult {
  bool ok = false;
  std::string why;
  double failover_ms = -1;
  size_t failed_writes = 0;  // log lines containing kNeedle
  double stale_replaced = -1;  // survivors' routestatus_api_connection_retries_total{stale_connection}
  int leader = -1;
};

bool Admitted(TestCluster& c, const std::string& ns, const std::string& name) {
  auto got = c.client().Get(kubeclient::RoutesResource(), ns, name);
  if (!got.ok()) return false;
  auto route = kubeclient::RouteFromJson(*got);
  return route.ok() && IsAdmittedBy(*route, kRouter);
}

RunResult RunOnce(int run, int idle_seconds) {
  RunResult r;
  E2eEnv env = E2eEnvFromProcess();
  std::string error;
  auto cluster = TestCluster::Start(env, &error);
  if (!cluster) {
    r.why = "cluster: " + error;
    return r;
  }
  std::string ns = cluster->CreateNamespace("failover");
  for (int i = 0; i < 20; ++i) {
    RouteShape s;
    s.ns = ns;
    s.name = "r" + std::to_string(i);
    s.host = s.name + ".example.com";
    if (!cluster->CreateRoute(s).ok()) {
      r.why = "create route failed";
      return r;
    }
  }
  ReplicaOptions options;  // default flags: only what Replica itself sets
  options.router_name = kRouter;
  ReplicaSet set(*cluster, "run" + std::to_string(run), 3, options);
  set.StartAll();
  if (!set.WaitReady(Ms(30000))) {
    r.why = "replicas not ready";
    return r;
  }
  std::string why;
  auto admitted = [](const kubeclient::Route& route) { return IsAdmittedBy(route, kRouter); };
  if (!WaitForRoutes(*cluster, admitted, Ms(60000), 20, &why)) {
    r.why = "not converged: " + why;
    return r;
  }
  // A few changes (new hosts), converged again.
  for (int i = 0; i < 3; ++i) {
    std::string name = "r" + std::to_string(i);
    auto up = cluster->UpdateRoute(ns, name, [&](nlohmann::json& j) {
      j["spec"]["host"] = name + "-changed.example.com";
    });
    if (!up.ok()) {
      r.why = "update failed: " + up.status().ToString();
      return r;
    }
  }
  auto changed = [](const kubeclient::Route& route) {
    auto e = route.FindIngress(kRouter);
    return IsAdmittedBy(route, kRouter) && e && e->host == route.spec.host;
  };
  if (!WaitForRoutes(*cluster, changed, Ms(60000), 20, &why)) {
    r.why = "changes not converged: " + why;
    return r;
  }
  std::this_thread::sleep_for(std::chrono::seconds(idle_seconds));
  r.leader = set.FindLeader();
  if (r.leader < 0) {
    r.why = "no leader";
    return r;
  }
  set.at(r.leader).Kill();
  // Why: the test's own client idled too; a GET (which cpprest retries on a
  // fresh connection) keeps its stale pool out of the measurement.
  (void)cluster->client().Get(kubeclient::NamespacesResource(), "", ns);
  auto start = std::chrono::steady_clock::now();
  RouteShape fresh;
  fresh.ns = ns;
  fresh.name = "after-failover";
  fresh.host = "after-failover.example.com";
  auto created = cluster->CreateRoute(fresh);
  if (!created.ok()) {
    r.why = "create after failover failed: " + created.status().ToString();
    return r;
  }
  bool seen = WaitFor([&] { return Admitted(*cluster, ns, "after-failover"); }, Ms(120000), Ms(10));
  auto took = std::chrono::steady_clock::now() - start;
  r.failover_ms = std::chrono::duration<double, std::milli>(took).count();
  r.failed_writes = set.GrepLogs(kNeedle).size();
  r.stale_replaced = set.SumMetric("routestatus_api_connection_retries_total",
                                   {{"reason", "stale_connection"}});
  set.StopAll();
  if (!seen) {
    r.why = "after-failover not admitted within 120 s";
    return r;
  }
  r.ok = true;
  return r;
}

int Main(int argc, char** argv) {
  int runs = 20, idle = 20;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--runs=", 7) == 0) runs = std::atoi(argv[i] + 7);
    if (std::strncmp(argv[i], "--idle-seconds=", 15) == 0) idle = std::atoi(argv[i] + 15);
  }
  std::vector<double> figures;
  size_t total_failed = 0;
  int bad = 0;
  for (int run = 0; run < runs; ++run) {
    RunResult r = RunOnce(run, idle);
    total_failed += r.failed_writes;
    std::printf("run %2d: leader %d killed, create -> Admitted=True %8.0f ms, "
                "\"%s\" lines %zu, stale connections replaced %.0f%s%s\n",
                run, r.leader, r.failover_ms, kNeedle, r.failed_writes, r.stale_replaced,
                r.ok ? "" : ", FAILED: ", r.why.c_str());
    std::fflush(stdout);
    if (r.ok) figures.push_back(r.failover_ms); else ++bad;
  }
  std::printf("%d runs, %d failed; \"%s\" in the logs: %zu lines\n", runs, bad, kNeedle,
              total_failed);
  return bad == 0 ? 0 : 1;
}

}  // namespace
}  // namespace routestatus::e2e

int main(int argc, char** argv) {
  google::InitGoogleLogging(argv[0]);
  FLAGS_logtostderr = true;
  FLAGS_minloglevel = google::GLOG_WARNING;
  return routestatus::e2e::Main(argc, argv);
}
