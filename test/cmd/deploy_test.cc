// Checks deploy/ (kustomize) renders and says what the controller needs:
// least-privilege RBAC, a hardened Deployment with the health probes, a Route
// CRD with a structural schema and a status subresource.
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "cmd/route-status-controller/config.h"

namespace routestatus::cmd {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

const std::string kSourceDir = ROUTESTATUS_SOURCE_DIR;

bool HaveKubectl() { return std::system("kubectl version --client >/dev/null 2>&1") == 0; }

// Runs `kubectl kustomize dir`; returns its stdout, sets *ok on exit 0.
std::string Kustomize(const std::string& dir, bool* ok) {
  std::string cmd = "kubectl kustomize '" + dir + "' 2>&1";
  FILE* pipe = ::popen(cmd.c_str(), "r");
  std::string out;
  if (pipe == nullptr) {
    *ok = false;
    return out;
  }
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), pipe)) > 0) out.append(buf, n);
  int status = ::pclose(pipe);
  *ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  return out;
}

std::string ReadSource(const std::string& rel) {
  std::ifstream in(kSourceDir + "/" + rel);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The rules of the ClusterRole in `rel`.
YAML::Node ReadRulesOf(const std::string& rel) { return YAML::Load(ReadSource(rel))["rules"]; }

class DeployTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HaveKubectl()) GTEST_SKIP() << "kubectl not installed: cannot render deploy/ with kustomize";
    bool ok = false;
    std::string rendered = Kustomize(kSourceDir + "/deploy", &ok);
    ASSERT_TRUE(ok) << "kubectl kustomize deploy/ failed:\n" << rendered;
    docs_ = YAML::LoadAll(rendered);
  }

  // The single object of `kind`; fails the test if there is not exactly one.
  YAML::Node One(const std::string& kind) {
    YAML::Node found;
    int count = 0;
    for (const YAML::Node& d : docs_) {
      if (d["kind"].as<std::string>() == kind) {
        found = d;
        ++count;
      }
    }
    EXPECT_EQ(count, 1) << kind;
    return found;
  }

  YAML::Node Container() {
    return One("Deployment")["spec"]["template"]["spec"]["containers"][0];
  }

  std::vector<YAML::Node> docs_;
};

TEST_F(DeployTest, RendersTheExpectedKinds) {
  std::vector<std::string> kinds;
  for (const YAML::Node& d : docs_) kinds.push_back(d["kind"].as<std::string>());
  EXPECT_THAT(kinds, UnorderedElementsAre("Namespace", "CustomResourceDefinition", "ServiceAccount",
                                          "ClusterRole", "ClusterRoleBinding", "Deployment",
                                          "Service", "ServiceMonitor", "PodDisruptionBudget",
                                          "PrometheusRule", "ConfigMap"));
  for (const YAML::Node& d : docs_) {
    std::string kind = d["kind"].as<std::string>();
    bool cluster_scoped = kind == "Namespace" || kind == "CustomResourceDefinition" ||
                          kind == "ClusterRole" || kind == "ClusterRoleBinding";
    if (!cluster_scoped) {
      EXPECT_EQ(d["metadata"]["namespace"].as<std::string>(""), "routestatus-system") << kind;
    }
  }
  EXPECT_EQ(One("ServiceMonitor")["apiVersion"].as<std::string>(), "monitoring.coreos.com/v1");
  EXPECT_EQ(One("PrometheusRule")["apiVersion"].as<std::string>(), "monitoring.coreos.com/v1");
  // The Grafana dashboard, for the sidecar that loads labelled ConfigMaps.
  YAML::Node dashboard = One("ConfigMap");
  EXPECT_EQ(dashboard["metadata"]["labels"]["grafana_dashboard"].as<std::string>(""), "1");
  EXPECT_TRUE(dashboard["data"]["route-status-controller.json"]) << "the dashboard's JSON model";
}

TEST_F(DeployTest, ClusterRoleIsExactlyLeastPrivilege) {
  std::set<std::tuple<std::string, std::string, std::string>> granted;
  YAML::Node role = One("ClusterRole");
  for (const YAML::Node& rule : role["rules"]) {
    EXPECT_FALSE(rule["resourceNames"]) << "unexpected resourceNames";
    EXPECT_FALSE(rule["nonResourceURLs"]) << "unexpected nonResourceURLs";
    for (const YAML::Node& g : rule["apiGroups"]) {
      for (const YAML::Node& r : rule["resources"]) {
        for (const YAML::Node& v : rule["verbs"]) {
          granted.insert({g.as<std::string>(), r.as<std::string>(), v.as<std::string>()});
        }
      }
    }
  }
  std::set<std::tuple<std::string, std::string, std::string>> expected = {
      {"route.openshift.io", "routes", "get"},   {"route.openshift.io", "routes", "list"},
      {"route.openshift.io", "routes", "watch"}, {"route.openshift.io", "routes/status", "patch"},
      {"", "namespaces", "get"},                 {"", "namespaces", "list"},
      {"", "namespaces", "watch"}};
  EXPECT_EQ(granted, expected);

  YAML::Node binding = One("ClusterRoleBinding");
  EXPECT_EQ(binding["roleRef"]["kind"].as<std::string>(), "ClusterRole");
  EXPECT_EQ(binding["roleRef"]["name"].as<std::string>(), role["metadata"]["name"].as<std::string>());
  ASSERT_EQ(binding["subjects"].size(), 1u);
  YAML::Node sa = One("ServiceAccount");
  EXPECT_EQ(binding["subjects"][0]["kind"].as<std::string>(), "ServiceAccount");
  EXPECT_EQ(binding["subjects"][0]["name"].as<std::string>(), sa["metadata"]["name"].as<std::string>());
  EXPECT_EQ(binding["subjects"][0]["namespace"].as<std::string>(),
            sa["metadata"]["namespace"].as<std::string>());
  EXPECT_EQ(One("Deployment")["spec"]["template"]["spec"]["serviceAccountName"].as<std::string>(),
            sa["metadata"]["name"].as<std::string>());
}

TEST_F(DeployTest, DeploymentIsHardenedAndProbed) {
  YAML::Node dep = One("Deployment");
  YAML::Node pod = dep["spec"]["template"]["spec"];
  EXPECT_EQ(dep["spec"]["replicas"].as<int>(), 3);
  EXPECT_TRUE(pod["securityContext"]["runAsNonRoot"].as<bool>());
  EXPECT_EQ(pod["securityContext"]["seccompProfile"]["type"].as<std::string>(), "RuntimeDefault");

  YAML::Node anti = pod["affinity"]["podAntiAffinity"];
  ASSERT_TRUE(anti) << "no podAntiAffinity";
  YAML::Node term = anti["preferredDuringSchedulingIgnoredDuringExecution"][0]["podAffinityTerm"];
  EXPECT_EQ(term["topologyKey"].as<std::string>(), "kubernetes.io/hostname");
  EXPECT_EQ(term["labelSelector"]["matchLabels"]["app.kubernetes.io/name"].as<std::string>(),
            "route-status-controller");

  YAML::Node c = Container();
  YAML::Node sc = c["securityContext"];
  EXPECT_FALSE(sc["allowPrivilegeEscalation"].as<bool>());
  EXPECT_TRUE(sc["readOnlyRootFilesystem"].as<bool>());
  ASSERT_EQ(sc["capabilities"]["drop"].size(), 1u);
  EXPECT_EQ(sc["capabilities"]["drop"][0].as<std::string>(), "ALL");
  EXPECT_FALSE(sc["privileged"].as<bool>(false));

  EXPECT_EQ(c["livenessProbe"]["httpGet"]["path"].as<std::string>(), "/healthz");
  EXPECT_EQ(c["readinessProbe"]["httpGet"]["path"].as<std::string>(), "/readyz");
  EXPECT_EQ(c["livenessProbe"]["httpGet"]["port"].as<std::string>(), "metrics");
  EXPECT_EQ(c["readinessProbe"]["httpGet"]["port"].as<std::string>(), "metrics");
  EXPECT_EQ(c["ports"][0]["name"].as<std::string>(), "metrics");
  EXPECT_EQ(c["ports"][0]["containerPort"].as<int>(), 1936);
  EXPECT_TRUE(c["resources"]["requests"]["cpu"]);
  EXPECT_TRUE(c["resources"]["requests"]["memory"]);
  EXPECT_TRUE(c["resources"]["limits"]["memory"]);
  EXPECT_EQ(c["image"].as<std::string>(), "routestatus/route-status-controller:dev");
  EXPECT_EQ(c["imagePullPolicy"].as<std::string>(), "IfNotPresent");  // kind-loaded image
}

// The Deployment's args and env must be a valid configuration for the binary.
TEST_F(DeployTest, DeploymentConfigurationParses) {
  YAML::Node c = Container();
  std::vector<std::string> args;
  for (const YAML::Node& a : c["args"]) args.push_back(a.as<std::string>());
  EnvMap env;
  for (const YAML::Node& e : c["env"]) env[e["name"].as<std::string>()] = e["value"].as<std::string>();
  ASSERT_TRUE(env.count("ROUTER_SERVICE_NAME"));
  ParsedConfig parsed = ParseConfig(args, env, nullptr);
  EXPECT_THAT(parsed.errors, IsEmpty());
  EXPECT_EQ(parsed.options.router_name, env["ROUTER_SERVICE_NAME"]);
  EXPECT_EQ(parsed.options.metrics_address, "0.0.0.0:1936");
}

// Issue 60: the sidecar Component, through its example overlay, adds the
// controller to the router's pod: both containers, the router's settings
// from the router's own ConfigMap (the same one, renamed with its hash),
// its own metrics port apart from the router's 1936, the router's
// readiness URL, a liveness probe and no readiness probe (a pod is Ready
// only when every container is), the least-privilege ClusterRole bound to
// the router's service account; the configuration parses.
TEST(SidecarDeployTest, TheExampleOverlayAddsTheControllerToTheRoutersPod) {
  if (!HaveKubectl()) GTEST_SKIP() << "kubectl not installed";
  bool ok = false;
  std::string rendered = Kustomize(kSourceDir + "/deploy/examples/sidecar", &ok);
  ASSERT_TRUE(ok) << rendered;
  YAML::Node deployment, config_map, binding, role;
  for (const YAML::Node& d : YAML::LoadAll(rendered)) {
    const std::string kind = d["kind"].as<std::string>();
    if (kind == "Deployment") deployment = d;
    if (kind == "ConfigMap") config_map = d;
    if (kind == "ClusterRoleBinding") binding = d;
    if (kind == "ClusterRole") role = d;
  }
  ASSERT_TRUE(deployment && config_map && binding && role);
  YAML::Node pod = deployment["spec"]["template"]["spec"];
  YAML::Node router, sidecar;
  for (const YAML::Node& c : pod["containers"]) {
    if (c["name"].as<std::string>() == "router") router = c;
    if (c["name"].as<std::string>() == "route-status-controller") sidecar = c;
  }
  ASSERT_EQ(pod["containers"].size(), 2u);
  ASSERT_TRUE(router && sidecar);
  const std::string cm = config_map["metadata"]["name"].as<std::string>();
  EXPECT_EQ(router["envFrom"][0]["configMapRef"]["name"].as<std::string>(), cm);
  EXPECT_EQ(sidecar["envFrom"][0]["configMapRef"]["name"].as<std::string>(), cm);
  EXPECT_FALSE(sidecar["readinessProbe"]) << "the controller must not take the router out of its Service";
  EXPECT_EQ(sidecar["livenessProbe"]["httpGet"]["path"].as<std::string>(), "/healthz");
  EXPECT_EQ(sidecar["ports"][0]["containerPort"].as<int>(), 1937);
  EXPECT_TRUE(sidecar["securityContext"]["readOnlyRootFilesystem"].as<bool>());
  std::vector<std::string> args;
  for (const YAML::Node& a : sidecar["args"]) args.push_back(a.as<std::string>());
  EnvMap env;
  for (const auto& kv : config_map["data"]) env[kv.first.as<std::string>()] = kv.second.as<std::string>();
  ParsedConfig parsed = ParseConfig(args, env, nullptr);
  EXPECT_THAT(parsed.errors, IsEmpty());
  EXPECT_EQ(parsed.options.router_name, "default");
  EXPECT_EQ(parsed.options.route_labels, "shard!=internal");
  EXPECT_EQ(parsed.options.metrics_address, "0.0.0.0:1937");
  EXPECT_EQ(parsed.options.router_ready_url, "http://127.0.0.1:1936/healthz/ready");
  EXPECT_EQ(router["readinessProbe"]["httpGet"]["path"].as<std::string>(), "/healthz/ready");
  EXPECT_EQ(router["readinessProbe"]["httpGet"]["port"].as<int>(), 1936);
  EXPECT_EQ(binding["roleRef"]["name"].as<std::string>(), role["metadata"]["name"].as<std::string>());
  EXPECT_EQ(binding["subjects"][0]["name"].as<std::string>(),
            pod["serviceAccountName"].as<std::string>());
  EXPECT_EQ(binding["subjects"][0]["namespace"].as<std::string>(),
            deployment["metadata"]["namespace"].as<std::string>());
  EXPECT_EQ(role["rules"].size(), ReadRulesOf("deploy/controller/clusterrole.yaml").size());
}

TEST_F(DeployTest, ServiceMonitorServiceAndPdbSelectThePods) {
  YAML::Node pod_labels = One("Deployment")["spec"]["template"]["metadata"]["labels"];
  auto matches = [&](const YAML::Node& selector, const YAML::Node& labels) {
    for (const auto& kv : selector) {
      if (!labels[kv.first.as<std::string>()] ||
          labels[kv.first.as<std::string>()].as<std::string>() != kv.second.as<std::string>()) {
        return false;
      }
    }
    return selector.size() > 0;
  };
  YAML::Node svc = One("Service");
  EXPECT_TRUE(matches(svc["spec"]["selector"], pod_labels));
  EXPECT_EQ(svc["spec"]["ports"][0]["name"].as<std::string>(), "metrics");
  EXPECT_TRUE(matches(One("PodDisruptionBudget")["spec"]["selector"]["matchLabels"], pod_labels));
  YAML::Node sm = One("ServiceMonitor");
  EXPECT_TRUE(matches(sm["spec"]["selector"]["matchLabels"], svc["metadata"]["labels"]));
  EXPECT_EQ(sm["spec"]["endpoints"][0]["port"].as<std::string>(), "metrics");
  EXPECT_EQ(sm["spec"]["endpoints"][0]["path"].as<std::string>(), "/metrics");
}

// The kind workflow loads the very image the Deployment runs and applies deploy/.
TEST_F(DeployTest, E2eWorkflowMatchesTheManifests) {
  YAML::Node wf = YAML::Load(ReadSource(".github/workflows/e2e.yml"));
  EXPECT_EQ(wf["env"]["IMAGE"].as<std::string>(""), Container()["image"].as<std::string>());
  std::string runs;
  for (const auto& job : wf["jobs"]) {
    for (const YAML::Node& step : job.second["steps"]) runs += step["run"].as<std::string>("") + "\n";
  }
  for (const char* needle : {"kind create cluster", "deploy/image/image_check.py --engine docker --build-only",
                             "kind load docker-image \"$IMAGE\"", "kubectl apply -k deploy/",
                             "rollout status deployment/route-status-controller",
                             "build-e2e/e2e/routestatus-e2e", "E2E_KUBECONFIG"}) {
    EXPECT_THAT(runs, HasSubstr(needle));
  }
}

// Structural schema: every node says its type (or is int-or-string).
void ExpectStructural(const YAML::Node& schema, const std::string& path) {
  bool typed = schema["type"] || schema["x-kubernetes-int-or-string"];
  EXPECT_TRUE(typed) << "schema node without type at " << path;
  if (schema["properties"]) {
    for (const auto& kv : schema["properties"]) {
      ExpectStructural(kv.second, path + "." + kv.first.as<std::string>());
    }
  }
  if (schema["items"]) ExpectStructural(schema["items"], path + "[]");
}

TEST_F(DeployTest, RouteCrdHasStatusSubresourceAndTheFieldsWeUse) {
  YAML::Node crd = One("CustomResourceDefinition");
  EXPECT_EQ(crd["metadata"]["name"].as<std::string>(), "routes.route.openshift.io");
  EXPECT_EQ(crd["spec"]["scope"].as<std::string>(), "Namespaced");
  ASSERT_EQ(crd["spec"]["versions"].size(), 1u);
  YAML::Node v1 = crd["spec"]["versions"][0];
  EXPECT_EQ(v1["name"].as<std::string>(), "v1");
  EXPECT_TRUE(v1["storage"].as<bool>());
  ASSERT_TRUE(v1["subresources"]["status"]) << "no status subresource";
  YAML::Node schema = v1["schema"]["openAPIV3Schema"];
  ExpectStructural(schema, "");
  YAML::Node spec = schema["properties"]["spec"]["properties"];
  for (const char* f : {"host", "subdomain", "path", "wildcardPolicy", "to", "port", "tls"}) {
    EXPECT_TRUE(spec[f]) << "spec." << f;
  }
  YAML::Node entry = schema["properties"]["status"]["properties"]["ingress"]["items"]["properties"];
  for (const char* f : {"routerName", "host", "routerCanonicalHostname", "wildcardPolicy"}) {
    EXPECT_EQ(entry[f]["type"].as<std::string>(""), "string") << "status.ingress[]." << f;
  }
  YAML::Node cond = entry["conditions"]["items"]["properties"];
  for (const char* f : {"type", "status", "reason", "message", "lastTransitionTime"}) {
    EXPECT_EQ(cond[f]["type"].as<std::string>(""), "string") << "conditions[]." << f;
  }
  EXPECT_EQ(cond["lastTransitionTime"]["format"].as<std::string>(""), "date-time");
}

// The build image and `make deps` install one shared package list, which
// names the -dev packages the build needs.
TEST(DockerfileTest, InstallsTheMakefilesDevPackages) {
  std::string makefile = ReadSource("Makefile");
  std::string dockerfile = ReadSource("Dockerfile");
  std::string packages = ReadSource("deploy/image/build-packages.txt");
  ASSERT_FALSE(dockerfile.empty()) << "no Dockerfile at the top of the repo";
  ASSERT_FALSE(packages.empty()) << "no deploy/image/build-packages.txt";
  EXPECT_THAT(dockerfile, HasSubstr("FROM debian:bookworm AS build"));
  EXPECT_THAT(dockerfile, HasSubstr("FROM debian:bookworm-slim"));
  EXPECT_THAT(dockerfile, HasSubstr("USER 65532:65532"));
  EXPECT_THAT(dockerfile, HasSubstr("COPY deploy/image/build-packages.txt"));
  EXPECT_THAT(dockerfile, HasSubstr("COPY deploy/image/runtime-packages.txt"));
  EXPECT_THAT(makefile, HasSubstr("DEB_PACKAGES := $(shell sed 's/\\#.*//' "
                                  "deploy/image/build-packages.txt)"));
  std::istringstream lines(packages);
  std::string line;
  int dev_packages = 0;
  while (std::getline(lines, line)) {
    std::istringstream words(line.substr(0, line.find('#')));
    std::string w;
    while (words >> w) {
      if (w.size() > 4 && w.compare(w.size() - 4, 4, "-dev") == 0) ++dev_packages;
    }
  }
  EXPECT_GE(dev_packages, 5) << packages;
}

}  // namespace
}  // namespace routestatus::cmd
