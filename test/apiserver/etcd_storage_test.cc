// The embedded server with a real etcd as storage (ServerOptions::
// etcd_endpoint): writes land under kube's keys, paged storage lists are
// etcd's ranges, and a failing etcd is a 500 Status. Skipped where no etcd
// binary is installed (Debian's etcd-server: make deps).

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "apiserver/continue_token.h"
#include "apiserver/etcd_client.h"
#include "apiserver/server.h"
#include "e2e/harness/etcd_server.h"
#include "e2e/harness/subprocess.h"
#include "test/apiserver/http_client.h"

namespace routestatus::apiserver {
namespace {

using nlohmann::json;
using testing::HttpResponse;
using testing::TinyHttpClient;

constexpr char kRoutes[] = "/apis/route.openshift.io/v1/namespaces/team-a/routes";
constexpr char kPrefix[] = "/registry/route.openshift.io/routes/team-a/";

json Route(const std::string& name) {
  return {{"apiVersion", "route.openshift.io/v1"},
          {"kind", "Route"},
          {"metadata", {{"name", name}, {"namespace", "team-a"}}},
          {"spec", {{"host", name + ".example.com"}, {"to", {{"kind", "Service"}, {"name", "s"}}}}}};
}

class EtcdStorageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (e2e::EtcdServer::FindBinary().empty()) {
      GTEST_SKIP() << "no etcd binary (Debian package etcd-server, `make deps`; or "
                      "E2E_ETCD_BINARY): the real-etcd storage is not tested here";
    }
    dir_ = e2e::MakeTempDir("etcd-storage-test");
    std::string error;
    etcd_ = e2e::EtcdServer::Start(dir_, &error);
    ASSERT_NE(etcd_, nullptr) << error;
    auto client = EtcdClient::Create(etcd_->endpoint(), EtcdClient::Options{});
    ASSERT_TRUE(client.ok()) << client.status().ToString();
    etcd_client_ = std::move(*client);
  }
  void TearDown() override {
    if (server_) server_->Stop();
    etcd_.reset();
    std::error_code ignored;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ignored);
  }
  // A server with etcd as its storage and the namespace team-a.
  void StartServer() {
    ServerOptions options;
    options.etcd_endpoint = etcd_->endpoint();
    server_ = std::make_unique<Server>(options);
    Status started = server_->Start();
    ASSERT_TRUE(started.ok()) << started.ToString();
    ASSERT_TRUE(server_->CreateNamespace("team-a").ok());
    http_ = std::make_unique<TinyHttpClient>(server_->port());
  }
  // Every (key, parsed value) etcd holds under `prefix`, in key order.
  std::vector<std::pair<std::string, json>> EtcdObjects(const std::string& prefix) {
    std::vector<std::pair<std::string, json>> out;
    auto range = etcd_client_->Range(prefix, EtcdClient::PrefixEnd(prefix), 0, 0);
    EXPECT_TRUE(range.ok()) << range.status().ToString();
    if (!range.ok()) return out;
    for (const EtcdKv& kv : range->kvs) out.emplace_back(kv.key, json::parse(kv.value));
    return out;
  }

  std::string dir_;
  std::unique_ptr<e2e::EtcdServer> etcd_;
  std::unique_ptr<EtcdClient> etcd_client_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<TinyHttpClient> http_;
};

TEST_F(EtcdStorageTest, PagedStorageListReturnsWhatEtcdHoldsWithContinueTokens) {
  StartServer();
  for (int i = 0; i < 8; ++i) {
    HttpResponse r = http_->Request("POST", kRoutes, Route("r" + std::to_string(i)).dump());
    ASSERT_EQ(r.code, 201) << r.body;
  }
  HttpResponse deleted = http_->Request("DELETE", std::string(kRoutes) + "/r3");
  ASSERT_EQ(deleted.code, 200) << deleted.body;
  // Why written behind the server's back: the list must show etcd's value,
  // not the server's memory.
  json changed = EtcdObjects(std::string(kPrefix) + "r5")[0].second;
  changed["metadata"]["annotations"]["written-by"] = "etcd";
  ASSERT_TRUE(etcd_client_->Txn({{std::string(kPrefix) + "r5", changed.dump()}}).ok());
  // Why one more write: a list's snapshot is a version of the server's, and
  // only its own writes make one (the etcd revision of this one holds r5's
  // new value).
  ASSERT_EQ(http_->Request("POST", kRoutes, Route("r8").dump()).code, 201);

  const auto expected = EtcdObjects(kPrefix);
  std::vector<std::string> names;
  for (const auto& [key, value] : expected) names.push_back(key.substr(sizeof(kPrefix) - 1));
  EXPECT_EQ(names, (std::vector<std::string>{"r0", "r1", "r2", "r4", "r5", "r6", "r7", "r8"}))
      << "etcd holds what the server stored, the deleted r3 gone";
  std::vector<json> listed;
  std::string token;
  int pages = 0;
  const uint64_t reads_before = server_->etcd()->RangeReads();
  std::string list_rv;
  do {
    std::string path = std::string(kRoutes) + "?limit=3";
    if (!token.empty()) path += "&continue=" + token;
    HttpResponse page = http_->Get(path);
    ASSERT_EQ(page.code, 200) << page.body;
    json body = json::parse(page.body);
    ASSERT_LE(body["items"].size(), 3u);
    for (const json& item : body["items"]) listed.push_back(item);
    token = body["metadata"].value("continue", "");
    if (list_rv.empty()) list_rv = body["metadata"]["resourceVersion"];
    EXPECT_EQ(body["metadata"]["resourceVersion"], list_rv) << "one snapshot for every page";
    ASSERT_LE(listed.size(), expected.size()) << "no key listed twice";
    if (!token.empty()) {
      std::string error;
      auto decoded = DecodeContinueToken(token, &error);
      ASSERT_TRUE(decoded) << error;
      EXPECT_EQ(std::to_string(decoded->rv), list_rv);
      EXPECT_EQ(std::string(kPrefix) + decoded->last_key,
                expected[listed.size() - 1].first) << "the token names the last key read";
    }
    ++pages;
  } while (!token.empty() && pages < 10);
  EXPECT_EQ(pages, 3);
  EXPECT_EQ(server_->etcd()->RangeReads() - reads_before, 3u) << "one etcd range per page";
  ASSERT_EQ(listed.size(), expected.size());
  for (size_t i = 0; i < listed.size(); ++i) {
    EXPECT_EQ(listed[i], expected[i].second) << expected[i].first;
  }
  EXPECT_EQ(listed[4]["metadata"]["annotations"]["written-by"], "etcd");
  // The namespace went to kube's key too (the core group has no part).
  EXPECT_EQ(EtcdObjects("/registry/namespaces/team-a").size(), 1u);
}

TEST_F(EtcdStorageTest, UseEtcdLoadsEveryStoredObjectInTransactions) {
  Server server;
  ASSERT_TRUE(server.Start().ok());
  ASSERT_TRUE(server.CreateNamespace("team-a").ok());
  const int count = static_cast<int>(EtcdStorage::kTxnOps) * 2 + 7;
  for (int i = 0; i < count; ++i) ASSERT_TRUE(server.CreateRoute(Route("r" + std::to_string(i))).ok());
  Status used = server.UseEtcd(etcd_->endpoint());
  ASSERT_TRUE(used.ok()) << used.ToString();
  EXPECT_EQ(EtcdObjects(kPrefix).size(), static_cast<size_t>(count));
  TinyHttpClient http(server.port());
  HttpResponse all = http.Get(kRoutes);
  ASSERT_EQ(all.code, 200);
  EXPECT_EQ(json::parse(all.body)["items"].size(), static_cast<size_t>(count));
  server.Stop();
}

TEST_F(EtcdStorageTest, AStorageListAfterARestartAnswersAVersionAWatchCanStartFrom) {
  StartServer();
  ASSERT_EQ(http_->Request("POST", kRoutes, Route("r").dump()).code, 201);
  // Why: the restarted watch cache refuses every version before its own,
  // which no write made (etcd's revision did not move).
  ASSERT_TRUE(server_->Restart(std::chrono::milliseconds(0)).ok());
  HttpResponse list = http_->Get(std::string(kRoutes) + "?limit=1");
  ASSERT_EQ(list.code, 200) << list.body;
  const std::string rv = json::parse(list.body)["metadata"]["resourceVersion"];
  EXPECT_EQ(rv, std::to_string(server_->store().CurrentRv()));
  testing::LineStream watch(server_->port(), std::string(kRoutes) + "?watch=1&resourceVersion=" + rv);
  ASSERT_EQ(watch.code(), 200);
  std::optional<std::string> event = watch.NextLine(std::chrono::milliseconds(300));
  EXPECT_FALSE(event.has_value()) << "a watch from the list's version: " << *event;
}

TEST_F(EtcdStorageTest, AnEtcdFailureIsA500StatusNotACrash) {
  StartServer();
  ASSERT_EQ(http_->Request("POST", kRoutes, Route("before").dump()).code, 201);
  etcd_->Stop();

  HttpResponse list = http_->Get(std::string(kRoutes) + "?limit=2");
  EXPECT_EQ(list.code, 500) << list.body;
  json status = json::parse(list.body, nullptr, false);
  EXPECT_EQ(status.value("kind", ""), "Status") << list.body;
  EXPECT_EQ(status.value("reason", ""), "InternalError") << list.body;
  EXPECT_EQ(status.value("code", 0), 500) << list.body;

  HttpResponse create = http_->Request("POST", kRoutes, Route("after").dump());
  EXPECT_EQ(create.code, 500) << create.body;
  EXPECT_EQ(json::parse(create.body, nullptr, false).value("reason", ""), "InternalError");
  // Nothing was stored, and the watch cache still serves.
  EXPECT_EQ(http_->Get(std::string(kRoutes) + "/after").code, 404);
  HttpResponse cached = http_->Get(std::string(kRoutes) + "?resourceVersion=0");
  ASSERT_EQ(cached.code, 200) << cached.body;
  EXPECT_EQ(json::parse(cached.body)["items"].size(), 1u);
}

}  // namespace
}  // namespace routestatus::apiserver
