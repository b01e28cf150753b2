#pragma once

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "apiserver/server.h"
#include "kubeclient/rest/kube_config.h"

namespace routestatus::kubeclient::rest {

// A test suite parameterised on the scheme (false = HTTP, true = HTTPS with
// a bearer token) against the embedded API server. Why one server per
// scheme for the whole suite: stopping civetweb takes ~2 s. Each test gets
// its own namespace (ns_), temp dir (dir_) and the RestConfig of the
// server's kubeconfig (config_); faults are cleared after each test.
class ApiserverFixture : public ::testing::TestWithParam<bool> {
 protected:
  static constexpr char kToken[] = "integration-token";

  static std::map<bool, std::unique_ptr<apiserver::Server>>& Servers() {
    static auto* servers = new std::map<bool, std::unique_ptr<apiserver::Server>>();
    return *servers;
  }
  static void TearDownTestSuite() {
    for (auto& [tls, server] : Servers()) server->Stop();
    Servers().clear();
  }

  void SetUp() override {
    auto& server = Servers()[GetParam()];
    if (!server) {
      apiserver::ServerOptions o;
      o.tls = GetParam();
      o.token = kToken;
      o.bookmark_interval = std::chrono::milliseconds(200);
      server = std::make_unique<apiserver::Server>(o);
      Status s = server->Start();
      ASSERT_TRUE(s.ok()) << s.ToString();
    }
    server_ = server.get();
    char tmpl[] = "/tmp/rest_apiserver_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    kubeconfig_ = dir_ + "/kubeconfig";
    ASSERT_TRUE(server_->WriteKubeconfig(kubeconfig_).ok());
    auto cfg = LoadKubeconfigFile(kubeconfig_);
    ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
    config_ = cfg.value();
    EXPECT_EQ(config_.server.rfind(GetParam() ? "https://" : "http://", 0), 0u);
    static int counter = 0;
    ns_ = "t" + std::to_string(++counter);
    ASSERT_TRUE(server_->CreateNamespace(ns_).ok());
  }

  void TearDown() override {
    server_->faults().Clear();
    std::filesystem::remove_all(dir_);
  }

  apiserver::Server* server_ = nullptr;
  std::string ns_;
  std::string dir_, kubeconfig_;
  RestConfig config_;
};

}  // namespace routestatus::kubeclient::rest
