// The route informer against the embedded API server through the REST
// client: resume after closed watches, relist after compaction, deletes
// while disconnected, bounded retries while the server fails.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <iostream>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "apiserver/server.h"
#include "kubeclient/cache/informer.h"
#include "kubeclient/rest/kube_config.h"
#include "kubeclient/rest/rest_kube_client.h"
#include "test/testing/fake_clock.h"

namespace routestatus::kubeclient::cache {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

json NewRoute(const std::string& ns, const std::string& name, const std::string& host) {
  return json{{"apiVersion", "route.openshift.io/v1"},
              {"kind", "Route"},
              {"metadata", {{"name", name}, {"namespace", ns}}},
              {"spec", {{"host", host}, {"to", {{"kind", "Service"}, {"name", name}}}}}};
}

// Thread-safe log of handler calls ("add ns/a", "update ns/a", "delete ns/a")
// that tests wait on.
class WaitableRecorder final : public EventHandler<Route> {
 public:
  void OnAdd(const Ptr& obj, bool initial) override {
    Record((initial ? "initial " : "add ") + obj->Key());
  }
  void OnUpdate(const Ptr&, const Ptr& n) override { Record("update " + n->Key()); }
  void OnDelete(const Ptr& last) override { Record("delete " + last->Key()); }

  // Waits (real time, bounded) until the log has `n` entries after `from`.
  std::vector<std::string> WaitForEntries(size_t from, size_t n) {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait_for(l, seconds(20), [&] { return log_.size() >= from + n; });
    return std::vector<std::string>(log_.begin() + std::min(from, log_.size()), log_.end());
  }
  size_t size() const {
    std::lock_guard<std::mutex> l(mu_);
    return log_.size();
  }

 private:
  void Record(std::string s) {
    std::lock_guard<std::mutex> l(mu_);
    log_.push_back(std::move(s));
    cv_.notify_all();
  }
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> log_;
};

class InformerIntegrationTest : public ::testing::Test {
 protected:
  virtual apiserver::ServerOptions ServerOptions() {
    apiserver::ServerOptions so;
    so.bookmark_interval = milliseconds(200);
    return so;
  }
  void SetUp() override {
    server_ = std::make_unique<apiserver::Server>(ServerOptions());
    ASSERT_TRUE(server_->Start().ok());
    std::string path = ::testing::TempDir() + "/informer_it_" +
                       std::to_string(server_->port()) + ".kubeconfig";
    ASSERT_TRUE(server_->WriteKubeconfig(path).ok());
    auto config = rest::LoadKubeconfigFile(path);
    ASSERT_TRUE(config.ok()) << config.status().ToString();
    rest::RestOptions ro;
    ro.qps = 0;
    ro.max_retries = 0;
    auto client = rest::NewRestKubeClient(*config, real_clock_, ro);
    ASSERT_TRUE(client.ok()) << client.status().ToString();
    client_ = std::move(client).value();
    ASSERT_TRUE(server_->CreateNamespace("ns").ok());
    options_.name = "routes-it";
    options_.page_size = 2;  // several pages even for a few routes
    options_.backoff.initial = milliseconds(20);
    options_.backoff.max = milliseconds(200);
    options_.min_healthy_watch = milliseconds(0);
  }

  void TearDown() override {
    if (informer_) informer_->Stop();
    informer_.reset();
    if (server_) server_->Stop();
  }

  void CreateRoute(const std::string& name) {
    auto r = client_->Create(RoutesResource(), "ns", NewRoute("ns", name, name + ".example.com"));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }
  void ChangeHost(const std::string& name, const std::string& host) {
    auto got = client_->Get(RoutesResource(), "ns", name);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    json obj = *got;
    obj["spec"]["host"] = host;
    auto r = client_->Update(RoutesResource(), obj);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }
  void DeleteRoute(const std::string& name) {
    Status s = client_->Delete(RoutesResource(), "ns", name);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  void StartInformer(const Clock& clock) {
    informer_ = std::make_unique<RouteInformer>(*client_, clock, options_);
    informer_->AddEventHandler(&recorder_);
    informer_->Start();
  }

  // The server's routes and the cache's, as "key@resourceVersion", sorted.
  std::vector<std::string> ServerContent() {
    std::vector<std::string> out;
    ListOptions lo;
    auto page = client_->List(RoutesResource(), "", lo);
    EXPECT_TRUE(page.ok());
    if (!page.ok()) return out;
    for (const auto& item : page->items) {
      out.push_back(item["metadata"]["namespace"].get<std::string>() + "/" +
                    item["metadata"]["name"].get<std::string>() + "@" +
                    item["metadata"]["resourceVersion"].get<std::string>());
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  std::vector<std::string> CacheContent() {
    std::vector<std::string> out;
    for (const auto& r : informer_->List()) out.push_back(r->Key() + "@" + r->metadata.resource_version);
    std::sort(out.begin(), out.end());
    return out;
  }

  RealClock real_clock_;
  ::routestatus::testing::FakeClock fake_clock_;  // outlives informer_
  std::unique_ptr<apiserver::Server> server_;
  std::unique_ptr<KubeClient> client_;
  InformerOptions options_;
  WaitableRecorder recorder_;
  std::unique_ptr<RouteInformer> informer_;
};

TEST_F(InformerIntegrationTest, ClosedWatchResumesWithoutRelistOrDuplicates) {
  for (const char* n : {"a", "b", "c", "d", "e"}) CreateRoute(n);
  StartInformer(real_clock_);
  ASSERT_TRUE(informer_->WaitForSync());
  EXPECT_EQ(recorder_.WaitForEntries(0, 5).size(), 5u);
  CreateRoute("f");
  EXPECT_EQ(recorder_.WaitForEntries(5, 1), std::vector<std::string>{"add ns/f"})
      << "bookmarks seen: " << informer_->Stats().events_bookmark
      << ", watch restarts: " << informer_->Stats().watch_restarts
      << ", open watches: " << server_->OpenWatches();
  for (int round = 0; round < 3; ++round) {
    server_->CloseAllWatches();
    ChangeHost("a", "a" + std::to_string(round) + ".example.com");
    CreateRoute("g" + std::to_string(round));
  }
  DeleteRoute("b");
  auto log = recorder_.WaitForEntries(6, 7);
  EXPECT_EQ(log, (std::vector<std::string>{"update ns/a", "add ns/g0", "update ns/a", "add ns/g1",
                                           "update ns/a", "add ns/g2", "delete ns/b"}));
  uint64_t lists = server_->RequestCount("LIST", "routes");
  // 5 routes listed once, from the watch cache (resourceVersion "0": the
  // server ignores the page size of 2 there, as kube-apiserver does).
  EXPECT_EQ(lists, 1u);
  EXPECT_EQ(CacheContent(), ServerContent());
  InformerStats s = informer_->Stats();
  EXPECT_EQ(s.lists, 1u);
  EXPECT_EQ(s.relists, 0u);
  EXPECT_GE(s.watch_restarts, 1u);
}

TEST_F(InformerIntegrationTest, DeletesWhileDisconnectedAreDeliveredOnResume) {
  for (const char* n : {"a", "b", "c"}) CreateRoute(n);
  StartInformer(real_clock_);
  ASSERT_TRUE(informer_->WaitForSync());
  recorder_.WaitForEntries(0, 3);
  apiserver::FaultRule no_watch;
  no_watch.verb = "WATCH";
  no_watch.resource = "routes";
  no_watch.code = 503;
  server_->faults().Add(no_watch);
  server_->CloseAllWatches();
  DeleteRoute("a");
  DeleteRoute("c");
  server_->faults().Clear();
  EXPECT_EQ(recorder_.WaitForEntries(3, 2),
            (std::vector<std::string>{"delete ns/a", "delete ns/c"}));
  EXPECT_EQ(CacheContent(), ServerContent());
  EXPECT_EQ(informer_->Stats().relists, 0u);
}

TEST_F(InformerIntegrationTest, CompactedHistoryRelistsAndReplacesCache) {
  for (const char* n : {"a", "b", "c"}) CreateRoute(n);
  StartInformer(real_clock_);
  ASSERT_TRUE(informer_->WaitForSync());
  recorder_.WaitForEntries(0, 3);
  apiserver::FaultRule no_watch;
  no_watch.verb = "WATCH";
  no_watch.resource = "routes";
  no_watch.code = 500;
  server_->faults().Add(no_watch);
  server_->CloseAllWatches();
  DeleteRoute("a");      // vanished
  ChangeHost("b", "b2.example.com");  // changed
  CreateRoute("d");      // new
  server_->Compact();
  server_->faults().Clear();
  auto log = recorder_.WaitForEntries(3, 3);
  // A relist's new object is not "initial" (only the first list is).
  EXPECT_EQ(log, (std::vector<std::string>{"delete ns/a", "update ns/b", "add ns/d"}));
  EXPECT_EQ(CacheContent(), ServerContent());
  EXPECT_EQ(informer_->Get("ns/b")->spec.host, "b2.example.com");
  EXPECT_EQ(informer_->Stats().relists, 1u);
  // And it keeps watching after the relist.
  CreateRoute("e");
  EXPECT_EQ(recorder_.WaitForEntries(6, 1), std::vector<std::string>{"add ns/e"});
}

TEST_F(InformerIntegrationTest, ServerErrorsGiveBoundedRetriesThenRecovery) {
  CreateRoute("a");
  apiserver::FaultRule down;
  down.resource = "routes";
  down.code = 500;
  server_->faults().Add(down);
  ::routestatus::testing::FakeClock& fake = fake_clock_;
  options_.backoff.initial = milliseconds(200);
  options_.backoff.max = seconds(5);
  StartInformer(fake);
  // 30 s of fake time with the server failing: advance exactly to each
  // retry the informer schedules and count its requests.
  Duration elapsed{0};
  uint64_t seen = 0;
  while (elapsed < seconds(30)) {
    auto until = informer_->reflector().AwaitIdleWait(&seen);
    ASSERT_TRUE(until.has_value());
    Duration step = std::max<Duration>(*until - fake.Now(), Duration::zero());
    fake.Advance(step);
    elapsed += step;
  }
  uint64_t attempts = server_->RequestCount("LIST", "routes") + server_->RequestCount("WATCH", "routes");
  // 200 ms doubling (+<50% jitter) capped at 5 s: ~11 attempts in 30 s.
  EXPECT_GE(attempts, 6u);
  EXPECT_LE(attempts, 14u);
  EXPECT_FALSE(informer_->HasSynced());
  server_->faults().Clear();
  // Keep advancing to each scheduled retry until the informer has synced.
  while (auto until = informer_->reflector().AwaitIdleWait(&seen)) {
    fake.Advance(std::max<Duration>(*until - fake.Now(), Duration::zero()));
  }
  ASSERT_TRUE(informer_->HasSynced());
  EXPECT_EQ(CacheContent(), ServerContent());
  // (One request may have been in flight when the attempts were counted.)
  EXPECT_GE(informer_->Stats().list_failures, attempts);
  EXPECT_LE(informer_->Stats().list_failures, attempts + 1);
}

// Over HTTP and HTTPS (GetParam()).
class InformerRestartTest : public InformerIntegrationTest,
                            public ::testing::WithParamInterface<bool> {
 protected:
  apiserver::ServerOptions ServerOptions() override {
    apiserver::ServerOptions so = InformerIntegrationTest::ServerOptions();
    so.tls = GetParam();
    return so;
  }
};

// Issue 15: the server restarts (down 3 s, then a fresh watch history). With
// the default retry options the informer relists once, and a route created
// as soon as the server is back is in the cache within about half a second
// of its creation (the reconnect schedule's 500 ms cap, then the 410
// relists at once).
TEST_P(InformerRestartTest, RestartedServerIsRelistedOnceSoonAfterItsReturn) {
  for (const char* n : {"a", "b", "c"}) CreateRoute(n);
  const InformerOptions defaults;
  options_.backoff = defaults.backoff;
  options_.min_healthy_watch = defaults.min_healthy_watch;
  StartInformer(real_clock_);
  ASSERT_TRUE(informer_->WaitForSync());
  recorder_.WaitForEntries(0, 3);
  ASSERT_TRUE(server_->Restart(seconds(3)).ok());
  Status created;
  for (int attempt = 0; attempt < 5; ++attempt) {
    created = client_->Create(RoutesResource(), "ns", NewRoute("ns", "after", "after.example.com"))
                  .status();
    if (created.ok()) break;  // Why: the first request may meet a connection the restart closed.
  }
  ASSERT_TRUE(created.ok()) << created.ToString();
  // Why: from the create on, so that the test client's own reconnect (a
  // TLS handshake, slow under the sanitizers) is not counted.
  const auto back = std::chrono::steady_clock::now();
  auto log = recorder_.WaitForEntries(3, 1);
  const auto took_ms =
      std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - back).count();
  ASSERT_EQ(log.size(), 1u);
  EXPECT_NE(log[0].find("ns/after"), std::string::npos) << log[0];
  EXPECT_LE(took_ms, 2000);
  EXPECT_EQ(informer_->Stats().relists, 1u);
  EXPECT_GE(informer_->Stats().watch_failures, 1u) << "the reconnects were refused";
  EXPECT_EQ(CacheContent(), ServerContent());
  std::cout << "route created after the restart -> cached: " << took_ms << " ms\n";
}

INSTANTIATE_TEST_SUITE_P(Transport, InformerRestartTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "Https" : "Http";
                         });

}  // namespace
}  // namespace routestatus::kubeclient::cache

