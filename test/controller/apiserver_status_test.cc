// The status path against the embedded API server over HTTP, through the
// REST client. The cache is filled from the server with GETs ("delivering"
// what a watch would), so every step is deterministic; writes are counted
// by the server's apiserver_request_total.

#include <chrono>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "apiserver/server.h"
#include "controller/clear.h"
#include "controller/controller.h"
#include "controller/status_syncer.h"
#include "kubeclient/rest/rest_kube_client.h"
#include "test/controller/fakes.h"
#include "test/testing/fake_clock.h"
#include "test/testing/status_patch.h"

namespace routestatus::controller::testing {
namespace {

using nlohmann::json;

json OtherEntry() {
  return json{{"routerName", "internal"},
              {"host", "www.internal.example.com"},
              {"futureField", {{"nested", true}}},
              {"conditions",
               {{{"type", "Admitted"}, {"status", "True"},
                 {"lastTransitionTime", "2025-01-01T00:00:00Z"}}}}};
}

json RouteJson(const std::string& ns, const std::string& name, const std::string& host) {
  return json{{"apiVersion", "route.openshift.io/v1"},
              {"kind", "Route"},
              {"metadata", {{"name", name}, {"namespace", ns}, {"annotations", {{"a", "b"}}}}},
              {"spec", {{"host", host}, {"to", {{"kind", "Service"}, {"name", name}}},
                        {"unknownSpecField", "kept"}}}};
}

class ApiServerStatusTest : public ::testing::Test {
 protected:
  explicit ApiServerStatusTest(AdmissionOptions admission = Options())
      : server_(MakeServerOptions(&clock_)),
        shard_(ShardOptionsForTest(), &namespaces_),
        syncer_(std::move(admission), shard_, routes_, client_holder_, lease_, gate_, clock_,
                stats_),
        controller_(syncer_, routes_, &namespaces_, shard_, queue_, gate_, clock_) {}

  static apiserver::ServerOptions MakeServerOptions(const Clock* clock) {
    apiserver::ServerOptions o;
    o.clock = clock;
    o.threads = 8;
    return o;
  }
  static ShardOptions ShardOptionsForTest() {
    ShardOptions s;
    s.route_selector = kubeclient::LabelSelector::Parse("shard!=b").value();
    return s;
  }
  static AdmissionOptions Options() {
    AdmissionOptions o;
    o.router_name = "default";
    o.canonical_hostname = "router-default.apps.example.com";
    return o;
  }

  // Starts the server before the syncer uses the client (see the
  // constructor: client_holder_ is a proxy filled in here).
  void SetUp() override {
    ASSERT_TRUE(server_.Start().ok());
    kubeclient::rest::RestConfig config;
    config.server = server_.base_url();
    kubeclient::rest::RestOptions options;
    options.qps = 0;
    auto client = kubeclient::rest::NewRestKubeClient(config, real_clock_, options);
    ASSERT_TRUE(client.ok()) << client.status().ToString();
    client_holder_.client = std::move(client).value();
    routes_.AddIndex(kRoutesByHostIndex, RoutesByHostIndexFunc(syncer_.admission_options()));
    for (const char* ns : {"a", "b", "c"}) ASSERT_TRUE(server_.CreateNamespace(ns).ok());
  }
  void TearDown() override { server_.Stop(); }

  // Deletes the route on the server and delivers the delete event.
  void DeleteAndDeliver(const std::string& ns, const std::string& name) {
    ASSERT_TRUE(client_holder_.Delete(kubeclient::RoutesResource(), ns, name).ok());
    Deliver(ns, name);
  }
  // Our entry's Admitted condition on the server (null when absent).
  json AdmittedCondition(const std::string& ns, const std::string& name) {
    const json stored = ServerObject(ns, name);  // Why a local: the loop must not outlive it
    for (const auto& e : stored["status"]["ingress"]) {
      if (e["routerName"] == "default") return e["conditions"][0];
    }
    return json();
  }

  void Seed(const json& route) {
    ASSERT_TRUE(server_.CreateRoute(route).ok());
    clock_.Advance(std::chrono::seconds(1));
    Deliver(route["metadata"]["namespace"], route["metadata"]["name"]);
  }
  // What a watch would deliver: the server's current object.
  void Deliver(const std::string& ns, const std::string& name) {
    auto old_obj = routes_.Get(ns + "/" + name);
    auto got = client_holder_.Get(kubeclient::RoutesResource(), ns, name);
    if (!got.ok()) {
      routes_.Delete(ns + "/" + name);
      if (old_obj) controller_.route_handler().OnDelete(old_obj);
      return;
    }
    routes_.Set(kubeclient::RouteFromJson(*got).value());
    auto new_obj = routes_.Get(ns + "/" + name);
    if (old_obj) {
      controller_.route_handler().OnUpdate(old_obj, new_obj);
    } else {
      controller_.route_handler().OnAdd(new_obj, false);
    }
  }
  void Drain() {
    while (!queue_.keys.empty()) controller_.ProcessNextItem();
  }
  json ServerObject(const std::string& ns, const std::string& name) {
    auto got = client_holder_.Get(kubeclient::RoutesResource(), ns, name);
    return got.ok() ? *got : json();
  }
  // Status writes (ours are merge patches; the tests' own "other replica"
  // writes are PUTs) counted by the server. Why the poll: the server records a
  // request after sending its response, so the count may lag our client by
  // a moment; we wait (bounded) for `expected` and return what we see.
  uint64_t StatusPuts(int code = -1, uint64_t expected = 0) {
    auto count = [&] {
      return server_.RequestCount("PUT", "routes", "status", code) +
             server_.RequestCount("PATCH", "routes", "status", code);
    };
    uint64_t n = count();
    for (int i = 0; i < 200 && n < expected; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      n = count();
    }
    return n;
  }

  // Forwards to the REST client created in SetUp.
  struct ClientProxy final : kubeclient::KubeClient {
    std::unique_ptr<kubeclient::KubeClient> client;
    StatusOr<json> Get(const kubeclient::ResourceRef& r, const std::string& ns,
                                   const std::string& n) override { return client->Get(r, ns, n); }
    StatusOr<kubeclient::ListPage> List(const kubeclient::ResourceRef& r,
                                                    const std::string& ns,
                                                    const kubeclient::ListOptions& o) override {
      return client->List(r, ns, o);
    }
    StatusOr<std::unique_ptr<kubeclient::WatchStream>> Watch(
        const kubeclient::ResourceRef& r, const std::string& ns,
        const kubeclient::WatchOptions& o) override { return client->Watch(r, ns, o); }
    StatusOr<json> Create(const kubeclient::ResourceRef& r, const std::string& ns,
                                      const json& o) override { return client->Create(r, ns, o); }
    StatusOr<json> Update(const kubeclient::ResourceRef& r, const json& o) override {
      return client->Update(r, o);
    }
    StatusOr<json> UpdateStatus(const kubeclient::ResourceRef& r,
                                            const json& o) override {
      return client->UpdateStatus(r, o);
    }
    StatusOr<json> MergePatchStatus(const kubeclient::ResourceRef& r, const std::string& ns,
                                    const std::string& n, const json& p) override {
      return client->MergePatchStatus(r, ns, n, p);
    }
    Status Delete(const kubeclient::ResourceRef& r, const std::string& ns,
                              const std::string& n) override { return client->Delete(r, ns, n); }
  };

  routestatus::testing::FakeClock clock_;
  RealClock real_clock_;
  apiserver::Server server_;
  ClientProxy client_holder_;
  FakeStore<kubeclient::Route> routes_;
  FakeStore<kubeclient::Namespace> namespaces_;
  FakeWorkQueue queue_;
  PassThroughLease lease_;
  FakeGate gate_;
  StatusStats stats_;
  ShardFilter shard_;
  StatusSyncer syncer_;
  Controller controller_;
};

json CorrectEntry(const std::string& host) {
  return json{{"routerName", "default"}, {"host", host},
              {"routerCanonicalHostname", "router-default.apps.example.com"},
              {"wildcardPolicy", "None"},
              {"conditions", {{{"type", "Admitted"}, {"status", "True"},
                               {"lastTransitionTime", "2024-06-01T00:00:00Z"}}}}};
}

TEST_F(ApiServerStatusTest, AlreadyCorrectIsNoOp) {
  json r = RouteJson("a", "web", "www.example.com");
  r["status"]["ingress"] = json::array({CorrectEntry("www.example.com")});
  Seed(r);
  Drain();
  EXPECT_EQ(StatusPuts(-1, 0), 0u);
  EXPECT_EQ(stats_.queued.load(), 0);
  EXPECT_EQ(stats_.skipped_follower.load() + stats_.skipped_no_change.load(), 1);
}

TEST_F(ApiServerStatusTest, WrongHostRewrittenOthersAndUnknownFieldsKept) {
  json r = RouteJson("a", "web", "www.example.com");
  // Unknown fields where deploy/crd's schema keeps them (spec, ingress
  // entries: OtherEntry's futureField); the server prunes any others, as
  // kube-apiserver does.
  r["status"]["ingress"] = {OtherEntry(), CorrectEntry("stale.example.com")};
  Seed(r);
  Drain();
  EXPECT_EQ(StatusPuts(200, 1), 1u);
  EXPECT_EQ(StatusPuts(-1, 1), 1u);
  json stored = ServerObject("a", "web");
  ASSERT_EQ(stored["status"]["ingress"].size(), 2u);
  EXPECT_EQ(stored["status"]["ingress"][0], OtherEntry());
  EXPECT_EQ(stored["status"]["ingress"][1]["host"], "www.example.com");
  EXPECT_EQ(stored["spec"]["unknownSpecField"], "kept");
  EXPECT_EQ(stored["metadata"]["annotations"]["a"], "b");
  // The watch brings it back: nothing more to write.
  Deliver("a", "web");
  Drain();
  EXPECT_EQ(StatusPuts(-1, 1), 1u);
}

TEST_F(ApiServerStatusTest, RejectToAcceptKeepsOneEntry) {
  Seed(RouteJson("a", "old", "www.example.com"));
  Seed(RouteJson("b", "new", "www.example.com"));
  Drain();
  Deliver("a", "old");
  Deliver("b", "new");
  Drain();
  json stored = ServerObject("b", "new");
  ASSERT_EQ(stored["status"]["ingress"].size(), 1u);
  EXPECT_EQ(stored["status"]["ingress"][0]["conditions"][0]["reason"], "HostAlreadyClaimed");
  uint64_t before = StatusPuts(-1, 2);
  EXPECT_EQ(before, 2u);
  DeleteAndDeliver("a", "old");  // delete event: b/new is next in line
  Drain();
  EXPECT_EQ(StatusPuts(-1, before + 1), before + 1);
  stored = ServerObject("b", "new");
  ASSERT_EQ(stored["status"]["ingress"].size(), 1u);
  EXPECT_EQ(stored["status"]["ingress"][0]["conditions"][0]["status"], "True");
}

TEST_F(ApiServerStatusTest, ConflictThenAlreadyCorrectNoExtraWrite) {
  Seed(RouteJson("a", "web", "www.example.com"));
  // Another replica writes the correct entry behind our cache's back.
  auto typed = kubeclient::RouteFromJson(ServerObject("a", "web")).value();
  json theirs = routestatus::testing::WithIngressEntry(ServerObject("a", "web"), "default", syncer_.Desired(typed, nullptr)).value();
  ASSERT_TRUE(client_holder_.UpdateStatus(kubeclient::RoutesResource(), theirs).ok());
  ASSERT_EQ(StatusPuts(200, 1), 1u);
  Drain();  // our stale write: 409
  EXPECT_EQ(StatusPuts(409, 1), 1u);
  EXPECT_EQ(lease_.pending.count("a/web"), 1u);
  Deliver("a", "web");  // the newer object: correct, ours newest -> Extend drops the work
  Drain();
  EXPECT_TRUE(lease_.pending.empty());
  lease_.RunRetries();
  EXPECT_EQ(StatusPuts(-1, 2), 2u) << "no write after the 409";
  EXPECT_EQ(stats_.writes_conflict.load(), 1);
  EXPECT_EQ(stats_.writes_success.load(), 0);
}

TEST_F(ApiServerStatusTest, RetryAfterConflictIsDoneWithoutWrite) {
  Seed(RouteJson("a", "web", "www.example.com"));
  auto typed = kubeclient::RouteFromJson(ServerObject("a", "web")).value();
  json theirs = routestatus::testing::WithIngressEntry(ServerObject("a", "web"), "default", syncer_.Desired(typed, nullptr)).value();
  ASSERT_TRUE(client_holder_.UpdateStatus(kubeclient::RoutesResource(), theirs).ok());
  Drain();
  ASSERT_EQ(StatusPuts(409, 1), 1u);
  // The retry runs after the cache caught up, before any reconcile.
  routes_.Set(kubeclient::RouteFromJson(ServerObject("a", "web")).value());
  EXPECT_EQ(lease_.RunRetries(), 1);
  EXPECT_EQ(StatusPuts(-1, 2), 2u);
}

TEST_F(ApiServerStatusTest, RouteDeletedWhileQueuedNoWrite) {
  lease_.run_immediately = false;
  Seed(RouteJson("a", "web", "www.example.com"));
  Drain();
  ASSERT_EQ(lease_.pending.size(), 1u);
  ASSERT_TRUE(client_holder_.Delete(kubeclient::RoutesResource(), "a", "web").ok());
  Deliver("a", "web");
  Drain();
  lease_.RunRetries();
  EXPECT_EQ(StatusPuts(-1, 0), 0u);
}

TEST_F(ApiServerStatusTest, ShardExitRemovesOurEntry) {
  json r = RouteJson("a", "web", "www.example.com");
  r["status"]["ingress"] = json::array({OtherEntry()});
  Seed(r);
  Drain();
  ASSERT_EQ(ServerObject("a", "web")["status"]["ingress"].size(), 2u);
  json moved = ServerObject("a", "web");
  moved["metadata"]["labels"]["shard"] = "b";
  ASSERT_TRUE(client_holder_.Update(kubeclient::RoutesResource(), moved).ok());
  Deliver("a", "web");
  Drain();
  json stored = ServerObject("a", "web");
  EXPECT_EQ(stored["status"]["ingress"], json::array({OtherEntry()}));
  EXPECT_EQ(StatusPuts(200, 2), 2u);
  // Outside the shard with no entry of ours: never written again.
  Deliver("a", "web");
  queue_.Add("a/web");
  Drain();
  EXPECT_EQ(StatusPuts(-1, 2), 2u);
}

TEST_F(ApiServerStatusTest, ClearThousandRoutes) {
  for (int i = 0; i < 1000; ++i) {
    json r = RouteJson(i % 2 ? "a" : "c", "r" + std::to_string(i), "h" + std::to_string(i) + ".example.com");
    r["status"]["ingress"] = json::array({OtherEntry()});
    if (i % 10 != 0) r["status"]["ingress"].push_back(CorrectEntry("x.example.com"));
    ASSERT_TRUE(server_.CreateRoute(r).ok());
  }
  ClearOptions options;
  options.router_name = "default";
  options.page_size = 250;
  options.qps = 0;
  int callbacks = 0;
  auto result = ClearRouterEntries(client_holder_, real_clock_, options,
                                   [&](const ClearProgress&) { ++callbacks; });
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->scanned, 1000);
  EXPECT_EQ(result->cleared, 900);
  EXPECT_EQ(callbacks, 4);
  EXPECT_EQ(StatusPuts(200, 900), 900u);
  EXPECT_EQ(server_.RequestCount("LIST", "routes"), 4u);
  kubeclient::ListOptions list;
  auto all = client_holder_.List(kubeclient::RoutesResource(), "", list);
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->items.size(), 1000u);
  for (const auto& item : all->items) {
    ASSERT_EQ(item["status"]["ingress"], json::array({OtherEntry()})) << item["metadata"]["name"];
  }
  // Resumable / idempotent: a second run writes nothing.
  auto again = ClearRouterEntries(client_holder_, real_clock_, options, nullptr);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->cleared, 0);
  EXPECT_EQ(StatusPuts(-1, 900), 900u);
}

// Wildcard routes allowed: a wildcard route and the plain routes one label
// below its domain claim against each other (see HostClaimKeys).
class ApiServerWildcardTest : public ApiServerStatusTest {
 protected:
  ApiServerWildcardTest() : ApiServerStatusTest(WildcardOptions()) {}
  static AdmissionOptions WildcardOptions() {
    AdmissionOptions o = Options();
    o.allow_wildcard_routes = true;
    return o;
  }
  static json WildcardRouteJson(const std::string& ns, const std::string& name,
                                const std::string& host) {
    json r = RouteJson(ns, name, host);
    r["spec"]["wildcardPolicy"] = "Subdomain";
    return r;
  }
  // Reconciles, then lets the watch deliver what we wrote and reconciles
  // again (nothing more may be written then).
  void SettleAll(const std::vector<std::pair<std::string, std::string>>& routes) {
    Drain();
    for (const auto& [ns, name] : routes) Deliver(ns, name);
    Drain();
  }
};

TEST_F(ApiServerWildcardTest, DeletingOlderWildcardAdmitsPlainRoute) {
  Seed(WildcardRouteJson("a", "wild", "www.example.com"));
  Seed(RouteJson("b", "web", "foo.example.com"));
  Seed(RouteJson("a", "own", "bar.example.com"));    // same namespace: coexists
  Seed(RouteJson("c", "deep", "x.y.example.com"));   // two labels deep: outside
  SettleAll({{"a", "wild"}, {"b", "web"}, {"a", "own"}, {"c", "deep"}});
  EXPECT_EQ(AdmittedCondition("a", "wild")["status"], "True");
  EXPECT_EQ(AdmittedCondition("a", "own")["status"], "True");
  EXPECT_EQ(AdmittedCondition("c", "deep")["status"], "True");
  json rejected = AdmittedCondition("b", "web");
  EXPECT_EQ(rejected["status"], "False");
  EXPECT_EQ(rejected["reason"], "HostAlreadyClaimed");
  EXPECT_NE(rejected["message"].get<std::string>().find(
                "wildcard route a/wild already claims *.example.com"),
            std::string::npos)
      << rejected;
  const uint64_t before = StatusPuts(-1, 4);
  ASSERT_EQ(before, 4u);
  DeleteAndDeliver("a", "wild");  // must re-queue the plain routes in *.example.com
  Drain();
  EXPECT_EQ(AdmittedCondition("b", "web")["status"], "True");
  EXPECT_EQ(StatusPuts(-1, before + 1), before + 1) << "exactly one more write: b/web";
  EXPECT_EQ(StatusPuts(200, before + 1), before + 1);
  SettleAll({{"b", "web"}, {"a", "own"}, {"c", "deep"}});
  EXPECT_EQ(StatusPuts(-1, before + 1), before + 1);
}

TEST_F(ApiServerWildcardTest, DeletingOlderPlainRouteAdmitsWildcard) {
  Seed(RouteJson("a", "web", "foo.example.com"));
  Seed(WildcardRouteJson("b", "wild", "www.example.com"));
  SettleAll({{"a", "web"}, {"b", "wild"}});
  json rejected = AdmittedCondition("b", "wild");
  EXPECT_EQ(rejected["reason"], "HostAlreadyClaimed");
  EXPECT_NE(rejected["message"].get<std::string>().find("route a/web already exposes "
                                                        "foo.example.com"),
            std::string::npos)
      << rejected;
  const uint64_t before = StatusPuts(-1, 2);
  ASSERT_EQ(before, 2u);
  DeleteAndDeliver("a", "web");  // must re-queue the wildcard routes over foo.example.com
  Drain();
  EXPECT_EQ(AdmittedCondition("b", "wild")["status"], "True");
  EXPECT_EQ(StatusPuts(-1, before + 1), before + 1);
  SettleAll({{"b", "wild"}});
  EXPECT_EQ(StatusPuts(-1, before + 1), before + 1);
}

}  // namespace
}  // namespace routestatus::controller::testing
