// Conformance over real HTTP: create/get/update/status/patch/delete, status
// codes and kube-apiserver Status bodies.

#include "test/apiserver/test_server.h"

namespace routestatus::apiserver::testing {
namespace {

using nlohmann::json;

TEST_F(ServerTest, CreateFillsMetadataAndDropsStatus) {
  json route = Route("a", "a.example.com");
  route["status"] = {{"ingress", json::array({{{"routerName", "x"}}})}};
  HttpResponse r = Post(RoutesPath(), route);
  ASSERT_EQ(r.code, 201) << r.body;
  json obj = Body(r);
  EXPECT_EQ(obj["metadata"]["namespace"], "team-a");
  EXPECT_EQ(obj["metadata"]["generation"], 1);
  EXPECT_FALSE(obj["metadata"]["uid"].get<std::string>().empty());
  EXPECT_FALSE(obj["metadata"]["creationTimestamp"].get<std::string>().empty());
  EXPECT_FALSE(obj.contains("status"));
  HttpResponse got = http_->Get(RoutesPath() + "/a");
  ASSERT_EQ(got.code, 200);
  EXPECT_EQ(Body(got), obj);
}

TEST_F(ServerTest, ResourceVersionIsOneGlobalIncreasingCounter) {
  json a = MustCreate("a", "a.example.com");
  json b = MustCreate("b", "b.example.com");
  ASSERT_TRUE(server_->CreateNamespace("team-b").ok());
  HttpResponse c = Post(RoutesPath("team-b"), Route("c", "c.example.com"));
  uint64_t ra = std::stoull(a["metadata"]["resourceVersion"].get<std::string>());
  uint64_t rb = std::stoull(b["metadata"]["resourceVersion"].get<std::string>());
  uint64_t rc = std::stoull(Body(c)["metadata"]["resourceVersion"].get<std::string>());
  EXPECT_EQ(rb, ra + 1);
  EXPECT_EQ(rc, rb + 2);  // the namespace took one
}

TEST_F(ServerTest, CreateTwiceIsAlreadyExists) {
  MustCreate("a", "a.example.com");
  HttpResponse r = Post(RoutesPath(), Route("a", "a.example.com"));
  EXPECT_EQ(r.code, 409);
  json expected = {{"kind", "Status"},
                   {"apiVersion", "v1"},
                   {"metadata", json::object()},
                   {"status", "Failure"},
                   {"message", "routes.route.openshift.io \"a\" already exists"},
                   {"reason", "AlreadyExists"},
                   {"details", {{"name", "a"}, {"group", "route.openshift.io"}, {"kind", "routes"}}},
                   {"code", 409}};
  EXPECT_EQ(Body(r), expected);
}

TEST_F(ServerTest, CreateInMissingNamespaceIsNotFound) {
  HttpResponse r = Post(RoutesPath("nope"), Route("a", "a.example.com"));
  EXPECT_EQ(r.code, 404);
  json body = Body(r);
  EXPECT_EQ(body["reason"], "NotFound");
  EXPECT_EQ(body["message"], "namespaces \"nope\" not found");
  EXPECT_EQ(body["details"]["kind"], "namespaces");
}

TEST_F(ServerTest, GetMissingIsNotFoundStatus) {
  HttpResponse r = http_->Get(RoutesPath() + "/missing");
  EXPECT_EQ(r.code, 404);
  EXPECT_EQ(Body(r)["message"], "routes.route.openshift.io \"missing\" not found");
  EXPECT_EQ(Body(r)["kind"], "Status");
}

TEST_F(ServerTest, BadRequestsGetStatusBodies) {
  HttpResponse malformed = http_->Request("POST", RoutesPath(), "{not json");
  EXPECT_EQ(malformed.code, 400);
  EXPECT_EQ(Body(malformed)["reason"], "BadRequest");
  json wrong_kind = Route("a", "h");
  wrong_kind["kind"] = "Service";
  EXPECT_EQ(Post(RoutesPath(), wrong_kind).code, 400);
  json no_name = Route("", "h");
  no_name["metadata"].erase("name");
  HttpResponse r = Post(RoutesPath(), no_name);
  EXPECT_EQ(r.code, 422);
  EXPECT_EQ(Body(r)["reason"], "Invalid");
  EXPECT_EQ(Body(r)["details"]["causes"][0]["field"], "metadata.name");
  EXPECT_EQ(http_->Get(RoutesPath() + "?labelSelector=a%20in%20(").code, 400);
  EXPECT_EQ(http_->Get(RoutesPath() + "?fieldSelector=spec.host%3Dx").code, 400);
  EXPECT_EQ(http_->Request("POST", RoutesPath(), "[1,2]").code, 400);
  EXPECT_EQ(http_->Request("PUT", RoutesPath() + "/a", "\"x\"").code, 400);
  EXPECT_EQ(http_->Request("PATCH", RoutesPath() + "/a", "{}", "text/plain").code, 415);
  EXPECT_EQ(http_->Get("/apis/route.openshift.io/v1/namespaces/team-a/widgets").code, 404);
  json labels_not_strings = Route("b", "h");
  labels_not_strings["metadata"]["labels"] = {{"a", 1}};
  // 400 as kube answers while decoding the body (this said 422, our own
  // answer, before metadata was decoded like ObjectMeta).
  EXPECT_EQ(Post(RoutesPath(), labels_not_strings).code, 400);
  // The server still works.
  MustCreate("ok", "ok.example.com");
}

// Go's JSON decoder, and so kube-apiserver, takes up to 10000 levels of
// nesting and refuses deeper bodies as a bad request. The server used to die
// at about 1000 (its HTTP threads' stacks were too small for the recursive
// JSON serialiser).
TEST_F(ServerTest, BodiesNestedUpToGosMaxDepthAreServedAndDeeperAreBadRequests) {
  auto with_nested_field = [](const std::string& name, size_t depth) {
    std::string body = Route(name, name + ".example.com").dump();
    body.pop_back();  // the closing '}' of the top-level object (depth 1)
    return body + ",\"deep\":" + std::string(depth - 1, '[') + std::string(depth - 1, ']') + "}";
  };
  HttpResponse ok = http_->Request("POST", RoutesPath(), with_nested_field("ten-thousand", 10000));
  EXPECT_EQ(ok.code, 201) << ok.body.substr(0, 300);
  EXPECT_EQ(http_->Get(RoutesPath()).code, 200);
  HttpResponse deeper = http_->Request("POST", RoutesPath(), with_nested_field("deeper", 10001));
  EXPECT_EQ(deeper.code, 400);
  EXPECT_EQ(Body(deeper)["reason"], "BadRequest");
  EXPECT_NE(Body(deeper)["message"].get<std::string>().find(
                "json parse error: invalid character '[' exceeded max depth"),
            std::string::npos)
      << deeper.body;
  MustCreate("still-serving", "still-serving.example.com");
}

// Patches are decoded by the same rules: a value deeper than Go's limit is
// a bad request, and the route keeps what it had. (It used to be stored.)
TEST_F(ServerTest, PatchesNestedBeyondGosMaxDepthAreBadRequests) {
  MustCreate("patched", "patched.example.com");
  auto nested = [](size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); };
  // The value's own depth plus the patch's enclosing levels exceed 10000.
  std::string json_patch = R"([{"op":"add","path":"/metadata/labels","value":{"a":)" +
                           nested(9999) + "}}]";
  std::string merge_patch = R"({"metadata":{"labels":{"b":)" + nested(9998) + "}}}";
  HttpResponse j = http_->Request("PATCH", RoutesPath() + "/patched", json_patch,
                                  "application/json-patch+json");
  HttpResponse m = http_->Request("PATCH", RoutesPath() + "/patched", merge_patch,
                                  "application/merge-patch+json");
  for (const HttpResponse* r : {&j, &m}) {
    EXPECT_EQ(r->code, 400) << r->body.substr(0, 300);
    EXPECT_EQ(Body(*r)["reason"], "BadRequest");
    EXPECT_NE(Body(*r)["message"].get<std::string>().find("exceeded max depth"),
              std::string::npos)
        << r->body.substr(0, 300);
  }
  json stored = Body(http_->Get(RoutesPath() + "/patched"));
  json labels = stored["metadata"].value("labels", json::object());
  EXPECT_FALSE(labels.contains("a") || labels.contains("b")) << stored.dump().substr(0, 300);
  HttpResponse shallow = http_->Request("PATCH", RoutesPath() + "/patched",
                                        R"({"metadata":{"labels":{"c":"d"}}})",
                                        "application/merge-patch+json");
  EXPECT_EQ(shallow.code, 200) << shallow.body;
}

// Labels and annotations are string maps: kube decodes metadata into
// ObjectMeta, so another value is a 400 on create and update and a 422 on a
// patch, and nothing is stored. (An object as an annotation was stored.)
TEST_F(ServerTest, LabelsAndAnnotationsThatAreNotStringsAreRefused) {
  json route = Route("typed", "typed.example.com");
  route["metadata"]["annotations"] = {{"a", {{"b", 1}}}};
  HttpResponse created = Post(RoutesPath(), route);
  EXPECT_EQ(created.code, 400) << created.body;
  EXPECT_EQ(Body(created)["reason"], "BadRequest");
  EXPECT_EQ(Body(created)["message"],
            "Route in version \"v1\" cannot be handled as a Route: json: cannot unmarshal object "
            "into Go struct field ObjectMeta.metadata.annotations of type string");
  EXPECT_EQ(http_->Get(RoutesPath() + "/typed").code, 404);

  json stored = MustCreate("typed", "typed.example.com");
  json update = stored;
  update["metadata"]["labels"] = {{"tier", 3}};
  HttpResponse updated = Put(RoutesPath() + "/typed", update);
  EXPECT_EQ(updated.code, 400) << updated.body;

  HttpResponse patched = http_->Request("PATCH", RoutesPath() + "/typed",
                                        R"({"metadata":{"labels":{"tier":3}}})",
                                        "application/merge-patch+json");
  EXPECT_EQ(patched.code, 422) << patched.body;
  EXPECT_EQ(Body(patched)["reason"], "Invalid");
  EXPECT_EQ(Body(patched)["details"]["causes"][0]["field"], "patch");
  EXPECT_NE(Body(patched)["message"].get<std::string>().find(
                "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of "
                "type string"),
            std::string::npos)
      << patched.body;
  json after = Body(http_->Get(RoutesPath() + "/typed"));
  EXPECT_EQ(after["metadata"]["resourceVersion"], stored["metadata"]["resourceVersion"]);

  // A null value is what Go makes of it in a string: "".
  HttpResponse null_value = http_->Request(
      "PATCH", RoutesPath() + "/typed",
      R"([{"op":"add","path":"/metadata/annotations","value":{"note":null}}])",
      "application/json-patch+json");
  ASSERT_EQ(null_value.code, 200) << null_value.body;
  EXPECT_EQ(Body(null_value)["metadata"]["annotations"], (json{{"note", ""}}));
}

// A merge patch of .status that names metadata.resourceVersion is guarded by
// it as a PUT is: the current version writes, a stale one is 409 with the
// PUT's message (what a status write without the whole object relies on).
TEST_F(ServerTest, StatusMergePatchWithAStaleVersionIsConflict) {
  json obj = MustCreate("a", "a.example.com");
  const std::string rv = obj["metadata"]["resourceVersion"];
  auto patch = [&](const std::string& version, const std::string& router) {
    return http_->Request("PATCH", RoutesPath() + "/a/status",
                          json{{"metadata", {{"resourceVersion", version}}},
                               {"status", {{"ingress", {{{"routerName", router}}}}}}}
                              .dump(),
                          "application/merge-patch+json");
  };
  HttpResponse ok = patch(rv, "ours");
  ASSERT_EQ(ok.code, 200) << ok.body;
  EXPECT_EQ(Body(ok)["status"]["ingress"][0]["routerName"], "ours");
  EXPECT_EQ(Body(ok)["spec"]["host"], "a.example.com");
  HttpResponse stale = patch(rv, "late");
  EXPECT_EQ(stale.code, 409) << stale.body;
  EXPECT_EQ(Body(stale)["message"],
            "Operation cannot be fulfilled on routes.route.openshift.io \"a\": the object has "
            "been modified; please apply your changes to the latest version and try again");
  EXPECT_EQ(Body(http_->Get(RoutesPath() + "/a"))["status"]["ingress"][0]["routerName"], "ours");
}

// The rest of what a status write by merge patch meets, on the status
// subresource as on the main resource: a deleted route is 404, a body type
// other than JSON or merge patch is 415 (a custom resource takes no
// strategic merge patch), and only .status changes: a spec or label in the
// patch is ignored, status.ingress is replaced whole.
TEST_F(ServerTest, StatusMergePatchGoneUnsupportedAndStatusOnly) {
  json obj = MustCreate("a", "a.example.com", {{"app", "x"}});
  HttpResponse first = http_->Request(
      "PATCH", RoutesPath() + "/a/status",
      R"({"status":{"ingress":[{"routerName":"r1"},{"routerName":"r2"}]}})",
      "application/merge-patch+json");
  ASSERT_EQ(first.code, 200) << first.body;
  const std::string rv = Body(first)["metadata"]["resourceVersion"];
  HttpResponse second = http_->Request(
      "PATCH", RoutesPath() + "/a/status",
      json{{"metadata", {{"resourceVersion", rv}, {"labels", {{"app", "changed"}}}}},
           {"spec", {{"host", "no.example.com"}}},
           {"status", {{"ingress", {{{"routerName", "r2"}, {"host", "h"}}}}}}}
          .dump(),
      "application/merge-patch+json");
  ASSERT_EQ(second.code, 200) << second.body;
  json after = Body(http_->Get(RoutesPath() + "/a"));
  EXPECT_EQ(after["spec"]["host"], "a.example.com");
  EXPECT_EQ(after["metadata"]["labels"], (json{{"app", "x"}}));
  EXPECT_EQ(after["status"]["ingress"], (json{{{"routerName", "r2"}, {"host", "h"}}}));

  HttpResponse smp = http_->Request("PATCH", RoutesPath() + "/a/status", R"({"status":{}})",
                                    "application/strategic-merge-patch+json");
  EXPECT_EQ(smp.code, 415) << smp.body;
  EXPECT_EQ(Body(smp)["reason"], "UnsupportedMediaType");
  EXPECT_EQ(http_->Request("PATCH", RoutesPath() + "/a/status", "{}", "text/plain").code, 415);

  HttpResponse gone = http_->Request(
      "PATCH", RoutesPath() + "/missing/status",
      json{{"metadata", {{"resourceVersion", rv}}}, {"status", {{"ingress", json::array()}}}}
          .dump(),
      "application/merge-patch+json");
  EXPECT_EQ(gone.code, 404) << gone.body;
  EXPECT_EQ(Body(gone)["reason"], "NotFound");
  EXPECT_EQ(Body(gone)["details"]["name"], "missing");
}

TEST_F(ServerTest, StaleUpdateIsConflictWithRealMessage) {
  json obj = MustCreate("a", "a.example.com");
  json first = obj;
  first["spec"]["host"] = "b.example.com";
  HttpResponse ok = Put(RoutesPath() + "/a", first);
  ASSERT_EQ(ok.code, 200) << ok.body;
  EXPECT_EQ(Body(ok)["metadata"]["generation"], 2);
  json stale = obj;
  stale["spec"]["host"] = "c.example.com";
  HttpResponse r = Put(RoutesPath() + "/a", stale);
  EXPECT_EQ(r.code, 409);
  EXPECT_EQ(Body(r)["reason"], "Conflict");
  EXPECT_EQ(Body(r)["message"],
            "Operation cannot be fulfilled on routes.route.openshift.io \"a\": the object has "
            "been modified; please apply your changes to the latest version and try again");
  EXPECT_EQ(Body(r)["details"]["name"], "a");
}

TEST_F(ServerTest, UpdateWithoutResourceVersionIsInvalidForRoutes) {
  json obj = MustCreate("a", "a.example.com");
  obj["metadata"].erase("resourceVersion");
  EXPECT_EQ(Put(RoutesPath() + "/a", obj).code, 422);
  EXPECT_EQ(Put(RoutesPath() + "/missing", Route("missing", "h")).code, 404);
}

TEST_F(ServerTest, StatusSubresourceChangesOnlyStatus) {
  json obj = MustCreate("a", "a.example.com", {{"app", "x"}});
  json put = obj;
  put["spec"]["host"] = "ignored.example.com";
  put["metadata"]["labels"]["app"] = "ignored";
  put["status"] = {{"ingress", json::array({{{"routerName", "default"}, {"host", "a.example.com"}}})}};
  HttpResponse r = Put(RoutesPath() + "/a/status", put);
  ASSERT_EQ(r.code, 200) << r.body;
  json got = Body(r);
  EXPECT_EQ(got["spec"]["host"], "a.example.com");
  EXPECT_EQ(got["metadata"]["labels"]["app"], "x");
  EXPECT_EQ(got["metadata"]["generation"], 1);
  EXPECT_EQ(got["status"], put["status"]);
  EXPECT_NE(got["metadata"]["resourceVersion"], obj["metadata"]["resourceVersion"]);
  // Stale status write: 409.
  EXPECT_EQ(Put(RoutesPath() + "/a/status", put).code, 409);
  // A PUT to the main resource ignores status.
  json main = got;
  main["status"] = json::object();
  main["metadata"]["labels"]["app"] = "y";
  HttpResponse m = Put(RoutesPath() + "/a", main);
  ASSERT_EQ(m.code, 200);
  EXPECT_EQ(Body(m)["status"], put["status"]);
  EXPECT_EQ(Body(m)["metadata"]["labels"]["app"], "y");
  EXPECT_EQ(Body(m)["metadata"]["generation"], 1);  // labels are not spec
  EXPECT_EQ(http_->Get(RoutesPath() + "/a/status").code, 200);
  EXPECT_EQ(http_->Get(RoutesPath() + "/a/scale").code, 404);
}

TEST_F(ServerTest, NoOpUpdateKeepsResourceVersion) {
  json obj = MustCreate("a", "a.example.com");
  HttpResponse r = Put(RoutesPath() + "/a", obj);
  ASSERT_EQ(r.code, 200);
  EXPECT_EQ(Body(r)["metadata"]["resourceVersion"], obj["metadata"]["resourceVersion"]);
}

TEST_F(ServerTest, MergeAndJsonPatch) {
  MustCreate("a", "a.example.com", {{"app", "x"}});
  HttpResponse merge = http_->Request("PATCH", RoutesPath() + "/a",
                                      R"({"metadata":{"labels":{"tier":"web","app":null}}})",
                                      "application/merge-patch+json");
  ASSERT_EQ(merge.code, 200) << merge.body;
  EXPECT_EQ(Body(merge)["metadata"]["labels"], json({{"tier", "web"}}));
  HttpResponse jp = http_->Request("PATCH", RoutesPath() + "/a",
                                   R"([{"op":"replace","path":"/spec/host","value":"z.example.com"}])",
                                   "application/json-patch+json");
  ASSERT_EQ(jp.code, 200) << jp.body;
  EXPECT_EQ(Body(jp)["spec"]["host"], "z.example.com");
  EXPECT_EQ(Body(jp)["metadata"]["generation"], 2);
  HttpResponse status = http_->Request(
      "PATCH", RoutesPath() + "/a/status",
      R"({"spec":{"host":"no"},"status":{"ingress":[{"routerName":"r1"}]}})",
      "application/merge-patch+json");
  ASSERT_EQ(status.code, 200);
  EXPECT_EQ(Body(status)["spec"]["host"], "z.example.com");
  EXPECT_EQ(Body(status)["status"]["ingress"][0]["routerName"], "r1");
  // Like kube, a custom resource takes no strategic merge patch.
  HttpResponse smp = http_->Request("PATCH", RoutesPath() + "/a",
                                    R"({"metadata":{"labels":{"s":"1"}}})",
                                    "application/strategic-merge-patch+json");
  EXPECT_EQ(smp.code, 415);
  EXPECT_EQ(Body(smp)["message"],
            "the body of the request was in an unknown format - accepted media types include: "
            "application/json-patch+json, application/merge-patch+json");
  std::string stale_rv = Body(merge)["metadata"]["resourceVersion"];
  HttpResponse stale = http_->Request(
      "PATCH", RoutesPath() + "/a", R"({"metadata":{"resourceVersion":")" + stale_rv + R"("}})",
      "application/merge-patch+json");
  EXPECT_EQ(stale.code, 409);
  HttpResponse bad = http_->Request("PATCH", RoutesPath() + "/a",
                                    R"([{"op":"test","path":"/spec/host","value":"other"}])",
                                    "application/json-patch+json");
  EXPECT_EQ(bad.code, 422);
  EXPECT_EQ(Body(bad)["message"], "the server rejected our request due to an error in our request");
  EXPECT_EQ(Body(bad)["details"], json::object());
  EXPECT_EQ(http_->Request("PATCH", RoutesPath() + "/missing", "{}",
                           "application/merge-patch+json").code, 404);
}

TEST_F(ServerTest, DeleteReturnsSuccessStatusThenNotFound) {
  json obj = MustCreate("a", "a.example.com");
  HttpResponse pre = http_->Request("DELETE", RoutesPath() + "/a",
                                    R"({"preconditions":{"resourceVersion":"1"}})");
  EXPECT_EQ(pre.code, 409);
  EXPECT_NE(Body(pre)["message"].get<std::string>().find(
                "StorageError: invalid object, Code: 4, Key: /registry/route.openshift.io/routes/"
                "team-a/a, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: "
                "ResourceVersion in precondition: 1"),
            std::string::npos)
      << pre.body;
  HttpResponse uid = http_->Request("DELETE", RoutesPath() + "/a",
                                    R"({"preconditions":{"uid":"other"}})");
  EXPECT_EQ(uid.code, 409);
  EXPECT_EQ(Body(uid)["details"]["kind"], "Route") << uid.body;
  HttpResponse r = http_->Request("DELETE", RoutesPath() + "/a");
  ASSERT_EQ(r.code, 200);
  // kube answers a finished delete of a custom resource with a Status.
  EXPECT_EQ(Body(r), DeletedRouteStatus("a", obj["metadata"]["uid"]));
  EXPECT_EQ(http_->Request("DELETE", RoutesPath() + "/a").code, 404);
  EXPECT_EQ(http_->Get(RoutesPath() + "/a").code, 404);
}

TEST_F(ServerTest, NamespacesHaveLabelsAndDeleteCascades) {
  HttpResponse ns = Post("/api/v1/namespaces",
                         {{"apiVersion", "v1"}, {"kind", "Namespace"},
                          {"metadata", {{"name", "team-c"}, {"labels", {{"shard", "x"}}}}}});
  ASSERT_EQ(ns.code, 201) << ns.body;
  EXPECT_EQ(Body(ns)["status"]["phase"], "Active");
  ASSERT_EQ(Post(RoutesPath("team-c"), Route("r", "r.example.com")).code, 201);
  HttpResponse list = http_->Get("/api/v1/namespaces?labelSelector=shard%3Dx");
  ASSERT_EQ(list.code, 200);
  ASSERT_EQ(Body(list)["items"].size(), 1u);
  HttpResponse label = http_->Request("PATCH", "/api/v1/namespaces/team-c",
                                      R"({"metadata":{"labels":{"shard":"y"}}})",
                                      "application/strategic-merge-patch+json");
  ASSERT_EQ(label.code, 200);
  EXPECT_EQ(Body(http_->Get("/api/v1/namespaces?labelSelector=shard%3Dx"))["items"].size(), 0u);
  EXPECT_EQ(http_->Request("DELETE", "/api/v1/namespaces/team-c").code, 200);
  EXPECT_EQ(http_->Get(RoutesPath("team-c") + "/r").code, 404);
}

TEST_F(ServerTest, CustomResourceDefinitionsCanBeCreatedAndListed) {
  json crd = {{"apiVersion", "apiextensions.k8s.io/v1"},
              {"kind", "CustomResourceDefinition"},
              {"metadata", {{"name", "routes.route.openshift.io"}}},
              {"spec", {{"group", "route.openshift.io"}}}};
  EXPECT_EQ(Post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd).code, 201);
  HttpResponse list = http_->Get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions");
  EXPECT_EQ(Body(list)["items"].size(), 1u);
  EXPECT_EQ(Body(list)["kind"], "CustomResourceDefinitionList");
}

TEST_F(ServerTest, DiscoveryDocuments) {
  EXPECT_EQ(Body(http_->Get("/version"))["major"], "1");
  EXPECT_EQ(Body(http_->Get("/api"))["versions"][0], "v1");
  json groups = Body(http_->Get("/apis"));
  EXPECT_EQ(groups["kind"], "APIGroupList");
  json routes = Body(http_->Get("/apis/route.openshift.io/v1"));
  EXPECT_EQ(routes["resources"][0]["name"], "routes");
  EXPECT_EQ(routes["resources"][1]["name"], "routes/status");
  EXPECT_EQ(Body(http_->Get("/api/v1"))["resources"][0]["name"], "namespaces");
  HttpResponse agg = http_->Request(
      "GET", "/apis", "", "", {{"Accept", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"}});
  EXPECT_EQ(Body(agg)["kind"], "APIGroupDiscoveryList");
  EXPECT_EQ(agg.headers["content-type"],
            "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList");
  EXPECT_EQ(http_->Get("/nope").code, 404);
}

}  // namespace
}  // namespace routestatus::apiserver::testing
