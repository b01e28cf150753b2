// Runs the real `route-status-controller explain` against the local-apiserver
// binary loaded with the demo's world (e2e::MakeDemoWorld with the demo's
// route count and seed) and the demo's controller flags (bench::ControllerFlags):
// every rejection reason in that data is explained with the rule and the
// route that decided it (the holder of a shared host is found here
// independently, from the listed creation times); what the demo's flags do
// not produce (NoHostValue, denied and allowed domains) is asked with one
// flag changed; explain agrees with a running replica's entries (state
// up-to-date); and the exit codes: 1 not found, 2 usage, 3 unreachable.
// Real processes and time; every wait is a bounded poll.
#include <unistd.h>

#include <chrono>
#include <iterator>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/clock.h"
#include "e2e/bench/fleet.h"
#include "e2e/harness/cluster.h"
#include "e2e/harness/route_factory.h"
#include "e2e/harness/subprocess.h"
#include "kubeclient/kube_client.h"
#include "kubeclient/rest/kube_config.h"
#include "kubeclient/rest/rest_kube_client.h"

namespace routestatus::cmd {
namespace {

using ::testing::HasSubstr;
using nlohmann::json;
using namespace std::chrono_literals;

const std::string kController = ROUTESTATUS_CONTROLLER_BINARY;
// The demo's defaults (cmd/demo: --routes=200 --seed=42).
constexpr int kDemoRoutes = 200;
constexpr uint64_t kDemoSeed = 42;

struct ExplainRun {
  int code = -1;
  std::string output;  // stdout and stderr
  json parsed;         // the JSON object on stdout (--output=json), else null
};

// The demo's controller flags as command line arguments.
std::vector<std::string> DemoFlags(const std::map<std::string, std::string>& overrides = {}) {
  e2e::ReplicaOptions o = e2e::bench::ToReplicaOptions(e2e::bench::ControllerFlags());
  o.flags["router-name"] = o.router_name;
  for (const auto& [k, v] : overrides) o.flags[k] = v;
  std::vector<std::string> args;
  for (const auto& [k, v] : o.flags) args.push_back("--" + k + "=" + v);
  return args;
}

bool Eventually(const std::function<bool()>& cond, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (cond()) return true;
    std::this_thread::sleep_for(100ms);
  }
  return cond();
}

class ExplainProcessTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(e2e::MakeTempDir("rsc-explain"));
    server_ = new e2e::LocalApiServer(*dir_);
    std::string error;
    ASSERT_TRUE(server_->WaitStarted(20s, &error)) << error;
    auto config = kubeclient::rest::LoadKubeconfigFile(server_->kubeconfig());
    ASSERT_TRUE(config.ok()) << config.status().ToString();
    kubeclient::rest::RestOptions options;
    options.qps = 0;
    client_ = kubeclient::rest::NewRestKubeClient(*config, clock_, options).value().release();
    e2e::DemoWorld world = e2e::MakeDemoWorld(kDemoRoutes, kDemoSeed);
    for (const auto& ns : world.namespaces) {
      ASSERT_TRUE(client_->Create(kubeclient::NamespacesResource(), "", ns).ok());
    }
    for (const auto& r : world.routes) {
      auto created = client_->Create(kubeclient::RoutesResource(),
                                     r["metadata"]["namespace"].get<std::string>(), r);
      ASSERT_TRUE(created.ok()) << created.status().ToString();
    }
  }
  static void TearDownTestSuite() {
    delete client_;
    if (server_) server_->Stop();
    delete server_;
    delete dir_;
  }

  static json ListRoutes() {
    auto page = client_->List(kubeclient::RoutesResource(), "", {});
    EXPECT_TRUE(page.ok());
    return page.ok() ? json(page->items) : json::array();
  }

  // Runs the binary with `args` (bounded) against the demo's server.
  static ExplainRun Explain(std::vector<std::string> args, bool with_kubeconfig = true) {
    static int n = 0;
    const std::string log = *dir_ + "/explain-" + std::to_string(++n) + ".log";
    args.insert(args.begin(), kController);
    if (with_kubeconfig) args.push_back("--kubeconfig=" + server_->kubeconfig());
    e2e::Subprocess p(args, log);
    ExplainRun run;
    run.code = p.Wait(30s);
    run.output = p.ReadLog();
    size_t brace = run.output.find("{\n");
    if (brace != std::string::npos) {
      run.parsed = json::parse(run.output.substr(brace), nullptr, /*allow_exceptions=*/false);
    }
    return run;
  }

  static json ExplainJson(const std::string& key,
                          const std::map<std::string, std::string>& overrides = {}) {
    std::vector<std::string> args = {"explain", key, "--output=json"};
    for (auto& f : DemoFlags(overrides)) args.push_back(f);
    ExplainRun run = Explain(args);
    EXPECT_EQ(run.code, 0) << run.output;
    EXPECT_TRUE(run.parsed.is_object()) << run.output;
    return run.parsed;
  }

  static std::string* dir_;
  static e2e::LocalApiServer* server_;
  static RealClock clock_;
  static kubeclient::KubeClient* client_;
};

std::string* ExplainProcessTest::dir_ = nullptr;
e2e::LocalApiServer* ExplainProcessTest::server_ = nullptr;
RealClock ExplainProcessTest::clock_;
kubeclient::KubeClient* ExplainProcessTest::client_ = nullptr;

std::string Key(const json& r) {
  return r["metadata"]["namespace"].get<std::string>() + "/" +
         r["metadata"]["name"].get<std::string>();
}
std::string Host(const json& r) { return r["spec"].value("host", ""); }
bool Internal(const json& r) {
  return e2e::bench::IsInternalShard(r, {"admin"});
}

TEST_F(ExplainProcessTest, EveryRejectionInTheDemoData) {
  const json routes = ListRoutes();
  ASSERT_EQ(routes.size(), static_cast<size_t>(kDemoRoutes));
  std::map<std::string, int> checked;  // what was asserted, by rule
  // Shared hosts: the in-shard route with the oldest (creationTimestamp,
  // uid) holds each one.
  std::map<std::string, json> holder;
  for (const json& r : routes) {
    const std::string host = Host(r);
    if (host.rfind("www-", 0) != 0 || Internal(r)) continue;
    auto older = [](const json& a, const json& b) {
      return std::make_pair(a["metadata"]["creationTimestamp"].get<std::string>(),
                            a["metadata"]["uid"].get<std::string>()) <
             std::make_pair(b["metadata"]["creationTimestamp"].get<std::string>(),
                            b["metadata"]["uid"].get<std::string>());
    };
    if (!holder.count(host) || older(r, holder[host])) holder[host] = r;
  }
  ASSERT_FALSE(holder.empty());
  for (const json& r : routes) {
    const std::string key = Key(r);
    const std::string host = Host(r);
    const bool route_label_internal =
        r["metadata"].value("labels", json::object()).value("router", "") == "internal";
    std::string want_rule;
    if (route_label_internal) {
      want_rule = "route-labels";
    } else if (r["metadata"]["namespace"] == "admin") {
      want_rule = "namespace-labels";
    } else if (host.rfind("Bad-Host", 0) == 0) {
      want_rule = "invalid-host";
    } else if (r["spec"].value("wildcardPolicy", "") == "Subdomain") {
      want_rule = "wildcards-not-allowed";
    } else if (host.rfind("www-", 0) == 0) {
      const json& h = holder.at(host);
      want_rule = Key(h) == key ? "admitted"
                  : h["metadata"]["namespace"] == r["metadata"]["namespace"]
                      ? "host-and-path-claimed"
                      : "host-owned-by-other-namespace";
    } else {
      continue;  // plain unique hosts and template hosts: admitted (checked below)
    }
    // One explain per other rule keeps the test quick (each is a process
    // that lists 200 routes; under ASan a second or more); every route of
    // three shared hosts is asked (which of the two HostAlreadyClaimed rules
    // each gets depends on creation times and uids).
    const bool shared = host.rfind("www-", 0) == 0;
    if (!shared && checked[want_rule] >= 1) continue;
    if (shared && std::distance(holder.begin(), holder.find(host)) >= 3) continue;
    SCOPED_TRACE(key + " " + host);
    json e = ExplainJson(key);
    ASSERT_TRUE(e.is_object());
    EXPECT_EQ(e["decision"]["rule"], want_rule) << e.dump(2);
    ++checked[want_rule];
    if (want_rule == "route-labels" || want_rule == "namespace-labels") {
      EXPECT_EQ(e["decision"]["result"], "OutOfShard");
      EXPECT_TRUE(e["desiredEntry"].is_null());
      EXPECT_EQ(e["shard"]["routeSelector"], "router!=internal");
      if (want_rule == "namespace-labels") {
        EXPECT_EQ(e["shard"]["namespaceLabels"]["router"], "internal");
      }
    } else if (want_rule == "invalid-host") {
      EXPECT_EQ(e["decision"]["reason"], "InvalidHost");
      EXPECT_THAT(e["host"]["problem"].get<std::string>(), HasSubstr("Bad-Host"));
      EXPECT_EQ(e["desiredEntry"]["conditions"][0]["reason"], "InvalidHost");
    } else if (want_rule == "wildcards-not-allowed") {
      EXPECT_EQ(e["decision"]["reason"], "RouteNotAdmitted");
      EXPECT_EQ(e["desiredEntry"]["wildcardPolicy"], "Subdomain");
    } else if (want_rule == "admitted") {
      EXPECT_EQ(e["decision"]["result"], "Admitted");
      EXPECT_EQ(e["host"]["holder"]["self"], true);
    } else {
      const json& h = holder.at(host);
      EXPECT_EQ(e["decision"]["reason"], "HostAlreadyClaimed");
      EXPECT_EQ(e["host"]["holder"]["name"], h["metadata"]["name"]);
      EXPECT_EQ(e["host"]["holder"]["namespace"], h["metadata"]["namespace"]);
      EXPECT_EQ(e["host"]["holder"]["creationTimestamp"], h["metadata"]["creationTimestamp"]);
      EXPECT_THAT(e["decision"]["message"].get<std::string>(), HasSubstr(Key(h)));
    }
  }
  // Each rejection reason of the demo data was asked at least once.
  for (const char* rule : {"route-labels", "namespace-labels", "invalid-host",
                           "wildcards-not-allowed", "admitted"}) {
    EXPECT_GE(checked[rule], 1) << rule;
  }
  EXPECT_GE(checked["host-owned-by-other-namespace"] + checked["host-and-path-claimed"], 1);
}

TEST_F(ExplainProcessTest, RulesTheDemoFlagsDoNotReach) {
  const json routes = ListRoutes();
  std::string no_host, plain;
  for (const json& r : routes) {
    if (Internal(r)) continue;
    if (Host(r).empty() && no_host.empty()) no_host = Key(r);
    if (Host(r).find(".apps.example.com") != std::string::npos &&
        r["spec"].value("wildcardPolicy", "").empty() && plain.empty()) {
      plain = Key(r);
    }
  }
  ASSERT_FALSE(no_host.empty());
  ASSERT_FALSE(plain.empty());
  // With the demo's template the route gets a host; without it, none.
  json e = ExplainJson(no_host);
  EXPECT_EQ(e["decision"]["result"], "Admitted");
  e = ExplainJson(no_host, {{"hostname-template", ""}});
  EXPECT_EQ(e["decision"]["rule"], "no-host");
  EXPECT_EQ(e["decision"]["reason"], "NoHostValue");
  e = ExplainJson(plain, {{"denied-domains", "example.org,apps.example.com"}});
  EXPECT_EQ(e["decision"]["rule"], "denied-domain");
  EXPECT_EQ(e["host"]["deniedDomain"], "apps.example.com");
  e = ExplainJson(plain, {{"allowed-domains", "example.org"}});
  EXPECT_EQ(e["decision"]["rule"], "not-in-allowed-domains");
  e = ExplainJson(plain, {{"allowed-domains", "example.org,example.com"}});
  EXPECT_EQ(e["decision"]["result"], "Admitted");
  EXPECT_EQ(e["host"]["allowedDomain"], "example.com");
}

TEST_F(ExplainProcessTest, AgreesWithARunningReplica) {
  e2e::bench::ControllerFlags flags;
  e2e::bench::Replica replica(1, server_->kubeconfig(), flags, *dir_);
  const std::string router = flags.router_name;
  // Converged: every in-shard route has our entry, no other route has one.
  ASSERT_TRUE(Eventually(
      [&] {
        for (const json& r : ListRoutes()) {
          if (e2e::bench::FindEntry(r, router).present == Internal(r)) return false;
        }
        return true;
      },
      60s))
      << "the replica did not converge; log " << replica.log_path();
  // One route of each kind the demo makes; every answer is "nothing to write".
  std::map<std::string, std::string> by_kind;  // "<kind><0|1>" -> route
  std::map<std::string, int> per_kind;
  for (const json& r : ListRoutes()) {
    const std::string host = Host(r);
    std::string kind = Internal(r)                   ? "internal"
                       : host.empty()                ? "template"
                       : host.rfind("Bad-Host", 0) == 0 ? "invalid"
                       : host.rfind("www-", 0) == 0  ? "shared"
                       : host.rfind("wild-", 0) == 0 ? "wildcard"
                                                     : "plain";
    if (per_kind[kind] < 2) by_kind[kind + std::to_string(per_kind[kind]++)] = Key(r);
  }
  for (const auto& [kind, key] : by_kind) {
    SCOPED_TRACE(kind + " " + key);
    json e = ExplainJson(key);
    ASSERT_TRUE(e.is_object());
    const std::string state = e["entry"]["state"];
    EXPECT_TRUE(state == "up-to-date" || state == "none") << e.dump(2);
    if (state == "up-to-date") {
      EXPECT_EQ(e["desiredEntry"], e["storedEntry"]);  // lastTransitionTime kept too
    }
  }
  // The text form of an admitted route with its entry in place.
  std::vector<std::string> args = {"explain", by_kind.begin()->second};
  for (auto& f : DemoFlags()) args.push_back(f);
  ExplainRun text = Explain(args);
  EXPECT_EQ(text.code, 0) << text.output;
  EXPECT_THAT(text.output, HasSubstr("entry a replica would write"));
  EXPECT_THAT(text.output, HasSubstr("rule:"));
  replica.Stop();
}

TEST_F(ExplainProcessTest, ExitCodes) {
  std::vector<std::string> args = {"explain", "shop/no-such-route"};
  for (auto& f : DemoFlags()) args.push_back(f);
  ExplainRun run = Explain(args);
  EXPECT_EQ(run.code, 1) << run.output;
  EXPECT_THAT(run.output, HasSubstr("route shop/no-such-route not found"));

  EXPECT_EQ(Explain({"explain", "shop"}).code, 2);
  EXPECT_EQ(Explain({"explain"}).code, 2);
  run = Explain({"explain", "shop/app-0", "--output=yaml"});
  EXPECT_EQ(run.code, 2);
  EXPECT_THAT(run.output, HasSubstr("use text or json"));
  EXPECT_EQ(Explain({"run", "--output=json"}).code, 2);

  // Nothing listens on port 1 of the loopback interface.
  run = Explain({"explain", "shop/app-0", "--server=http://127.0.0.1:1"}, false);
  EXPECT_EQ(run.code, 3) << run.output;
  EXPECT_THAT(run.output, HasSubstr("cannot read route shop/app-0 from the API server "
                                    "http://127.0.0.1:1"));
}

}  // namespace
}  // namespace routestatus::cmd
