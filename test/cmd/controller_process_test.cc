// Runs the real route-status-controller binary: --help, configuration errors
// (exit 2), serving the health endpoints, and a clean exit on SIGTERM/SIGINT.
// The run tests point --server at a closed port: the controller keeps
// retrying its lists (so /readyz stays 503) while the process is tested.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <regex>
#include <string>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "apiserver/server.h"
#include "e2e/harness/prom_text.h"
#include "e2e/harness/subprocess.h"

namespace routestatus::cmd {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using e2e::Subprocess;
using namespace std::chrono_literals;

const std::string kBinary = ROUTESTATUS_CONTROLLER_BINARY;
// Nothing listens on port 1 of the loopback interface.
const std::string kUnreachableServer = "--server=http://127.0.0.1:1";

std::string LogPath(const std::string& name) {
  return ::testing::TempDir() + "/rsc_" + name + "_" + std::to_string(::getpid()) + ".log";
}

// Runs the binary to completion (bounded) and returns its exit code.
int RunToExit(std::vector<std::string> args, const std::string& log,
              const std::map<std::string, std::string>& env = {}) {
  args.insert(args.begin(), kBinary);
  ::unlink(log.c_str());
  Subprocess p(args, log, env);
  return p.Wait(10s);
}

std::string ReadFile(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "r");
  std::string out;
  if (f == nullptr) return out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) out.append(buf, n);
  std::fclose(f);
  return out;
}

TEST(ControllerProcessTest, HelpExitsZeroAndListsOptions) {
  std::string log = LogPath("help");
  EXPECT_EQ(RunToExit({"--help"}, log), 0);
  std::string out = ReadFile(log);
  EXPECT_THAT(out, HasSubstr("--lease-interval=duration"));
  EXPECT_THAT(out, HasSubstr("ROUTER_SERVICE_NAME"));
}

TEST(ControllerProcessTest, BadConfigurationExitsTwoWithEveryError) {
  std::string log = LogPath("bad");
  EXPECT_EQ(RunToExit({"--lease-interval=fast", "--workers=-3"}, log,
                      {{"ROUTESTATUS_CONTENTION_LIMIT", "many"}}),
            2);
  std::string out = ReadFile(log);
  EXPECT_THAT(out, HasSubstr("--lease-interval: invalid value \"fast\""));
  EXPECT_THAT(out, HasSubstr("--workers must be between 1 and 256 (got -3)"));
  EXPECT_THAT(out, HasSubstr("from env ROUTESTATUS_CONTENTION_LIMIT"));
  EXPECT_THAT(out, HasSubstr("3 configuration error(s)"));
}

// Inputs that used to abort (bad_alloc), block or widen the shard: each is
// exit 2 with one message that says what to change.
TEST(ControllerProcessTest, HostileInputsExitTwoWithOneClearMessage) {
  const std::string dir = ::testing::TempDir() + "/rsc_hostile_" + std::to_string(::getpid());
  ::mkdir(dir.c_str(), 0700);
  const std::string kubeconfig = dir + "/kubeconfig";
  {
    FILE* f = std::fopen(kubeconfig.c_str(), "w");
    std::fputs("apiVersion: v1\nkind: Config\ncurrent-context: x\ncontexts:\n- name: x\n"
               "  context: {cluster: c, user: u}\nclusters:\n- name: c\n  cluster:\n"
               "    server: https://127.0.0.1:1\n    certificate-authority: /nonexistent/ca.crt\n"
               "users:\n- name: u\n  user: {token: t}\n",
               f);
    std::fclose(f);
  }
  const std::string nested = dir + "/nested.yaml";
  {
    FILE* f = std::fopen(nested.c_str(), "w");
    std::fputs("namespaces:\n- [x]\n", f);
    std::fclose(f);
  }
  struct Case {
    std::vector<std::string> args;
    std::string want;
  } cases[] = {
      {{"--config=/dev/zero"}, "config file /dev/zero: cannot read: is a character device"},
      {{"--config=" + dir}, "config file " + dir + ": cannot read: is a directory"},
      {{"--config=" + nested}, "key namespaces: item 1 is a list"},
      {{"--kubeconfig=/dev/zero"}, "kubeconfig /dev/zero: cannot read the file: is a character device"},
      {{"--qps=1e-10"}, "--qps must be at least 0.1"},
      {{"--kubeconfig=" + kubeconfig},
       "kubeconfig " + kubeconfig + " context x: certificate-authority /nonexistent/ca.crt: cannot "
       "read the file: No such file or directory"},
      {{"--router-name=bad\xff\x01name"}, "--router-name: \"bad\\xff\\x01name\" is not a valid name"},
  };
  for (const Case& c : cases) {
    std::string log = LogPath("hostile");
    EXPECT_EQ(RunToExit(c.args, log), 2) << c.args[0] << "\n" << ReadFile(log);
    std::string out = ReadFile(log);
    EXPECT_THAT(out, HasSubstr(c.want)) << c.args[0];
    // The origin of a kubeconfig error is named once, not twice.
    size_t first = out.find(" context x:");
    if (first != std::string::npos) {
      EXPECT_EQ(out.find(" context x:", first + 1), std::string::npos) << out;
    }
    // Bytes that are not UTF-8 (or are control characters) are escaped.
    EXPECT_EQ(out.find('\xff'), std::string::npos) << c.args[0];
    EXPECT_EQ(out.find('\x01'), std::string::npos) << c.args[0];
  }
  std::remove(kubeconfig.c_str());
  std::remove(nested.c_str());
  ::rmdir(dir.c_str());
}

TEST(ControllerProcessTest, ServesHealthAndStopsOnSigterm) {
  std::string log = LogPath("run");
  ::unlink(log.c_str());
  Subprocess p({kBinary, "--metrics-address=127.0.0.1:0", "--token=very-secret", kUnreachableServer},
               log,
               {{"ROUTER_SERVICE_NAME", "e2e-shard"}});
  ASSERT_TRUE(p.WaitForLog("serving /metrics", 10s)) << p.ReadLog();
  std::smatch m;
  std::string out = p.ReadLog();
  ASSERT_TRUE(std::regex_search(out, m, std::regex("on 127\\.0\\.0\\.1:([0-9]+)"))) << out;
  int port = std::stoi(m[1]);
  // The effective configuration is logged once, with the token redacted.
  EXPECT_THAT(out, HasSubstr("router-name=e2e-shard"));
  EXPECT_THAT(out, HasSubstr("token=<redacted>"));
  EXPECT_THAT(out, Not(HasSubstr("very-secret")));

  bool ok = false;
  int code = 0;
  EXPECT_EQ(e2e::HttpGetLocal(port, "/healthz", &ok, &code), "ok\n");
  EXPECT_EQ(code, 200);
  e2e::HttpGetLocal(port, "/readyz", &ok, &code);
  EXPECT_EQ(code, 503);  // not ready until the controller's caches sync
  e2e::HttpGetLocal(port, "/metrics", &ok, &code);
  EXPECT_EQ(code, 200);

  auto start = std::chrono::steady_clock::now();
  p.Signal(SIGTERM);
  EXPECT_EQ(p.Wait(5s), 0) << p.ReadLog();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  EXPECT_THAT(p.ReadLog(), HasSubstr("received SIGTERM, shutting down"));
}

TEST(ControllerProcessTest, SigintAlsoExitsZero) {
  std::string log = LogPath("int");
  ::unlink(log.c_str());
  Subprocess p({kBinary, "--metrics-address=127.0.0.1:0", kUnreachableServer}, log);
  ASSERT_TRUE(p.WaitForLog("serving /metrics", 10s)) << p.ReadLog();
  p.Signal(SIGINT);
  EXPECT_EQ(p.Wait(5s), 0) << p.ReadLog();
}

// SIGTERM while the first route list is slowed by an injected 30 s latency:
// the process exits 0 within --shutdown-timeout (5 s by default), after a
// clean stop, not by abandoning the busy threads (_Exit).
TEST(ControllerProcessTest, SigtermDuringASlowListStopsCleanlyInTime) {
  apiserver::Server server;
  ASSERT_TRUE(server.Start().ok());
  std::string kubeconfig = ::testing::TempDir() + "/rsc_slow_kubeconfig_" + std::to_string(::getpid());
  ASSERT_TRUE(server.WriteKubeconfig(kubeconfig).ok());
  apiserver::FaultRule slow;
  slow.verb = "LIST";
  slow.resource = "routes";
  slow.count = 1;
  slow.code = 0;
  slow.latency = std::chrono::milliseconds(30000);
  server.faults().Add(slow);
  std::string log = LogPath("slowlist");
  ::unlink(log.c_str());
  // Why --watch-list=false: the paged list (kube-apiserver up to 1.26) is
  // the request slowed here; a watch list would not list at all.
  Subprocess p({kBinary, "--metrics-address=127.0.0.1:0", "--kubeconfig=" + kubeconfig,
                "--router-name=slow", "--watch-list=false"},
               log);
  // The rule is used up once the list is being served (and delayed).
  auto wait_until = std::chrono::steady_clock::now() + 10s;
  while (!server.faults().Rules().empty() && std::chrono::steady_clock::now() < wait_until) {
    std::this_thread::sleep_for(10ms);
  }
  ASSERT_TRUE(server.faults().Rules().empty()) << "the controller never listed routes\n"
                                               << p.ReadLog();
  auto start = std::chrono::steady_clock::now();
  p.Signal(SIGTERM);
  EXPECT_EQ(p.Wait(10s), 0) << p.ReadLog();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  std::string out = p.ReadLog();
  EXPECT_THAT(out, HasSubstr("received SIGTERM, shutting down"));
  EXPECT_THAT(out, HasSubstr("] stopped"));
  EXPECT_THAT(out, Not(HasSubstr("still in flight")));
  EXPECT_THAT(out, Not(HasSubstr("still busy")));
  server.Stop();
  ::unlink(kubeconfig.c_str());
}

TEST(ControllerProcessTest, BusyMetricsPortFailsLoudly) {
  std::string log1 = LogPath("busy1"), log2 = LogPath("busy2");
  ::unlink(log1.c_str());
  Subprocess first({kBinary, "--metrics-address=127.0.0.1:0", kUnreachableServer}, log1);
  ASSERT_TRUE(first.WaitForLog("serving /metrics", 10s)) << first.ReadLog();
  std::smatch m;
  std::string out = first.ReadLog();
  ASSERT_TRUE(std::regex_search(out, m, std::regex("on 127\\.0\\.0\\.1:([0-9]+)")));
  EXPECT_EQ(RunToExit({"--metrics-address=127.0.0.1:" + m[1].str(), kUnreachableServer}, log2), 1);
  EXPECT_THAT(ReadFile(log2), HasSubstr("cannot serve on 127.0.0.1:"));
  EXPECT_EQ(first.Stop(), 0);
}

}  // namespace
}  // namespace routestatus::cmd
