// The REST client against a raw socket server: exact requests on the wire,
// error bodies, Retry-After, and watch streams that are split, garbled,
// truncated, huge or stalled.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <future>
#include <iostream>
#include <thread>

#include <gtest/gtest.h>

#include "kubeclient/rest/rest_kube_client.h"
#include "test/kubeclient/rest/raw_http_server.h"
#include "test/testing/fake_clock.h"

namespace routestatus::kubeclient::rest {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

std::unique_ptr<KubeClient> NewClient(const std::string& url, const Clock& clock,
                                      RestOptions options = {}) {
  RestConfig cfg;
  cfg.server = url;
  cfg.token = "secret-token";
  cfg.origin = "test";
  auto c = NewRestKubeClient(cfg, clock, std::move(options));
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? std::move(c).value() : nullptr;
}

const char kEvent1[] = R"({"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"1"}}})";
const char kEvent2[] =
    R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"2"}}})";

TEST(RestClientWireTest, GetSendsPathHeadersAndToken) {
  RawHttpServer server([](RawHttpServer&, int fd, const std::string&) {
    RawHttpServer::Respond(fd, 200, R"({"metadata":{"name":"r"}})");
  });
  RealClock clock;
  RestOptions opts;
  opts.version = "9.9";
  auto client = NewClient(server.url(), clock, opts);
  auto got = client->Get(RoutesResource(), "ns", "r");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ((*got)["metadata"]["name"], "r");
  ASSERT_EQ(server.requests().size(), 1u);
  const std::string req = server.requests()[0];
  EXPECT_EQ(req.rfind("GET /apis/route.openshift.io/v1/namespaces/ns/routes/r HTTP/1.1\r\n", 0), 0u)
      << req;
  EXPECT_NE(req.find("Authorization:Bearer secret-token\r\n"), std::string::npos) << req;
  EXPECT_NE(req.find("User-Agent:routestatus/9.9 ("), std::string::npos) << req;
}

TEST(RestClientWireTest, UpdateStatusPutsTheWholeObject) {
  RawHttpServer server([](RawHttpServer&, int fd, const std::string&) {
    RawHttpServer::Respond(fd, 200, R"({"metadata":{"name":"r","resourceVersion":"8"}})");
  });
  RealClock clock;
  auto client = NewClient(server.url(), clock);
  nlohmann::json obj = {{"metadata", {{"name", "r"}, {"namespace", "n"}, {"resourceVersion", "7"}}},
                        {"unknown", 1}};
  auto got = client->UpdateStatus(RoutesResource(), obj);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  const std::string req = server.requests().at(0);
  EXPECT_EQ(req.rfind("PUT /apis/route.openshift.io/v1/namespaces/n/routes/r/status HTTP/1.1", 0), 0u);
  EXPECT_EQ(nlohmann::json::parse(req.substr(req.find("\r\n\r\n") + 4)), obj);
  EXPECT_EQ(client->UpdateStatus(RoutesResource(), {{"metadata", {{"name", "x"}}}}).status().code(),
            StatusCode::kInvalid);  // no namespace
}

TEST(RestClientWireTest, ErrorBodiesBecomeCodes) {
  std::atomic<int> n{0};
  RawHttpServer server([&](RawHttpServer&, int fd, const std::string&) {
    switch (n++) {
      case 0:
        RawHttpServer::Respond(fd, 404, R"({"kind":"Status","reason":"NotFound","message":"routes \"r\" not found","code":404})");
        break;
      case 1:
        RawHttpServer::Respond(fd, 502, "<html>bad gateway</html>");
        break;
      case 2:
        RawHttpServer::Respond(fd, 200, "not json");
        break;
      default:
        RawHttpServer::Respond(fd, 409, R"({"kind":"Status","reason":"Conflict","message":"the object has been modified","code":409})");
    }
  });
  RealClock clock;
  auto client = NewClient(server.url(), clock);
  auto a = client->Get(RoutesResource(), "ns", "r");
  EXPECT_EQ(a.status().code(), StatusCode::kNotFound);
  EXPECT_NE(a.status().message().find("not found"), std::string::npos);
  EXPECT_EQ(client->Get(RoutesResource(), "ns", "r").status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(client->Get(RoutesResource(), "ns", "r").status().code(), StatusCode::kInvalid);
  EXPECT_EQ(client->Delete(RoutesResource(), "ns", "r").code(), StatusCode::kConflict);
}

// Runs `fn` on a thread while advancing `clock` until it finishes; returns
// how much fake time passed.
template <typename Fn>
Duration RunAdvancing(testing::FakeClock& clock, Fn fn) {
  SteadyTime start = clock.Now();
  auto f = std::async(std::launch::async, fn);
  while (f.wait_for(milliseconds(2)) != std::future_status::ready) clock.Advance(milliseconds(100));
  f.get();
  return clock.Now() - start;
}

TEST(RestClientWireTest, TooManyRequestsWaitsRetryAfterThenSucceeds) {
  std::atomic<int> n{0};
  RawHttpServer server([&](RawHttpServer&, int fd, const std::string&) {
    if (n++ < 2) {
      RawHttpServer::Respond(fd, 429, R"({"kind":"Status","reason":"TooManyRequests","code":429})",
                             "Retry-After: 2\r\n");
    } else {
      RawHttpServer::Respond(fd, 200, R"({"metadata":{"name":"r"}})");
    }
  });
  testing::FakeClock clock;
  auto client = NewClient(server.url(), clock);
  StatusOr<nlohmann::json> got = Status(StatusCode::kInternal, "not run");
  Duration waited = RunAdvancing(clock, [&] { got = client->Get(RoutesResource(), "ns", "r"); });
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(n.load(), 3);
  EXPECT_GE(waited, seconds(4));  // two waits of Retry-After: 2
}

TEST(RestClientWireTest, TooManyRequestsGivesUpWithRetryAfter) {
  std::atomic<int> n{0};
  RawHttpServer server([&](RawHttpServer&, int fd, const std::string&) {
    ++n;
    RawHttpServer::Respond(fd, 429, R"({"kind":"Status","reason":"TooManyRequests","code":429})",
                           "Retry-After: 30\r\n");
  });
  testing::FakeClock clock;
  RestOptions opts;
  opts.max_retries = 1;
  opts.max_retry_wait = milliseconds(500);
  auto client = NewClient(server.url(), clock, opts);
  StatusOr<nlohmann::json> got = Status(StatusCode::kInternal, "not run");
  Duration waited = RunAdvancing(clock, [&] { got = client->Get(RoutesResource(), "ns", "r"); });
  EXPECT_EQ(got.status().code(), StatusCode::kTooManyRequests);
  EXPECT_EQ(got.status().retry_after(), seconds(30));
  EXPECT_EQ(n.load(), 2);
  EXPECT_GE(waited, milliseconds(500));  // the capped wait
  EXPECT_LT(waited, seconds(30));
}

TEST(RestClientWireTest, WatchDecodesEventsSplitAcrossChunks) {
  RawHttpServer server([](RawHttpServer&, int fd, const std::string&) {
    RawHttpServer::StartChunked(fd);
    std::string all = std::string(kEvent1) + "\n\n" + kEvent2 + "\r\n";
    // Odd chunk boundaries, including one inside a multi-byte position.
    RawHttpServer::Chunk(fd, all.substr(0, 7));
    RawHttpServer::Chunk(fd, all.substr(7, 70));
    RawHttpServer::Chunk(fd, all.substr(77));
    RawHttpServer::Chunk(fd, "");
  });
  RealClock clock;
  auto client = NewClient(server.url(), clock);
  WatchOptions wo;
  wo.resource_version = "0";
  wo.timeout = seconds(30);
  auto w = client->Watch(RoutesResource(), "", wo);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  auto e1 = (*w)->Next();
  ASSERT_TRUE(e1.ok()) << e1.status().ToString();
  EXPECT_EQ(e1->type, WatchEventType::kAdded);
  auto e2 = (*w)->Next();
  ASSERT_TRUE(e2.ok()) << e2.status().ToString();
  EXPECT_EQ(e2->type, WatchEventType::kBookmark);
  EXPECT_EQ(e2->ResourceVersion(), "2");
  EXPECT_EQ((*w)->Next().status().code(), StatusCode::kClosed);
  EXPECT_EQ((*w)->Next().status().code(), StatusCode::kClosed);  // sticky
  const std::string req = server.requests().at(0);
  EXPECT_EQ(req.rfind("GET /apis/route.openshift.io/v1/routes?watch=true&allowWatchBookmarks=true"
                      "&timeoutSeconds=30&resourceVersion=0 HTTP/1.1",
                      0),
            0u)
      << req;
}

// One watch whose body is `body` (then the stream ends as `end` says).
StatusOr<WatchEvent> WatchSecondEvent(const std::string& body, bool clean_end,
                                      RestOptions opts = {}) {
  RawHttpServer server([&](RawHttpServer&, int fd, const std::string&) {
    RawHttpServer::StartChunked(fd);
    RawHttpServer::Chunk(fd, std::string(kEvent1) + "\n");
    RawHttpServer::Chunk(fd, body);
    if (clean_end) RawHttpServer::Chunk(fd, "");
  });
  RealClock clock;
  auto client = NewClient(server.url(), clock, opts);
  auto w = client->Watch(RoutesResource(), "ns", WatchOptions{});
  if (!w.ok()) return w.status();
  auto first = (*w)->Next();
  EXPECT_TRUE(first.ok()) << first.status().ToString();
  return (*w)->Next();
}

// A reader that falls behind holds the sender back through TCP instead of
// the body piling up in the client's memory: with 48 MiB of events sent as
// fast as the socket takes them and a reader that stops after one event,
// the server gets rid of at most the client's buffer (1 MiB) plus what the
// kernel's socket buffers hold (before: all 48 MiB, into cpprest's buffer).
// Then the reader gets every event, in order.
TEST(RestClientWireTest, SlowWatchReaderHoldsTheSenderBack) {
  constexpr int kEvents = 48 * 1024;
  std::atomic<size_t> sent{0};
  RawHttpServer server([&](RawHttpServer&, int fd, const std::string&) {
    RawHttpServer::StartChunked(fd);
    std::string batch;
    for (int i = 0; i < kEvents; ++i) {
      std::string event = R"({"type":"ADDED","object":{"metadata":{"name":"r)" +
                          std::to_string(i) + R"(","resourceVersion":")" + std::to_string(i + 1) +
                          R"("},"pad":")" + std::string(940, 'p') + "\"}}\n";
      batch += event;
      if (batch.size() >= 64 * 1024 || i == kEvents - 1) {
        RawHttpServer::Chunk(fd, batch);
        sent += batch.size();
        batch.clear();
      }
    }
    RawHttpServer::Chunk(fd, "");
  });
  RealClock clock;
  auto client = NewClient(server.url(), clock);
  auto w = client->Watch(RoutesResource(), "ns", WatchOptions{});
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_TRUE((*w)->Next().ok());
  // Wait until the sender stalls (nothing more sent for 1 s) or is done.
  size_t last = 0;
  for (int i = 0; i < 60; ++i) {
    std::this_thread::sleep_for(milliseconds(1000));
    const size_t now = sent.load();
    if (now == last) break;
    last = now;
  }
  const size_t total = static_cast<size_t>(kEvents) * 1000;
  std::cout << "sent to a reader that read one event: " << sent.load() << " of " << total
            << " bytes\n";
  EXPECT_LT(sent.load(), total / 2) << "sent " << sent.load() << " of about " << total
                                    << " bytes to a reader that read one event";
  int events = 1;
  for (;;) {
    auto e = (*w)->Next();
    if (!e.ok()) {
      EXPECT_EQ(e.status().code(), StatusCode::kClosed) << e.status().ToString();
      break;
    }
    ASSERT_EQ(e->ResourceVersion(), std::to_string(events + 1));
    ++events;
  }
  EXPECT_EQ(events, kEvents);
}

TEST(RestClientWireTest, WatchGarbageIsInvalid) {
  EXPECT_EQ(WatchSecondEvent("{\"type\":\"ADDED\",\"obj\n", true).status().code(),
            StatusCode::kInvalid);
  EXPECT_EQ(WatchSecondEvent("<html>oops</html>\n", true).status().code(), StatusCode::kInvalid);
}

TEST(RestClientWireTest, WatchTruncatedMidEventIsAnError) {
  auto clean = WatchSecondEvent("{\"type\":\"ADDED\",\"object\":{", true);
  EXPECT_EQ(clean.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(clean.status().message().find("truncated"), std::string::npos);
  // The connection dies without the terminating chunk.
  auto abrupt = WatchSecondEvent("{\"type\":\"ADDED\",\"object\":{", false);
  EXPECT_FALSE(abrupt.ok());
  EXPECT_NE(abrupt.status().code(), StatusCode::kOk);
}

TEST(RestClientWireTest, WatchHugeEventIsInvalid) {
  RestOptions opts;
  opts.max_watch_line_bytes = 1024;
  auto got = WatchSecondEvent(std::string(4096, 'x'), false, opts);
  EXPECT_EQ(got.status().code(), StatusCode::kInvalid);
  EXPECT_NE(got.status().message().find("larger than 1024"), std::string::npos);
}

TEST(RestClientWireTest, WatchRequestErrorIsDecoded) {
  RawHttpServer server([](RawHttpServer&, int fd, const std::string&) {
    RawHttpServer::Respond(fd, 410, R"({"kind":"Status","reason":"Expired","message":"too old resource version","code":410})");
  });
  RealClock clock;
  auto client = NewClient(server.url(), clock);
  EXPECT_EQ(client->Watch(RoutesResource(), "ns", {}).status().code(), StatusCode::kGone);
}

TEST(RestClientWireTest, CancelUnblocksNextAndClosesTheConnection) {
  std::promise<bool> peer_closed;
  RawHttpServer server([&](RawHttpServer& s, int fd, const std::string&) {
    RawHttpServer::StartChunked(fd);
    RawHttpServer::Chunk(fd, std::string(kEvent1) + "\n");
    peer_closed.set_value(s.WaitForPeerClose(fd));  // stalls: no more events
  });
  RealClock clock;
  auto client = NewClient(server.url(), clock);
  auto w = client->Watch(RoutesResource(), "ns", WatchOptions{});
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_TRUE((*w)->Next().ok());
  WatchStream* stream = w->get();
  std::thread canceller([stream] {
    std::this_thread::sleep_for(milliseconds(100));
    stream->Cancel();
  });
  auto start = std::chrono::steady_clock::now();
  auto next = stream->Next();
  auto took = std::chrono::steady_clock::now() - start;
  canceller.join();
  EXPECT_EQ(next.status().code(), StatusCode::kCancelled);
  EXPECT_LT(took, seconds(5));
  auto closed = peer_closed.get_future();
  ASSERT_EQ(closed.wait_for(seconds(10)), std::future_status::ready);
  EXPECT_TRUE(closed.get());
}

TEST(RestClientWireTest, RequestTimeout) {
  RawHttpServer server([](RawHttpServer& s, int fd, const std::string&) { s.WaitForPeerClose(fd); });
  RealClock clock;
  RestOptions opts;
  opts.request_timeout = seconds(1);
  auto client = NewClient(server.url(), clock, opts);
  auto got = client->Get(RoutesResource(), "ns", "r");
  EXPECT_EQ(got.status().code(), StatusCode::kTimeout) << got.status().ToString();
}

TEST(RestClientWireTest, UnreachableServerIsUnavailable) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  int port = ntohs(addr.sin_port);
  ::close(fd);  // nothing listens there now
  RealClock clock;
  auto client = NewClient("http://127.0.0.1:" + std::to_string(port), clock);
  auto got = client->Get(RoutesResource(), "ns", "r");
  EXPECT_EQ(got.status().code(), StatusCode::kUnavailable) << got.status().ToString();
  EXPECT_EQ(client->Watch(RoutesResource(), "", {}).status().code(), StatusCode::kUnavailable);
  // HTTPS to a plain port / nothing: still a value, not an exception.
  auto tls = NewClient("https://127.0.0.1:" + std::to_string(port), clock);
  EXPECT_EQ(tls->List(RoutesResource(), "", {}).status().code(), StatusCode::kUnavailable);
}

TEST(RestClientWireTest, BadTlsConfigIsInvalidAndNamed) {
  RealClock clock;
  RestConfig cfg;
  cfg.server = "https://127.0.0.1:1";
  cfg.origin = "kubeconfig /k";
  cfg.ca_data = "not a certificate";
  auto c = NewRestKubeClient(cfg, clock);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kInvalid);
  EXPECT_NE(c.status().message().find("certificate-authority"), std::string::npos);

  cfg.ca_data.clear();
  cfg.ca_file = "/nonexistent/ca.crt";
  c = NewRestKubeClient(cfg, clock);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("/nonexistent/ca.crt"), std::string::npos);

  cfg.ca_file.clear();
  cfg.client_key_data = "garbage";
  c = NewRestKubeClient(cfg, clock);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("client-key"), std::string::npos);

  cfg.client_key_data.clear();
  cfg.server = "ftp://x";
  EXPECT_EQ(NewRestKubeClient(cfg, clock).status().code(), StatusCode::kInvalid);
}

TEST(RestClientWireTest, ClientSideRateLimitUsesTheClock) {
  std::atomic<int> n{0};
  RawHttpServer server([&](RawHttpServer&, int fd, const std::string&) {
    ++n;
    RawHttpServer::Respond(fd, 200, "{}");
  });
  testing::FakeClock clock;
  RestOptions opts;
  opts.qps = 1;
  opts.burst = 2;
  auto client = NewClient(server.url(), clock, opts);
  Duration waited = RunAdvancing(clock, [&] {
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(client->Get(NamespacesResource(), "", "d").ok());
  });
  EXPECT_EQ(n.load(), 5);
  EXPECT_GE(waited, seconds(3));  // 2 from the burst, then 1/s
}

}  // namespace
}  // namespace routestatus::kubeclient::rest
