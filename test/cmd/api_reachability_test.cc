#include "cmd/route-status-controller/api_reachability.h"

#include <algorithm>
#include <atomic>
#include <functional>
#include <thread>
#include <mutex>
#include <string>
#include <vector>

#include <glog/logging.h>
#include <gtest/gtest.h>
#include <prometheus/registry.h>

#include "cmd/route-status-controller/api_metrics.h"
#include "cmd/route-status-controller/component_options.h"
#include "cmd/route-status-controller/controller_app.h"
#include "cmd/route-status-controller/metrics_collector.h"
#include "test/kubeclient/cache/fake_kube_client.h"
#include "test/testing/fake_clock.h"

namespace routestatus::cmd {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// Collects the glog lines (WARNING and INFO) logged while it is installed.
class LineSink : public google::LogSink {
 public:
  LineSink() { google::AddLogSink(this); }
  ~LineSink() override { google::RemoveLogSink(this); }
  using google::LogSink::send;
  void send(google::LogSeverity severity, const char*, const char*, int,
            const google::LogMessageTime&, const char* message, size_t len) override {
    if (severity != google::GLOG_WARNING && severity != google::GLOG_INFO) return;
    std::lock_guard<std::mutex> l(mu_);
    lines_.push_back((severity == google::GLOG_WARNING ? "W " : "I ") + std::string(message, len));
  }
  // Lines mentioning the API server (other components log too).
  std::vector<std::string> Lines() {
    std::lock_guard<std::mutex> l(mu_);
    std::vector<std::string> out;
    for (const auto& line : lines_) {
      if (line.find("Kubernetes API server") != std::string::npos) out.push_back(line);
    }
    return out;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> lines_;
};

Status Refused() { return Status(StatusCode::kUnavailable, "GET /apis: Connection refused"); }

// Polls `done` (real time) for up to 5 s.
bool WaitUntil(const std::function<bool()>& done) {
  auto deadline = std::chrono::steady_clock::now() + seconds(5);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(milliseconds(10));
  }
  return true;
}

uint64_t Failures(const ApiReachabilitySnapshot& s, FailureClass c) {
  return s.failures[static_cast<size_t>(c)];
}

class ApiReachabilityTest : public ::testing::Test {
 protected:
  testing::FakeClock clock_;
  ApiReachability reachability_{clock_, {"https://api.example.com:6443"}};
};

TEST_F(ApiReachabilityTest, OneWarningPerOutageAndOneInfoWhenItAnswersAgain) {
  LineSink sink;
  reachability_.Record(Refused());
  clock_.Advance(milliseconds(400));
  reachability_.Record(Refused());
  EXPECT_TRUE(sink.Lines().empty()) << "within the grace period";
  EXPECT_TRUE(reachability_.Snapshot().reachable);
  clock_.Advance(milliseconds(700));
  reachability_.Record(Refused());
  for (int i = 0; i < 20; ++i) {
    clock_.Advance(seconds(1));
    reachability_.Record(Refused());
    reachability_.Record(kubeclient::StatusFromResponse(503, ""));
  }
  auto lines = sink.Lines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0],
            "W Kubernetes API server https://api.example.com:6443 unreachable for 1.1 s (3 failed "
            "requests; latest: unavailable: GET /apis: Connection refused); the caches keep their "
            "last state and every request is retried; one line follows when it answers again");
  ApiReachabilitySnapshot during = reachability_.Snapshot();
  EXPECT_FALSE(during.reachable);
  EXPECT_EQ(during.outages, 1u);
  EXPECT_EQ(Failures(during, FailureClass::kConnectionRefused), 23u);
  EXPECT_EQ(Failures(during, FailureClass::kServerError), 20u);
  EXPECT_EQ(during.last_success, SystemTime{});

  clock_.Advance(milliseconds(500));
  reachability_.Record(Status::Ok());
  reachability_.Record(Status::Ok());
  lines = sink.Lines();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1],
            "I Kubernetes API server https://api.example.com:6443 answers again after 21.6 s "
            "unreachable (43 failed requests)");
  ApiReachabilitySnapshot after = reachability_.Snapshot();
  EXPECT_TRUE(after.reachable);
  EXPECT_EQ(after.last_success, clock_.WallNow());

  // A second outage is a second pair of lines.
  reachability_.Record(Refused());
  clock_.Advance(seconds(2));
  reachability_.Record(Refused());
  reachability_.Record(Status(StatusCode::kGone, "too old resource version", std::nullopt, 410));
  EXPECT_EQ(sink.Lines().size(), 4u);
  EXPECT_EQ(reachability_.Snapshot().outages, 2u);
}

TEST_F(ApiReachabilityTest, BlipsThrottlingAndCancellationAreNoOutage) {
  LineSink sink;
  reachability_.Record(Status(StatusCode::kUnavailable, "watch: Connection reset by peer"));
  clock_.Advance(milliseconds(300));
  reachability_.Record(Status::Ok());
  clock_.Advance(seconds(5));
  reachability_.Record(Refused());
  for (int i = 0; i < 10; ++i) {
    clock_.Advance(seconds(1));
    reachability_.Record(kubeclient::StatusFromResponse(429, ""));
    reachability_.Record(Status(StatusCode::kCancelled, "cancelled"));
    reachability_.Record(Status(StatusCode::kClosed, "watch closed by the server"));
  }
  reachability_.Record(Status::Ok());
  EXPECT_TRUE(sink.Lines().empty());
  ApiReachabilitySnapshot s = reachability_.Snapshot();
  EXPECT_TRUE(s.reachable);
  EXPECT_EQ(s.outages, 0u);
  EXPECT_EQ(Failures(s, FailureClass::kConnectionReset), 1u);
  EXPECT_EQ(Failures(s, FailureClass::kConnectionRefused), 1u);
  EXPECT_EQ(Failures(s, FailureClass::kThrottled), 10u);
  EXPECT_EQ(Failures(s, FailureClass::kAnswered), 0u);
}

// Issue 23, item 6: one route's status PUT answered `500 etcdserver:
// request is too large` every few seconds while nothing else fails is that
// route's problem: no outage (it flipped routestatus_api_reachable to 0 and
// back). 5xx answers about two objects, or a list's, are an outage.
TEST_F(ApiReachabilityTest, ServerErrorsAboutOneObjectAreNoOutage) {
  LineSink sink;
  const Status too_large = kubeclient::StatusFromResponse(500, "etcdserver: request is too large");
  for (int i = 0; i < 30; ++i) {
    clock_.Advance(seconds(3));
    reachability_.Record(too_large, "ns/big");
  }
  ApiReachabilitySnapshot s = reachability_.Snapshot();
  EXPECT_TRUE(s.reachable);
  EXPECT_EQ(s.outages, 0u);
  EXPECT_EQ(Failures(s, FailureClass::kServerError), 30u);
  EXPECT_TRUE(sink.Lines().empty());
  // Another object fails too: the server's problem, an outage after the grace.
  reachability_.Record(too_large, "ns/other");
  clock_.Advance(milliseconds(500));
  reachability_.Record(too_large, "ns/big");
  EXPECT_TRUE(reachability_.Snapshot().reachable) << "the outage clock started at ns/other";
  clock_.Advance(milliseconds(600));
  reachability_.Record(too_large, "ns/big");
  EXPECT_FALSE(reachability_.Snapshot().reachable);
  reachability_.Record(Status::Ok());
  // A list answered 5xx is about no one object.
  reachability_.Record(too_large, "ns/big");
  clock_.Advance(seconds(2));
  reachability_.Record(kubeclient::StatusFromResponse(503, ""));
  clock_.Advance(seconds(2));
  reachability_.Record(kubeclient::StatusFromResponse(503, ""));
  EXPECT_FALSE(reachability_.Snapshot().reachable);
  EXPECT_EQ(reachability_.Snapshot().outages, 2u);
}

// The decorator feeds every request and watch read; the collector exports
// the snapshot.
TEST_F(ApiReachabilityTest, InstrumentedClientFeedsItAndTheCollectorExportsIt) {
  auto fake = std::make_unique<kubeclient::cache::testing::FakeKubeClient>();
  auto* server = fake.get();
  prometheus::Registry registry;
  InstrumentedKubeClient client(std::move(fake), registry, &reachability_);
  LineSink sink;
  server->FailNextLists({Refused(), Refused(), Refused()});
  for (int i = 0; i < 3; ++i) {
    EXPECT_FALSE(client.List(kubeclient::RoutesResource(), "", {}).ok());
    clock_.Advance(milliseconds(600));
  }
  kubeclient::cache::testing::WatchScript script;
  kubeclient::WatchEvent bookmark;
  bookmark.type = kubeclient::WatchEventType::kBookmark;
  bookmark.object = {{"metadata", {{"resourceVersion", "7"}}}};
  script.events = {bookmark};
  server->AddWatch(script);
  auto stream = client.Watch(kubeclient::RoutesResource(), "", {});
  ASSERT_TRUE(stream.ok());
  ASSERT_TRUE((*stream)->Next().ok());
  EXPECT_EQ((*stream)->Next().status().code(), StatusCode::kClosed);
  auto lines = sink.Lines();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].substr(0, 2), "W ");
  EXPECT_NE(lines[1].find("answers again after 1.8 s unreachable (3 failed requests)"),
            std::string::npos)
      << lines[1];

  MetricsSources sources;
  sources.api = &reachability_;
  MetricsCollector collector(sources);
  std::map<std::string, double> values;
  for (const auto& family : collector.Collect()) {
    for (const auto& m : family.metric) {
      std::string key = family.name;
      for (const auto& l : m.label) key += "{" + l.name + "=" + l.value + "}";
      values[key] = family.type == prometheus::MetricType::Counter ? m.counter.value : m.gauge.value;
    }
  }
  EXPECT_EQ(values["routestatus_api_reachable"], 1);
  EXPECT_EQ(values["routestatus_api_outages_total"], 1);
  EXPECT_EQ(values["routestatus_api_request_failures_total{class=connection_refused}"], 3);
  EXPECT_EQ(values["routestatus_api_request_failures_total{class=server_error}"], 0);
  EXPECT_EQ(values.count("routestatus_api_request_failures_total{class=answered}"), 0u);
  EXPECT_DOUBLE_EQ(values["routestatus_api_last_success_timestamp_seconds"],
                   std::chrono::duration<double>(clock_.WallNow().time_since_epoch()).count());
}

// Lists and watches come from a FakeKubeClient; status writes fail without
// an answer while `down` is set, else succeed (counted).
class StatusWritesClient final : public kubeclient::KubeClient {
 public:
  kubeclient::cache::testing::FakeKubeClient lists;
  std::atomic<bool> down{true};
  std::atomic<int> failed{0}, written{0};

  StatusOr<nlohmann::json> Get(const kubeclient::ResourceRef& r, const std::string& ns,
                                           const std::string& n) override {
    return lists.Get(r, ns, n);
  }
  StatusOr<kubeclient::ListPage> List(const kubeclient::ResourceRef& r,
                                                  const std::string& ns,
                                                  const kubeclient::ListOptions& o) override {
    return lists.List(r, ns, o);
  }
  StatusOr<std::unique_ptr<kubeclient::WatchStream>> Watch(
      const kubeclient::ResourceRef& r, const std::string& ns,
      const kubeclient::WatchOptions& o) override {
    return lists.Watch(r, ns, o);
  }
  StatusOr<nlohmann::json> Create(const kubeclient::ResourceRef& r,
                                              const std::string& ns,
                                              const nlohmann::json& o) override {
    return lists.Create(r, ns, o);
  }
  StatusOr<nlohmann::json> Update(const kubeclient::ResourceRef& r,
                                              const nlohmann::json& o) override {
    return lists.Update(r, o);
  }
  StatusOr<nlohmann::json> UpdateStatus(const kubeclient::ResourceRef&,
                                                    const nlohmann::json&) override {
    return Status(StatusCode::kInternal, "the controller writes status with a merge patch");
  }
  StatusOr<nlohmann::json> MergePatchStatus(const kubeclient::ResourceRef&, const std::string&,
                                            const std::string&,
                                            const nlohmann::json& p) override {
    if (down.load()) {
      ++failed;
      return Refused();
    }
    ++written;
    nlohmann::json out = p;
    out["metadata"]["resourceVersion"] = "100";
    return out;
  }
  Status Delete(const kubeclient::ResourceRef& r, const std::string& ns,
                            const std::string& n) override {
    return lists.Delete(r, ns, n);
  }
};

// A status write that failed during an outage is tried again as soon as the
// server answers, not after the lease retry interval (30 s here).
TEST_F(ApiReachabilityTest, WorkThatFailedDuringAnOutageRunsWhenTheServerAnswersAgain) {
  auto owned = std::make_unique<StatusWritesClient>();
  StatusWritesClient& client = *owned;
  client.lists.SetObject("ns/a", kubeclient::cache::testing::MakeRouteJson("ns", "a", 5));
  client.lists.SetListResourceVersion(10);
  Options o;
  o.workers = 1;
  o.lease_interval = seconds(60);  // the retry must fit in it
  o.lease_retry_interval = seconds(30);
  o.lease_election_delay = milliseconds(0);
  o.watch_list = false;  // Why: the fake client pages lists; it does not stream
  prometheus::Registry registry;
  ControllerApp app(o, BuildComponentOptions(o, {}).value(), std::move(owned), registry,
                    &reachability_);
  app.Start();
  ASSERT_TRUE(WaitUntil([&] { return client.failed.load() == 1; })) << "the first write";
  reachability_.Record(Refused());
  clock_.Advance(seconds(2));
  reachability_.Record(Refused());  // an outage
  ASSERT_FALSE(reachability_.Snapshot().reachable);
  client.down = false;
  reachability_.Record(Status::Ok());  // it answers again
  EXPECT_TRUE(WaitUntil([&] { return client.written.load() == 1; }))
      << "the failed write waited for its retry interval";
  EXPECT_EQ(client.failed.load(), 1);
  EXPECT_TRUE(app.Stop(seconds(3)));
}

}  // namespace
}  // namespace routestatus::cmd

namespace routestatus::cmd {
namespace {

// Issue 24: a replica whose path is blackholed hears nothing for a minute;
// its first failure is a handshake that gave up after 2 s. That is an
// outage at once (2 s without an answer), reported from the last answer,
// and the outage handler runs (the lease steps down).
TEST_F(ApiReachabilityTest, OutageCountsFromTheSendTimeAndIsReportedFromTheLastAnswer) {
  LineSink sink;
  int outages_seen = 0;
  reachability_.SetOutageHandler([&] { ++outages_seen; });
  reachability_.Record(Status::Ok());  // a bookmark
  clock_.Advance(seconds(60));
  const SteadyTime sent = clock_.Now();
  clock_.Advance(seconds(2));
  reachability_.Record(Status(StatusCode::kTimeout, "watch: timed out: no connection"), {}, sent);
  auto lines = sink.Lines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("unreachable for 62.0 s since its last answer (1 failed requests; "
                          "latest: timeout: watch: timed out: no connection)"),
            std::string::npos)
      << lines[0];
  EXPECT_FALSE(reachability_.Snapshot().reachable);
  EXPECT_EQ(outages_seen, 1);
  clock_.Advance(seconds(30));
  reachability_.Record(Status::Ok());
  lines = sink.Lines();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[1].find("answers again after 92.0 s unreachable"), std::string::npos)
      << lines[1];
  EXPECT_EQ(outages_seen, 1);

  // A failure sent before the last answer counts from that answer: a slow
  // request that gave up while other answers came is no outage.
  const SteadyTime early = clock_.Now();
  clock_.Advance(seconds(20));
  reachability_.Record(Status::Ok());
  reachability_.Record(Status(StatusCode::kTimeout, "GET: timed out"), {}, early);
  EXPECT_TRUE(reachability_.Snapshot().reachable);
  EXPECT_EQ(sink.Lines().size(), 2u);
}

}  // namespace
}  // namespace routestatus::cmd
