// The REST client through an HTTP CONNECT proxy (kubeconfig proxy-url), and
// tls-server-name as the name verified in the server's certificate
// (issue 24: both were parsed and then ignored).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "apiserver/self_signed_cert.h"
#include "kubeclient/rest/rest_kube_client.h"
#include "test/kubeclient/rest/raw_http_server.h"
#include "test/kubeclient/rest/tls_test_server.h"

namespace routestatus::kubeclient::rest {
namespace {

// A minimal HTTP CONNECT proxy on 127.0.0.1: reads "CONNECT host:port",
// connects to 127.0.0.1:port, answers 200 and copies bytes both ways.
// Records each CONNECT line. Thread-safe.
class ConnectProxy {
 public:
  ConnectProxy() : acceptor_([this](int c) { Serve(c); }) {}
  std::string url() const { return "http://127.0.0.1:" + std::to_string(acceptor_.port()); }
  std::vector<std::string> connects() {
    std::lock_guard<std::mutex> l(mu_);
    return connects_;
  }

 private:
  void Serve(int c) {
    std::string head;
    char buf[16384];
    while (head.find("\r\n\r\n") == std::string::npos) {
      ssize_t n = ::read(c, buf, sizeof(buf));
      if (n <= 0) {
        ::close(c);
        return;
      }
      head.append(buf, static_cast<size_t>(n));
    }
    std::string line = head.substr(0, head.find("\r\n"));
    {
      std::lock_guard<std::mutex> l(mu_);
      connects_.push_back(line);
    }
    int up = -1;
    size_t colon = line.rfind(':');
    if (line.rfind("CONNECT ", 0) == 0 && colon != std::string::npos) {
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      addr.sin_port = htons(static_cast<uint16_t>(std::atoi(line.c_str() + colon + 1)));
      up = ::socket(AF_INET, SOCK_STREAM, 0);
      if (::connect(up, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
        ::close(up);
        up = -1;
      }
    }
    const std::string reply = up >= 0 ? "HTTP/1.1 200 Connection established\r\n\r\n"
                                      : "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n";
    (void)!::write(c, reply.data(), reply.size());
    if (up < 0) {
      ::close(c);
      return;
    }
    pollfd fds[2] = {{c, POLLIN, 0}, {up, POLLIN, 0}};
    while (!acceptor_.stopping()) {
      if (::poll(fds, 2, 100) <= 0) continue;
      bool done = false;
      for (int i = 0; i < 2 && !done; ++i) {
        if (fds[i].revents == 0) continue;
        ssize_t n = ::read(fds[i].fd, buf, sizeof(buf));
        if (n <= 0 || ::write(fds[1 - i].fd, buf, static_cast<size_t>(n)) != n) done = true;
      }
      if (done) break;
    }
    ::close(up);
    ::close(c);
  }

  std::mutex mu_;
  std::vector<std::string> connects_;  // GUARDED_BY(mu_)
  LoopbackAcceptor acceptor_;          // last: its threads stop first
};

class RestClientProxyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cert = apiserver::GenerateSelfSignedCert();  // 127.0.0.1, ::1, localhost
    ASSERT_TRUE(cert.ok());
    cert_ = *cert;
    server_ = std::make_unique<TlsTestServer>(cert_.cert_pem, cert_.key_pem);
  }
  RestConfig Config() {
    RestConfig cfg;
    cfg.server = server_->url();
    cfg.ca_data = cert_.cert_pem;
    cfg.token = "t";
    cfg.origin = "test";
    return cfg;
  }
  std::unique_ptr<KubeClient> Client(const RestConfig& cfg) {
    auto c = NewRestKubeClient(cfg, clock_, {});
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? std::move(c).value() : nullptr;
  }

  RealClock clock_;
  apiserver::CertAndKey cert_;
  std::unique_ptr<TlsTestServer> server_;
};

TEST_F(RestClientProxyTest, ProxyUrlTunnelsHttpsThroughConnect) {
  ConnectProxy proxy;
  RestConfig cfg = Config();
  cfg.proxy_url = proxy.url();
  auto client = Client(cfg);
  ASSERT_NE(client, nullptr);
  auto got = client->Get(RoutesResource(), "ns", "r");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_EQ(proxy.connects().size(), 1u) << "the request went around the proxy";
  EXPECT_EQ(proxy.connects()[0], "CONNECT 127.0.0.1:" + std::to_string(server_->port()) +
                                     " HTTP/1.1");
  ASSERT_TRUE(client->Get(RoutesResource(), "ns", "r").ok());
  EXPECT_EQ(server_->requests().size(), 2u);
}

TEST_F(RestClientProxyTest, UnsupportedProxySchemeIsInvalid) {
  RestConfig cfg = Config();
  cfg.proxy_url = "socks5://127.0.0.1:1080";
  auto c = NewRestKubeClient(cfg, clock_, {});
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kInvalid);
  EXPECT_NE(c.status().message().find("socks5:// proxies are not supported"), std::string::npos)
      << c.status().message();
}

// The certificate names 127.0.0.1, ::1 and localhost: with tls-server-name
// the client verifies that name, not the URL's host.
TEST_F(RestClientProxyTest, TlsServerNameIsTheNameVerified) {
  RestConfig cfg = Config();
  cfg.tls_server_name = "localhost";
  auto ok = Client(cfg)->Get(RoutesResource(), "ns", "r");
  EXPECT_TRUE(ok.ok()) << ok.status().ToString();
  cfg.tls_server_name = "api.other.example";
  auto wrong = Client(cfg)->Get(RoutesResource(), "ns", "r");
  EXPECT_FALSE(wrong.ok()) << "tls-server-name was ignored";
}

}  // namespace
}  // namespace routestatus::kubeclient::rest
