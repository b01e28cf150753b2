// A request that is not idempotent (POST, DELETE) is never sent twice
// (issue 24). cpprest re-sends any request whose reused keep-alive
// connection fails before the status line; a POST the server had already
// received and acted on would then run twice. Go's net/http re-sends only
// requests without a body or with a rewindable one that are idempotent
// (GET, HEAD, OPTIONS, TRACE); so do we, with reads and
// resourceVersion-guarded PUTs counting as idempotent.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kubeclient/rest/rest_kube_client.h"
#include "test/kubeclient/rest/raw_http_server.h"

namespace routestatus::kubeclient::rest {
namespace {

// A keep-alive HTTP/1.1 server on 127.0.0.1: on each connection it answers
// the first request 200 and keeps the connection open; it reads the second
// request whole and then closes the connection without answering (as a
// server, or a load balancer in front of it, that died after acting on it).
// With `answer_only_first`, only the server's very first request is
// answered: every later one, on any connection, is read and dropped.
// Counts requests by method. Thread-safe.
class DropSecondRequestServer {
 public:
  explicit DropSecondRequestServer(bool answer_only_first = false)
      : answer_only_first_(answer_only_first), acceptor_([this](int c) { Serve(c); }) {}
  std::string url() const { return "http://127.0.0.1:" + std::to_string(acceptor_.port()); }
  int Count(const std::string& method) {
    std::lock_guard<std::mutex> l(mu_);
    return by_method_[method];
  }

 private:
  // Reads one request (headers and Content-Length body); its method, or "".
  static std::string ReadRequest(int c, std::string* pending) {
    size_t end;
    while ((end = pending->find("\r\n\r\n")) == std::string::npos) {
      char buf[4096];
      ssize_t n = ::read(c, buf, sizeof(buf));
      if (n <= 0) return "";
      pending->append(buf, static_cast<size_t>(n));
    }
    std::string head = pending->substr(0, end);
    size_t length = 0;
    for (const char* name : {"Content-Length:", "content-length:"}) {
      size_t at = head.find(name);
      if (at != std::string::npos) length = std::strtoul(head.c_str() + at + 15, nullptr, 10);
    }
    while (pending->size() < end + 4 + length) {
      char buf[4096];
      ssize_t n = ::read(c, buf, sizeof(buf));
      if (n <= 0) return "";
      pending->append(buf, static_cast<size_t>(n));
    }
    pending->erase(0, end + 4 + length);
    return head.substr(0, head.find(' '));
  }
  void Serve(int c) {
    std::string pending;
    for (int i = 0;; ++i) {
      std::string method = ReadRequest(c, &pending);
      if (method.empty()) break;
      bool first_of_server;
      {
        std::lock_guard<std::mutex> l(mu_);
        ++by_method_[method];
        first_of_server = requests_++ == 0;
      }
      if (i == 0 && (first_of_server || !answer_only_first_)) {
        const std::string body = R"({"kind":"Status","metadata":{"name":"x"}})";
        std::string resp = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
                           std::to_string(body.size()) + "\r\n\r\n" + body;
        (void)!::write(c, resp.data(), resp.size());
        continue;
      }
      break;  // read, acted on, never answered
    }
    ::close(c);
  }

  const bool answer_only_first_;
  std::mutex mu_;
  std::map<std::string, int> by_method_;  // GUARDED_BY(mu_)
  int requests_ = 0;                      // GUARDED_BY(mu_)
  LoopbackAcceptor acceptor_;             // last: its threads stop first
};

// Why a pause: cpprest returns a connection to its pool just after the
// response is handed over; the next request must find it there.
void LetTheConnectionReturnToThePool() { std::this_thread::sleep_for(std::chrono::milliseconds(100)); }

std::unique_ptr<KubeClient> NewPlainClient(const std::string& url, const Clock& clock) {
  RestConfig cfg;
  cfg.server = url;
  cfg.origin = "test";
  RestOptions o;
  o.qps = 0;
  auto c = NewRestKubeClient(cfg, clock, o);
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? std::move(c).value() : nullptr;
}

nlohmann::json RouteObject(const std::string& rv) {
  nlohmann::json r = {{"apiVersion", "route.openshift.io/v1"},
                      {"kind", "Route"},
                      {"metadata", {{"name", "r"}, {"namespace", "ns"}}}};
  if (!rv.empty()) r["metadata"]["resourceVersion"] = rv;
  return r;
}

// The server acts on the POST and the connection dies before the answer.
// Before the fix cpprest sent it again on a new connection (2 POSTs).
TEST(RestClientReplayTest, PostOnAReusedConnectionThatFailsIsNotSentAgain) {
  DropSecondRequestServer server(/*answer_only_first=*/true);
  RealClock clock;
  auto client = NewPlainClient(server.url(), clock);
  ASSERT_TRUE(client->Get(RoutesResource(), "ns", "r").ok());  // leaves a pooled connection
  LetTheConnectionReturnToThePool();
  auto created = client->Create(RoutesResource(), "ns", RouteObject(""));
  EXPECT_FALSE(created.ok());
  EXPECT_EQ(created.status().code(), StatusCode::kUnavailable) << created.status().ToString();
  EXPECT_EQ(server.Count("POST"), 1) << "the POST was sent twice";
}

TEST(RestClientReplayTest, DeleteOnAReusedConnectionThatFailsIsNotSentAgain) {
  DropSecondRequestServer server(/*answer_only_first=*/true);
  RealClock clock;
  auto client = NewPlainClient(server.url(), clock);
  ASSERT_TRUE(client->Get(RoutesResource(), "ns", "r").ok());
  LetTheConnectionReturnToThePool();
  Status deleted = client->Delete(RoutesResource(), "ns", "r");
  EXPECT_EQ(deleted.code(), StatusCode::kUnavailable) << deleted.ToString();
  EXPECT_EQ(server.Count("DELETE"), 1) << "the DELETE was sent twice";
}

// Idempotent requests are still re-sent (once): a GET, and a PUT guarded by
// a resourceVersion (a second copy of a PUT that landed gets 409).
TEST(RestClientReplayTest, GetAndGuardedPutAreSentAgainOnANewConnection) {
  DropSecondRequestServer server;
  RealClock clock;
  auto client = NewPlainClient(server.url(), clock);
  ASSERT_TRUE(client->Get(RoutesResource(), "ns", "r").ok());
  LetTheConnectionReturnToThePool();
  EXPECT_TRUE(client->Get(RoutesResource(), "ns", "r").ok());
  EXPECT_EQ(server.Count("GET"), 3);  // first, dropped, again on a new connection
  LetTheConnectionReturnToThePool();
  EXPECT_TRUE(client->UpdateStatus(RoutesResource(), RouteObject("7")).ok());
  EXPECT_EQ(server.Count("PUT"), 2);
}

}  // namespace
}  // namespace routestatus::kubeclient::rest
