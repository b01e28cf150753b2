#include "kubeclient/rest/kube_config.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "kubeclient/rest/proxy.h"
#include "kubeclient/rest/tls_material.h"
#include "kubeclient/rest/token_source.h"

namespace routestatus::kubeclient::rest {
namespace {

namespace fs = std::filesystem;

class KubeConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/kubeconfig_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    std::string path = dir_ + "/" + name;
    fs::create_directories(fs::path(path).parent_path());
    std::ofstream(path) << text;
    return path;
  }

  std::string dir_;
};

// "hello" in base64.
constexpr char kHelloB64[] = "aGVsbG8=";

std::string Kubeconfig(const std::string& cluster_extra, const std::string& user_extra,
                       const std::string& current = "ctx") {
  return "apiVersion: v1\nkind: Config\ncurrent-context: " + current +
         "\n"
         "contexts:\n- name: other\n  context: {cluster: c2, user: u2}\n"
         "- name: ctx\n  context:\n    cluster: c1\n    user: u1\n    namespace: team\n"
         "clusters:\n- name: c1\n  cluster:\n    server: https://127.0.0.1:6443/\n" +
         cluster_extra +
         "- name: c2\n  cluster:\n    server: http://other:80\n"
         "users:\n- name: u2\n  user: {token: t2}\n- name: u1\n  user:\n" +
         user_extra;
}

TEST_F(KubeConfigTest, TokenAndDataFields) {
  auto cfg = ParseKubeconfig(
      Kubeconfig("    certificate-authority-data: " + std::string(kHelloB64) + "\n",
                 "    token: abc\n    client-certificate-data: aGVsbG8=\n    client-key-data: aGVsbG8\n"),
      "/x/config", "/x");
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  EXPECT_EQ(cfg->server, "https://127.0.0.1:6443");
  EXPECT_EQ(cfg->ca_data, "hello");
  EXPECT_EQ(cfg->client_cert_data, "hello");
  EXPECT_EQ(cfg->client_key_data, "hello");  // unpadded base64 accepted
  EXPECT_EQ(cfg->token, "abc");
  EXPECT_EQ(cfg->namespace_name, "team");
  EXPECT_FALSE(cfg->insecure_skip_tls_verify);
  EXPECT_NE(cfg->origin.find("/x/config"), std::string::npos);
}

TEST_F(KubeConfigTest, RelativeFilesResolveAgainstTheKubeconfigFolder) {
  std::string path = Write(
      "sub/config", Kubeconfig("    certificate-authority: certs/ca.crt\n    insecure-skip-tls-verify: true\n",
                               "    tokenFile: tok\n    client-certificate: /abs/c.crt\n"
                               "    client-key: k.key\n"));
  auto cfg = LoadKubeconfigFile(path);
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  EXPECT_EQ(cfg->ca_file, dir_ + "/sub/certs/ca.crt");
  EXPECT_EQ(cfg->token_file, dir_ + "/sub/tok");
  EXPECT_EQ(cfg->client_cert_file, "/abs/c.crt");
  EXPECT_EQ(cfg->client_key_file, dir_ + "/sub/k.key");
  EXPECT_TRUE(cfg->insecure_skip_tls_verify);
}

TEST_F(KubeConfigTest, ExplicitContextWins) {
  auto cfg = ParseKubeconfig(Kubeconfig("", "    token: a\n"), "f", "", "other");
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  EXPECT_EQ(cfg->server, "http://other:80");
  EXPECT_EQ(cfg->token, "t2");
}

// Each bad input must name the file and the field.
TEST_F(KubeConfigTest, ErrorsNameFileAndField) {
  struct Case {
    std::string yaml;
    std::string context;
    std::string field;
  } cases[] = {
      {Kubeconfig("", "    token: a\n", "missing"), "", "contexts[name=missing]"},
      {"kind: Config\n", "", "current-context"},
      {Kubeconfig("    certificate-authority-data: '***'\n", "    token: a\n"), "",
       "clusters[name=c1].cluster.certificate-authority-data"},
      {Kubeconfig("    insecure-skip-tls-verify: maybe\n", "    token: a\n"), "",
       "clusters[name=c1].cluster.insecure-skip-tls-verify"},
      {Kubeconfig("", "    client-certificate: c.crt\n"), "", "users[name=u1].user.client-key"},
      {Kubeconfig("", "    exec: {command: aws}\n"), "", "users[name=u1].user.exec.apiVersion"},
      {Kubeconfig("", "    exec: {apiVersion: client.authentication.k8s.io/v1}\n"), "",
       "users[name=u1].user.exec.command"},
      {Kubeconfig("", "    exec: {command: aws, apiVersion: client.authentication.k8s.io/v1}\n"),
       "", "users[name=u1].user.exec.interactiveMode: missing"},
      {Kubeconfig("", "    exec: {command: aws, apiVersion: client.authentication.k8s.io/v1alpha1}\n"),
       "", "users[name=u1].user.exec.apiVersion"},
      {Kubeconfig("", "    exec: {command: aws, apiVersion: client.authentication.k8s.io/v1beta1,"
                      " interactiveMode: Always}\n"),
       "", "users[name=u1].user.exec.interactiveMode: Always needs a terminal"},
      {Kubeconfig("", "    exec: {command: aws, apiVersion: client.authentication.k8s.io/v1beta1,"
                      " interactiveMode: Sometimes}\n"),
       "", "users[name=u1].user.exec.interactiveMode"},
      {Kubeconfig("", "    exec: {command: aws, apiVersion: client.authentication.k8s.io/v1beta1,"
                      " env: [{value: x}]}\n"),
       "", "users[name=u1].user.exec.env"},
      {Kubeconfig("", "    auth-provider: {name: gcp}\n"), "", "users[name=u1].user.auth-provider"},
      {Kubeconfig("", "    token: [1, 2]\n"), "", "users[name=u1].user.token"},
      {"current-context: x\ncontexts:\n- name: x\n  context: {cluster: nope, user: u}\n", "",
       "clusters[name=nope]"},
      {"current-context: x\ncontexts:\n- name: x\n  context: {cluster: c}\nclusters:\n- name: c\n"
       "  cluster: {server: ftp://x}\n",
       "", "clusters[name=c].cluster.server"},
      {"[unclosed", "", "not valid YAML"},
      {Kubeconfig("", "    token: a\n    token: b\n"), "", "users[1].user.token: given more than once"},
      {Kubeconfig("", "    token: a\n") + "current-context: other\n", "", "current-context: given more than once"},
      {Kubeconfig("", "    token: a\n") + "---\nkind: Config\n", "", "more than one YAML document"},
      {"a: &a [x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a]\n"
       "c: &c [*b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c]\n"
       "e: &e [*d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e]\n"
       "g: &g [*f, *f, *f, *f, *f, *f, *f, *f]\n",
       "", "too many YAML nodes"},
      {"- a list\n", "", "(document)"},
  };
  for (const auto& c : cases) {
    auto cfg = ParseKubeconfig(c.yaml, "/etc/kube/config", "/etc/kube", c.context);
    ASSERT_FALSE(cfg.ok()) << c.yaml;
    EXPECT_EQ(cfg.status().code(), StatusCode::kInvalid);
    EXPECT_NE(cfg.status().message().find("/etc/kube/config"), std::string::npos)
        << cfg.status().message();
    EXPECT_NE(cfg.status().message().find(c.field), std::string::npos) << cfg.status().message();
  }
}

TEST_F(KubeConfigTest, ExecPlugin) {
  std::string path = Write("sub/config",
                           Kubeconfig("    extensions:\n    - name: client.authentication.k8s.io/exec\n"
                                      "      extension: {audience: kube, port: 443, debug: true}\n"
                                      "    tls-server-name: api.internal\n",
                                      "    exec:\n"
                                      "      apiVersion: client.authentication.k8s.io/v1\n"
                                      "      command: bin/get-token\n"
                                      "      args: [--region, eu]\n"
                                      "      env: [{name: A, value: '1'}]\n"
                                      "      installHint: apt-get install get-token\n"
                                      "      provideClusterInfo: true\n"
                                      "      interactiveMode: Never\n"));
  auto cfg = LoadKubeconfigFile(path);
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  ASSERT_TRUE(cfg->exec.has_value());
  EXPECT_EQ(cfg->exec->command, dir_ + "/sub/bin/get-token");  // has a '/': kubeconfig-relative
  EXPECT_EQ(cfg->exec->args, (std::vector<std::string>{"--region", "eu"}));
  ASSERT_EQ(cfg->exec->env.size(), 1u);
  EXPECT_EQ(cfg->exec->env[0].first, "A");
  EXPECT_EQ(cfg->exec->env[0].second, "1");
  EXPECT_EQ(cfg->exec->api_version, "client.authentication.k8s.io/v1");
  EXPECT_EQ(cfg->exec->install_hint, "apt-get install get-token");
  EXPECT_TRUE(cfg->exec->provide_cluster_info);
  EXPECT_EQ(cfg->exec->interactive_mode, "Never");
  EXPECT_EQ(cfg->tls_server_name, "api.internal");
  EXPECT_EQ(cfg->exec_extension_json, R"({"audience":"kube","debug":true,"port":443})");

  // PATH commands stay as they are; v1beta1 defaults to IfAvailable.
  auto beta = ParseKubeconfig(
      Kubeconfig("", "    exec: {command: aws, apiVersion: client.authentication.k8s.io/v1beta1}\n"),
      "/x/config", "/x");
  ASSERT_TRUE(beta.ok()) << beta.status().ToString();
  EXPECT_EQ(beta->exec->command, "aws");
  EXPECT_EQ(beta->exec->interactive_mode, "IfAvailable");

  // A token in the same user wins, as in client-go.
  auto token = ParseKubeconfig(
      Kubeconfig("", "    token: t\n    exec: {command: aws, apiVersion: client.authentication.k8s.io/v1beta1}\n"),
      "/x/config", "/x");
  ASSERT_TRUE(token.ok()) << token.status().ToString();
  EXPECT_FALSE(token->exec.has_value());
  EXPECT_EQ(token->token, "t");
}

TEST_F(KubeConfigTest, Base64RoundTrip) {
  for (const std::string& s : std::vector<std::string>{"", "a", "ab", "abc", "abcd", std::string("\0\xff\x10", 3)}) {
    auto back = DecodeBase64(EncodeBase64(s));
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, s);
  }
  EXPECT_EQ(EncodeBase64("hello"), kHelloB64);
}

TEST_F(KubeConfigTest, MissingFileIsNamed) {
  auto cfg = LoadKubeconfigFile(dir_ + "/nope");
  ASSERT_FALSE(cfg.ok());
  EXPECT_NE(cfg.status().message().find(dir_ + "/nope"), std::string::npos);
}

TEST_F(KubeConfigTest, InCluster) {
  Write("sa/token", "tok1\n");
  Write("sa/ca.crt", "PEM");
  Write("sa/namespace", "router\n");
  InClusterEnv env{"10.0.0.1", "443", dir_ + "/sa"};
  auto cfg = LoadInClusterConfig(env);
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  EXPECT_EQ(cfg->server, "https://10.0.0.1:443");
  EXPECT_EQ(cfg->token_file, dir_ + "/sa/token");
  EXPECT_EQ(cfg->ca_file, dir_ + "/sa/ca.crt");
  EXPECT_EQ(cfg->namespace_name, "router");

  env.service_host = "fd00::1";
  EXPECT_EQ(LoadInClusterConfig(env)->server, "https://[fd00::1]:443");

  env.root = dir_ + "/none";
  auto bad = LoadInClusterConfig(env);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find(dir_ + "/none/token"), std::string::npos);
}

TEST_F(KubeConfigTest, ResolutionOrder) {
  std::string explicit_path = Write("explicit", Kubeconfig("", "    token: e\n"));
  std::string env_path = Write("env", Kubeconfig("", "    token: v\n"));
  Write("home/.kube/config", Kubeconfig("", "    token: h\n"));
  Write("sa/token", "incluster");
  ConfigSources s;
  s.explicit_kubeconfig = explicit_path;
  s.in_cluster = {"10.0.0.1", "443", dir_ + "/sa"};
  s.kubeconfig_env = env_path + ":/other";
  s.home = dir_ + "/home";
  EXPECT_EQ(ResolveConfig(s)->token, "e");
  s.explicit_kubeconfig.clear();
  EXPECT_EQ(ResolveConfig(s)->token_file, dir_ + "/sa/token");
  s.in_cluster.service_host.clear();
  EXPECT_EQ(ResolveConfig(s)->token, "v");
  s.kubeconfig_env.clear();
  EXPECT_EQ(ResolveConfig(s)->token, "h");
  s.home.clear();
  EXPECT_FALSE(ResolveConfig(s).ok());
}

TEST(Base64Test, Decodes) {
  EXPECT_EQ(DecodeBase64("aGVsbG8gd29ybGQ=").value(), "hello world");
  EXPECT_EQ(DecodeBase64("aGVs\nbG8=").value(), "hello");
  EXPECT_EQ(DecodeBase64("").value(), "");
  EXPECT_FALSE(DecodeBase64("a").ok());
  EXPECT_FALSE(DecodeBase64("aGVs*").ok());
  EXPECT_FALSE(DecodeBase64("aG=Vs").ok());
}

TEST_F(KubeConfigTest, TokenFileIsReReadWhenItRotates) {
  std::string path = Write("token", "one\n");
  TokenSource ts("", path);
  EXPECT_EQ(ts.Token().value(), "one");
  // Rotation as kubelet does it: a new file renamed over the old one.
  std::string fresh = Write("token.new", "two-longer");
  fs::rename(fresh, path);
  EXPECT_EQ(ts.Token().value(), "two-longer");
  fs::remove(path);
  EXPECT_EQ(ts.Token().value(), "two-longer");  // kept across a gap

  TokenSource missing("", dir_ + "/absent");
  auto t = missing.Token();
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kUnauthorized);
  EXPECT_EQ(TokenSource("static", "").Token().value(), "static");
  EXPECT_EQ(TokenSource("", "").Token().value(), "");
}

// Every file the client reads has a size limit and must be a regular file:
// --kubeconfig=/dev/zero aborted with bad_alloc; a FIFO blocked forever.
TEST_F(KubeConfigTest, InputFilesAreBoundedAndRegular) {
  ASSERT_EQ(::mkfifo((dir_ + "/fifo").c_str(), 0600), 0);
  for (const auto& [path, what] : std::vector<std::pair<std::string, std::string>>{
           {"/dev/zero", "is a character device"}, {dir_ + "/fifo", "is a FIFO (named pipe)"}, {dir_, "is a directory"}}) {
    auto cfg = LoadKubeconfigFile(path);
    ASSERT_FALSE(cfg.ok()) << path;
    EXPECT_EQ(cfg.status().code(), StatusCode::kInvalid);
    EXPECT_EQ(cfg.status().message(), "kubeconfig " + path + ": cannot read the file: " + what +
                                          ", not a regular file (give the path of a file)");
  }
  std::string big = Write("big", Kubeconfig("", "    token: " + std::string(5 << 20, 'a') + "\n"));
  EXPECT_EQ(LoadKubeconfigFile(big).status().message(),
            "kubeconfig " + big + ": cannot read the file: larger than the limit of 4 MiB for this file");

  // In-cluster: the token file.
  Write("sa/token", std::string(100 << 10, 't'));
  auto in_cluster = LoadInClusterConfig(InClusterEnv{"10.0.0.1", "443", dir_ + "/sa"});
  ASSERT_FALSE(in_cluster.ok());
  EXPECT_NE(in_cluster.status().message().find("larger than the limit of 64 KiB"), std::string::npos)
      << in_cluster.status().message();
  // The token file re-read at run time.
  TokenSource ts("", dir_ + "/sa/token");
  auto token = ts.Token();
  ASSERT_FALSE(token.ok());
  EXPECT_NE(token.status().message().find("larger than the limit of 64 KiB"), std::string::npos)
      << token.status().message();
  TokenSource fifo_token("", dir_ + "/fifo");
  EXPECT_NE(fifo_token.Token().status().message().find("is a FIFO"), std::string::npos);
  // certificate-authority and client certificate files.
  RestConfig tls;
  tls.origin = "kubeconfig k context c";
  tls.ca_file = "/dev/zero";
  EXPECT_EQ(LoadTlsMaterial(tls).status().message(),
            "kubeconfig k context c: certificate-authority /dev/zero: cannot read the file: is a "
            "character device, not a regular file (give the path of a file)");
  tls.ca_file = Write("ca.crt", std::string(5 << 20, 'c'));
  EXPECT_NE(LoadTlsMaterial(tls).status().message().find("larger than the limit of 4 MiB"),
            std::string::npos);
}

// client-go: tokenFile wins over token when a user sets both.
TEST_F(KubeConfigTest, TokenFileWinsOverToken) {
  std::string path = Write("token", "from-file\n");
  EXPECT_EQ(TokenSource("static", path).Token().value(), "from-file");
}

// A token with CR or LF would be sent as a second, injected header; Go's
// HTTP client refuses it, and so do we, from every source.
TEST_F(KubeConfigTest, TokensWithLineBreaksAreRefused) {
  auto t = TokenSource("abc\r\nX-Injected: 1", "").Token();
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kUnauthorized);
  EXPECT_NE(t.status().message().find("kubeconfig users[].user.token"), std::string::npos);
  EXPECT_EQ(t.status().message().find("X-Injected"), std::string::npos) << "the token is secret";
  std::string path = Write("token", "abc\nX-Injected: 1\n");
  t = TokenSource("", path).Token();
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("token file " + path), std::string::npos);
  EXPECT_FALSE(TokenSource("a\rb", "").Token().ok());
  EXPECT_TRUE(TokenSource("", Write("ok", "abc\r\n")).Token().ok()) << "a trailing newline is trimmed";
}

}  // namespace
}  // namespace routestatus::kubeclient::rest

namespace routestatus::kubeclient::rest {
namespace {

// ChooseProxy: client-go's proxy-url, and Go's ProxyFromEnvironment.
TEST(ChooseProxyTest, AsClientGoChoosesIt) {
  std::map<std::string, std::string> env;
  auto getenv = [&](const char* name) { return env.count(name) ? env[name] : std::string(); };
  auto url = [&](const std::string& server, const std::string& proxy_url = "") {
    auto c = ChooseProxy(server, proxy_url, getenv);
    return c.ok() ? c->url : "error: " + c.status().message();
  };
  EXPECT_EQ(url("https://api.example.com:6443"), "");
  EXPECT_EQ(url("https://api.example.com:6443", "http://proxy:3128"), "http://proxy:3128");
  EXPECT_EQ(url("https://127.0.0.1:6443", "http://proxy:3128"), "http://proxy:3128")
      << "proxy-url is used even for loopback";
  env["HTTPS_PROXY"] = "proxy.corp:8080";
  EXPECT_EQ(url("https://api.example.com:6443"), "http://proxy.corp:8080");
  EXPECT_EQ(url("http://api.example.com:8080"), "") << "HTTPS_PROXY is for https servers";
  EXPECT_EQ(url("https://127.0.0.1:6443"), "") << "never loopback from the environment";
  EXPECT_EQ(url("https://localhost:6443"), "");
  env["NO_PROXY"] = "10.0.0.0/8, .internal,example.com:6443";
  EXPECT_EQ(url("https://10.1.2.3:6443"), "");
  EXPECT_EQ(url("https://11.1.2.3:6443"), "http://proxy.corp:8080");
  EXPECT_EQ(url("https://api.internal"), "");
  EXPECT_EQ(url("https://internal"), "http://proxy.corp:8080") << ".internal: subdomains only";
  EXPECT_EQ(url("https://api.example.com:6443"), "");
  EXPECT_EQ(url("https://example.com:6443"), "");
  EXPECT_EQ(url("https://api.example.com:443"), "http://proxy.corp:8080") << "another port";
  env["NO_PROXY"] = "*";
  EXPECT_EQ(url("https://api.example.com:6443"), "");
  env.clear();
  env["http_proxy"] = "http://u:p@proxy:3128";
  auto c = ChooseProxy("http://api.example.com", "", getenv);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->url, "http://proxy:3128");
  EXPECT_EQ(c->user, "u");
  EXPECT_EQ(c->password, "p");
  EXPECT_EQ(c->source, "http_proxy");
  EXPECT_NE(url("https://api.example.com", "socks5://proxy:1080").find("not supported"),
            std::string::npos);
  EXPECT_NE(url("https://api.example.com", "https://proxy:3128").find("proxy-url: https://"),
            std::string::npos);
}

}  // namespace
}  // namespace routestatus::kubeclient::rest
