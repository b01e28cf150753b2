// Checks that deploy/'s ClusterRole grants what the controller really uses:
// the real route-status-controller binary runs against an in-process
// embedded API server that only it talks to over HTTP (the test seeds data
// in-process), and every (group, resource, verb) the server counted in
// apiserver_request_total must be granted by deploy/controller/clusterrole.yaml,
// while the role grants nothing beyond that except `get` (read access the
// issue prescribes next to list/watch).
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <tuple>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "apiserver/server.h"
#include "e2e/harness/prom_text.h"
#include "e2e/harness/route_factory.h"
#include "e2e/harness/subprocess.h"

namespace routestatus::cmd {
namespace {

using namespace std::chrono_literals;
using Permission = std::tuple<std::string, std::string, std::string>;  // group, resource, verb

std::set<Permission> GrantedByClusterRole(const std::string& path) {
  std::set<Permission> granted;
  YAML::Node role = YAML::LoadFile(path);
  for (const auto& rule : role["rules"]) {
    for (const auto& group : rule["apiGroups"]) {
      for (const auto& resource : rule["resources"]) {
        for (const auto& verb : rule["verbs"]) {
          granted.emplace(group.as<std::string>(), resource.as<std::string>(),
                          verb.as<std::string>());
        }
      }
    }
  }
  return granted;
}

// apiserver_request_total's verb and scope labels -> the RBAC verb the
// request needs (kube labels writes by HTTP method: a DELETE of a
// collection is a deletecollection).
std::string RbacVerb(const std::string& verb, const std::string& scope) {
  if (verb == "GET") return "get";
  if (verb == "LIST") return "list";
  if (verb == "WATCH") return "watch";
  if (verb == "PUT") return "update";
  if (verb == "PATCH") return "patch";
  if (verb == "POST") return "create";
  if (verb == "DELETE") return scope == "resource" ? "delete" : "deletecollection";
  return "unknown:" + verb;
}

// The permissions one controller run used against `server`: it converges
// 5 routes (5 status merge patches) and stops.
std::set<Permission> UsedByOneRun(apiserver::ServerOptions options, const std::string& tag) {
  apiserver::Server server(std::move(options));
  EXPECT_TRUE(server.Start().ok());
  EXPECT_TRUE(server.CreateNamespace("team-a", {{"shard", "x"}}).ok());
  for (int i = 0; i < 5; ++i) {
    e2e::RouteShape shape;
    shape.ns = "team-a";
    shape.name = "r" + std::to_string(i);
    shape.host = shape.name + ".apps.example.com";
    EXPECT_TRUE(server.CreateRoute(e2e::MakeRoute(shape)).ok());
  }
  const std::string dir =
      ::testing::TempDir() + "/rbac_" + tag + "_" + std::to_string(::getpid());
  EXPECT_EQ(system(("mkdir -p " + dir).c_str()), 0);
  EXPECT_TRUE(server.WriteKubeconfig(dir + "/kubeconfig").ok());

  e2e::Subprocess controller(
      {ROUTESTATUS_CONTROLLER_BINARY, "--kubeconfig=" + dir + "/kubeconfig", "--router-name=rbac",
       "--namespace-labels=shard=x", "--metrics-address=127.0.0.1:0", "--lease-election-delay=0"},
      dir + "/controller.log");
  auto deadline = std::chrono::steady_clock::now() + 30s;
  while (server.RequestCount("PATCH", "routes", "status", 200) < 5 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_EQ(server.RequestCount("PATCH", "routes", "status", 200), 5u) << controller.ReadLog();
  EXPECT_EQ(controller.Stop(), 0);

  bool ok = false;
  auto samples = e2e::ParsePromText(e2e::HttpGetLocal(server.port(), "/metrics", &ok));
  EXPECT_TRUE(ok);
  std::set<Permission> used;
  for (const auto& s : samples) {
    if (s.name != "apiserver_request_total" || s.value <= 0) continue;
    std::string resource = s.labels.at("resource");
    if (!s.labels.at("subresource").empty()) resource += "/" + s.labels.at("subresource");
    used.emplace(s.labels.at("group"), resource,
                 RbacVerb(s.labels.at("verb"), s.labels.at("scope")));
  }
  return used;
}

// Both ways of getting the initial state: a server that streams it (watch
// list, kube 1.27+) and one that refuses (kube 1.26: paged lists). The
// ClusterRole must grant the union, and nothing more.
TEST(RbacUsageTest, ClusterRoleGrantsExactlyWhatTheControllerUses) {
  std::set<Permission> used = UsedByOneRun({}, "streamed");
  apiserver::ServerOptions kube126;
  kube126.watch_list = false;
  for (const Permission& p : UsedByOneRun(kube126, "paged")) used.insert(p);
  const std::set<Permission> granted =
      GrantedByClusterRole(std::string(ROUTESTATUS_SOURCE_DIR) + "/deploy/controller/clusterrole.yaml");
  for (const auto& p : used) {
    EXPECT_TRUE(granted.count(p)) << "the controller used " << std::get<2>(p) << " on "
                                  << std::get<1>(p) << " (group \"" << std::get<0>(p)
                                  << "\"), which the ClusterRole does not grant";
  }
  for (const auto& p : granted) {
    if (used.count(p) || std::get<2>(p) == "get") continue;
    ADD_FAILURE() << "the ClusterRole grants " << std::get<2>(p) << " on " << std::get<1>(p)
                  << ", which the controller never used";
  }
  EXPECT_TRUE(used.count({"route.openshift.io", "routes/status", "patch"}));
  EXPECT_FALSE(used.count({"route.openshift.io", "routes/status", "update"}));
  EXPECT_TRUE(used.count({"", "namespaces", "watch"}));
}

}  // namespace
}  // namespace routestatus::cmd
