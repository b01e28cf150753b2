// The REST client against the embedded API server over HTTP and HTTPS with
// a bearer token, configured from the kubeconfig the server writes.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "apiserver/self_signed_cert.h"
#include "apiserver/server.h"
#include "kubeclient/rest/kube_config.h"
#include "kubeclient/rest/rest_kube_client.h"
#include "kubeclient/route.h"
#include "test/kubeclient/rest/apiserver_fixture.h"
#include "test/testing/fake_clock.h"

namespace routestatus::kubeclient::rest {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

json NewRoute(const std::string& ns, const std::string& name,
              const std::map<std::string, std::string>& labels = {}) {
  json r = {{"apiVersion", "route.openshift.io/v1"},
            {"kind", "Route"},
            {"metadata", {{"name", name}, {"namespace", ns}}},
            {"spec", {{"host", name + ".example.com"}, {"to", {{"kind", "Service"}, {"name", "s"}}}}}};
  if (!labels.empty()) r["metadata"]["labels"] = labels;
  return r;
}

class RestClientApiserverTest : public ApiserverFixture {
 protected:
  void SetUp() override {
    ApiserverFixture::SetUp();
    if (HasFatalFailure()) return;
    client_ = NewClient(clock_);
  }

  void TearDown() override {
    client_.reset();
    ApiserverFixture::TearDown();
  }

  std::unique_ptr<KubeClient> NewClient(const Clock& clock, RestOptions opts = {}) {
    auto c = NewRestKubeClient(config_, clock, opts);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? std::move(c).value() : nullptr;
  }

  json MustCreate(const json& route) {
    auto got = client_->Create(RoutesResource(), route["metadata"]["namespace"], route);
    EXPECT_TRUE(got.ok()) << got.status().ToString();
    return got.ok() ? got.value() : json();
  }

  RealClock clock_;
  std::unique_ptr<KubeClient> client_;
};

TEST_P(RestClientApiserverTest, CrudAndNotFound) {
  json created = MustCreate(NewRoute(ns_, "r1"));
  EXPECT_FALSE(created["metadata"].value("uid", "").empty());
  auto got = client_->Get(RoutesResource(), ns_, "r1");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ((*got)["spec"]["host"], "r1.example.com");
  EXPECT_EQ(client_->Create(RoutesResource(), ns_, NewRoute(ns_, "r1")).status().code(),
            StatusCode::kAlreadyExists);
  EXPECT_TRUE(client_->Delete(RoutesResource(), ns_, "r1").ok());
  EXPECT_EQ(client_->Get(RoutesResource(), ns_, "r1").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(client_->Delete(RoutesResource(), ns_, "r1").code(), StatusCode::kNotFound);
  auto ns = client_->Get(NamespacesResource(), "", ns_);
  ASSERT_TRUE(ns.ok()) << ns.status().ToString();
}

TEST_P(RestClientApiserverTest, NoTokenIsUnauthorized) {
  RestConfig anonymous = config_;
  anonymous.token.clear();
  auto c = NewRestKubeClient(anonymous, clock_);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ((*c)->Get(RoutesResource(), ns_, "x").status().code(), StatusCode::kUnauthorized);
}

TEST_P(RestClientApiserverTest, TokenFileIsReReadWhenItRotates) {
  RestConfig cfg = config_;
  cfg.token.clear();
  cfg.token_file = dir_ + "/token";
  auto write_token = [&](const std::string& t) {
    std::string tmp = cfg.token_file + ".new";
    std::ofstream(tmp) << t << "\n";
    std::filesystem::rename(tmp, cfg.token_file);  // atomic, like kubelet
  };
  write_token(kToken);
  auto c = NewRestKubeClient(cfg, clock_);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE((*c)->Get(NamespacesResource(), "", ns_).ok());
  write_token("revoked-token");
  EXPECT_EQ((*c)->Get(NamespacesResource(), "", ns_).status().code(), StatusCode::kUnauthorized);
  write_token(kToken);
  EXPECT_TRUE((*c)->Get(NamespacesResource(), "", ns_).ok());
}

TEST_P(RestClientApiserverTest, ServerCertificateIsVerified) {
  if (!GetParam()) GTEST_SKIP() << "HTTPS only";
  RestConfig untrusted = config_;
  untrusted.ca_data.clear();  // the self-signed CA is not in the system store
  auto c = NewRestKubeClient(untrusted, clock_);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  auto got = (*c)->Get(NamespacesResource(), "", ns_);
  EXPECT_EQ(got.status().code(), StatusCode::kUnavailable) << got.status().ToString();

  untrusted.insecure_skip_tls_verify = true;
  auto insecure = NewRestKubeClient(untrusted, clock_);
  ASSERT_TRUE(insecure.ok());
  EXPECT_TRUE((*insecure)->Get(NamespacesResource(), "", ns_).ok());
}

TEST_P(RestClientApiserverTest, ListWithPaginationAndSelectors) {
  for (int i = 0; i < 25; ++i) {
    MustCreate(NewRoute(ns_, "r" + std::to_string(i), {{"shard", i % 2 ? "odd" : "even"}}));
  }
  std::set<std::string> names;
  ListOptions opts;
  opts.limit = 10;
  int pages = 0;
  std::string rv;
  do {
    auto page = client_->List(RoutesResource(), ns_, opts);
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    ++pages;
    EXPECT_LE(page->items.size(), 10u);
    for (const auto& it : page->items) names.insert(it["metadata"]["name"].get<std::string>());
    if (rv.empty()) rv = page->resource_version;
    EXPECT_FALSE(page->resource_version.empty());
    opts.continue_token = page->continue_token;
    if (pages == 1) MustCreate(NewRoute(ns_, "late"));  // not in the snapshot
  } while (!opts.continue_token.empty() && pages < 10);
  EXPECT_EQ(pages, 3);
  EXPECT_EQ(names.size(), 25u);
  EXPECT_EQ(names.count("late"), 0u);

  ListOptions sel;
  sel.label_selector = "shard in (odd)";
  auto odd = client_->List(RoutesResource(), ns_, sel);
  ASSERT_TRUE(odd.ok()) << odd.status().ToString();
  EXPECT_EQ(odd->items.size(), 12u);
  sel.label_selector = "shard=even";
  sel.field_selector = "metadata.name=r0";
  auto one = client_->List(RoutesResource(), ns_, sel);
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  ASSERT_EQ(one->items.size(), 1u);
  sel.label_selector = "shard in (";
  EXPECT_EQ(client_->List(RoutesResource(), ns_, sel).status().code(), StatusCode::kInvalid);
}

// Next event that is not a bookmark.
StatusOr<WatchEvent> NextObjectEvent(WatchStream& w) {
  for (;;) {
    auto ev = w.Next();
    if (!ev.ok() || ev->type != WatchEventType::kBookmark) return ev;
  }
}

TEST_P(RestClientApiserverTest, WatchResumesFromAResourceVersion) {
  auto page = client_->List(RoutesResource(), ns_, {});
  ASSERT_TRUE(page.ok());
  for (const char* n : {"a", "b", "c"}) MustCreate(NewRoute(ns_, n));
  WatchOptions wo;
  wo.resource_version = page->resource_version;
  wo.timeout = seconds(30);
  auto w = client_->Watch(RoutesResource(), ns_, wo);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  std::vector<std::string> rvs;
  for (const char* n : {"a", "b", "c"}) {
    auto ev = NextObjectEvent(**w);
    ASSERT_TRUE(ev.ok()) << ev.status().ToString();
    EXPECT_EQ(ev->type, WatchEventType::kAdded);
    EXPECT_EQ(ev->object["metadata"]["name"], n);
    rvs.push_back(ev->ResourceVersion());
  }
  // A live event, then a resume from the middle replays what followed.
  MustCreate(NewRoute(ns_, "d"));
  auto live = NextObjectEvent(**w);
  ASSERT_TRUE(live.ok());
  EXPECT_EQ(live->object["metadata"]["name"], "d");
  (*w)->Cancel();

  wo.resource_version = rvs[1];
  auto resumed = client_->Watch(RoutesResource(), ns_, wo);
  ASSERT_TRUE(resumed.ok()) << resumed.status().ToString();
  auto c = NextObjectEvent(**resumed);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->object["metadata"]["name"], "c");
  auto d = NextObjectEvent(**resumed);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->object["metadata"]["name"], "d");
}

TEST_P(RestClientApiserverTest, BookmarksArrive) {
  WatchOptions wo;
  wo.timeout = seconds(30);
  auto w = client_->Watch(RoutesResource(), ns_, wo);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  // Why a route elsewhere: like kube, the server bookmarks a watch only once
  // its resource has moved past the version the watch began at.
  ASSERT_TRUE(server_->CreateNamespace(ns_ + "-other").ok());
  json other = MustCreate(NewRoute(ns_ + "-other", "r"));
  // Why more than one: the suite's server is shared, so an earlier test's
  // route may be bookmarked first.
  const std::string rv = other["metadata"]["resourceVersion"];
  for (int i = 0; i < 3; ++i) {
    auto ev = (*w)->Next();
    ASSERT_TRUE(ev.ok()) << ev.status().ToString();
    EXPECT_EQ(ev->type, WatchEventType::kBookmark);
    if (ev->ResourceVersion() == rv) return;
  }
  ADD_FAILURE() << "no bookmark at " << rv;
}

TEST_P(RestClientApiserverTest, StaleStatusWriteIsConflict) {
  json created = MustCreate(NewRoute(ns_, "r1"));
  auto route = RouteFromJson(created);
  ASSERT_TRUE(route.ok()) << route.status().ToString();
  RouteIngress entry;
  entry.router_name = "default";
  entry.host = "r1.example.com";
  entry.conditions.push_back({"Admitted", "True", "", "", "2026-11-29T14:00:00Z"});
  StatusOr<json> body = created;
  (*body)["status"]["ingress"] = json::array({IngressToJson(entry)});
  auto written = client_->UpdateStatus(RoutesResource(), *body);
  ASSERT_TRUE(written.ok()) << written.status().ToString();
  EXPECT_NE((*written)["metadata"]["resourceVersion"], created["metadata"]["resourceVersion"]);
  EXPECT_EQ((*written)["status"]["ingress"][0]["routerName"], "default");
  // The same write again carries the old resourceVersion.
  auto stale = client_->UpdateStatus(RoutesResource(), *body);
  EXPECT_EQ(stale.status().code(), StatusCode::kConflict) << stale.status().ToString();
  EXPECT_NE(stale.status().message().find("modified"), std::string::npos) << stale.status().message();
}

// The status write the controller sends: a merge patch of status.ingress
// guarded by the cached resourceVersion. Another router's entry sent back
// stays as it was; a stale version is 409 as for a PUT; a deleted route 404.
TEST_P(RestClientApiserverTest, StatusMergePatchIsGuardedByItsResourceVersion) {
  json object = NewRoute(ns_, "r2");
  object["metadata"]["annotations"] = {{"big", std::string(2000, 'x')}};
  json created = MustCreate(object);
  created["status"]["ingress"] = {{{"routerName", "other"}, {"host", "o"}, {"extra", 1}}};
  auto with_other = client_->UpdateStatus(RoutesResource(), created);
  ASSERT_TRUE(with_other.ok()) << with_other.status().ToString();
  auto route = RouteFromJson(*with_other);
  ASSERT_TRUE(route.ok()) << route.status().ToString();
  RouteIngress entry;
  entry.router_name = "default";
  entry.host = "r2.example.com";
  entry.conditions.push_back({"Admitted", "True", "", "", "2026-11-29T14:00:00Z"});
  auto patch = IngressStatusPatch(*route, "default", entry);
  ASSERT_TRUE(patch.ok()) << patch.status().ToString();
  auto written = client_->MergePatchStatus(RoutesResource(), ns_, "r2", *patch);
  ASSERT_TRUE(written.ok()) << written.status().ToString();
  EXPECT_NE((*written)["metadata"]["resourceVersion"], (*with_other)["metadata"]["resourceVersion"]);
  ASSERT_EQ((*written)["status"]["ingress"].size(), 2u);
  EXPECT_EQ((*written)["status"]["ingress"][0], (*with_other)["status"]["ingress"][0]);
  EXPECT_EQ((*written)["status"]["ingress"][1]["routerName"], "default");
  EXPECT_EQ((*written)["metadata"]["annotations"], object["metadata"]["annotations"]);
  auto stale = client_->MergePatchStatus(RoutesResource(), ns_, "r2", *patch);
  EXPECT_EQ(stale.status().code(), StatusCode::kConflict) << stale.status().ToString();
  EXPECT_NE(stale.status().message().find("modified"), std::string::npos) << stale.status().message();
  ASSERT_TRUE(client_->Delete(RoutesResource(), ns_, "r2").ok());
  auto gone = client_->MergePatchStatus(RoutesResource(), ns_, "r2", *patch);
  EXPECT_EQ(gone.status().code(), StatusCode::kNotFound) << gone.status().ToString();
}

TEST_P(RestClientApiserverTest, ExpiredVersionIsGone) {
  auto page = client_->List(RoutesResource(), ns_, {});
  ASSERT_TRUE(page.ok());
  MustCreate(NewRoute(ns_, "a"));
  MustCreate(NewRoute(ns_, "b"));
  server_->Compact();
  WatchOptions wo;
  wo.resource_version = page->resource_version;
  wo.timeout = seconds(30);
  auto w = client_->Watch(RoutesResource(), ns_, wo);
  Status gone;
  if (!w.ok()) {
    gone = w.status();
  } else {
    auto ev = (*w)->Next();
    ASSERT_TRUE(ev.ok()) << ev.status().ToString();
    ASSERT_EQ(ev->type, WatchEventType::kError);
    gone = ev->ErrorStatus();
  }
  EXPECT_EQ(gone.code(), StatusCode::kGone) << gone.ToString();
}

TEST_P(RestClientApiserverTest, TooManyRequestsRetryAfterIsHonoured) {
  MustCreate(NewRoute(ns_, "r1"));
  apiserver::FaultRule rule;
  rule.verb = "GET";
  rule.resource = "routes";
  rule.count = 2;
  rule.code = 429;
  rule.retry_after_seconds = 3;
  server_->faults().Add(rule);
  testing::FakeClock fake;
  auto client = NewClient(fake);
  SteadyTime start = fake.Now();
  auto f = std::async(std::launch::async, [&] { return client->Get(RoutesResource(), ns_, "r1"); });
  while (f.wait_for(milliseconds(2)) != std::future_status::ready) fake.Advance(milliseconds(100));
  auto got = f.get();
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_GE(fake.Now() - start, seconds(6));  // waited Retry-After twice
  EXPECT_EQ(server_->RequestCount("GET", "routes", "", 429), 2u);

  // With retries off the caller gets the code and the delay.
  rule.count = 1;
  server_->faults().Add(rule);
  RestOptions no_retry;
  no_retry.max_retries = 0;
  auto impatient = NewClient(fake, no_retry);
  auto refused = impatient->Get(RoutesResource(), ns_, "r1");
  EXPECT_EQ(refused.status().code(), StatusCode::kTooManyRequests);
  EXPECT_EQ(refused.status().retry_after(), seconds(3));
}

TEST_P(RestClientApiserverTest, CancelInFlightWatch) {
  WatchOptions wo;
  // Why a quiet watch: the server must notice the closed connection without
  // writing (kube's bookmarks do not come to a quiet watch); the client side
  // of the close is checked in the wire test.
  wo.allow_bookmarks = true;
  wo.timeout = seconds(60);
  auto w = client_->Watch(RoutesResource(), ns_, wo);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  WatchStream* stream = w->get();
  std::thread canceller([stream] {
    std::this_thread::sleep_for(milliseconds(200));
    stream->Cancel();
  });
  auto start = std::chrono::steady_clock::now();
  StatusOr<WatchEvent> ev = stream->Next();
  while (ev.ok() && ev->type == WatchEventType::kBookmark) ev = stream->Next();
  canceller.join();
  EXPECT_EQ(ev.status().code(), StatusCode::kCancelled);
  EXPECT_LT(std::chrono::steady_clock::now() - start, seconds(5));
  // The server sees the connection go away.
  for (int i = 0; i < 500 && server_->OpenWatches() > 0; ++i) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  EXPECT_EQ(server_->OpenWatches(), 0u);
}

TEST_P(RestClientApiserverTest, ServerClosingWatchesEndsTheStream) {
  WatchOptions wo;
  wo.allow_bookmarks = false;
  auto w = client_->Watch(RoutesResource(), ns_, wo);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  for (int i = 0; i < 500 && server_->OpenWatches() == 0; ++i) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  server_->CloseAllWatches();
  auto ev = (*w)->Next();
  EXPECT_EQ(ev.status().code(), StatusCode::kClosed) << ev.status().ToString();
}

TEST(RestClientTlsMaterialTest, ClientCertificateAndKeyAreChecked) {
  auto a = apiserver::GenerateSelfSignedCert();
  auto b = apiserver::GenerateSelfSignedCert();
  ASSERT_TRUE(a.ok() && b.ok());
  RealClock clock;
  RestConfig cfg;
  cfg.server = "https://127.0.0.1:1";
  cfg.origin = "kubeconfig /k context c";
  cfg.ca_data = a->cert_pem;
  cfg.client_cert_data = a->cert_pem;
  cfg.client_key_data = a->key_pem;
  auto ok = NewRestKubeClient(cfg, clock);
  EXPECT_TRUE(ok.ok()) << ok.status().ToString();
  cfg.client_key_data = b->key_pem;  // another key
  auto mismatched = NewRestKubeClient(cfg, clock);
  ASSERT_FALSE(mismatched.ok());
  EXPECT_NE(mismatched.status().message().find("does not match"), std::string::npos)
      << mismatched.status().message();
  EXPECT_NE(mismatched.status().message().find("/k"), std::string::npos);
}

// Counts the client's /readyz probes.
class ReadinessCounter final : public RestObserver {
 public:
  void OnConnectionRetry(std::string_view) override {}
  void OnExecPlugin(std::string_view) override {}
  void OnReadinessProbe(bool ready) override { (ready ? ready_ : not_ready_)++; }
  std::atomic<int> ready_{0}, not_ready_{0};
};

// Issue 57: a server that is starting answers routes 503 with Retry-After
// 10 (kube-apiserver before its CRD informer has synced); the client asks
// /readyz about every 0.5 s meanwhile and retries as soon as it is ready,
// not 10 s later.
TEST_P(RestClientApiserverTest, A503IsRetriedWhenReadyzSaysReadyNotAtItsRetryAfter) {
  ReadinessCounter probes;
  RestOptions opts;
  opts.observer = &probes;
  opts.seed = 7;
  auto client = NewClient(clock_, opts);
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(server_->Restart(milliseconds(0), milliseconds(1500)).ok());
  const auto start = std::chrono::steady_clock::now();
  auto listed = client->List(RoutesResource(), ns_, ListOptions{});
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  EXPECT_EQ(probes.ready_.load(), 1);
  EXPECT_GE(probes.not_ready_.load(), 1);
  EXPECT_LT(took, seconds(5)) << "waited out the Retry-After (10 s)";
}

INSTANTIATE_TEST_SUITE_P(HttpAndHttps, RestClientApiserverTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& p) {
                           return p.param ? "Https" : "Http";
                         });

}  // namespace
}  // namespace routestatus::kubeclient::rest
