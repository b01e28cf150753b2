// kube-apiserver's reading of requests: lenient booleans, strict integers,
// RequestInfo verbs and the apiserver_request_total labels.

#include "apiserver/request_info.h"

#include <gtest/gtest.h>

#include "apiserver/selector_syntax.h"

namespace routestatus::apiserver {
namespace {

HttpRequest Request(const std::string& method, const std::string& query) {
  HttpRequest req;
  req.method = method;
  req.raw_query = query;
  return req;
}

TEST(QueryBoolTest, DecodesLikeConvertSliceStringToBool) {
  struct Case {
    const char* query;
    bool want;
  };
  // kube's Convert_Slice_string_To_bool: only absence, "0" and "false" (any
  // case) are false; the first value counts.
  const Case cases[] = {
      {"", false},
      {"limit=1", false},
      {"watch=0", false},
      {"watch=false", false},
      {"watch=FALSE", false},
      {"watch=False", false},
      {"watch=1", true},
      {"watch=true", true},
      {"watch=True", true},
      {"watch=yes", true},
      {"watch=f", true},
      {"watch=", true},
      {"watch", true},
      {"watch=0&watch=1", false},
      {"watch=1&watch=0", true},
      {"watchers=1", false},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(QueryBool(Request("GET", c.query), "watch"), c.want) << c.query;
  }
  EXPECT_FALSE(QueryOptionalBool(Request("GET", ""), "orphanDependents").has_value());
  EXPECT_EQ(QueryOptionalBool(Request("GET", "orphanDependents=false"), "orphanDependents"),
            std::optional<bool>(false));
}

TEST(QueryInt64Test, ParsesLikeGoStrconv) {
  std::string error;
  EXPECT_FALSE(QueryInt64(Request("GET", ""), "limit", &error).has_value());
  EXPECT_EQ(error, "");
  EXPECT_EQ(QueryInt64(Request("GET", "limit=500"), "limit", &error), 500);
  EXPECT_EQ(QueryInt64(Request("GET", "limit=-3"), "limit", &error), -3);
  EXPECT_EQ(QueryInt64(Request("GET", "limit=%2B7"), "limit", &error), 7);
  EXPECT_EQ(error, "");
  EXPECT_FALSE(QueryInt64(Request("GET", "limit=abc"), "limit", &error).has_value());
  EXPECT_EQ(error, "strconv.ParseInt: parsing \"abc\": invalid syntax");
  error.clear();
  EXPECT_FALSE(QueryInt64(Request("GET", "limit="), "limit", &error).has_value());
  EXPECT_EQ(error, "strconv.ParseInt: parsing \"\": invalid syntax");
  error.clear();
  EXPECT_FALSE(QueryInt64(Request("GET", "limit=99999999999999999999"), "limit", &error));
  EXPECT_EQ(error, "strconv.ParseInt: parsing \"99999999999999999999\": value out of range");
}

TEST(RequestVerbTest, FollowsRequestInfoFactory) {
  EXPECT_EQ(RequestVerb(Request("GET", ""), true), "get");
  EXPECT_EQ(RequestVerb(Request("GET", "watch=1"), true), "get");
  EXPECT_EQ(RequestVerb(Request("GET", ""), false), "list");
  EXPECT_EQ(RequestVerb(Request("GET", "watch=True"), false), "watch");
  EXPECT_EQ(RequestVerb(Request("GET", "watch=yes"), false), "watch");
  EXPECT_EQ(RequestVerb(Request("GET", "watch=false"), false), "list");
  EXPECT_EQ(RequestVerb(Request("POST", ""), false), "create");
  EXPECT_EQ(RequestVerb(Request("PUT", ""), true), "update");
  EXPECT_EQ(RequestVerb(Request("PATCH", ""), true), "patch");
  EXPECT_EQ(RequestVerb(Request("DELETE", ""), true), "delete");
  EXPECT_EQ(RequestVerb(Request("DELETE", ""), false), "deletecollection");
}

TEST(FieldSelectorNameTest, OnlyAnExactNameMatch) {
  EXPECT_EQ(FieldSelectorName(Request("GET", "fieldSelector=metadata.name%3Dr2")), "r2");
  EXPECT_EQ(FieldSelectorName(Request("GET", "fieldSelector=metadata.name%3D%3Dr2")), "r2");
  EXPECT_EQ(
      FieldSelectorName(Request("GET", "fieldSelector=metadata.namespace%3Dns,metadata.name%3Dr2")),
      "r2");
  EXPECT_EQ(FieldSelectorName(Request("GET", "fieldSelector=metadata.name!%3Dr2")), "");
  EXPECT_EQ(FieldSelectorName(Request("GET", "fieldSelector=metadata.name%3Da%2Fb")), "");
  EXPECT_EQ(FieldSelectorName(Request("GET", "fieldSelector=metadata.name%3Dr2&limit=x")), "");
  EXPECT_EQ(FieldSelectorName(Request("GET", "fieldSelector=garbage")), "");
}

TEST(MetricLabelsTest, VerbsAreHttpMethodsLikeKubeApiserver) {
  struct Case {
    const char* method;
    const char* query;
    bool custom;  // routes (CRD handler) or namespaces (built-in)
    const char* ns;
    const char* name;
    const char* verb;
    const char* scope;
  };
  const ResourceInfo& routes = RoutesInfo();
  const ResourceInfo& namespaces = NamespacesInfo();
  const Case cases[] = {
      {"POST", "", true, "ns", "", "POST", "resource"},
      {"PUT", "", true, "ns", "a", "PUT", "resource"},
      {"PATCH", "", true, "ns", "a", "PATCH", "resource"},
      {"DELETE", "", true, "ns", "a", "DELETE", "resource"},
      {"DELETE", "labelSelector=app%3Dx", true, "ns", "", "DELETE", "namespace"},
      {"GET", "", true, "ns", "a", "GET", "resource"},
      {"GET", "", true, "ns", "", "LIST", "namespace"},
      {"GET", "", true, "", "", "LIST", "cluster"},
      {"GET", "watch=True", true, "ns", "", "WATCH", "namespace"},
      {"GET", "watch=1&fieldSelector=metadata.name%3Da", true, "ns", "", "WATCH", "resource"},
      // The CRD handler's scope comes from RequestInfo: a metadata.name
      // field selector makes a list a GET of one resource.
      {"GET", "fieldSelector=metadata.name%3Da", true, "ns", "", "GET", "resource"},
      {"POST", "", false, "", "", "POST", "resource"},
      {"GET", "", false, "", "", "LIST", "cluster"},
      {"GET", "fieldSelector=metadata.name%3Da", false, "", "", "LIST", "cluster"},
      {"DELETE", "", false, "", "a", "DELETE", "resource"},
      {"OPTIONS", "", false, "", "a", "other", "resource"},
  };
  for (const Case& c : cases) {
    HttpRequest req = Request(c.method, c.query);
    RequestInfo info;
    info.ns = c.ns;
    info.name = c.name;
    info.verb = RequestVerb(req, !info.name.empty());
    info.metrics_name = info.name;
    if (info.verb == "list" || info.verb == "watch") info.metrics_name = FieldSelectorName(req);
    MetricLabels got = MetricLabelsFor(req, c.custom ? routes : namespaces, info);
    EXPECT_EQ(got.verb, c.verb) << c.method << " " << c.query;
    EXPECT_EQ(got.scope, c.scope) << c.method << " " << c.query;
  }
}

TEST(SystemClientTest, OnlyKubesOwnComponents) {
  EXPECT_EQ(SystemClient("kube-controller-manager/v1.26.4 (linux/amd64) kubernetes/636f2be"),
            "kube-controller-manager");
  EXPECT_EQ(SystemClient("kube-scheduler/v1.26.4"), "kube-scheduler");
  EXPECT_EQ(SystemClient("kubectl/v1.32.4 (linux/amd64) kubernetes/59526cd"), "");
  EXPECT_EQ(SystemClient("OpenAPI-Generator/22.6.0/python"), "");
  EXPECT_EQ(SystemClient(""), "");
}

TEST(LabelSelectorSyntaxErrorTest, KubesParserWords) {
  struct Case {
    const char* selector;
    const char* want;  // "" = accepted
  };
  const Case cases[] = {
      {"", ""},
      {"app=web", ""},
      {"app==web,tier!=db", ""},
      {"app in (a, b),!legacy,env notin (x)", ""},
      {"app=", ""},
      {"in=notin", ""},
      {"app===x", "unable to parse requirement: found '=', expected: identifier"},
      {"=x", "found '=', expected: !, identifier, or 'end of string'"},
      {"app=x,", "found '', expected: identifier after ','"},
      {"app x", "unable to parse requirement: found 'x', expected: in, notin, =, ==, !=, gt, lt"},
      {"app=x y", "found 'y', expected: ',' or 'end of string'"},
      {"app in a", "unable to parse requirement: found 'a' expected: '('"},
      {"app in (a b)", "unable to parse requirement: found 'b', expected: ',' or ')'"},
  };
  for (const Case& c : cases) {
    std::optional<std::string> got = LabelSelectorSyntaxError(c.selector);
    EXPECT_EQ(got.value_or(""), c.want) << c.selector;
  }
}

}  // namespace
}  // namespace routestatus::apiserver
