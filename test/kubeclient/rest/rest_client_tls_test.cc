// Whom the REST client trusts. A CA named by the kubeconfig (or in-cluster
// config) must be the only one trusted: a server whose certificate the
// *system* store trusts, but which the kubeconfig does not name, is refused
// before the bearer token is sent. Without a CA the system's roots are used.
//
// The "system store" of this process is a test CA: OpenSSL's default verify
// paths follow SSL_CERT_FILE and SSL_CERT_DIR, which the environment below
// sets before any test runs.
#include <stdlib.h>
#include <unistd.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include <glog/logging.h>
#include <gtest/gtest.h>

#include "apiserver/self_signed_cert.h"
#include "apiserver/server.h"
#include "kubeclient/rest/rest_kube_client.h"
#include "test/kubeclient/rest/tls_test_server.h"

namespace routestatus::kubeclient::rest {
namespace {

constexpr char kToken[] = "bearer-token-that-must-not-leak";

// Certificates shared by the tests: `system` is in the process's system
// store, `other` and `unknown` are not.
struct Certs {
  apiserver::CertAndKey system, other, unknown;
  std::string dir;
};
Certs* g_certs = nullptr;

class SystemStoreEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    auto a = apiserver::GenerateSelfSignedCert();
    auto b = apiserver::GenerateSelfSignedCert();
    auto c = apiserver::GenerateSelfSignedCert();
    ASSERT_TRUE(a.ok() && b.ok() && c.ok());
    char tmpl[] = "/tmp/rest_tls_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    g_certs = new Certs{*a, *b, *c, tmpl};
    std::ofstream(g_certs->dir + "/system-ca.pem") << g_certs->system.cert_pem;
    std::filesystem::create_directory(g_certs->dir + "/empty");
    // Before any TLS context exists (cpprest loads the default paths for
    // every new connection, so this also holds for later ones).
    setenv("SSL_CERT_FILE", (g_certs->dir + "/system-ca.pem").c_str(), 1);
    setenv("SSL_CERT_DIR", (g_certs->dir + "/empty").c_str(), 1);
  }
  void TearDown() override {
    std::filesystem::remove_all(g_certs->dir);
    delete g_certs;
  }
};
[[maybe_unused]] const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new SystemStoreEnvironment);

// Captures WARNING log lines.
class WarningSink final : public google::LogSink {
 public:
  void send(google::LogSeverity severity, const char*, const char*, int, const struct ::tm*,
            const char* message, size_t len) override {
    if (severity != google::GLOG_WARNING) return;
    std::lock_guard<std::mutex> l(mu_);
    text_ += std::string(message, len) + "\n";
  }
  std::string text() {
    std::lock_guard<std::mutex> l(mu_);
    return text_;
  }

 private:
  std::mutex mu_;
  std::string text_;
};

RestConfig ConfigFor(const TlsTestServer& server, const std::string& ca_pem) {
  RestConfig cfg;
  cfg.server = server.url();
  cfg.ca_data = ca_pem;
  cfg.token = kToken;
  cfg.origin = "kubeconfig /test context tls";
  return cfg;
}

bool AnyRequestCarries(const TlsTestServer& server, const std::string& needle) {
  for (const auto& r : server.requests()) {
    if (r.find(needle) != std::string::npos) return true;
  }
  return false;
}

TEST(RestClientTlsTest, SystemTrustedServerIsRefusedWhenTheKubeconfigNamesAnotherCa) {
  TlsTestServer server(g_certs->system.cert_pem, g_certs->system.key_pem);
  RealClock clock;
  auto client = NewRestKubeClient(ConfigFor(server, g_certs->other.cert_pem), clock);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  auto got = (*client)->Get(NamespacesResource(), "", "default");
  EXPECT_EQ(got.status().code(), StatusCode::kUnavailable) << got.status().ToString();
  EXPECT_TRUE(server.requests().empty()) << "a request reached a server the kubeconfig does not trust";
  EXPECT_FALSE(AnyRequestCarries(server, kToken)) << "the bearer token was sent";
}

TEST(RestClientTlsTest, TheNamedCaIsTrusted) {
  TlsTestServer server(g_certs->other.cert_pem, g_certs->other.key_pem);
  RealClock clock;
  auto client = NewRestKubeClient(ConfigFor(server, g_certs->other.cert_pem), clock);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  auto got = (*client)->Get(NamespacesResource(), "", "default");
  EXPECT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(AnyRequestCarries(server, std::string("Bearer ") + kToken));
}

TEST(RestClientTlsTest, WithoutACaTheSystemRootsAreUsed) {
  RealClock clock;
  {
    TlsTestServer trusted(g_certs->system.cert_pem, g_certs->system.key_pem);
    auto client = NewRestKubeClient(ConfigFor(trusted, ""), clock);
    ASSERT_TRUE(client.ok()) << client.status().ToString();
    auto got = (*client)->Get(NamespacesResource(), "", "default");
    EXPECT_TRUE(got.ok()) << got.status().ToString();
  }
  TlsTestServer untrusted(g_certs->unknown.cert_pem, g_certs->unknown.key_pem);
  auto client = NewRestKubeClient(ConfigFor(untrusted, ""), clock);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  EXPECT_EQ((*client)->Get(NamespacesResource(), "", "default").status().code(),
            StatusCode::kUnavailable);
  EXPECT_TRUE(untrusted.requests().empty());
}

TEST(RestClientTlsTest, InsecureSkipTlsVerifyWorksAndWarns) {
  TlsTestServer server(g_certs->unknown.cert_pem, g_certs->unknown.key_pem);
  WarningSink sink;
  google::AddLogSink(&sink);
  RealClock clock;
  RestConfig cfg = ConfigFor(server, "");
  cfg.insecure_skip_tls_verify = true;
  auto client = NewRestKubeClient(cfg, clock);
  google::RemoveLogSink(&sink);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  EXPECT_TRUE((*client)->Get(NamespacesResource(), "", "default").ok());
  EXPECT_NE(sink.text().find("insecure-skip-tls-verify"), std::string::npos) << sink.text();
  EXPECT_NE(sink.text().find("/test"), std::string::npos) << "the warning names the kubeconfig";
}

TEST(RestClientTlsTest, ACaWithInsecureSkipTlsVerifyIsAConfigurationError) {
  RestConfig cfg;
  cfg.server = "https://127.0.0.1:1";
  cfg.origin = "kubeconfig /test context tls";
  cfg.ca_data = g_certs->other.cert_pem;
  cfg.insecure_skip_tls_verify = true;
  RealClock clock;
  auto client = NewRestKubeClient(cfg, clock);
  ASSERT_FALSE(client.ok());
  EXPECT_EQ(client.status().code(), StatusCode::kInvalid);
  EXPECT_NE(client.status().message().find("mutually exclusive"), std::string::npos);
}

// Exec plugins through the whole client: a plugin script written by the
// test, against the embedded API server (token) and the TLS test server
// (client certificate).
class RestClientExecTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/rest_exec_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // A plugin that appends a line to `runs` and prints the file `out`.
  ExecConfig Plugin() {
    std::string path = dir_ + "/plugin";
    std::ofstream(path) << "#!/bin/sh\necho run >> " << dir_ << "/runs\ncat " << dir_ << "/out\n";
    chmod(path.c_str(), 0755);
    ExecConfig e;
    e.command = path;
    e.api_version = "client.authentication.k8s.io/v1";
    e.interactive_mode = "Never";
    return e;
  }
  void Output(const nlohmann::json& status) {
    std::ofstream(dir_ + "/out") << nlohmann::json{{"apiVersion", "client.authentication.k8s.io/v1"},
                                                   {"kind", "ExecCredential"},
                                                   {"status", status}}
                                        .dump();
  }
  int Runs() {
    std::ifstream in(dir_ + "/runs");
    std::stringstream ss;
    ss << in.rdbuf();
    std::string t = ss.str();
    return static_cast<int>(std::count(t.begin(), t.end(), '\n'));
  }

  std::string dir_;
};

TEST_F(RestClientExecTest, TokenFromThePluginAndAReRunAfter401) {
  apiserver::ServerOptions o;
  o.token = "current-token";
  apiserver::Server server(o);
  ASSERT_TRUE(server.Start().ok());
  RestConfig cfg;
  cfg.server = server.base_url();
  cfg.origin = "kubeconfig /test context exec";
  cfg.exec = Plugin();
  // The first credential is stale (say, the token was revoked meanwhile).
  Output({{"token", "revoked-token"}});
  RealClock clock;
  auto client = NewRestKubeClient(cfg, clock);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  auto first = (*client)->List(NamespacesResource(), "", {});
  ASSERT_EQ(first.status().code(), StatusCode::kUnauthorized) << first.status().ToString();
  EXPECT_EQ(Runs(), 2) << "a 401 runs the plugin again, once";
  // The plugin now hands out a valid token: the next 401 re-runs it and the
  // request is retried with the new token.
  Output({{"token", "current-token"}});
  auto got = (*client)->Get(NamespacesResource(), "", "default");
  EXPECT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(Runs(), 3);
  EXPECT_TRUE((*client)->Get(NamespacesResource(), "", "default").ok());
  EXPECT_EQ(Runs(), 3) << "no expirationTimestamp: cached";
  server.Stop();
}

TEST_F(RestClientExecTest, ClientCertificateFromThePlugin) {
  // The server trusts (and requires) the plugin's certificate; the client
  // trusts the server's through the kubeconfig's CA.
  TlsTestServer server(g_certs->other.cert_pem, g_certs->other.key_pem,
                       /*client_ca_pem=*/g_certs->unknown.cert_pem);
  RestConfig cfg;
  cfg.server = server.url();
  cfg.origin = "kubeconfig /test context exec";
  cfg.ca_data = g_certs->other.cert_pem;
  cfg.exec = Plugin();
  Output({{"clientCertificateData", g_certs->unknown.cert_pem},
          {"clientKeyData", g_certs->unknown.key_pem}});
  RealClock clock;
  auto client = NewRestKubeClient(cfg, clock);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  auto got = (*client)->Get(NamespacesResource(), "", "default");
  EXPECT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_GE(server.client_certificates(), 1);
  ASSERT_EQ(server.requests().size(), 1u);
  EXPECT_EQ(server.requests()[0].find("Authorization"), std::string::npos);
}

TEST_F(RestClientExecTest, MissingPluginIsAClearError) {
  RestConfig cfg;
  cfg.server = "http://127.0.0.1:1";
  cfg.origin = "kubeconfig /test context exec";
  ExecConfig e = Plugin();
  e.command = "no-such-plugin-for-routestatus";
  e.install_hint = "see https://example.com/install-the-plugin";
  cfg.exec = e;
  RealClock clock;
  auto client = NewRestKubeClient(cfg, clock);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  auto got = (*client)->Get(NamespacesResource(), "", "default");
  EXPECT_EQ(got.status().code(), StatusCode::kUnauthorized);
  EXPECT_NE(got.status().message().find("no-such-plugin-for-routestatus not found"),
            std::string::npos)
      << got.status().message();
  EXPECT_NE(got.status().message().find("install-the-plugin"), std::string::npos);
}

}  // namespace
}  // namespace routestatus::kubeclient::rest
