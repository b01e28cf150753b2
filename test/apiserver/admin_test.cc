// Fault injection, metrics, compaction, dropped connections, TLS and token.

#include <cstdio>
#include <fstream>
#include <thread>

#include "test/apiserver/test_server.h"

namespace routestatus::apiserver::testing {
namespace {

using nlohmann::json;

TEST_F(ServerTest, InjectedTooManyRequestsCarriesRetryAfter) {
  MustCreate("a", "a.example.com");
  HttpResponse add = http_->Request(
      "POST", "/admin/faults",
      R"({"verb":"PUT","resource":"routes","subresource":"status","count":2,"code":429,"retryAfterSeconds":3})");
  ASSERT_EQ(add.code, 200) << add.body;
  json obj = Body(http_->Get(RoutesPath() + "/a"));
  obj["status"] = {{"ingress", json::array()}};
  HttpResponse r1 = Put(RoutesPath() + "/a/status", obj);
  EXPECT_EQ(r1.code, 429);
  EXPECT_EQ(r1.headers["retry-after"], "3");
  EXPECT_EQ(Body(r1)["reason"], "TooManyRequests");
  EXPECT_EQ(Body(r1)["details"]["retryAfterSeconds"], 3);
  EXPECT_EQ(Put(RoutesPath() + "/a/status", obj).code, 429);
  EXPECT_EQ(Put(RoutesPath() + "/a/status", obj).code, 200);  // count used up
  EXPECT_EQ(server_->RequestCount("PUT", "routes", "status", 429), 2u);
  EXPECT_EQ(server_->RequestCount("PUT", "routes", "status", 200), 1u);
}

TEST_F(ServerTest, InjectedServerErrorsAndLatency) {
  FaultRule rule;
  rule.verb = "LIST";
  rule.resource = "routes";
  rule.code = 503;
  rule.count = 1;
  server_->faults().Add(rule);
  HttpResponse r = http_->Get(RoutesPath());
  EXPECT_EQ(r.code, 503);
  EXPECT_EQ(Body(r)["reason"], "ServiceUnavailable");
  EXPECT_EQ(http_->Get(RoutesPath()).code, 200);
  FaultRule slow;
  slow.verb = "GET";
  slow.code = 0;
  slow.count = 1;
  slow.latency = std::chrono::milliseconds(300);
  server_->faults().Add(slow);
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(http_->Get("/api/v1/namespaces/team-a").code, 200);
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(290));
  EXPECT_EQ(http_->Request("POST", "/admin/faults", R"({"code":200})").code, 400);
  EXPECT_EQ(http_->Request("POST", "/admin/faults", "{bad").code, 400);
}

TEST_F(ServerTest, MetricsUseKubeApiserverLabels) {
  MustCreate("a", "a.example.com");
  http_->Get(RoutesPath() + "/a");
  http_->Get(RoutesPath());
  HttpResponse m = http_->Get("/metrics");
  ASSERT_EQ(m.code, 200);
  EXPECT_NE(m.body.find("apiserver_request_total{code=\"201\",component=\"apiserver\",dry_run=\"\","
                        "group=\"route.openshift.io\",resource=\"routes\",scope=\"resource\","
                        "subresource=\"\",system_client=\"\",verb=\"POST\",version=\"v1\"} 1"),
            std::string::npos)
      << m.body;
  EXPECT_NE(m.body.find("scope=\"resource\",subresource=\"\",system_client=\"\",verb=\"GET\""),
            std::string::npos);
  EXPECT_NE(m.body.find("verb=\"LIST\""), std::string::npos);
  EXPECT_EQ(server_->RequestCount("POST", "routes", "-", 201), 1u);
}

TEST_F(ServerTest, DropConnectionsRestartsTheListener) {
  int port = server_->port();
  ASSERT_TRUE(server_->DropConnections().ok());
  EXPECT_EQ(server_->port(), port);
  EXPECT_EQ(http_->Get("/version").code, 200);
  ASSERT_EQ(http_->Request("POST", "/admin/drop-connections").code, 200);
  int code = 0;
  for (int i = 0; i < 100 && code != 200; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    code = http_->Get("/version").code;
  }
  EXPECT_EQ(code, 200);
}

std::string RunCurl(const std::string& args) {
  std::string out;
  FILE* p = popen(("curl -s -m 10 " + args + " 2>&1").c_str(), "r");
  if (p == nullptr) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

TEST(TlsServerTest, HttpsWithBearerToken) {
  ServerOptions o;
  o.tls = true;
  o.token = "s3cret";
  Server server(o);
  ASSERT_TRUE(server.Start().ok());
  EXPECT_EQ(server.base_url().rfind("https://127.0.0.1:", 0), 0u);
  std::string ca = ::testing::TempDir() + "/apiserver-ca.pem";
  {
    std::ofstream(ca) << server.ca_pem();
  }
  std::string url = server.base_url() + "/api/v1/namespaces/default";
  // Like kube-apiserver, answers to curl are indented (isPrettyPrint).
  std::string unauth = RunCurl("-w '%{http_code}' --cacert " + ca + " " + url);
  EXPECT_NE(unauth.find("\"reason\": \"Unauthorized\""), std::string::npos) << unauth;
  EXPECT_NE(unauth.find("401"), std::string::npos);
  std::string ok = RunCurl("--cacert " + ca + " -H 'Authorization: Bearer s3cret' " + url);
  EXPECT_NE(ok.find("\"name\": \"default\""), std::string::npos) << ok;
  std::string compact = RunCurl("--cacert " + ca + " -H 'Authorization: Bearer s3cret' '" + url +
                                "?pretty=false'");
  EXPECT_NE(compact.find("\"name\":\"default\""), std::string::npos) << compact;
  std::string wrong = RunCurl("-w '%{http_code}' --cacert " + ca + " -H 'Authorization: Bearer x' " + url);
  EXPECT_NE(wrong.find("401"), std::string::npos);
  std::string kubeconfig = ::testing::TempDir() + "/apiserver-tls.kubeconfig";
  ASSERT_TRUE(server.WriteKubeconfig(kubeconfig).ok());
  std::ifstream in(kubeconfig);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("certificate-authority-data: "), std::string::npos);
  EXPECT_NE(text.find("token: s3cret"), std::string::npos);
  server.Stop();
}

}  // namespace
}  // namespace routestatus::apiserver::testing
