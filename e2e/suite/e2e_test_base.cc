#include "e2e/suite/e2e_test_base.h"

#include <iostream>

#include <glog/logging.h>

namespace routestatus::e2e {

void E2eTest::SetUp() {
  env_ = E2eEnvFromProcess();
  std::string error;
  cluster_ = TestCluster::Start(env_, &error);
  ASSERT_NE(cluster_, nullptr) << "cannot start the test cluster: " << error;
}

void E2eTest::TearDown() {
  for (auto& w : watchers_) w->Stop();
  if (HasFailure() && cluster_) {
    std::cout << "---- e2e failure: logs of the replicas ----\n";
    for (auto& set : sets_) std::cout << set->LogTails();
    std::string server = cluster_->ServerLog();
    if (server.size() > 4000) server = "..." + server.substr(server.size() - 4000);
    std::cout << "---- API server log ----\n" << server << "\n";
    cluster_->KeepTempDir();
    std::cout << "---- full logs kept in " << cluster_->temp_dir() << " ----" << std::endl;
  }
  watchers_.clear();
  sets_.clear();  // replicas stop before the server
  cluster_.reset();
}

std::string E2eTest::Namespace(const std::string& base, const std::map<std::string, std::string>& labels) {
  std::string ns = cluster_->CreateNamespace(base, labels);
  EXPECT_FALSE(ns.empty()) << "namespace " << base;
  return ns;
}

ReplicaSet& E2eTest::Replicas(const std::string& prefix, int n, const ReplicaOptions& options) {
  sets_.push_back(std::make_unique<ReplicaSet>(*cluster_, prefix, n, options));
  return *sets_.back();
}

void E2eTest::Figure(const std::string& key, double value) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string test = info ? std::string(info->test_suite_name()) + "." + info->name() : "?";
  std::cout << "E2E-FIGURE " << test << " " << key << "=" << value << std::endl;
  RecordProperty(key, std::to_string(value));
}

void E2eTest::CreateRoutes(const std::string& ns, const std::string& prefix, int count,
                           const std::map<std::string, std::string>& labels) {
  for (int i = 0; i < count; ++i) {
    RouteShape s;
    s.ns = ns;
    s.name = prefix + "-" + std::to_string(i);
    s.host = s.name + "." + ns + ".apps.example.com";
    s.labels = labels;
    auto r = cluster_->CreateRoute(s);
    ASSERT_TRUE(r.ok()) << s.name << ": " << r.status().ToString();
  }
}

void E2eTest::CreateHostlessRoutes(const std::string& ns, const std::string& prefix, int count) {
  for (int i = 0; i < count; ++i) {
    RouteShape s;
    s.ns = ns;
    s.name = prefix + "-" + std::to_string(i);
    auto r = cluster_->CreateRoute(s);
    ASSERT_TRUE(r.ok()) << s.name << ": " << r.status().ToString();
  }
}

void E2eTest::ExpectAllAdmitted(const std::vector<std::string>& router_names, int expected_routes,
                                std::chrono::milliseconds timeout) {
  std::string why;
  bool ok = WaitForRoutes(
      *cluster_,
      [&](const kubeclient::Route& r) {
        for (const auto& name : router_names) {
          if (!IsAdmittedBy(r, name)) return false;
        }
        return true;
      },
      timeout, expected_routes, &why);
  EXPECT_TRUE(ok) << "not converged within " << timeout.count() << " ms: " << why;
}

}  // namespace routestatus::e2e
