// Liveness of the REST client's connections: a server that accepts TCP and
// never completes TLS and a watch whose response never starts end kTimeout
// on the injected Clock, long before cpprest's own inactivity timers would;
// a quiet watch stays open while the server answers a probe on another
// connection, and ends kTimeout when it does not.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <atomic>
#include <future>
#include <optional>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "kubeclient/rest/rest_kube_client.h"
#include "test/kubeclient/rest/raw_http_server.h"

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
  cfg.insecure_skip_tls_verify = true;
  auto c = NewRestKubeClient(cfg, clock, std::move(options));
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? std::move(c).value() : nullptr;
}

// Real time since `start`.
Duration Since(std::chrono::steady_clock::time_point start) {
  return std::chrono::steady_clock::now() - start;
}

// A listening socket on 127.0.0.1 that never accepts: the kernel completes
// the TCP handshake (backlog) and then nothing answers, as through a
// blackholed path or a wedged TLS terminator.
class SilentListener {
 public:
  SilentListener() {
    fd_ = ListenOnLoopback(&port_);
  }
  ~SilentListener() { ::close(fd_); }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

// These tests use the real clock with short deadlines: cpprest's own
// timers, which they must beat, run on real time too.

TEST(RestClientLivenessTest, TlsHandshakeThatNeverCompletesTimesOutInTheConnectTimeout) {
  SilentListener listener;
  RealClock clock;
  RestOptions opts;
  opts.connect_timeout = milliseconds(300);
  opts.request_timeout = seconds(30);
  auto client = NewClient("https://127.0.0.1:" + std::to_string(listener.port()), clock, opts);
  auto start = std::chrono::steady_clock::now();
  Status s = client->Get(RoutesResource(), "ns", "r").status();
  EXPECT_EQ(s.code(), StatusCode::kTimeout) << s.ToString();
  EXPECT_EQ(FailureClassOf(s), FailureClass::kTimeout);
  EXPECT_NE(s.message().find("no connection"), std::string::npos) << s.message();
  EXPECT_GE(Since(start), milliseconds(300));
  EXPECT_LT(Since(start), seconds(5)) << "cpprest's own 30 s timer";
}

// A plain GET whose answer takes longer than the connect timeout is not
// cut short: the connection was made.
TEST(RestClientLivenessTest, SlowAnswerIsNotAConnectTimeout) {
  RawHttpServer server([](RawHttpServer&, int fd, const std::string&) {
    std::this_thread::sleep_for(milliseconds(800));
    RawHttpServer::Respond(fd, 200, R"({"metadata":{"name":"r"}})");
  });
  RealClock clock;
  RestOptions opts;
  opts.connect_timeout = milliseconds(200);
  auto client = NewClient(server.url(), clock, opts);
  auto got = client->Get(RoutesResource(), "ns", "r");
  EXPECT_TRUE(got.ok()) << got.status().ToString();
}

TEST(RestClientLivenessTest, WatchWhoseResponseNeverStartsTimesOut) {
  RawHttpServer server([](RawHttpServer& s, int fd, const std::string&) { s.WaitForPeerClose(fd); });
  RealClock clock;
  RestOptions opts;
  opts.request_timeout = seconds(1);
  auto client = NewClient(server.url(), clock, opts);
  auto start = std::chrono::steady_clock::now();
  Status s = client->Watch(RoutesResource(), "", {}).status();  // timeoutSeconds 300
  EXPECT_EQ(s.code(), StatusCode::kTimeout) << s.ToString();
  EXPECT_NE(s.message().find("did not start"), std::string::npos) << s.message();
  EXPECT_GE(Since(start), seconds(1));
  EXPECT_LT(Since(start), seconds(10)) << "cpprest's timer: timeoutSeconds + 30 s";
}

const char kAdded[] = R"({"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"1"}}})";

// Answers GET /version (the liveness probe) with 200 and counts them;
// `probes_answer` false: the probe's connection is accepted and never
// answered, as through a blackholed path.
struct ProbeCounter {
  std::atomic<int> probes{0};
  std::atomic<bool> answer{true};
};

RawHttpServer::Handler QuietWatch(ProbeCounter& counter, std::promise<bool>* peer_closed) {
  return [&counter, peer_closed](RawHttpServer& s, int fd, const std::string& request) {
    if (request.rfind("GET /version", 0) == 0) {
      ++counter.probes;
      if (counter.answer.load()) {
        RawHttpServer::Respond(fd, 200, R"({"major":"1","minor":"26"})");
      } else {
        s.WaitForPeerClose(fd);
      }
      return;
    }
    RawHttpServer::StartChunked(fd);
    RawHttpServer::Chunk(fd, std::string(kAdded) + "\n");
    bool closed = s.WaitForPeerClose(fd);  // then silence, socket open
    if (peer_closed != nullptr) peer_closed->set_value(closed);
  };
}

// A watch of `client` past its first event, with its next read pending on
// another thread (ends when the stream is cancelled or fails).
struct PendingWatch {
  std::unique_ptr<WatchStream> stream;
  std::future<Status> next;
};

PendingWatch OpenPastFirstEvent(KubeClient& client) {
  PendingWatch p;
  auto w = client.Watch(RoutesResource(), "", {});
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  if (!w.ok()) return p;
  p.stream = std::move(w).value();
  EXPECT_TRUE(p.stream->Next().ok());
  WatchStream* stream = p.stream.get();
  p.next = std::async(std::launch::async, [stream] { return stream->Next().status(); });
  return p;
}

// A server whose watches go quiet after one event and that answers every
// probe, and a client of it that probes after 1 s of silence.
struct QuietServer {
  ProbeCounter counter;
  RawHttpServer server{QuietWatch(counter, nullptr)};
  RealClock clock;
  std::unique_ptr<KubeClient> client = NewClient(server.url(), clock, ProbeAfterOneSecond());
  static RestOptions ProbeAfterOneSecond() {
    RestOptions opts;
    opts.watch_probe_after = seconds(1);
    return opts;
  }
};

// A quiet watch is healthy (kube-apiserver's watch cache sends nothing to
// a watch begun after its resource's last change): it stays open while
// the server answers the probe, however long it is silent.
TEST(RestClientLivenessTest, QuietWatchStaysOpenWhileTheServerAnswersProbes) {
  QuietServer q;
  ProbeCounter& counter = q.counter;
  PendingWatch w = OpenPastFirstEvent(*q.client);
  ASSERT_TRUE(w.stream);
  EXPECT_EQ(w.next.wait_for(milliseconds(3500)), std::future_status::timeout)
      << w.next.get().ToString();
  EXPECT_GE(counter.probes.load(), 2) << "one probe per second of silence";
  w.stream->Cancel();
  EXPECT_EQ(w.next.get().code(), StatusCode::kCancelled);
}

// The watches of one client go quiet together: one probe answers for all.
TEST(RestClientLivenessTest, QuietWatchesOfOneClientShareTheirProbes) {
  QuietServer q;
  ProbeCounter& counter = q.counter;
  PendingWatch a = OpenPastFirstEvent(*q.client);
  PendingWatch b = OpenPastFirstEvent(*q.client);
  ASSERT_TRUE(a.stream && b.stream);
  std::this_thread::sleep_for(milliseconds(3500));
  EXPECT_GE(counter.probes.load(), 2);
  EXPECT_LE(counter.probes.load(), 4) << "each watch sent its own probe";
  for (PendingWatch* w : {&a, &b}) {
    w->stream->Cancel();
    EXPECT_EQ(w->next.get().code(), StatusCode::kCancelled);
  }
}

// A quiet watch whose server does not answer on a new connection either
// ends kTimeout, and its socket is closed.
TEST(RestClientLivenessTest, QuietWatchEndsWhenTheServerDoesNotAnswerTheProbe) {
  ProbeCounter counter;
  counter.answer = false;
  std::promise<bool> peer_closed;
  RawHttpServer server(QuietWatch(counter, &peer_closed));
  RealClock clock;
  RestOptions opts;
  opts.watch_probe_after = seconds(1);
  opts.watch_probe_timeout = seconds(1);
  auto client = NewClient(server.url(), clock, opts);
  auto w = client->Watch(RoutesResource(), "", {});
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_TRUE((*w)->Next().ok());
  auto start = std::chrono::steady_clock::now();
  Status s = (*w)->Next().status();
  EXPECT_EQ(s.code(), StatusCode::kTimeout) << s.ToString();
  EXPECT_NE(s.message().find("did not answer on a new connection"), std::string::npos)
      << s.message();
  EXPECT_EQ(counter.probes.load(), 1);
  EXPECT_GE(Since(start), seconds(2));
  EXPECT_LT(Since(start), seconds(10));
  w->reset();
  auto closed = peer_closed.get_future();
  ASSERT_EQ(closed.wait_for(seconds(10)), std::future_status::ready) << "socket left open";
  EXPECT_TRUE(closed.get());
}

// While the client hears the server on another connection, a quiet watch
// sends no probe at all.
TEST(RestClientLivenessTest, NoProbeWhileTheClientHearsTheServerElsewhere) {
  ProbeCounter counter;
  RawHttpServer server([&counter](RawHttpServer& s, int fd, const std::string& request) {
    if (request.rfind("GET /version", 0) == 0) {
      ++counter.probes;
      RawHttpServer::Respond(fd, 200, "{}");
    } else if (request.find("watch=") != std::string::npos) {
      RawHttpServer::StartChunked(fd);
      RawHttpServer::Chunk(fd, std::string(kAdded) + "\n");
      s.WaitForPeerClose(fd);
    } else {
      RawHttpServer::Respond(fd, 200, R"({"metadata":{"name":"r"}})");
    }
  });
  RealClock clock;
  RestOptions opts;
  opts.watch_probe_after = seconds(1);
  auto client = NewClient(server.url(), clock, opts);
  PendingWatch w = OpenPastFirstEvent(*client);
  ASSERT_TRUE(w.stream);
  for (int i = 0; i < 12; ++i) {
    ASSERT_TRUE(client->Get(RoutesResource(), "ns", "r").ok());
    std::this_thread::sleep_for(milliseconds(250));
  }
  EXPECT_EQ(counter.probes.load(), 0);
  w.stream->Cancel();
  EXPECT_EQ(w.next.get().code(), StatusCode::kCancelled);
}

}  // namespace
}  // namespace routestatus::kubeclient::rest
