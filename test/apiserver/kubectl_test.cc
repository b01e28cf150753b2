// Drives the real /usr/bin/kubectl against the embedded server with the
// kubeconfig it writes: apply, get -o json, patch --subresource=status,
// get -w, delete, namespace labels, namespaces created over protobuf, and
// the server-side Table columns of `kubectl get` (from deploy/crd's
// additionalPrinterColumns) and `kubectl explain` (the CRD's schema).

#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include "test/apiserver/test_server.h"

namespace routestatus::apiserver::testing {
namespace {

using nlohmann::json;

class KubectlTest : public ServerTest {
 protected:
  void SetUp() override {
    struct stat st;
    if (stat("/usr/bin/kubectl", &st) != 0) GTEST_SKIP() << "kubectl is not installed";
    ServerTest::SetUp();
    kubeconfig_ = ::testing::TempDir() + "/kubectl-test-" + std::to_string(server_->port()) + ".kubeconfig";
    ASSERT_TRUE(server_->WriteKubeconfig(kubeconfig_).ok());
  }
  // Runs kubectl with our kubeconfig; returns stdout+stderr and sets *rc.
  std::string Kubectl(const std::string& args, int* rc = nullptr) {
    std::string cmd = "KUBECONFIG=" + kubeconfig_ + " HOME=" + ::testing::TempDir() +
                      " timeout 30 /usr/bin/kubectl " + args + " 2>&1";
    FILE* p = popen(cmd.c_str(), "r");
    std::string out;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
    int status = pclose(p);
    if (rc != nullptr) *rc = WEXITSTATUS(status);
    return out;
  }
  std::string kubeconfig_;
};

TEST_F(KubectlTest, ApplyGetPatchStatusWatchDelete) {
  std::string yaml = ::testing::TempDir() + "/kubectl-route.yaml";
  std::ofstream(yaml) << "apiVersion: route.openshift.io/v1\nkind: Route\nmetadata:\n"
                         "  name: web\n  namespace: team-a\n  labels:\n    app: web\n"
                         "spec:\n  host: web.example.com\n  to:\n    kind: Service\n    name: web\n";
  int rc = -1;
  std::string out = Kubectl("apply -f " + yaml, &rc);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("route.route.openshift.io/web created"), std::string::npos) << out;

  out = Kubectl("get route web -n team-a -o json", &rc);
  ASSERT_EQ(rc, 0) << out;
  json obj = json::parse(out, nullptr, false);
  ASSERT_FALSE(obj.is_discarded()) << out;
  EXPECT_EQ(obj["spec"]["host"], "web.example.com");

  // Re-apply with a change: kubectl sends a merge patch.
  std::ofstream(yaml, std::ios::trunc)
      << "apiVersion: route.openshift.io/v1\nkind: Route\nmetadata:\n"
         "  name: web\n  namespace: team-a\n  labels:\n    app: web\n"
         "spec:\n  host: web2.example.com\n  to:\n    kind: Service\n    name: web\n";
  out = Kubectl("apply -f " + yaml, &rc);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("configured"), std::string::npos) << out;

  std::string watch_out;
  std::thread watcher([&] {
    watch_out = Kubectl(
        "get routes -n team-a -w --request-timeout=0 -o "
        "jsonpath='{.metadata.name} {.spec.host} {.status.ingress[0].routerName}{\"\\n\"}'");
  });
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (server_->OpenWatches() == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_EQ(server_->OpenWatches(), 1u);
  out = Kubectl("patch route web -n team-a --subresource=status --type=merge -p "
                "'{\"status\":{\"ingress\":[{\"routerName\":\"router-x\",\"host\":\"web2.example.com\"}]}}'",
                &rc);
  ASSERT_EQ(rc, 0) << out;
  out = Kubectl("delete route web -n team-a", &rc);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("deleted"), std::string::npos);
  // Let kubectl print the events, then end its watch.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  server_->CloseAllWatches();
  watcher.join();
  EXPECT_NE(watch_out.find("web web2.example.com router-x"), std::string::npos) << watch_out;
  EXPECT_EQ(server_->RequestCount("PATCH", "routes", "status", 200), 1u);
  out = Kubectl("get route web -n team-a", &rc);
  EXPECT_NE(rc, 0);
  EXPECT_NE(out.find("NotFound"), std::string::npos) << out;
}

TEST_F(KubectlTest, NamespacesGetAndLabel) {
  int rc = -1;
  std::string out = Kubectl("label namespace team-a shard=blue", &rc);
  ASSERT_EQ(rc, 0) << out;
  out = Kubectl("get namespaces -l shard=blue -o name", &rc);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_EQ(out, "namespace/team-a\n");
  out = Kubectl("get ns team-a -o jsonpath='{.metadata.labels.env}'", &rc);
  EXPECT_EQ(out, "prod");
}

// kubectl's typed clients send built-in kinds as protobuf
// (application/vnd.kubernetes.protobuf); the server decodes them.
TEST_F(KubectlTest, CreateLabelReplaceDeleteNamespaceOverProtobuf) {
  int rc = -1;
  std::string out = Kubectl("create namespace proto-x -v=8", &rc);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("namespace/proto-x created"), std::string::npos) << out;
  // The request really was protobuf (else this test proves nothing).
  EXPECT_NE(out.find("Content-Type: application/vnd.kubernetes.protobuf"), std::string::npos)
      << out;
  EXPECT_EQ(server_->RequestCount("POST", "namespaces", "-", 201), 1u);

  out = Kubectl("label ns proto-x a=b", &rc);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("namespace/proto-x labeled"), std::string::npos) << out;
  out = Kubectl("get ns proto-x -o json", &rc);
  ASSERT_EQ(rc, 0) << out;
  json ns = json::parse(out, nullptr, false);
  ASSERT_FALSE(ns.is_discarded()) << out;
  EXPECT_EQ(ns["metadata"]["labels"]["a"], "b") << out;
  EXPECT_EQ(ns["metadata"]["labels"]["kubernetes.io/metadata.name"], "proto-x") << out;
  EXPECT_EQ(ns["status"]["phase"], "Active") << out;

  // kubectl replace -f (PUT) with an added annotation.
  ns["metadata"]["annotations"]["note"] = "hi";
  std::string file = ::testing::TempDir() + "/kubectl-proto-x.json";
  std::ofstream(file) << ns.dump();
  out = Kubectl("replace -f " + file, &rc);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("namespace/proto-x replaced"), std::string::npos) << out;
  out = Kubectl("get ns proto-x -o jsonpath='{.metadata.annotations.note}'", &rc);
  EXPECT_EQ(out, "hi");

  out = Kubectl("delete ns proto-x", &rc);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("namespace \"proto-x\" deleted"), std::string::npos) << out;
  out = Kubectl("get ns proto-x", &rc);
  EXPECT_NE(rc, 0);
  EXPECT_NE(out.find("NotFound"), std::string::npos) << out;
}

// kubectl --dry-run=server sends dryRun=All (create/apply: in the query;
// delete: in the DeleteOptions body): the server answers as if it wrote, but
// nothing changes.
TEST_F(KubectlTest, ServerSideDryRunChangesNothing) {
  int rc = -1;
  std::string out = Kubectl("create namespace dry-x --dry-run=server -v=6", &rc);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("namespace/dry-x created (server dry run)"), std::string::npos) << out;
  EXPECT_NE(out.find("dryRun=All"), std::string::npos) << out;  // really a server dry run
  out = Kubectl("get ns dry-x", &rc);
  EXPECT_NE(rc, 0);
  EXPECT_NE(out.find("NotFound"), std::string::npos) << out;
  EXPECT_EQ(server_->RequestCount("POST", "namespaces", "-", 201), 1u);

  std::string yaml = ::testing::TempDir() + "/kubectl-dry-route.yaml";
  auto write_route = [&](const std::string& host) {
    std::ofstream(yaml, std::ios::trunc)
        << "apiVersion: route.openshift.io/v1\nkind: Route\nmetadata:\n"
           "  name: dry\n  namespace: team-a\n"
           "spec:\n  host: " << host << "\n  to:\n    kind: Service\n    name: web\n";
  };
  write_route("dry.example.com");
  out = Kubectl("apply --dry-run=server -f " + yaml + " -o json", &rc);
  ASSERT_EQ(rc, 0) << out;
  json obj = json::parse(out, nullptr, false);
  ASSERT_FALSE(obj.is_discarded()) << out;
  EXPECT_EQ(obj["spec"]["host"], "dry.example.com");
  EXPECT_FALSE(obj["metadata"]["uid"].get<std::string>().empty()) << out;
  out = Kubectl("get route dry -n team-a", &rc);
  EXPECT_NE(rc, 0);
  EXPECT_NE(out.find("NotFound"), std::string::npos) << out;

  // Applied for real, then a dry-run apply of a change (a patch) and a
  // dry-run delete leave it as it is.
  out = Kubectl("apply -f " + yaml, &rc);
  ASSERT_EQ(rc, 0) << out;
  std::string before = Kubectl("get route dry -n team-a -o json", &rc);
  ASSERT_EQ(rc, 0) << before;
  write_route("changed.example.com");
  out = Kubectl("apply --dry-run=server -f " + yaml, &rc);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("route.route.openshift.io/dry configured (server dry run)"),
            std::string::npos)
      << out;
  out = Kubectl("delete route dry -n team-a --dry-run=server", &rc);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("route.route.openshift.io \"dry\" deleted (server dry run)"),
            std::string::npos)
      << out;
  out = Kubectl("patch route dry -n team-a --type=merge -p '{\"spec\":{\"host\":\"p.example.com\"}}' "
                "--dry-run=server -o jsonpath='{.spec.host}'",
                &rc);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_EQ(out, "p.example.com");
  EXPECT_EQ(Kubectl("get route dry -n team-a -o json", &rc), before);
  EXPECT_EQ(server_->RequestCount("DELETE", "routes", "-", 200), 1u);
  EXPECT_EQ(server_->RequestCount("PATCH", "routes", "-", 200), 2u);
}

// The whitespace-separated fields of the first output line starting with `first`.
std::vector<std::string> Fields(const std::string& out, const std::string& first) {
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::vector<std::string> fields;
    std::string w;
    while (words >> w) fields.push_back(w);
    if (!fields.empty() && fields[0] == first) return fields;
  }
  return {};
}

json SeededRoute(const std::string& ns, const std::string& name, const std::string& admitted,
                 const std::string& tls) {
  json conditions = json::array({{{"type", "Admitted"}, {"status", admitted}}});
  return {{"apiVersion", "route.openshift.io/v1"},
          {"kind", "Route"},
          {"metadata", {{"name", name}, {"namespace", ns}}},
          {"spec",
           {{"host", name + ".example.com"},
            {"to", {{"kind", "Service"}, {"name", name + "-svc"}}},
            {"tls", {{"termination", tls}}}}},
          {"status",
           {{"ingress", json::array({{{"routerName", "default"},
                                      {"host", name + ".apps.example.com"},
                                      {"conditions", conditions}}})}}}};
}

TEST_F(KubectlTest, GetShowsServerSideColumnsAndDeleteAllRemovesANamespacesRoutes) {
  int rc = -1;
  std::string out = Kubectl(std::string("apply -f ") + ROUTESTATUS_SOURCE_DIR +
                                "/deploy/crd/routes.route.openshift.io.yaml",
                            &rc);
  ASSERT_EQ(rc, 0) << out;
  ASSERT_TRUE(server_->CreateNamespace("team-b").ok());
  ASSERT_TRUE(server_->CreateRoute(SeededRoute("team-a", "web", "True", "edge")).ok());
  ASSERT_TRUE(server_->CreateRoute(SeededRoute("team-a", "api", "False", "passthrough")).ok());
  ASSERT_TRUE(server_->CreateRoute(SeededRoute("team-b", "web", "True", "reencrypt")).ok());

  out = Kubectl("get routes -n team-a", &rc);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_EQ(Fields(out, "NAME"),
            std::vector<std::string>({"NAME", "HOST", "ADMITTED", "SERVICE", "TLS", "AGE"}))
      << out;
  std::vector<std::string> web = Fields(out, "web");
  ASSERT_EQ(web.size(), 6u) << out;
  EXPECT_EQ(std::vector<std::string>(web.begin(), web.end() - 1),
            std::vector<std::string>({"web", "web.apps.example.com", "True", "web-svc", "edge"}));
  EXPECT_EQ(web[5].back(), 's') << out;  // age in seconds
  std::vector<std::string> api = Fields(out, "api");
  ASSERT_EQ(api.size(), 6u) << out;
  EXPECT_EQ(api[1], "api.apps.example.com");
  EXPECT_EQ(api[2], "False");
  EXPECT_EQ(api[4], "passthrough");

  out = Kubectl("get routes -A", &rc);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_EQ(Fields(out, "NAMESPACE").size(), 7u) << out;
  std::vector<std::string> b = Fields(out, "team-b");
  ASSERT_EQ(b.size(), 7u) << out;
  EXPECT_EQ(b[1], "web");
  EXPECT_EQ(b[5], "reencrypt");

  out = Kubectl("get route web -n team-a", &rc);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_EQ(Fields(out, "web").size(), 6u) << out;

  out = Kubectl("get ns", &rc);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_EQ(Fields(out, "NAME"), std::vector<std::string>({"NAME", "STATUS", "AGE"})) << out;
  std::vector<std::string> ns = Fields(out, "team-a");
  ASSERT_EQ(ns.size(), 3u) << out;
  EXPECT_EQ(ns[1], "Active");

  // kubectl get -w: the watch is served as Tables too (one row per event).
  std::string watch_out;
  std::thread watcher([&] { watch_out = Kubectl("get routes -n team-a -w --request-timeout=0"); });
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (server_->OpenWatches() == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_EQ(server_->OpenWatches(), 1u);
  out = Kubectl("patch route api -n team-a --subresource=status --type=json -p "
                "'[{\"op\":\"replace\",\"path\":\"/status/ingress/0/conditions/0/status\","
                "\"value\":\"True\"}]'",
                &rc);
  ASSERT_EQ(rc, 0) << out;
  // Let kubectl print the event, then end its watch.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  server_->CloseAllWatches();
  watcher.join();
  EXPECT_NE(watch_out.find("ADMITTED"), std::string::npos) << watch_out;
  size_t last_api = watch_out.rfind("\napi ");
  ASSERT_NE(last_api, std::string::npos) << watch_out;
  EXPECT_EQ(Fields(watch_out.substr(last_api + 1), "api")[2], "True") << watch_out;

  // kubectl 1.32 lists the routes and deletes them one by one (no deletecollection).
  out = Kubectl("delete routes --all -n team-a", &rc);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("route.route.openshift.io \"web\" deleted"), std::string::npos) << out;
  EXPECT_NE(out.find("route.route.openshift.io \"api\" deleted"), std::string::npos) << out;
  EXPECT_EQ(server_->RequestCount("DELETE", "routes", "-", 200, "resource"), 2u);
  EXPECT_EQ(server_->RequestCount("DELETE", "routes", "-", -1, "namespace"), 0u);
  out = Kubectl("get routes -n team-a", &rc);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("No resources found in team-a namespace."), std::string::npos) << out;
  EXPECT_TRUE(server_->store().Get(RoutesInfo(), "team-b", "web").ok());
}

// `kubectl explain` finds the kind's schema in the OpenAPI v3 document of
// its group-version: deploy/crd's without a stored CRD, the stored one once
// a CRD is applied (here with another description of spec.host).
TEST_F(KubectlTest, ExplainReadsTheSchemaOfTheServedCrd) {
  int rc = -1;
  std::string out = Kubectl("explain route.spec.host", &rc);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("FIELD: host <string>"), std::string::npos) << out;
  EXPECT_NE(out.find("Host name of the route"), std::string::npos) << out;
  out = Kubectl("explain route.metadata.labels", &rc);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("map[string]string"), std::string::npos) << out;
  out = Kubectl("explain route.spec.nosuchfield", &rc);
  EXPECT_NE(rc, 0) << out;

  std::ifstream in(std::string(ROUTESTATUS_SOURCE_DIR) + "/deploy/crd/routes.route.openshift.io.yaml");
  std::stringstream crd;
  crd << in.rdbuf();
  std::string text = crd.str();
  const std::string from = "Host name of the route; empty means generated by the router.";
  const size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, from.size(), "The stored CRD says this.");
  const std::string file = ::testing::TempDir() + "/kubectl-explain-crd.yaml";
  std::ofstream(file) << text;
  out = Kubectl("apply -f " + file, &rc);
  ASSERT_EQ(rc, 0) << out;
  out = Kubectl("explain route.spec.host", &rc);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("The stored CRD says this."), std::string::npos) << out;
}

}  // namespace
}  // namespace routestatus::apiserver::testing
