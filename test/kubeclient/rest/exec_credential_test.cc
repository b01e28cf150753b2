// Exec credential plugins (client.authentication.k8s.io v1 and v1beta1):
// the output parser, and ExecCredentialProvider running small shell
// plugins that the tests write.
#include "kubeclient/rest/exec_credential.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test/testing/fake_clock.h"

namespace routestatus::kubeclient::rest {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr char kV1[] = "client.authentication.k8s.io/v1";
constexpr char kV1beta1[] = "client.authentication.k8s.io/v1beta1";

std::string Credential(const std::string& api_version, const json& status) {
  return json{{"apiVersion", api_version}, {"kind", "ExecCredential"}, {"status", status}}.dump();
}

TEST(ParseExecCredentialTest, TokenWithAndWithoutExpiry) {
  auto c = ParseExecCredential(Credential(kV1, {{"token", "t1"}}), kV1);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->token, "t1");
  EXPECT_FALSE(c->expiry.has_value());
  c = ParseExecCredential(
      Credential(kV1beta1, {{"token", "t2"}, {"expirationTimestamp", "2026-01-01T00:01:00Z"}}),
      kV1beta1);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->expiry->time_since_epoch(), seconds(1767225660));
}

TEST(ParseExecCredentialTest, MistakesAreNamed) {
  const struct {
    std::string out;
    std::string want;
  } cases[] = {
      {"not json", "decoding stdout"},
      {Credential(kV1beta1, {{"token", "t"}}), "configured to use API version " + std::string(kV1)},
      {json{{"apiVersion", kV1}, {"kind", "Other"}, {"status", {{"token", "t"}}}}.dump(), "kind"},
      {json{{"apiVersion", kV1}, {"kind", "ExecCredential"}}.dump(), "didn't return a status"},
      {Credential(kV1, json::object()), "didn't return a token or cert/key pair"},
      {Credential(kV1, {{"clientCertificateData", "x"}}), "only certificate or key"},
      {Credential(kV1, {{"clientCertificateData", "x"}, {"clientKeyData", "y"}}),
       "failed parsing client key/certificate"},
      {Credential(kV1, {{"token", "t"}, {"expirationTimestamp", "tomorrow"}}), "expirationTimestamp"},
  };
  for (const auto& c : cases) {
    auto got = ParseExecCredential(c.out, kV1);
    ASSERT_FALSE(got.ok()) << c.out;
    EXPECT_EQ(got.status().code(), StatusCode::kInvalid);
    EXPECT_NE(got.status().message().find(c.want), std::string::npos)
        << c.out << " -> " << got.status().message();
  }
}

// Issue 24: stdout holds the token; a bad one is described, never quoted.
TEST(ParseExecCredentialTest, BadStdoutIsDescribedWithoutQuotingIt) {
  const std::string good = Credential(kV1, {{"token", "SECRET-TOKEN-123"}});
  const struct {
    std::string out;
    std::string want;
  } cases[] = {
      {good + "\nDone.\n", "trailing data after the JSON object"},
      {good + good, "trailing data after the JSON object"},
      {good.substr(0, good.find("SECRET") + 10), "ends in the middle of a value"},
      {"", "stdout is empty"},
      {"[\"SECRET-TOKEN-123\"]", "stdout is a JSON array, not one JSON object"},
      {"token: SECRET-TOKEN-123", "syntax error at byte"},
  };
  for (const auto& c : cases) {
    auto got = ParseExecCredential(c.out, kV1);
    ASSERT_FALSE(got.ok()) << c.out;
    EXPECT_NE(got.status().message().find(c.want), std::string::npos)
        << c.out << " -> " << got.status().message();
    EXPECT_EQ(got.status().message().find("SECRET"), std::string::npos) << got.status().message();
  }
}

TEST(ParseExecCredentialTest, TokenWithLineBreakIsRefused) {
  for (const char* token : {"abc\r\nX-Injected: 1", "abc\n", "a\rb"}) {
    auto got = ParseExecCredential(Credential(kV1, {{"token", token}}), kV1);
    ASSERT_FALSE(got.ok()) << token;
    EXPECT_NE(got.status().message().find("line break"), std::string::npos)
        << got.status().message();
    EXPECT_EQ(got.status().message().find("Injected"), std::string::npos);
  }
}

class ExecProviderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/exec_credential_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Writes an executable /bin/sh script; returns its path.
  std::string Script(const std::string& name, const std::string& body) {
    std::string path = dir_ + "/" + name;
    std::ofstream(path) << "#!/bin/sh\n" << body;
    chmod(path.c_str(), 0755);
    return path;
  }
  std::string Read(const std::string& name) {
    std::ifstream in(dir_ + "/" + name);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  int Runs() {
    std::string runs = Read("runs");
    return static_cast<int>(std::count(runs.begin(), runs.end(), '\n'));
  }
  // A plugin that counts its runs and prints `output_file`'s contents.
  ExecConfig CountingPlugin(const std::string& api_version = kV1) {
    ExecConfig e;
    e.command = Script("plugin", "echo run >> " + dir_ + "/runs\ncat " + dir_ + "/out.json\n");
    e.api_version = api_version;
    e.interactive_mode = "Never";
    return e;
  }
  void SetOutput(const std::string& json_text) { std::ofstream(dir_ + "/out.json") << json_text; }

  ExecCredentialProvider::Options Opts(ExecConfig exec) {
    ExecCredentialProvider::Options o;
    o.exec = std::move(exec);
    return o;
  }

  std::string dir_;
};

TEST_F(ExecProviderTest, PluginGetsExecInfoArgsAndEnv) {
  ExecConfig e;
  e.command = Script("plugin",
                     "printf '%s' \"$KUBERNETES_EXEC_INFO\" > " + dir_ + "/info\n"
                     "printf '%s|' \"$@\" > " + dir_ + "/args\n"
                     "printf '%s' \"$PLUGIN_REGION\" > " + dir_ + "/env\n"
                     "read line && echo stdin-was-readable > " + dir_ + "/stdin\n"
                     "echo '" + Credential(kV1beta1, {{"token", "from-plugin"}}) + "'\n");
  e.args = {"get-token", "--cluster", "c 1"};
  e.env = {{"PLUGIN_REGION", "eu-west-1"}};
  e.api_version = kV1beta1;
  e.interactive_mode = "IfAvailable";
  e.provide_cluster_info = true;
  RestConfig cluster;
  cluster.server = "https://10.0.0.1:6443";
  cluster.exec_extension_json = R"({"audience":"kube"})";
  auto o = Opts(e);
  o.cluster_json = ClusterInfoJson(cluster, "CA-PEM");
  RealClock clock;
  ExecCredentialProvider p(o, clock);
  auto cred = p.Get();
  ASSERT_TRUE(cred.ok()) << cred.status().ToString();
  EXPECT_EQ((*cred)->token, "from-plugin");
  json info = json::parse(Read("info"));
  EXPECT_EQ(info["apiVersion"], kV1beta1);
  EXPECT_EQ(info["kind"], "ExecCredential");
  EXPECT_EQ(info["spec"]["interactive"], false);
  EXPECT_EQ(info["spec"]["cluster"]["server"], "https://10.0.0.1:6443");
  EXPECT_EQ(info["spec"]["cluster"]["certificate-authority-data"], "Q0EtUEVN");  // "CA-PEM"
  EXPECT_EQ(info["spec"]["cluster"]["config"]["audience"], "kube");
  EXPECT_EQ(Read("args"), "get-token|--cluster|c 1|");
  EXPECT_EQ(Read("env"), "eu-west-1");
  EXPECT_EQ(Read("stdin"), "") << "a controller's plugin never gets a terminal";
}

TEST_F(ExecProviderTest, ClusterInfoOnlyWhenAskedFor) {
  ExecConfig e;
  e.command = Script("plugin", "printf '%s' \"$KUBERNETES_EXEC_INFO\" > " + dir_ + "/info\n"
                               "echo '" + Credential(kV1, {{"token", "t"}}) + "'\n");
  e.api_version = kV1;
  e.interactive_mode = "Never";
  auto o = Opts(e);
  o.cluster_json = R"({"server":"https://x"})";
  RealClock clock;
  ExecCredentialProvider p(o, clock);
  ASSERT_TRUE(p.Get().ok());
  json info = json::parse(Read("info"));
  EXPECT_FALSE(info["spec"].contains("cluster"));
}

TEST_F(ExecProviderTest, CachedUntilExpirationTimestamp) {
  testing::FakeClock clock;  // wall time 2026-01-01T00:00:00Z
  SetOutput(Credential(kV1, {{"token", "t"}, {"expirationTimestamp", "2026-01-01T00:01:00Z"}}));
  ExecCredentialProvider p(Opts(CountingPlugin()), clock);
  ASSERT_TRUE(p.Get().ok());
  ASSERT_TRUE(p.Get().ok());
  EXPECT_EQ(Runs(), 1);
  clock.Advance(seconds(59));
  ASSERT_TRUE(p.Get().ok());
  EXPECT_EQ(Runs(), 1);
  clock.Advance(seconds(2));
  ASSERT_TRUE(p.Get().ok());
  EXPECT_EQ(Runs(), 2);
}

TEST_F(ExecProviderTest, WithoutExpiryCachedUntilRefreshed) {
  testing::FakeClock clock;
  SetOutput(Credential(kV1, {{"token", "first"}}));
  ExecCredentialProvider p(Opts(CountingPlugin()), clock);
  auto used = p.Get();
  ASSERT_TRUE(used.ok());
  clock.Advance(std::chrono::hours(24 * 365));
  ASSERT_TRUE(p.Get().ok());
  EXPECT_EQ(Runs(), 1);
  SetOutput(Credential(kV1, {{"token", "second"}}));
  auto fresh = p.Refresh(*used);  // after a 401
  ASSERT_TRUE(fresh.ok());
  EXPECT_EQ((*fresh)->token, "second");
  EXPECT_EQ(Runs(), 2);
  // Another request that failed with the old credential does not run the
  // plugin again: it was already replaced.
  auto again = p.Refresh(*used);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)->token, "second");
  EXPECT_EQ(Runs(), 2);
}

TEST_F(ExecProviderTest, MissingCommandNamesItAndTheInstallHint) {
  ExecConfig e;
  e.command = "routestatus-no-such-credential-plugin";
  e.api_version = kV1;
  e.interactive_mode = "Never";
  e.install_hint = "install it with: apt-get install the-plugin";
  RealClock clock;
  ExecCredentialProvider p(Opts(e), clock);
  auto got = p.Get();
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kUnauthorized);
  EXPECT_NE(got.status().message().find("routestatus-no-such-credential-plugin not found"),
            std::string::npos)
      << got.status().message();
  EXPECT_NE(got.status().message().find("apt-get install the-plugin"), std::string::npos);
}

TEST_F(ExecProviderTest, FailingPluginReportsExitCodeAndStderr) {
  ExecConfig e;
  e.command = Script("plugin", "echo 'token expired, run login' >&2\nexit 3\n");
  e.api_version = kV1;
  e.interactive_mode = "Never";
  RealClock clock;
  ExecCredentialProvider p(Opts(e), clock);
  auto got = p.Get();
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("failed with exit code 3"), std::string::npos)
      << got.status().message();
  EXPECT_NE(got.status().message().find("token expired, run login"), std::string::npos);
}

TEST_F(ExecProviderTest, WrongApiVersionIsRefused) {
  SetOutput(Credential(kV1beta1, {{"token", "t"}}));
  RealClock clock;
  ExecCredentialProvider p(Opts(CountingPlugin(kV1)), clock);
  auto got = p.Get();
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("plugin returned version " + std::string(kV1beta1)),
            std::string::npos)
      << got.status().message();
}

TEST_F(ExecProviderTest, HangingPluginIsKilledAtTheTimeout) {
  ExecConfig e;
  e.command = Script("plugin", "exec sleep 30\n");
  e.api_version = kV1;
  e.interactive_mode = "Never";
  auto o = Opts(e);
  o.timeout = milliseconds(200);
  RealClock clock;
  ExecCredentialProvider p(o, clock);
  auto start = std::chrono::steady_clock::now();
  auto got = p.Get();
  EXPECT_LT(std::chrono::steady_clock::now() - start, seconds(5));
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("killed after"), std::string::npos);
}

// Issue 24: a shell wrapper whose child hangs (aws, gcloud) keeps the pipes
// open; the whole group is killed and Get() returns at once, releasing the
// provider (a second caller is not stalled for the child's lifetime).
TEST_F(ExecProviderTest, ShellWrapperWhoseChildHangsIsKilledWithItsGroup) {
  ExecConfig e;
  e.command = Script("plugin", "sleep 6 &\necho $! >> " + dir_ + "/child\nwait\n");
  e.api_version = kV1;
  e.interactive_mode = "Never";
  auto o = Opts(e);
  o.timeout = milliseconds(200);
  RealClock clock;
  ExecCredentialProvider p(o, clock);
  auto start = std::chrono::steady_clock::now();
  std::thread second([&] { EXPECT_FALSE(p.Get().ok()); });
  auto got = p.Get();
  second.join();
  auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("killed after"), std::string::npos);
  EXPECT_LT(took, milliseconds(1500)) << "two runs of 200 ms each, one after the other";
  // The wrapper's children died with it.
  std::istringstream pids(Read("child"));
  int pid = 0;
  int children = 0;
  while (pids >> pid) {
    ++children;
    bool gone = false;
    for (int i = 0; i < 200 && !gone; ++i) {
      gone = kill(pid, 0) != 0;
      if (!gone) std::this_thread::sleep_for(milliseconds(10));
    }
    EXPECT_TRUE(gone) << "child " << pid << " still runs";
  }
  EXPECT_EQ(children, 2);
}

TEST_F(ExecProviderTest, PluginPrintingWithoutEndIsKilled) {
  ExecConfig e;
  e.command = Script("plugin", "exec yes SECRET-TOKEN\n");
  e.api_version = kV1;
  e.interactive_mode = "Never";
  auto o = Opts(e);
  o.timeout = seconds(20);
  RealClock clock;
  ExecCredentialProvider p(o, clock);
  auto start = std::chrono::steady_clock::now();
  auto got = p.Get();
  EXPECT_LT(std::chrono::steady_clock::now() - start, seconds(5));
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("printing more than 1048576 bytes"), std::string::npos)
      << got.status().message();
  EXPECT_EQ(got.status().message().find("SECRET"), std::string::npos);
}

TEST_F(ExecProviderTest, CancellationKillsARunningPlugin) {
  ExecConfig e;
  e.command = Script("plugin", "echo started > " + dir_ + "/started\nexec sleep 30\n");
  e.api_version = kV1;
  e.interactive_mode = "Never";
  Cancellation cancel;
  auto o = Opts(e);
  o.cancel = &cancel;
  RealClock clock;
  ExecCredentialProvider p(o, clock);
  std::thread t([&] {
    while (Read("started").empty()) std::this_thread::yield();
    cancel.Cancel();
  });
  auto start = std::chrono::steady_clock::now();
  auto got = p.Get();
  t.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, seconds(5));
  EXPECT_EQ(got.status().code(), StatusCode::kCancelled) << got.status().ToString();
  EXPECT_EQ(p.Get().status().code(), StatusCode::kCancelled);
}

}  // namespace
}  // namespace routestatus::kubeclient::rest
