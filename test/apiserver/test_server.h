#pragma once

#include <memory>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "apiserver/server.h"
#include "test/apiserver/http_client.h"

namespace routestatus::apiserver::testing {

// A gtest fixture running an embedded server on 127.0.0.1:0 with a "team-a"
// namespace, plus JSON helpers.
class ServerTest : public ::testing::Test {
 protected:
  virtual ServerOptions Options() {
    ServerOptions o;
    o.bookmark_interval = std::chrono::milliseconds(100);
    return o;
  }
  void SetUp() override {
    server_ = std::make_unique<Server>(Options());
    ASSERT_TRUE(server_->Start().ok());
    http_ = std::make_unique<TinyHttpClient>(server_->port(), Options().token);
    ASSERT_TRUE(server_->CreateNamespace("team-a", {{"env", "prod"}}).ok());
  }
  void TearDown() override { server_->Stop(); }

  static nlohmann::json Route(const std::string& name, const std::string& host,
                              nlohmann::json labels = nlohmann::json::object()) {
    return {{"apiVersion", "route.openshift.io/v1"},
            {"kind", "Route"},
            {"metadata", {{"name", name}, {"labels", labels}}},
            {"spec", {{"host", host}, {"to", {{"kind", "Service"}, {"name", "svc"}}}}}};
  }
  static std::string RoutesPath(const std::string& ns = "team-a") {
    return "/apis/route.openshift.io/v1/namespaces/" + ns + "/routes";
  }
  HttpResponse Post(const std::string& path, const nlohmann::json& body) {
    return http_->Request("POST", path, body.dump());
  }
  HttpResponse Put(const std::string& path, const nlohmann::json& body) {
    return http_->Request("PUT", path, body.dump());
  }
  // What kube answers a finished delete of the route `name` with.
  static nlohmann::json DeletedRouteStatus(const std::string& name, const nlohmann::json& uid) {
    return {{"kind", "Status"},
            {"apiVersion", "v1"},
            {"metadata", nlohmann::json::object()},
            {"status", "Success"},
            {"details",
             {{"name", name}, {"group", "route.openshift.io"}, {"kind", "routes"}, {"uid", uid}}}};
  }
  static nlohmann::json Body(const HttpResponse& r) {
    return nlohmann::json::parse(r.body, nullptr, false);
  }
  // Creates a route over HTTP and returns the stored object.
  nlohmann::json MustCreate(const std::string& name, const std::string& host,
                            nlohmann::json labels = nlohmann::json::object()) {
    HttpResponse r = Post(RoutesPath(), Route(name, host, labels));
    EXPECT_EQ(r.code, 201) << r.body;
    return Body(r);
  }

  std::unique_ptr<Server> server_;
  std::unique_ptr<TinyHttpClient> http_;
};

}  // namespace routestatus::apiserver::testing
