// Three replicas of one router name, each with the real informer, work
// queue and write lease, against the embedded API server: every route ends
// with the right entry, and the server counts how many status PUTs that took.
// Real threads and the real clock; waits are bounded polls.

#include <chrono>
#include <thread>

#include <glog/logging.h>
#include <gtest/gtest.h>

#include "apiserver/server.h"
#include "controller/controller.h"
#include "controller/status_syncer.h"
#include "kubeclient/cache/informer.h"
#include "kubeclient/cache/rate_limiting_work_queue.h"
#include "kubeclient/rest/rest_kube_client.h"
#include "lease/backoff_write_lease.h"

namespace routestatus::controller {
namespace {

using nlohmann::json;

AdmissionOptions Options() {
  AdmissionOptions o;
  o.router_name = "default";
  o.canonical_hostname = "router-default.apps.example.com";
  return o;
}

lease::WriteLeaseOptions LeaseOptions(uint64_t seed) {
  lease::WriteLeaseOptions o;
  o.interval = std::chrono::seconds(2);
  o.retry = std::chrono::milliseconds(300);
  o.election_delay = std::chrono::milliseconds(200);
  o.seed = seed;
  // Safe with this controller: it extends only for entry changes seen
  // through the watch, never for the initial list or resyncs.
  o.election_follows_extend = true;
  return o;
}

kubeclient::cache::RateLimitingWorkQueue::Options QueueOptions() {
  kubeclient::cache::RateLimitingWorkQueue::Options o;
  o.qps = 0;
  return o;
}

// One replica, wired as cmd/ would wire it.
struct Replica {
  Replica(const std::string& url, uint64_t seed)
      : client(MakeClient(url, clock)),
        informer(*client, clock, {}),
        queue(clock, QueueOptions()),
        lease(clock, LeaseOptions(seed)),
        shard({}, nullptr),
        syncer(Options(), shard, informer, *client, lease, gate, clock, stats),
        controller(syncer, informer, nullptr, shard, queue, gate, clock) {
    informer.AddIndex(kRoutesByHostIndex, RoutesByHostIndexFunc(Options()));
    informer.AddEventHandler(&controller.route_handler());
    informer.Start();
    threads.emplace_back([this] { controller.RunWorker(); });
    threads.emplace_back([this] { while (lease.RunNext()) {} });
  }
  ~Replica() {
    informer.Stop();
    queue.ShutDownNow();
    lease.Shutdown();
    for (auto& t : threads) t.join();
  }
  // `clock` must outlive the client.
  static std::unique_ptr<kubeclient::KubeClient> MakeClient(const std::string& url,
                                                            const Clock& clock) {
    kubeclient::rest::RestConfig config;
    config.server = url;
    kubeclient::rest::RestOptions options;
    options.qps = 0;
    return kubeclient::rest::NewRestKubeClient(config, clock, options).value();
  }

  RealClock clock;
  std::unique_ptr<kubeclient::KubeClient> client;
  kubeclient::cache::RouteInformer informer;
  kubeclient::cache::RateLimitingWorkQueue queue;
  lease::BackoffWriteLease lease;
  NoContentionGate gate;
  StatusStats stats;
  ShardFilter shard;
  StatusSyncer syncer;
  Controller controller;
  std::vector<std::thread> threads;
};

class FleetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    apiserver::ServerOptions o;
    o.threads = 32;
    server_ = std::make_unique<apiserver::Server>(o);
    ASSERT_TRUE(server_->Start().ok());
    ASSERT_TRUE(server_->CreateNamespace("a").ok());
    ASSERT_TRUE(server_->CreateNamespace("b").ok());
    client_ = Replica::MakeClient(server_->base_url(), clock_);
  }
  void TearDown() override {
    replicas_.clear();
    server_->Stop();
  }

  // Polls (bounded) until every route's entry of ours matches `want`.
  bool WaitFor(const std::function<bool(const kubeclient::Route&)>& want, int expected_routes) {
    for (int i = 0; i < 300; ++i) {
      auto page = client_->List(kubeclient::RoutesResource(), "", {});
      if (page.ok() && static_cast<int>(page->items.size()) == expected_routes) {
        bool all = true;
        for (const auto& item : page->items) {
          all = all && want(kubeclient::RouteFromJson(item).value());
        }
        if (all) return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }
  uint64_t Puts(int code) { return server_->RequestCount("PATCH", "routes", "status", code); }

  RealClock clock_;
  std::unique_ptr<apiserver::Server> server_;
  std::unique_ptr<kubeclient::KubeClient> client_;
  std::vector<std::unique_ptr<Replica>> replicas_;
};

bool Admitted(const kubeclient::Route& r) {
  const auto e = r.FindIngress("default");
  return e.has_value() && e->conditions.size() == 1 && e->host == r.spec.host &&
         ((r.metadata.name == "dup" && e->conditions[0].reason == "HostAlreadyClaimed") ||
          (r.metadata.name != "dup" && e->conditions[0].status == "True"));
}

TEST_F(FleetTest, ThreeReplicasConvergeWithAboutOneWritePerRoute) {
  const int kRoutes = 60;
  for (int i = 0; i < kRoutes - 1; ++i) {
    json r = {{"metadata", {{"namespace", "a"}, {"name", "r" + std::to_string(i)}}},
              {"spec", {{"host", "h" + std::to_string(i) + ".example.com"},
                        {"to", {{"kind", "Service"}, {"name", "svc"}}}}}};
    ASSERT_TRUE(server_->CreateRoute(r).ok());
  }
  json dup = {{"metadata", {{"namespace", "b"}, {"name", "dup"}}},
              {"spec",
               {{"host", "h0.example.com"}, {"to", {{"kind", "Service"}, {"name", "svc"}}}}}};
  ASSERT_TRUE(server_->CreateRoute(dup).ok());
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    replicas_.push_back(std::make_unique<Replica>(server_->base_url(), seed));
  }
  ASSERT_TRUE(WaitFor(Admitted, kRoutes));
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // let stragglers show
  uint64_t ok = Puts(200), conflicts = Puts(409);
  LOG(INFO) << "start-up: " << ok << " successful status PUTs, " << conflicts << " conflicts for "
            << kRoutes << " routes and 3 replicas";
  EXPECT_EQ(ok, static_cast<uint64_t>(kRoutes));
  EXPECT_LE(conflicts, 3u);

  // The holder of h0 changes its host: dup is admitted without a resync.
  json r0 = *client_->Get(kubeclient::RoutesResource(), "a", "r0");
  r0["spec"]["host"] = "moved.example.com";
  ASSERT_TRUE(client_->Update(kubeclient::RoutesResource(), r0).ok());
  ASSERT_TRUE(WaitFor(
      [](const kubeclient::Route& r) {
        const auto e = r.FindIngress("default");
        return e.has_value() && e->host == r.spec.host && e->conditions[0].status == "True";
      },
      kRoutes));
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  uint64_t ok2 = Puts(200) - ok, conflicts2 = Puts(409) - conflicts;
  LOG(INFO) << "host move: " << ok2 << " successful status PUTs, " << conflicts2 << " conflicts";
  EXPECT_EQ(ok2, 2u);  // r0's new host, dup admitted
  EXPECT_LE(conflicts2, 2u);
}

}  // namespace
}  // namespace routestatus::controller
