// Conformance over real HTTP for kubectl's read path and deletecollection:
// server-side Table output (Accept negotiation, includeObject, CRD printer
// columns, single GET, watch), PartialObjectMetadata, 406, and DELETE on a
// collection with selectors.

#include <regex>

#include "test/apiserver/routes_crd.h"
#include "test/apiserver/test_server.h"

namespace routestatus::apiserver::testing {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;

// What kubectl get sends.
constexpr char kKubectlAccept[] =
    "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;"
    "g=meta.k8s.io,application/json";

class TableTest : public ServerTest {
 protected:
  HttpResponse GetAs(const std::string& path, const std::string& accept) {
    return http_->Request("GET", path, "", "", {{"Accept", accept}});
  }
  // Stores a CRD with the printer columns of deploy/crd/routes.route.openshift.io.yaml.
  void CreateRoutesCrd() {
    json crd = RoutesCrd();
    ASSERT_EQ(Post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd).code, 201);
  }
  // Seeds route `name` with an Admitted entry of router "default".
  void CreateAdmitted(const std::string& name, const std::string& ns = "team-a") {
    json r = Route(name, name + ".example.com");
    r["metadata"]["namespace"] = ns;
    r["status"] = {{"ingress", json::array({{{"routerName", "default"},
                                             {"host", name + ".apps.example.com"},
                                             {"conditions", json::array({{{"type", "Admitted"},
                                                                          {"status", "True"}}})}}})}};
    ASSERT_TRUE(server_->CreateRoute(r).ok());
  }
  static std::vector<std::string> ColumnNames(const json& table) {
    std::vector<std::string> names;
    for (const auto& c : table["columnDefinitions"]) names.push_back(c["name"]);
    return names;
  }
  static std::vector<std::string> ItemNames(const json& list) {
    std::vector<std::string> names;
    for (const auto& item : list["items"]) names.push_back(item["metadata"]["name"]);
    return names;
  }
  static bool IsAge(const json& cell) {
    return cell.is_string() && std::regex_match(cell.get<std::string>(), std::regex("[0-9]+s"));
  }
};

TEST_F(TableTest, ListAsTableUsesTheStoredCrdColumns) {
  CreateAdmitted("a");
  MustCreate("b", "b.example.com");
  HttpResponse r = GetAs(RoutesPath(), kKubectlAccept);
  ASSERT_EQ(r.code, 200) << r.body;
  // Like kube-apiserver: the serializer's media type, not the Table's.
  EXPECT_EQ(r.headers["content-type"], "application/json");
  json table = Body(r);
  EXPECT_EQ(table["kind"], "Table");
  EXPECT_EQ(table["apiVersion"], "meta.k8s.io/v1");
  // No CRD stored yet: routes are served with deploy/crd's columns, as on a
  // cluster running it (issue 16: the demo showed only NAME and AGE).
  EXPECT_EQ(ColumnNames(table),
            std::vector<std::string>({"Name", "Host", "Admitted", "Service", "TLS", "Age"}));

  CreateRoutesCrd();
  table = Body(GetAs(RoutesPath(), kKubectlAccept));
  EXPECT_EQ(ColumnNames(table),
            std::vector<std::string>({"Name", "Host", "Admitted", "Service", "TLS", "Age"}));
  EXPECT_EQ(table["metadata"]["resourceVersion"], std::to_string(server_->store().CurrentRv()));
  ASSERT_EQ(table["rows"].size(), 2u);
  json a = table["rows"][0]["cells"];
  EXPECT_EQ(json(std::vector<json>(a.begin(), a.end() - 1)),
            json::parse(R"(["a", "a.apps.example.com", "True", "svc", null])"));
  EXPECT_TRUE(IsAge(a[5])) << a;
  json b = table["rows"][1]["cells"];
  EXPECT_EQ(json(std::vector<json>(b.begin(), b.end() - 1)),
            json::parse(R"(["b", null, null, "svc", null])"));
  json object = table["rows"][0]["object"];
  EXPECT_EQ(object["kind"], "PartialObjectMetadata");
  EXPECT_EQ(object["apiVersion"], "meta.k8s.io/v1");
  EXPECT_EQ(object["metadata"]["namespace"], "team-a");
  EXPECT_FALSE(object.contains("spec"));
}

TEST_F(TableTest, IncludeObjectAndTableVersions) {
  CreateAdmitted("a");
  json table = Body(GetAs(RoutesPath() + "?includeObject=Object", kKubectlAccept));
  EXPECT_EQ(table["rows"][0]["object"]["kind"], "Route");
  EXPECT_EQ(table["rows"][0]["object"]["spec"]["host"], "a.example.com");
  table = Body(GetAs(RoutesPath() + "?includeObject=None", kKubectlAccept));
  EXPECT_TRUE(table["rows"][0]["object"].is_null());
  HttpResponse bad = GetAs(RoutesPath() + "?includeObject=Everything", kKubectlAccept);
  EXPECT_EQ(bad.code, 400);
  EXPECT_EQ(Body(bad)["reason"], "BadRequest");
  // includeObject is ignored without a Table.
  EXPECT_EQ(http_->Get(RoutesPath() + "?includeObject=Everything").code, 200);
  table = Body(GetAs(RoutesPath(), "application/json;as=Table;v=v1beta1;g=meta.k8s.io"));
  EXPECT_EQ(table["apiVersion"], "meta.k8s.io/v1beta1");
  EXPECT_EQ(table["rows"][0]["object"]["apiVersion"], "meta.k8s.io/v1beta1");
}

TEST_F(TableTest, AcceptNegotiation) {
  MustCreate("a", "a.example.com");
  struct Case {
    std::string accept;
    int code;
    std::string kind;
  };
  for (const Case& c : std::vector<Case>{
           {"", 200, "RouteList"},
           {"application/json", 200, "RouteList"},
           {"*/*", 200, "RouteList"},
           {"application/json;as=Table;v=v2;g=meta.k8s.io,application/json", 200, "RouteList"},
           {"application/vnd.kubernetes.protobuf,application/json", 200, "RouteList"},
           {"application/json;q=0.5,application/json;as=Table;g=meta.k8s.io;v=v1", 200, "Table"},
           {"application/json;as=Table;v=v1;g=meta.k8s.io", 200, "Table"},
           {"application/json;as=Table;v=v1;g=meta.k8s.io;q=0,application/json", 200, "RouteList"},
           {"application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io", 200,
            "PartialObjectMetadataList"},
           {"application/json;as=Table;v=v2;g=meta.k8s.io", 406, "Status"},
           {"application/json;as=Table;v=v1;g=example.com", 406, "Status"},
           {"application/json;as=Widget;v=v1;g=meta.k8s.io", 406, "Status"},
           {"application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io", 406, "Status"},
           {"application/yaml", 406, "Status"},
           {"text/html", 406, "Status"}}) {
    HttpResponse r = GetAs(RoutesPath(), c.accept);
    EXPECT_EQ(r.code, c.code) << c.accept << ": " << r.body;
    EXPECT_EQ(Body(r)["kind"], c.kind) << c.accept;
    if (c.code == 406) {
      EXPECT_EQ(Body(r)["reason"], "NotAcceptable");
    }
  }
  json partial = Body(GetAs(RoutesPath(), "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io"));
  EXPECT_EQ(partial["apiVersion"], "meta.k8s.io/v1");
  EXPECT_EQ(partial["items"][0]["kind"], "PartialObjectMetadata");
  EXPECT_EQ(partial["items"][0]["metadata"]["name"], "a");
  EXPECT_FALSE(partial["items"][0].contains("spec"));
}

TEST_F(TableTest, PagesOfATableCarryTheContinueToken) {
  for (const char* name : {"a", "b", "c"}) MustCreate(name, std::string(name) + ".example.com");
  json page = Body(GetAs(RoutesPath() + "?limit=2", kKubectlAccept));
  ASSERT_EQ(page["rows"].size(), 2u);
  ASSERT_TRUE(page["metadata"].contains("continue"));
  json rest = Body(GetAs(RoutesPath() + "?limit=2&continue=" + page["metadata"]["continue"].get<std::string>(),
                         kKubectlAccept));
  ASSERT_EQ(rest["rows"].size(), 1u);
  EXPECT_EQ(rest["rows"][0]["cells"][0], "c");
  EXPECT_FALSE(rest["metadata"].contains("continue"));
}

TEST_F(TableTest, SingleObjectsAsTableOrPartialMetadata) {
  CreateRoutesCrd();
  CreateAdmitted("a");
  json route = Body(http_->Get(RoutesPath() + "/a"));
  json table = Body(GetAs(RoutesPath() + "/a", kKubectlAccept));
  EXPECT_EQ(table["kind"], "Table");
  ASSERT_EQ(table["rows"].size(), 1u);
  EXPECT_EQ(table["rows"][0]["cells"][1], "a.apps.example.com");
  EXPECT_EQ(table["metadata"]["resourceVersion"], route["metadata"]["resourceVersion"]);
  EXPECT_EQ(GetAs(RoutesPath() + "/missing", kKubectlAccept).code, 404);

  table = Body(GetAs("/api/v1/namespaces/team-a", kKubectlAccept));
  EXPECT_EQ(ColumnNames(table), std::vector<std::string>({"Name", "Status", "Age"}));
  EXPECT_EQ(table["rows"][0]["cells"][0], "team-a");
  EXPECT_EQ(table["rows"][0]["cells"][1], "Active");
  EXPECT_TRUE(IsAge(table["rows"][0]["cells"][2])) << table;
  table = Body(GetAs("/api/v1/namespaces", kKubectlAccept));
  EXPECT_EQ(table["rows"].size(), 2u);  // default, team-a
  table = Body(GetAs("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", kKubectlAccept));
  EXPECT_EQ(ColumnNames(table), std::vector<std::string>({"Name", "Created At"}));

  HttpResponse partial = GetAs(RoutesPath() + "/a", "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io");
  ASSERT_EQ(partial.code, 200);
  EXPECT_EQ(Body(partial)["kind"], "PartialObjectMetadata");
  EXPECT_EQ(Body(partial)["metadata"], route["metadata"]);
  EXPECT_EQ(GetAs(RoutesPath() + "/a", "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io").code,
            406);
  // Writes answer in the negotiated form too; errors stay Status.
  HttpResponse created = http_->Request("POST", RoutesPath(), Route("b", "b.example.com").dump(),
                                        "application/json", {{"Accept", kKubectlAccept}});
  EXPECT_EQ(created.code, 201);
  EXPECT_EQ(Body(created)["kind"], "Table");
  HttpResponse again = http_->Request("POST", RoutesPath(), Route("b", "b.example.com").dump(),
                                      "application/json", {{"Accept", kKubectlAccept}});
  EXPECT_EQ(again.code, 409);
  EXPECT_EQ(Body(again)["kind"], "Status");
}

json NextEvent(LineStream& s) {
  while (true) {
    auto line = s.NextLine(milliseconds(5000));
    if (!line) return nullptr;
    json e = json::parse(*line, nullptr, false);
    if (e.is_discarded() || e["type"] != "BOOKMARK") return e;
  }
}

TEST_F(TableTest, WatchAsTableSendsColumnsOnceThenOneRowPerEvent) {
  CreateRoutesCrd();
  CreateAdmitted("a");
  LineStream w(server_->port(), RoutesPath() + "?watch=1", "", {{"Accept", kKubectlAccept}});
  ASSERT_EQ(w.code(), 200);
  json first = NextEvent(w);
  EXPECT_EQ(first["type"], "ADDED");
  EXPECT_EQ(first["object"]["kind"], "Table");
  EXPECT_EQ(ColumnNames(first["object"]).size(), 6u);
  EXPECT_EQ(first["object"]["rows"][0]["cells"][0], "a");
  MustCreate("b", "b.example.com");
  ASSERT_EQ(http_->Request("DELETE", RoutesPath() + "/a").code, 200);
  json added = NextEvent(w);
  EXPECT_EQ(added["type"], "ADDED");
  EXPECT_TRUE(added["object"]["columnDefinitions"].is_null()) << added;
  ASSERT_EQ(added["object"]["rows"].size(), 1u);
  EXPECT_EQ(added["object"]["rows"][0]["cells"][0], "b");
  EXPECT_EQ(added["object"]["rows"][0]["object"]["kind"], "PartialObjectMetadata");
  EXPECT_EQ(added["object"]["metadata"]["resourceVersion"],
            added["object"]["rows"][0]["object"]["metadata"]["resourceVersion"]);
  json deleted = NextEvent(w);
  EXPECT_EQ(deleted["type"], "DELETED");
  EXPECT_EQ(deleted["object"]["rows"][0]["cells"][2], "True");

  // Bookmarks in a Table watch are Tables without rows that carry the version.
  // Why from the version before the delete, selecting nothing: kube
  // bookmarks only a watch its resource has moved past, and then with no
  // event before the bookmark.
  LineStream marks(server_->port(),
                   RoutesPath() + "?watch=1&allowWatchBookmarks=true&labelSelector=none%3Dnone&" +
                       "resourceVersion=" + std::to_string(server_->store().CurrentRv() - 1),
                   "", {{"Accept", kKubectlAccept}});
  std::optional<std::string> line = marks.NextLine(milliseconds(5000));
  ASSERT_TRUE(line);
  json bookmark = json::parse(*line);
  EXPECT_EQ(bookmark["type"], "BOOKMARK");
  EXPECT_EQ(bookmark["object"]["kind"], "Table");
  EXPECT_TRUE(bookmark["object"]["rows"].empty());
  EXPECT_EQ(bookmark["object"]["metadata"]["resourceVersion"],
            std::to_string(server_->store().CurrentRv()));

  // Error events stay Status objects.
  server_->Compact();
  LineStream old(server_->port(), RoutesPath() + "?watch=1&resourceVersion=1", "",
                 {{"Accept", kKubectlAccept}});
  json error = NextEvent(old);
  EXPECT_EQ(error["type"], "ERROR");
  EXPECT_EQ(error["object"]["kind"], "Status");
  EXPECT_EQ(error["object"]["code"], 410);
}

TEST_F(TableTest, DeleteCollectionHonoursSelectorsAndNamespace) {
  ASSERT_TRUE(server_->CreateNamespace("team-b").ok());
  MustCreate("a", "a.example.com", {{"app", "web"}});
  MustCreate("b", "b.example.com", {{"app", "web"}});
  MustCreate("c", "c.example.com", {{"app", "api"}});
  ASSERT_EQ(Post(RoutesPath("team-b"), Route("a", "a2.example.com", {{"app", "web"}})).code, 201);
  LineStream w(server_->port(), RoutesPath() + "?watch=1&resourceVersion=" +
                                    std::to_string(server_->store().CurrentRv()));
  uint64_t before = server_->store().CurrentRv();

  HttpResponse r = http_->Request("DELETE", RoutesPath() + "?labelSelector=app%3Dweb");
  ASSERT_EQ(r.code, 200) << r.body;
  json deleted = Body(r);
  EXPECT_EQ(deleted["kind"], "RouteList");
  EXPECT_EQ(ItemNames(deleted), std::vector<std::string>({"a", "b"}));
  EXPECT_EQ(deleted["metadata"]["resourceVersion"], std::to_string(before));
  EXPECT_EQ(ItemNames(Body(http_->Get(RoutesPath()))), std::vector<std::string>({"c"}));
  EXPECT_EQ(ItemNames(Body(http_->Get(RoutesPath("team-b")))), std::vector<std::string>({"a"}));
  for (const char* name : {"a", "b"}) {
    json e = NextEvent(w);
    EXPECT_EQ(e["type"], "DELETED");
    EXPECT_EQ(e["object"]["metadata"]["name"], name);
  }

  r = http_->Request("DELETE", RoutesPath() + "?fieldSelector=metadata.name%3Dnone", "{}");
  EXPECT_EQ(r.code, 200);
  EXPECT_TRUE(Body(r)["items"].empty());
  r = http_->Request("DELETE", RoutesPath() + "?fieldSelector=metadata.name%3Dc", "", "",
                     {{"Accept", kKubectlAccept}});
  EXPECT_EQ(Body(r)["kind"], "Table");
  EXPECT_EQ(Body(r)["rows"][0]["cells"][0], "c");
  EXPECT_TRUE(Body(http_->Get(RoutesPath()))["items"].empty());
  EXPECT_EQ(server_->RequestCount("DELETE", "routes", "-", 200), 3u);

  EXPECT_EQ(http_->Request("DELETE", RoutesPath() + "?labelSelector=a%20in%20(").code, 400);
  EXPECT_EQ(http_->Request("DELETE", RoutesPath(), "{not json").code, 400);
  // Not served, as in kube-apiserver: all namespaces at once, and namespaces.
  EXPECT_EQ(http_->Request("DELETE", "/apis/route.openshift.io/v1/routes").code, 405);
  EXPECT_EQ(http_->Request("DELETE", "/api/v1/namespaces").code, 405);
  EXPECT_EQ(ItemNames(Body(http_->Get(RoutesPath("team-b")))), std::vector<std::string>({"a"}));
  json core = Body(http_->Get("/api/v1"));
  EXPECT_EQ(std::count(core["resources"][0]["verbs"].begin(), core["resources"][0]["verbs"].end(),
                       "deletecollection"),
            0);
  json routes = Body(http_->Get("/apis/route.openshift.io/v1"));
  EXPECT_EQ(std::count(routes["resources"][0]["verbs"].begin(), routes["resources"][0]["verbs"].end(),
                       "deletecollection"),
            1);
}

}  // namespace
}  // namespace routestatus::apiserver::testing
