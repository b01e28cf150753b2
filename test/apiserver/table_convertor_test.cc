// Unit tests of the server-side Table builder (columns, cells, rows,
// includeObject) and kube's human-readable durations.

#include "apiserver/table_convertor.h"

#include <gtest/gtest.h>

#include "kubeclient/route.h"
#include "test/apiserver/routes_crd.h"

namespace routestatus::apiserver {
namespace {

using nlohmann::json;
using testing::RoutesCrd;
using std::chrono::seconds;
using std::chrono::system_clock;

constexpr char kCreated[] = "2026-11-29T14:00:00Z";

system_clock::time_point CreatedPlus(int64_t s) {
  return system_clock::time_point(seconds(*kubeclient::ParseRfc3339(kCreated) + s));
}

json RouteObject() {
  return json::parse(std::string(R"({"apiVersion": "route.openshift.io/v1", "kind": "Route",
    "metadata": {"name": "web", "namespace": "team-a", "resourceVersion": "7", "uid": "u1",
                 "creationTimestamp": ")") + kCreated + R"("},
    "spec": {"host": "web.example.com", "to": {"kind": "Service", "name": "svc"}},
    "status": {"ingress": [{"routerName": "default", "host": "web.apps.example.com",
      "conditions": [{"type": "Admitted", "status": "True"}]}]}})");
}

ObjectPtr Stored(const json& object, uint64_t rv) {
  auto o = std::make_shared<StoredObject>();
  o->name = object["metadata"].value("name", "");
  o->ns = object["metadata"].value("namespace", "");
  o->rv = rv;
  o->json = object.dump();
  return o;
}

std::vector<std::string> Names(const TableConvertor& t) {
  std::vector<std::string> names;
  for (const auto& c : t.columns()) names.push_back(c.name);
  return names;
}

TEST(TableConvertorTest, RoutesUseTheCrdPrinterColumns) {
  json crd = RoutesCrd();
  TableConvertor t = TableConvertor::For(RoutesInfo(), &crd);
  EXPECT_EQ(Names(t), std::vector<std::string>({"Name", "Host", "Admitted", "Service", "TLS", "Age"}));
  json defs = t.ColumnDefinitions();
  EXPECT_EQ(defs[0]["format"], "name");
  EXPECT_EQ(defs[5]["type"], "date");
  EXPECT_EQ(defs[1]["description"],
            "Custom resource definition column (in JSONPath format): .status.ingress[0].host");
  EXPECT_EQ(t.Cells(RouteObject(), CreatedPlus(300)),
            json::parse(R"(["web", "web.apps.example.com", "True", "svc", null, "5m"])"));
}

TEST(TableConvertorTest, RoutesWithoutCrdOrColumnsShowNameAndAge) {
  TableConvertor none = TableConvertor::For(RoutesInfo(), nullptr);
  EXPECT_EQ(Names(none), std::vector<std::string>({"Name", "Age"}));
  EXPECT_EQ(none.Cells(RouteObject(), CreatedPlus(30)), json::parse(R"(["web", "30s"])"));
  json bare = {{"spec", {{"versions", {{{"name", "v1"}}}}}}};
  EXPECT_EQ(Names(TableConvertor::For(RoutesInfo(), &bare)), std::vector<std::string>({"Name", "Age"}));
}

TEST(TableConvertorTest, MalformedCrdColumnFallsBackToDefaultsWithWarning) {
  json crd = RoutesCrd();
  crd["spec"]["versions"][0]["additionalPrinterColumns"][1]["jsonPath"] = ".status.ingress[";
  std::string warning;
  TableConvertor t = TableConvertor::For(RoutesInfo(), &crd, &warning);
  EXPECT_EQ(Names(t), std::vector<std::string>({"Name", "Age"}));
  EXPECT_NE(warning.find("invalid jsonpath"), std::string::npos) << warning;
  std::string error;
  EXPECT_FALSE(TableConvertor::FromCrdColumns(json::parse(R"([{"name": "x"}])"), &error));
  EXPECT_FALSE(error.empty());
  EXPECT_FALSE(TableConvertor::FromCrdColumns(json::object(), &error));
}

TEST(TableConvertorTest, TypedColumnsFollowKubeCellRules) {
  std::string error;
  auto t = TableConvertor::FromCrdColumns(json::parse(R"([
      {"name": "I", "type": "integer", "jsonPath": ".n"},
      {"name": "F", "type": "number", "jsonPath": ".n"},
      {"name": "B", "type": "boolean", "jsonPath": ".b"},
      {"name": "WrongType", "type": "boolean", "jsonPath": ".n"},
      {"name": "Obj", "type": "string", "jsonPath": ".o"},
      {"name": "Num", "type": "string", "jsonPath": ".n"},
      {"name": "Bad", "type": "date", "jsonPath": ".s"},
      {"name": "Empty", "type": "date", "jsonPath": ".e"},
      {"name": "Missing", "type": "date", "jsonPath": ".m"},
      {"name": "First", "type": "string", "jsonPath": ".list[*]", "priority": 1}])"),
                                          &error);
  ASSERT_TRUE(t) << error;
  json object = json::parse(R"({"metadata": {"name": "x"}, "n": 2.5, "b": true,
      "o": {"k": "v"}, "s": "yesterday", "e": "", "list": ["a", "b"]})");
  EXPECT_EQ(t->Cells(object, CreatedPlus(0)),
            json::parse(R"(["x", 2, 2.5, true, null, "{\"k\":\"v\"}", "2.5", "<invalid>",
                            "<unknown>", null, "a"])"));
  EXPECT_EQ(t->ColumnDefinitions()[10]["priority"], 1);
}

TEST(TableConvertorTest, NamespacesShowStatusAndHumanAge) {
  TableConvertor t = TableConvertor::For(NamespacesInfo(), nullptr);
  EXPECT_EQ(Names(t), std::vector<std::string>({"Name", "Status", "Age"}));
  json ns = {{"metadata", {{"name", "team-a"}, {"creationTimestamp", kCreated}}},
             {"status", {{"phase", "Active"}}}};
  EXPECT_EQ(t.Cells(ns, CreatedPlus(200)), json::parse(R"(["team-a", "Active", "3m20s"])"));
  ns["metadata"].erase("creationTimestamp");
  EXPECT_EQ(t.Cells(ns, CreatedPlus(200))[2], "<unknown>");
}

TEST(TableConvertorTest, CrdsShowCreatedAt) {
  TableConvertor t = TableConvertor::For(CrdsInfo(), nullptr);
  EXPECT_EQ(Names(t), std::vector<std::string>({"Name", "Created At"}));
  EXPECT_EQ(t.Cells(RoutesCrd(), CreatedPlus(0)), json::parse(R"(["routes.route.openshift.io", null])"));
}

TEST(TableConvertorTest, RenderHonoursIncludeObjectHeadersAndMetadata) {
  json crd = RoutesCrd();
  TableConvertor t = TableConvertor::For(RoutesInfo(), &crd);
  TableConvertor::RenderOptions o;
  o.resource_version = "42";
  o.continue_token = "tok";
  o.now = CreatedPlus(60);
  json table = json::parse(t.Render({Stored(RouteObject(), 7)}, o));
  EXPECT_EQ(table["kind"], "Table");
  EXPECT_EQ(table["apiVersion"], "meta.k8s.io/v1");
  EXPECT_EQ(table["metadata"], json::parse(R"({"resourceVersion": "42", "continue": "tok"})"));
  EXPECT_EQ(table["columnDefinitions"].size(), 6u);
  ASSERT_EQ(table["rows"].size(), 1u);
  EXPECT_EQ(table["rows"][0]["cells"][5], "1m");
  json partial = table["rows"][0]["object"];
  EXPECT_EQ(partial["kind"], "PartialObjectMetadata");
  EXPECT_EQ(partial["apiVersion"], "meta.k8s.io/v1");
  EXPECT_EQ(partial["metadata"], RouteObject()["metadata"]);
  EXPECT_FALSE(partial.contains("spec"));

  o.include = IncludeObject::kObject;
  o.headers = false;
  o.api_version = "meta.k8s.io/v1beta1";
  table = json::parse(t.Render({Stored(RouteObject(), 7)}, o));
  EXPECT_TRUE(table["columnDefinitions"].is_null());
  EXPECT_EQ(table["apiVersion"], "meta.k8s.io/v1beta1");
  EXPECT_EQ(table["rows"][0]["object"], RouteObject());

  o.include = IncludeObject::kNone;
  table = json::parse(t.Render({Stored(RouteObject(), 7), Stored(RouteObject(), 8)}, o));
  EXPECT_EQ(table["rows"].size(), 2u);
  EXPECT_TRUE(table["rows"][1]["object"].is_null());
  EXPECT_TRUE(json::parse(t.Render({}, o))["rows"].empty());
}

TEST(TableConvertorTest, ParseIncludeObject) {
  EXPECT_EQ(ParseIncludeObject(""), IncludeObject::kMetadata);
  EXPECT_EQ(ParseIncludeObject("Metadata"), IncludeObject::kMetadata);
  EXPECT_EQ(ParseIncludeObject("Object"), IncludeObject::kObject);
  EXPECT_EQ(ParseIncludeObject("None"), IncludeObject::kNone);
  EXPECT_FALSE(ParseIncludeObject("object"));
}

TEST(HumanDurationTest, MatchesKube) {
  struct Case {
    int64_t s;
    const char* short_form;
    const char* long_form;
  };
  for (const Case& c : std::vector<Case>{{-5, "<invalid>", "<invalid>"},
                                         {-1, "0s", "0s"},
                                         {0, "0s", "0s"},
                                         {59, "59s", "59s"},
                                         {119, "1m", "119s"},
                                         {120, "2m", "2m"},
                                         {200, "3m", "3m20s"},
                                         {600, "10m", "10m"},
                                         {3 * 3600, "3h", "3h"},
                                         {3 * 3600 + 60 * 5, "3h", "3h5m"},
                                         {30 * 3600, "1d", "30h"},
                                         {3 * 86400 + 4 * 3600, "3d", "3d4h"},
                                         {10 * 86400, "10d", "10d"},
                                         {400 * 86400, "1y", "400d"},
                                         {3 * 365 * 86400 + 10 * 86400, "3y", "3y10d"},
                                         {9 * 365 * 86400, "9y", "9y"}}) {
    EXPECT_EQ(ShortHumanDuration(c.s), c.short_form) << c.s;
    EXPECT_EQ(HumanDuration(c.s), c.long_form) << c.s;
  }
}

}  // namespace
}  // namespace routestatus::apiserver
