// Drives the real /usr/bin/kubectl against the embedded server with the
// kubeconfig it writes: apply, get -o json, patch --subresource=status,
// get -w, delete, and namespace labels.

#include <sys/stat.h>

#include <cstdio>
#include <fstream>
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

}  // namespace
}  // namespace routestatus::apiserver::testing
