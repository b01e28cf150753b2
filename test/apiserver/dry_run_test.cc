// Conformance over real HTTP for dryRun=All on every write (create, update,
// patch, the status subresource, delete, deletecollection): the response is
// the one the real write would give, errors included, but nothing is stored,
// no resourceVersion is used and no watch event is sent. Other dryRun values
// are 422 Invalid like kube-apiserver's option validation.

#include "test/apiserver/protobuf_builder.h"
#include "test/apiserver/test_server.h"

namespace routestatus::apiserver::testing {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;

constexpr char kMerge[] = "application/merge-patch+json";

// Everything a client can observe of the store: both collections (with their
// resourceVersions) and the store's version.
struct Observed {
  std::string routes;
  std::string namespaces;
  uint64_t rv;
  bool operator==(const Observed& o) const {
    return routes == o.routes && namespaces == o.namespaces && rv == o.rv;
  }
};

class DryRunTest : public ServerTest {
 protected:
  Observed Observe() {
    return {http_->Get("/apis/route.openshift.io/v1/routes").body,
            http_->Get("/api/v1/namespaces").body, server_->store().CurrentRv()};
  }
  // `obj` without the fields only a real write fills in differently.
  static json WithoutIdentity(json obj) {
    for (const char* f : {"uid", "creationTimestamp", "resourceVersion"}) {
      obj["metadata"].erase(f);
    }
    return obj;
  }
  static std::string RouteUrl(const std::string& name) { return RoutesPath() + "/" + name; }
};

TEST_F(DryRunTest, CreateAnswersTheObjectWithoutStoringIt) {
  Observed before = Observe();
  HttpResponse dry = Post(RoutesPath() + "?dryRun=All", Route("a", "a.example.com"));
  ASSERT_EQ(dry.code, 201) << dry.body;
  json obj = Body(dry);
  EXPECT_EQ(obj["metadata"]["namespace"], "team-a");
  EXPECT_EQ(obj["metadata"]["generation"], 1);
  EXPECT_FALSE(obj["metadata"]["uid"].get<std::string>().empty());
  EXPECT_FALSE(obj["metadata"]["creationTimestamp"].get<std::string>().empty());
  // Why: kube's dry-run create never reaches etcd, so no resourceVersion.
  EXPECT_FALSE(obj["metadata"].contains("resourceVersion")) << dry.body;
  EXPECT_EQ(http_->Get(RouteUrl("a")).code, 404);
  EXPECT_EQ(Observe(), before);

  HttpResponse real = Post(RoutesPath(), Route("a", "a.example.com"));
  ASSERT_EQ(real.code, 201) << real.body;
  EXPECT_EQ(WithoutIdentity(Body(real)), WithoutIdentity(obj));
}

TEST_F(DryRunTest, CreateNamespaceGetsTheDefaultsButIsNotStored) {
  Observed before = Observe();
  json ns = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "team-x"}}}};
  HttpResponse dry = Post("/api/v1/namespaces?dryRun=All", ns);
  ASSERT_EQ(dry.code, 201) << dry.body;
  json obj = Body(dry);
  EXPECT_EQ(obj["status"]["phase"], "Active");
  EXPECT_EQ(obj["spec"]["finalizers"], json::array({"kubernetes"}));
  EXPECT_EQ(obj["metadata"]["labels"]["kubernetes.io/metadata.name"], "team-x");
  EXPECT_EQ(http_->Get("/api/v1/namespaces/team-x").code, 404);
  // A route in the namespace that was only dry-run created has no namespace.
  EXPECT_EQ(Post(RoutesPath("team-x") + "?dryRun=All", Route("a", "a.example.com")).code, 404);
  EXPECT_EQ(Observe(), before);
}

TEST_F(DryRunTest, CreateErrorsAreTheRealOnes) {
  MustCreate("a", "a.example.com");
  Observed before = Observe();
  HttpResponse real = Post(RoutesPath(), Route("a", "a.example.com"));
  HttpResponse dry = Post(RoutesPath() + "?dryRun=All", Route("a", "a.example.com"));
  EXPECT_EQ(dry.code, 409);
  EXPECT_EQ(Body(dry)["reason"], "AlreadyExists");
  EXPECT_EQ(dry.body, real.body);
  EXPECT_EQ(Post(RoutesPath("nope") + "?dryRun=All", Route("b", "b.example.com")).code, 404);
  json unnamed = Route("", "h");
  unnamed["metadata"].erase("name");
  EXPECT_EQ(Post(RoutesPath() + "?dryRun=All", unnamed).code, 422);
  EXPECT_EQ(http_->Request("POST", RoutesPath() + "?dryRun=All", "{not json").code, 400);
  EXPECT_EQ(Observe(), before);
}

TEST_F(DryRunTest, UpdateAndPatchAnswerTheNewObjectAtTheCurrentVersion) {
  json stored = MustCreate("a", "a.example.com");
  const std::string rv = stored["metadata"]["resourceVersion"];
  Observed before = Observe();

  json changed = stored;
  changed["spec"]["host"] = "b.example.com";
  HttpResponse put = Put(RouteUrl("a") + "?dryRun=All", changed);
  ASSERT_EQ(put.code, 200) << put.body;
  EXPECT_EQ(Body(put)["spec"]["host"], "b.example.com");
  EXPECT_EQ(Body(put)["metadata"]["generation"], 2);
  EXPECT_EQ(Body(put)["metadata"]["resourceVersion"], rv);

  HttpResponse merge = http_->Request("PATCH", RouteUrl("a") + "?dryRun=All",
                                      R"({"metadata":{"labels":{"tier":"web"}}})", kMerge);
  ASSERT_EQ(merge.code, 200) << merge.body;
  EXPECT_EQ(Body(merge)["metadata"]["labels"]["tier"], "web");
  EXPECT_EQ(Body(merge)["metadata"]["resourceVersion"], rv);
  HttpResponse jp = http_->Request("PATCH", RouteUrl("a") + "?dryRun=All",
                                   R"([{"op":"replace","path":"/spec/host","value":"c.example.com"}])",
                                   "application/json-patch+json");
  ASSERT_EQ(jp.code, 200) << jp.body;
  EXPECT_EQ(Body(jp)["spec"]["host"], "c.example.com");

  json with_status = stored;
  with_status["status"] = {{"ingress", json::array({{{"routerName", "r1"}}})}};
  HttpResponse status = Put(RouteUrl("a") + "/status?dryRun=All", with_status);
  ASSERT_EQ(status.code, 200) << status.body;
  EXPECT_EQ(Body(status)["status"]["ingress"][0]["routerName"], "r1");
  EXPECT_EQ(Body(status)["metadata"]["resourceVersion"], rv);
  HttpResponse status_patch =
      http_->Request("PATCH", RouteUrl("a") + "/status?dryRun=All",
                     R"({"status":{"ingress":[{"routerName":"r2"}]}})", kMerge);
  ASSERT_EQ(status_patch.code, 200) << status_patch.body;
  EXPECT_EQ(Body(status_patch)["status"]["ingress"][0]["routerName"], "r2");

  EXPECT_EQ(Body(http_->Get(RouteUrl("a"))), stored);
  EXPECT_EQ(Observe(), before);

  // The real writes answer the same objects, at a new version.
  HttpResponse real_put = Put(RouteUrl("a"), changed);
  ASSERT_EQ(real_put.code, 200);
  json expected = Body(put);
  expected["metadata"]["resourceVersion"] = Body(real_put)["metadata"]["resourceVersion"];
  EXPECT_EQ(Body(real_put), expected);
  EXPECT_NE(Body(real_put)["metadata"]["resourceVersion"], rv);
}

TEST_F(DryRunTest, UpdateErrorsAreTheRealOnes) {
  json stored = MustCreate("a", "a.example.com");
  json stale = stored;
  stale["metadata"]["resourceVersion"] = "1";
  Observed before = Observe();
  HttpResponse dry = Put(RouteUrl("a") + "?dryRun=All", stale);
  EXPECT_EQ(dry.code, 409);
  EXPECT_EQ(Body(dry)["reason"], "Conflict");
  EXPECT_EQ(dry.body, Put(RouteUrl("a"), stale).body);
  EXPECT_EQ(Put(RoutesPath() + "/missing?dryRun=All", Route("missing", "h")).code, 404);
  EXPECT_EQ(Put(RouteUrl("a") + "/status?dryRun=All", stale).code, 409);
  EXPECT_EQ(http_->Request("PATCH", RouteUrl("a") + "?dryRun=All",
                           R"({"metadata":{"resourceVersion":"1"}})", kMerge)
                .code,
            409);
  EXPECT_EQ(http_->Request("PATCH", RoutesPath() + "/missing?dryRun=All", "{}", kMerge).code, 404);
  EXPECT_EQ(http_->Request("PATCH", RouteUrl("a") + "?dryRun=All",
                           R"([{"op":"test","path":"/spec/host","value":"other"}])",
                           "application/json-patch+json")
                .code,
            422);
  EXPECT_EQ(Observe(), before);
}

TEST_F(DryRunTest, DeleteAnswersSuccessAndKeepsIt) {
  json stored = MustCreate("a", "a.example.com");
  Observed before = Observe();
  HttpResponse query = http_->Request("DELETE", RouteUrl("a") + "?dryRun=All");
  ASSERT_EQ(query.code, 200) << query.body;
  // Like kube, a custom resource's (dry-run) delete answers a Success Status.
  const json success = DeletedRouteStatus("a", stored["metadata"]["uid"]);
  EXPECT_EQ(Body(query), success);
  // kubectl sends dryRun in the DeleteOptions body.
  HttpResponse body = http_->Request(
      "DELETE", RouteUrl("a"),
      R"({"kind":"DeleteOptions","apiVersion":"v1","dryRun":["All"],"propagationPolicy":"Background"})");
  ASSERT_EQ(body.code, 200) << body.body;
  EXPECT_EQ(Body(body), success);
  EXPECT_EQ(Body(http_->Get(RouteUrl("a"))), stored);
  EXPECT_EQ(Observe(), before);

  EXPECT_EQ(http_->Request("DELETE", RoutesPath() + "/missing?dryRun=All").code, 404);
  HttpResponse pre = http_->Request("DELETE", RouteUrl("a"),
                                    R"({"dryRun":["All"],"preconditions":{"uid":"x"}})");
  EXPECT_EQ(pre.code, 409);
  EXPECT_EQ(Observe(), before);
}

TEST_F(DryRunTest, DeleteOptionsInTheBodyWinOverTheQuery) {
  // Why: kube-apiserver reads DeleteOptions from the body when there is one
  // and only falls back to the query without a body.
  MustCreate("a", "a.example.com");
  HttpResponse r = http_->Request("DELETE", RouteUrl("a") + "?dryRun=All",
                                  R"({"propagationPolicy":"Background"})");
  ASSERT_EQ(r.code, 200) << r.body;
  EXPECT_EQ(http_->Get(RouteUrl("a")).code, 404);
}

TEST_F(DryRunTest, DeletingANamespaceKeepsItAndItsRoutes) {
  MustCreate("a", "a.example.com");
  Observed before = Observe();
  std::string ns_body = http_->Get("/api/v1/namespaces/team-a").body;
  HttpResponse r = http_->Request("DELETE", "/api/v1/namespaces/team-a?dryRun=All");
  ASSERT_EQ(r.code, 200) << r.body;
  EXPECT_EQ(r.body, ns_body);
  std::string options = Envelope("v1", "DeleteOptions", Bytes(5, "All"));
  r = http_->Request("DELETE", "/api/v1/namespaces/team-a", options,
                     "application/vnd.kubernetes.protobuf");
  ASSERT_EQ(r.code, 200) << r.body;
  EXPECT_EQ(http_->Get(RouteUrl("a")).code, 200);
  EXPECT_EQ(Observe(), before);
}

TEST_F(DryRunTest, DeleteCollectionListsWhatItWouldDelete) {
  MustCreate("a", "a.example.com", {{"app", "web"}});
  MustCreate("b", "b.example.com", {{"app", "web"}});
  MustCreate("c", "c.example.com");
  Observed before = Observe();
  HttpResponse r = http_->Request("DELETE", RoutesPath() + "?labelSelector=app%3Dweb&dryRun=All");
  ASSERT_EQ(r.code, 200) << r.body;
  json list = Body(r);
  ASSERT_EQ(list["items"].size(), 2u) << r.body;
  EXPECT_EQ(list["items"][0]["metadata"]["name"], "a");
  EXPECT_EQ(list["items"][1]["metadata"]["name"], "b");
  EXPECT_EQ(list["metadata"]["resourceVersion"], std::to_string(before.rv));
  r = http_->Request("DELETE", RoutesPath(), R"({"dryRun":["All"]})");
  ASSERT_EQ(r.code, 200) << r.body;
  EXPECT_EQ(Body(r)["items"].size(), 3u);
  EXPECT_EQ(Observe(), before);
}

TEST_F(DryRunTest, NoWatchEventForAnyDryRunWrite) {
  json stored = MustCreate("a", "a.example.com");
  ASSERT_TRUE(server_->CreateNamespace("team-b").ok());
  const std::string rv = std::to_string(server_->store().CurrentRv());
  LineStream routes(server_->port(),
                    "/apis/route.openshift.io/v1/routes?watch=1&resourceVersion=" + rv);
  LineStream namespaces(server_->port(), "/api/v1/namespaces?watch=1&resourceVersion=" + rv);
  ASSERT_EQ(routes.code(), 200);
  ASSERT_EQ(namespaces.code(), 200);

  ASSERT_EQ(Post(RoutesPath() + "?dryRun=All", Route("b", "b.example.com")).code, 201);
  json changed = stored;
  changed["spec"]["host"] = "x.example.com";
  ASSERT_EQ(Put(RouteUrl("a") + "?dryRun=All", changed).code, 200);
  ASSERT_EQ(http_->Request("PATCH", RouteUrl("a") + "/status?dryRun=All",
                           R"({"status":{"ingress":[{"routerName":"r"}]}})", kMerge)
                .code,
            200);
  ASSERT_EQ(http_->Request("DELETE", RouteUrl("a") + "?dryRun=All").code, 200);
  ASSERT_EQ(http_->Request("DELETE", RoutesPath() + "?dryRun=All").code, 200);
  ASSERT_EQ(http_->Request("DELETE", "/api/v1/namespaces/team-b?dryRun=All").code, 200);
  ASSERT_EQ(Post("/api/v1/namespaces?dryRun=All",
                 {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "n"}}}})
                .code,
            201);
  EXPECT_EQ(std::to_string(server_->store().CurrentRv()), rv);

  // Then a real write of each kind: it must be the first event of each watch.
  MustCreate("marker", "m.example.com");
  ASSERT_TRUE(server_->CreateNamespace("marker").ok());
  auto line = routes.NextLine(milliseconds(5000));
  ASSERT_TRUE(line.has_value());
  json e = json::parse(*line);
  EXPECT_EQ(e["type"], "ADDED");
  EXPECT_EQ(e["object"]["metadata"]["name"], "marker");
  line = namespaces.NextLine(milliseconds(5000));
  ASSERT_TRUE(line.has_value());
  e = json::parse(*line);
  EXPECT_EQ(e["type"], "ADDED");
  EXPECT_EQ(e["object"]["metadata"]["name"], "marker");
}

TEST_F(DryRunTest, OtherDryRunValuesAreInvalidOptions) {
  json stored = MustCreate("a", "a.example.com");
  Observed before = Observe();
  HttpResponse create = Post(RoutesPath() + "?dryRun=Yes", Route("b", "b.example.com"));
  EXPECT_EQ(create.code, 422);
  json expected = {
      {"kind", "Status"},
      {"apiVersion", "v1"},
      {"metadata", json::object()},
      {"status", "Failure"},
      {"message",
       "CreateOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: "
       "[]string{\"Yes\"}: supported values: \"All\""},
      {"reason", "Invalid"},
      {"details",
       {{"group", "meta.k8s.io"},
        {"kind", "CreateOptions"},
        {"causes", json::array({{{"reason", "FieldValueNotSupported"},
                                 {"message",
                                  "Unsupported value: []string{\"Yes\"}: supported values: "
                                  "\"All\""},
                                 {"field", "dryRun"}}})}}},
      {"code", 422}};
  EXPECT_EQ(Body(create), expected);

  HttpResponse both = Post(RoutesPath() + "?dryRun=All&dryRun=Server", Route("b", "h"));
  EXPECT_EQ(both.code, 422);
  EXPECT_NE(Body(both)["message"].get<std::string>().find("[]string{\"All\", \"Server\"}"),
            std::string::npos)
      << both.body;
  HttpResponse put = Put(RouteUrl("a") + "?dryRun=true", stored);
  EXPECT_EQ(put.code, 422);
  EXPECT_EQ(Body(put)["details"]["kind"], "UpdateOptions");
  HttpResponse patch = http_->Request("PATCH", RouteUrl("a") + "?dryRun=", "{}", kMerge);
  EXPECT_EQ(patch.code, 422);
  EXPECT_EQ(Body(patch)["details"]["kind"], "PatchOptions");
  HttpResponse del = http_->Request("DELETE", RouteUrl("a") + "?dryRun=all");
  EXPECT_EQ(del.code, 422);
  EXPECT_EQ(Body(del)["details"]["kind"], "DeleteOptions");
  EXPECT_EQ(http_->Request("DELETE", RouteUrl("a"), R"({"dryRun":["Server"]})").code, 422);
  EXPECT_EQ(http_->Request("DELETE", RoutesPath() + "?dryRun=x").code, 422);
  EXPECT_EQ(http_->Request("DELETE", RouteUrl("a"), R"({"dryRun":"All"})").code, 400);
  EXPECT_EQ(Observe(), before);
}

TEST_F(DryRunTest, MetricsCarryTheDryRunLabel) {
  ASSERT_EQ(Post(RoutesPath() + "?dryRun=All", Route("a", "a.example.com")).code, 201);
  ASSERT_EQ(Post(RoutesPath() + "?dryRun=nope", Route("a", "a.example.com")).code, 422);
  MustCreate("a", "a.example.com");
  std::string m = http_->Get("/metrics").body;
  for (const char* series :
       {"apiserver_request_total{code=\"201\",component=\"apiserver\",dry_run=\"All\","
        "group=\"route.openshift.io\",resource=\"routes\",scope=\"resource\",subresource=\"\","
        "system_client=\"\",verb=\"POST\",version=\"v1\"} 1",
        "apiserver_request_total{code=\"422\",component=\"apiserver\",dry_run=\"invalid\","
        "group=\"route.openshift.io\",resource=\"routes\",scope=\"resource\",subresource=\"\","
        "system_client=\"\",verb=\"POST\",version=\"v1\"} 1",
        "apiserver_request_total{code=\"201\",component=\"apiserver\",dry_run=\"\","
        "group=\"route.openshift.io\",resource=\"routes\",scope=\"resource\",subresource=\"\","
        "system_client=\"\",verb=\"POST\",version=\"v1\"} 1"}) {
    EXPECT_NE(m.find(series), std::string::npos) << series << "\n" << m;
  }
  EXPECT_EQ(server_->RequestCount("POST", "routes", "-", 201), 2u);
}

TEST_F(DryRunTest, TableAnswerOfADryRunCreateHasNoResourceVersion) {
  HttpResponse r = http_->Request("POST", RoutesPath() + "?dryRun=All",
                                  Route("a", "a.example.com").dump(), "application/json",
                                  {{"Accept", "application/json;as=Table;g=meta.k8s.io;v=v1"}});
  ASSERT_EQ(r.code, 201) << r.body;
  json table = Body(r);
  EXPECT_EQ(table["kind"], "Table");
  EXPECT_EQ(table["rows"].size(), 1u);
  EXPECT_EQ(table["metadata"].value("resourceVersion", ""), "") << r.body;
}

}  // namespace
}  // namespace routestatus::apiserver::testing
