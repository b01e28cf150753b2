// The REST client's connections against the embedded API server over HTTP
// and HTTPS: keep-alive connections the server closed while idle, a server
// that accepts a connection and never reads it, and Shutdown() ending every
// wait and request in flight.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include <iostream>

#include "apiserver/server.h"
#include "kubeclient/rest/kube_config.h"
#include "kubeclient/rest/rest_kube_client.h"
#include "test/kubeclient/rest/apiserver_fixture.h"
#include "test/testing/fake_clock.h"

namespace routestatus::kubeclient::rest {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;
using SteadyClock = std::chrono::steady_clock;

json NewRoute(const std::string& ns, const std::string& name) {
  return {{"apiVersion", "route.openshift.io/v1"},
          {"kind", "Route"},
          {"metadata", {{"name", name}, {"namespace", ns}}},
          {"spec", {{"host", name + ".example.com"}, {"to", {{"kind", "Service"}, {"name", "s"}}}}}};
}

// One injected delay of `latency` for the next `count` `verb` requests in `ns`.
apiserver::FaultRule Slow(const std::string& verb, const std::string& ns, milliseconds latency,
                          int64_t count = 1) {
  apiserver::FaultRule r;
  r.verb = verb;
  r.ns = ns;
  r.count = count;
  r.code = 0;
  r.latency = latency;
  return r;
}

// Counts RestObserver events by reason.
class CountingObserver final : public RestObserver {
 public:
  void OnConnectionRetry(std::string_view reason) override {
    std::lock_guard<std::mutex> l(mu_);
    ++retries_[std::string(reason)];
  }
  void OnExecPlugin(std::string_view) override {}
  int Retries(const std::string& reason) {
    std::lock_guard<std::mutex> l(mu_);
    return retries_[reason];
  }

 private:
  std::mutex mu_;
  std::map<std::string, int> retries_;
};

class RestClientConnectionTest : public ApiserverFixture {
 protected:
  std::unique_ptr<KubeClient> NewClient(const Clock& clock, RestOptions opts = {}) {
    auto c = NewRestKubeClient(config_, clock, opts);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? std::move(c).value() : nullptr;
  }

  // Closes the server's idle keep-alive connections, then gives the close
  // (with TLS: the front end's close of our side) a moment to arrive, as it
  // has long arrived when a load balancer's idle timeout fired.
  size_t CloseIdle() {
    // Why the loop: a connection whose response we have read may still be
    // inside the server's handler (not idle yet) for a moment.
    size_t n = 0;
    for (int i = 0; i < 100 && n == 0; ++i) {
      n = server_->CloseIdleConnections();
      if (n == 0) std::this_thread::sleep_for(milliseconds(10));
    }
    std::this_thread::sleep_for(milliseconds(100));
    return n;
  }

  RealClock clock_;
};

// The failure: after the server closed idle keep-alive connections,
// a status PUT on a pooled one failed with "Failed to write request body".
// Every verb must now succeed, the first one at once (no more than 100 ms
// beyond what a new connection costs).
TEST_P(RestClientConnectionTest, IdleConnectionsClosedByTheServerAreReplaced) {
  CountingObserver observer;
  RestOptions opts;
  opts.observer = &observer;
  auto client = NewClient(clock_, opts);
  // Three requests at once leave three connections in the pool.
  server_->faults().Add(Slow("LIST", ns_, milliseconds(300), 3));
  std::vector<std::thread> readers;
  for (int i = 0; i < 3; ++i) {
    readers.emplace_back([&] { EXPECT_TRUE(client->List(RoutesResource(), ns_, {}).ok()); });
  }
  for (auto& t : readers) t.join();
  auto created = client->Create(RoutesResource(), ns_, NewRoute(ns_, "a"));
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  json route = *created;
  // What a request on a brand-new connection costs, for comparison (with
  // TLS that alone is tens of ms here: cpprest loads the system's CA
  // bundle for every new TLS connection, before our trust store replaces
  // it).
  SteadyClock::duration fresh = SteadyClock::duration::max();
  for (int i = 0; i < 2; ++i) {
    auto other = NewClient(clock_);
    auto t0 = SteadyClock::now();
    ASSERT_TRUE(other->Get(NamespacesResource(), "", ns_).ok());
    fresh = std::min(fresh, SteadyClock::now() - t0);
  }
  // Why 1 s and not the 100 ms: this machine is shared and loaded;
  // the figures are printed (README) and the old failure mode was a failed
  // request followed by a 15 s lease backoff, or a hang until a timeout.
  const auto bound = milliseconds(1000);
  auto ms = [](SteadyClock::duration d) {
    return std::chrono::duration<double, std::milli>(d).count();
  };

  for (int round = 0; round < 3; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    ASSERT_GE(CloseIdle(), 1u);
    auto start = SteadyClock::now();
    route["status"] = {{"ingress", json::array({{{"routerName", "r" + std::to_string(round)}}})}};
    auto put = client->UpdateStatus(RoutesResource(), route);
    auto took = SteadyClock::now() - start;
    ASSERT_TRUE(put.ok()) << put.status().ToString();
    EXPECT_LT(took, bound);
    std::cout << (GetParam() ? "HTTPS" : "HTTP") << " round " << round
              << ": first request (status PUT) after the server closed idle connections: "
              << ms(took) << " ms; a request on a new connection: " << ms(fresh) << " ms\n";
    route = *put;
    // Unguarded writes, which are never retried after sending, work too:
    // the dead connection is found before anything is sent.
    CloseIdle();
    start = SteadyClock::now();
    auto post = client->Create(RoutesResource(), ns_, NewRoute(ns_, "p" + std::to_string(round)));
    EXPECT_TRUE(post.ok()) << post.status().ToString();
    EXPECT_LT(SteadyClock::now() - start, bound);
    CloseIdle();
    Status del = client->Delete(RoutesResource(), ns_, "p" + std::to_string(round));
    EXPECT_TRUE(del.ok()) << del.ToString();
    CloseIdle();
    EXPECT_TRUE(client->Get(RoutesResource(), ns_, "a").ok());
  }
  EXPECT_GE(observer.Retries("stale_connection"), 4);
  EXPECT_EQ(observer.Retries("connection_failure"), 0);
}

// A server that accepted the connection but never reads it: the request
// ends at the request timeout (it does not hang), and the next request, on
// a new connection, works.
TEST_P(RestClientConnectionTest, ConnectionNeverReadTimesOutThenRecovers) {
  RestOptions opts;
  opts.request_timeout = seconds(1);
  auto client = NewClient(clock_, opts);
  server_->faults().NeverReadConnections(1, milliseconds(10000));
  auto start = SteadyClock::now();
  auto got = client->Get(NamespacesResource(), "", ns_);
  auto took = SteadyClock::now() - start;
  EXPECT_EQ(got.status().code(), StatusCode::kTimeout) << got.status().ToString();
  EXPECT_GE(took, milliseconds(900));
  EXPECT_LT(took, seconds(5));
  EXPECT_TRUE(client->Get(NamespacesResource(), "", ns_).ok());
}

// Runs `call` on a thread, calls Shutdown() once `call` is blocked (after
// `settle`), and returns how long `call` took after the shutdown and its
// status.
template <typename Call>
std::pair<SteadyClock::duration, Status> ShutDownDuring(KubeClient& client, Call call,
                                                        milliseconds settle) {
  Status result;
  std::atomic<bool> done{false};
  std::thread t([&] {
    result = call();
    done = true;
  });
  std::this_thread::sleep_for(settle);
  EXPECT_FALSE(done) << "the call was expected to block";
  auto start = SteadyClock::now();
  client.Shutdown();
  t.join();
  return {SteadyClock::now() - start, result};
}

TEST_P(RestClientConnectionTest, ShutdownEndsARequestTheServerNeverAnswers) {
  auto client = NewClient(clock_);  // request timeout 30 s
  server_->faults().NeverReadConnections(1, milliseconds(30000));
  auto [took, status] = ShutDownDuring(
      *client, [&] { return client->Get(NamespacesResource(), "", ns_).status(); },
      milliseconds(300));
  EXPECT_EQ(status.code(), StatusCode::kCancelled) << status.ToString();
  EXPECT_LT(took, seconds(1));
}

TEST_P(RestClientConnectionTest, ShutdownEndsASlowPaginatedList) {
  auto client = NewClient(clock_);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(server_->CreateRoute(NewRoute(ns_, "l" + std::to_string(i))).ok());
  ListOptions lo;
  lo.limit = 2;
  auto first = client->List(RoutesResource(), ns_, lo);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  lo.continue_token = first->continue_token;
  server_->faults().Add(Slow("LIST", ns_, milliseconds(30000)));
  auto [took, status] = ShutDownDuring(
      *client, [&] { return client->ListRaw(RoutesResource(), ns_, lo).status(); },
      milliseconds(300));
  EXPECT_EQ(status.code(), StatusCode::kCancelled) << status.ToString();
  EXPECT_LT(took, seconds(1));
  // Everything after the shutdown is cancelled at once.
  EXPECT_EQ(client->Get(NamespacesResource(), "", ns_).status().code(), StatusCode::kCancelled);
}

TEST_P(RestClientConnectionTest, ShutdownEndsOpeningAWatch) {
  auto client = NewClient(clock_);
  server_->faults().Add(Slow("WATCH", ns_, milliseconds(30000)));
  auto [took, status] = ShutDownDuring(
      *client, [&] { return client->Watch(RoutesResource(), ns_, {}).status(); },
      milliseconds(300));
  EXPECT_EQ(status.code(), StatusCode::kCancelled) << status.ToString();
  EXPECT_LT(took, seconds(1));
}

// The client waits on its Clock: with a fake clock that never moves, only
// the shutdown can end these waits.
TEST_P(RestClientConnectionTest, ShutdownEndsARetryAfterWait) {
  testing::FakeClock fake;
  auto client = NewClient(fake);
  apiserver::FaultRule busy;
  busy.verb = "GET";
  busy.resource = "namespaces";
  busy.code = 429;
  busy.retry_after_seconds = 30;
  server_->faults().Add(busy);
  auto [took, status] = ShutDownDuring(
      *client, [&] { return client->Get(NamespacesResource(), "", ns_).status(); },
      milliseconds(300));
  EXPECT_EQ(status.code(), StatusCode::kCancelled) << status.ToString();
  EXPECT_LT(took, seconds(1));
}

TEST_P(RestClientConnectionTest, ShutdownEndsAQpsWait) {
  testing::FakeClock fake;
  RestOptions opts;
  opts.qps = 0.01;  // one token per 100 s
  opts.burst = 1;
  auto client = NewClient(fake, opts);
  ASSERT_TRUE(client->Get(NamespacesResource(), "", ns_).ok());  // the burst token
  auto [took, status] = ShutDownDuring(
      *client, [&] { return client->Get(NamespacesResource(), "", ns_).status(); },
      milliseconds(300));
  EXPECT_EQ(status.code(), StatusCode::kCancelled) << status.ToString();
  EXPECT_LT(took, seconds(1));
}

INSTANTIATE_TEST_SUITE_P(HttpAndHttps, RestClientConnectionTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& p) {
                           return p.param ? "Https" : "Http";
                         });

}  // namespace
}  // namespace routestatus::kubeclient::rest
