// Applies deploy/'s Route CRD to the embedded API server with kubectl, the
// way an operator would on a cluster without OpenShift. (The embedded server
// serves no RBAC API, so the ClusterRole/Binding cannot be applied here; the
// kind e2e workflow applies them to a real cluster.)
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "apiserver/server.h"

namespace routestatus::cmd {
namespace {

using ::testing::HasSubstr;

const std::string kSourceDir = ROUTESTATUS_SOURCE_DIR;

int Shell(const std::string& cmd, std::string* out) {
  FILE* pipe = ::popen((cmd + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return -1;
  char buf[4096];
  size_t n;
  out->clear();
  while ((n = std::fread(buf, 1, sizeof(buf), pipe)) > 0) out->append(buf, n);
  int status = ::pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(DeployApplyTest, RouteCrdAppliesToTheEmbeddedApiServer) {
  std::string out;
  if (Shell("kubectl version --client", &out) != 0) GTEST_SKIP() << "kubectl not installed";
  apiserver::Server server;
  ASSERT_TRUE(server.Start().ok());
  std::string kubeconfig = ::testing::TempDir() + "/deploy_apply_" + std::to_string(server.port());
  ASSERT_TRUE(server.WriteKubeconfig(kubeconfig).ok());
  std::string kubectl = "kubectl --kubeconfig '" + kubeconfig + "' --request-timeout=20s ";

  ASSERT_EQ(Shell(kubectl + "apply --validate=false -k '" + kSourceDir + "/deploy/crd'", &out), 0) << out;
  EXPECT_THAT(out, HasSubstr("customresourcedefinition.apiextensions.k8s.io/routes.route.openshift.io"));
  // Applying again is a no-op, not an error.
  ASSERT_EQ(Shell(kubectl + "apply --validate=false -k '" + kSourceDir + "/deploy/crd'", &out), 0) << out;
  ASSERT_EQ(Shell(kubectl + "get crd routes.route.openshift.io -o jsonpath='{.spec.versions[0].subresources}'",
                &out), 0) << out;
  EXPECT_THAT(out, HasSubstr("status"));
  ::unlink(kubeconfig.c_str());
}

}  // namespace
}  // namespace routestatus::cmd
