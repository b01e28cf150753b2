// The metrics endpoint under hostile clients: idle connections and
// slow-loris clients (headers a byte at a time) must not keep /healthz from
// answering, and idle connections are closed after the request timeout.
#include "cmd/route-status-controller/http_endpoint.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace routestatus::cmd {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

// Why: 1,100 held connections need as many descriptors in this process.
void RaiseFdLimit(rlim_t want) {
  rlimit lim{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &lim), 0);
  if (lim.rlim_cur >= want) return;
  lim.rlim_cur = std::min(want, lim.rlim_max);
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &lim), 0);
  ASSERT_GE(lim.rlim_cur, want) << "the hard limit on open files is too low for this test";
}

// A non-blocking connect to 127.0.0.1:port; -1 on failure.
int ConnectNonBlocking(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 && errno != EINPROGRESS) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Waits until `fd` is readable or `timeout` passed; true when readable.
bool WaitReadable(int fd, milliseconds timeout) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, static_cast<int>(timeout.count())) == 1;
}

// GET /healthz on a fresh connection; the latency until the whole answer
// arrived, or nullopt when it was not "200 ... ok" within `timeout`.
std::optional<milliseconds> ProbeHealthz(int port, milliseconds timeout) {
  auto start = steady_clock::now();
  auto deadline = start + timeout;
  int fd = ConnectNonBlocking(port);
  if (fd < 0) return std::nullopt;
  pollfd w{fd, POLLOUT, 0};
  if (::poll(&w, 1, static_cast<int>(timeout.count())) != 1) {
    ::close(fd);
    return std::nullopt;
  }
  const std::string req = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
  if (::send(fd, req.data(), req.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(req.size())) {
    ::close(fd);
    return std::nullopt;
  }
  std::string raw;
  char buf[1024];
  while (true) {
    auto left = std::chrono::duration_cast<milliseconds>(deadline - steady_clock::now());
    if (left.count() <= 0 || !WaitReadable(fd, left)) break;
    ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    raw.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  if (raw.rfind("HTTP/1.1 200", 0) != 0 || raw.find("\r\n\r\nok\n") == std::string::npos) {
    return std::nullopt;
  }
  return std::chrono::duration_cast<milliseconds>(steady_clock::now() - start);
}

// The value of routestatus_metrics_endpoint_connections_dropped_total{reason}.
double Dropped(prometheus::Registry& registry, const std::string& reason) {
  for (const auto& family : registry.Collect()) {
    if (family.name != "routestatus_metrics_endpoint_connections_dropped_total") continue;
    for (const auto& m : family.metric) {
      if (!m.label.empty() && m.label[0].value == reason) return m.counter.value;
    }
  }
  return -1;
}

class HttpEndpointLoadTest : public ::testing::Test {
 protected:
  void SetUp() override { RaiseFdLimit(4096); }
  // Starts the endpoint with the deployed settings (on loopback) changed by
  // `change`.
  void StartEndpoint(const std::function<void(HttpEndpoint::Options&)>& change = nullptr) {
    HttpEndpoint::Options options;
    options.address = "127.0.0.1:0";
    if (change) change(options);
    auto started = HttpEndpoint::Start(options, registry_, [] { return Readiness{true, ""}; });
    ASSERT_TRUE(started.ok()) << started.status().ToString();
    endpoint_ = std::move(started).value();
  }
  void TearDown() override {
    for (int fd : held_) ::close(fd);
  }
  // Opens `n` connections that send nothing.
  void HoldIdle(int n) {
    for (int i = 0; i < n; ++i) {
      int fd = ConnectNonBlocking(endpoint_->port());
      ASSERT_GE(fd, 0) << "connect " << i;
      held_.push_back(fd);
    }
  }

  prometheus::Registry registry_;
  std::unique_ptr<HttpEndpoint> endpoint_;
  std::vector<int> held_;
};

TEST_F(HttpEndpointLoadTest, HealthzAnswersWhileIdleAndSlowLorisClientsHoldConnections) {
  StartEndpoint();
  const int port = endpoint_->port();
  constexpr int kIdle = 1000;
  constexpr int kSlow = 100;
  HoldIdle(kIdle);
  std::vector<int> slow;
  for (int i = 0; i < kSlow; ++i) {
    int fd = ConnectNonBlocking(port);
    ASSERT_GE(fd, 0);
    slow.push_back(fd);
    held_.push_back(fd);
  }
  // Slow loris: a byte of an endless header every 20 ms on each connection.
  std::atomic<bool> stop{false};
  std::thread loris([&] {
    const std::string head = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ";
    size_t pos = 0;
    while (!stop.load()) {
      char c = pos < head.size() ? head[pos] : 'a';
      ++pos;
      for (int fd : slow) (void)::send(fd, &c, 1, MSG_NOSIGNAL);
      std::this_thread::sleep_for(milliseconds(20));
    }
  });
  // Let the server see every connection before probing.
  std::this_thread::sleep_for(milliseconds(300));

  constexpr int kProbes = 20;
  std::vector<long> latencies_ms;
  int failed = 0;
  for (int i = 0; i < kProbes; ++i) {
    auto latency = ProbeHealthz(port, milliseconds(1000));
    if (latency) {
      latencies_ms.push_back(latency->count());
    } else {
      ++failed;
    }
  }
  stop = true;
  loris.join();
  std::sort(latencies_ms.begin(), latencies_ms.end());
  long max_ms = latencies_ms.empty() ? -1 : latencies_ms.back();
  long median_ms = latencies_ms.empty() ? -1 : latencies_ms[latencies_ms.size() / 2];
  std::printf("[ figures ] /healthz with %d idle + %d slow-loris connections: %d of %d probes "
              "failed (1 s timeout); answered: median %ld ms, max %ld ms\n",
              kIdle, kSlow, failed, kProbes, median_ms, max_ms);
  EXPECT_EQ(failed, 0);
  EXPECT_LT(median_ms, 100);
  // Why not every probe: on this shared 2-core machine a probe may lose the
  // CPU for a moment; the bound is the goal's 100 ms for all but one.
  int slow_probes = static_cast<int>(
      std::count_if(latencies_ms.begin(), latencies_ms.end(), [](long ms) { return ms >= 100; }));
  EXPECT_LE(slow_probes, 1) << "max " << max_ms << " ms";
  // Every connection was held, none closed to make room or for its time.
  EXPECT_EQ(Dropped(registry_, "too_many_connections"), 0);
  EXPECT_EQ(Dropped(registry_, "timeout"), 0);
}

// Idle and slow-loris connections are closed once the request timeout
// (counted from connecting, not per byte) has passed.
TEST_F(HttpEndpointLoadTest, IdleAndSlowConnectionsAreClosedAfterTheRequestTimeout) {
  StartEndpoint([](HttpEndpoint::Options& o) { o.request_timeout = milliseconds(300); });
  HoldIdle(50);
  auto start = steady_clock::now();
  // One slow client keeps sending a byte every 20 ms: still closed.
  int slow = held_.back();
  int closed = 0;
  for (int round = 0; round < 150 && closed < 50; ++round) {
    (void)::send(slow, "G", 1, MSG_NOSIGNAL);
    std::this_thread::sleep_for(milliseconds(20));
    closed = 0;
    for (int fd : held_) {
      char c;
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 0) == 1 && ::recv(fd, &c, 1, MSG_PEEK) <= 0) ++closed;
    }
  }
  auto took = std::chrono::duration_cast<milliseconds>(steady_clock::now() - start);
  std::printf("[ figures ] 50 connections with a 300 ms request timeout: %d closed after %ld ms\n",
              closed, static_cast<long>(took.count()));
  EXPECT_EQ(closed, 50);
  EXPECT_GE(took.count(), 250);
  EXPECT_EQ(Dropped(registry_, "timeout"), 50);
}

// At max-connections a new client (the probe) closes the oldest connection
// that has not sent its request, so idle clients cannot lock it out.
TEST_F(HttpEndpointLoadTest, ANewConnectionClosesTheOldestUnfinishedOneAtTheLimit) {
  StartEndpoint([](HttpEndpoint::Options& o) { o.max_connections = 20; });
  HoldIdle(20);
  std::this_thread::sleep_for(milliseconds(100));
  auto latency = ProbeHealthz(endpoint_->port(), milliseconds(1000));
  ASSERT_TRUE(latency.has_value());
  EXPECT_LT(latency->count(), 100);
  EXPECT_EQ(Dropped(registry_, "too_many_connections"), 1);
  char c;
  pollfd p{held_.front(), POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 1000), 1) << "the oldest idle connection was not closed";
  EXPECT_LE(::recv(held_.front(), &c, 1, 0), 0);
}

// A request head over 8 KiB is refused with 431 and does not grow memory.
TEST_F(HttpEndpointLoadTest, OversizedRequestHeadIsRefused) {
  StartEndpoint();
  int fd = ConnectNonBlocking(endpoint_->port());
  ASSERT_GE(fd, 0);
  held_.push_back(fd);
  pollfd w{fd, POLLOUT, 0};
  ASSERT_EQ(::poll(&w, 1, 1000), 1);
  std::string head = "GET /metrics HTTP/1.1\r\nX-Big: " + std::string(9000, 'a');
  (void)::send(fd, head.data(), head.size(), MSG_NOSIGNAL);
  std::string raw;
  char buf[512];
  while (WaitReadable(fd, milliseconds(1000))) {
    ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    raw.append(buf, static_cast<size_t>(n));
  }
  EXPECT_EQ(raw.rfind("HTTP/1.1 431", 0), 0u) << raw;
  EXPECT_EQ(Dropped(registry_, "too_large"), 1);
}

}  // namespace
}  // namespace routestatus::cmd
