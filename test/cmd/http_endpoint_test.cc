#include "cmd/route-status-controller/http_endpoint.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <prometheus/counter.h>
#include <prometheus/gauge.h>

namespace routestatus::cmd {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

struct Response {
  int code = 0;
  std::string headers;
  std::string body;
};

// A minimal HTTP/1.1 client: one request per connection, reads to EOF.
Response Request(int port, const std::string& method, const std::string& path) {
  Response r;
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return r;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return r;
  }
  std::string req = method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
  ::send(fd, req.data(), req.size(), 0);
  std::string raw;
  char buf[4096];
  ssize_t n;
  while ((n = ::recv(fd, buf, sizeof(buf), 0)) > 0) raw.append(buf, static_cast<size_t>(n));
  ::close(fd);
  size_t split = raw.find("\r\n\r\n");
  if (split == std::string::npos || raw.size() < 12) return r;
  r.headers = raw.substr(0, split);
  r.body = raw.substr(split + 4);
  r.code = std::atoi(raw.substr(9, 3).c_str());
  return r;
}

// Value of the first sample line starting with `series ` in a text exposition.
double Sample(const std::string& text, const std::string& series) {
  size_t p = text.find("\n" + series + " ");
  if (p == std::string::npos) return -1;
  return std::stod(text.substr(p + series.size() + 2));
}

class HttpEndpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto& family = prometheus::BuildCounter()
                       .Name("routestatus_test_writes_total")
                       .Help("Status writes in the test, by result.")
                       .Register(registry_);
    counter_ = &family.Add({{"result", "success"}});
    HttpEndpoint::Options options;
    options.address = "127.0.0.1:0";
    auto started = HttpEndpoint::Start(options, registry_, [this] {
      return ready_.load() ? Readiness{true, ""} : Readiness{false, "route cache not synced"};
    });
    ASSERT_TRUE(started.ok()) << started.status().ToString();
    endpoint_ = std::move(started).value();
  }

  prometheus::Registry registry_;
  prometheus::Counter* counter_ = nullptr;
  std::atomic<bool> ready_{false};
  std::unique_ptr<HttpEndpoint> endpoint_;
};

TEST_F(HttpEndpointTest, PicksAPortAndReportsIt) {
  EXPECT_GT(endpoint_->port(), 0);
  EXPECT_EQ(endpoint_->address(), "127.0.0.1:" + std::to_string(endpoint_->port()));
}

TEST_F(HttpEndpointTest, MetricsMoveWhenCountersMove) {
  Response first = Request(endpoint_->port(), "GET", "/metrics");
  ASSERT_EQ(first.code, 200) << first.headers;
  EXPECT_THAT(first.headers, HasSubstr("Content-Type: text/plain; version=0.0.4"));
  EXPECT_THAT(first.body, HasSubstr("# HELP routestatus_test_writes_total Status writes in the test"));
  EXPECT_THAT(first.body, HasSubstr("# TYPE routestatus_test_writes_total counter"));
  EXPECT_EQ(Sample(first.body, "routestatus_test_writes_total{result=\"success\"}"), 0);
  counter_->Increment(3);
  Response second = Request(endpoint_->port(), "GET", "/metrics");
  EXPECT_EQ(Sample(second.body, "routestatus_test_writes_total{result=\"success\"}"), 3);
}

// A collectable read at scrape time (as the controller's MetricsCollector).
class ScrapeTimeGauge final : public prometheus::Collectable {
 public:
  std::vector<prometheus::MetricFamily> Collect() const override {
    prometheus::MetricFamily f{"routestatus_test_depth", "Depth in the test.",
                               prometheus::MetricType::Gauge, {}};
    prometheus::ClientMetric m;
    m.gauge.value = value.load();
    f.metric.push_back(m);
    return {f};
  }
  std::atomic<int> value{0};
};

TEST_F(HttpEndpointTest, ServesAddedCollectablesWhileTheyLive) {
  auto gauge = std::make_shared<ScrapeTimeGauge>();
  endpoint_->AddCollectable(gauge);
  gauge->value = 7;
  Response r = Request(endpoint_->port(), "GET", "/metrics");
  EXPECT_EQ(Sample(r.body, "routestatus_test_depth"), 7);
  EXPECT_EQ(Sample(r.body, "routestatus_test_writes_total{result=\"success\"}"), 0);
  gauge.reset();  // gone: no longer served, and no crash
  Response after = Request(endpoint_->port(), "GET", "/metrics");
  EXPECT_EQ(after.code, 200);
  EXPECT_EQ(Sample(after.body, "routestatus_test_depth"), -1);
}

TEST_F(HttpEndpointTest, HealthzIsAlwaysOk) {
  Response r = Request(endpoint_->port(), "GET", "/healthz");
  EXPECT_EQ(r.code, 200);
  EXPECT_EQ(r.body, "ok\n");
}

TEST_F(HttpEndpointTest, ReadyzFollowsTheCheck) {
  Response before = Request(endpoint_->port(), "GET", "/readyz");
  EXPECT_EQ(before.code, 503);
  EXPECT_THAT(before.body, HasSubstr("route cache not synced"));
  ready_ = true;
  Response after = Request(endpoint_->port(), "GET", "/readyz");
  EXPECT_EQ(after.code, 200);
  EXPECT_EQ(after.body, "ok\n");
}

TEST_F(HttpEndpointTest, UnknownPathsAndMethods) {
  EXPECT_EQ(Request(endpoint_->port(), "GET", "/nope").code, 404);
  EXPECT_EQ(Request(endpoint_->port(), "GET", "/metricsx").code, 404);
  EXPECT_EQ(Request(endpoint_->port(), "POST", "/healthz").code, 405);
  Response head = Request(endpoint_->port(), "HEAD", "/healthz");
  EXPECT_EQ(head.code, 200);
  EXPECT_EQ(head.body, "");
}

TEST_F(HttpEndpointTest, ConcurrentScrapes) {
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&] {
      for (int j = 0; j < 10; ++j) {
        counter_->Increment();
        if (Request(endpoint_->port(), "GET", "/metrics").code == 200) ++ok;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 40);
  Response r = Request(endpoint_->port(), "GET", "/metrics");
  EXPECT_EQ(Sample(r.body, "routestatus_test_writes_total{result=\"success\"}"), 40);
}

TEST_F(HttpEndpointTest, StopClosesThePort) {
  int port = endpoint_->port();
  endpoint_->Stop();
  endpoint_->Stop();  // idempotent
  EXPECT_EQ(Request(port, "GET", "/healthz").code, 0);
}

TEST(HttpEndpointStartTest, BadAddressAndBusyPort) {
  prometheus::Registry registry;
  HttpEndpoint::Options bad;
  bad.address = "not-an-address";
  auto r = HttpEndpoint::Start(bad, registry, nullptr);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalid);

  HttpEndpoint::Options any;
  any.address = "127.0.0.1:0";
  auto first = HttpEndpoint::Start(any, registry, nullptr);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  HttpEndpoint::Options same;
  same.address = "127.0.0.1:" + std::to_string((*first)->port());
  auto second = HttpEndpoint::Start(same, registry, nullptr);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kUnavailable);
  // Without a readiness check the endpoint is never ready.
  EXPECT_EQ(Request((*first)->port(), "GET", "/readyz").code, 503);
}

}  // namespace
}  // namespace routestatus::cmd
