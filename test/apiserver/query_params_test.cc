// Every query parameter the server reads, decoded as kube-apiserver decodes
// it (issue 16): lenient booleans, strict integers, resourceVersion and
// resourceVersionMatch, fieldValidation, DeleteOptions, pretty; plus the
// headers every answer carries.

#include <thread>

#include "test/apiserver/fake_clock_server_test.h"

namespace routestatus::apiserver::testing {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;

TEST_F(ServerTest, WatchBooleansAreLenient) {
  MustCreate("a", "a.example.com");
  // kube: absent, "0" and "false" (any case) are false; anything else true.
  for (const char* value : {"yes", "True", "1", "f", ""}) {
    LineStream w(server_->port(), RoutesPath() + "?timeoutSeconds=1&watch=" + value);
    ASSERT_EQ(w.code(), 200) << value;
    std::optional<std::string> line = w.NextLine(milliseconds(3000));
    ASSERT_TRUE(line.has_value()) << value;
    EXPECT_EQ(json::parse(*line)["type"], "ADDED") << value;
  }
  for (const char* value : {"false", "FALSE", "0"}) {
    EXPECT_EQ(Body(http_->Get(RoutesPath() + "?watch=" + value))["kind"], "RouteList") << value;
  }
  EXPECT_EQ(server_->RequestCount("WATCH", "routes", "-", 200), 5u);
  EXPECT_EQ(server_->RequestCount("LIST", "routes", "-", 200), 3u);
}

TEST_F(ServerTest, IntegerParametersAreStrict) {
  HttpResponse limit = http_->Get(RoutesPath() + "?limit=ten");
  EXPECT_EQ(limit.code, 400);
  EXPECT_EQ(Body(limit)["message"], "strconv.ParseInt: parsing \"ten\": invalid syntax");
  HttpResponse timeout = http_->Get(RoutesPath() + "?watch=1&timeoutSeconds=1.5");
  EXPECT_EQ(timeout.code, 400);
  EXPECT_EQ(Body(timeout)["message"], "strconv.ParseInt: parsing \"1.5\": invalid syntax");
  // A zero or negative limit is no limit.
  MustCreate("a", "a.example.com");
  EXPECT_EQ(Body(http_->Get(RoutesPath() + "?limit=-1"))["items"].size(), 1u);
}

TEST_F(ServerTest, ResourceVersionMatchIsValidatedLikeKube) {
  struct Case {
    const char* query;
    int code;
    const char* message;
  };
  const Case cases[] = {
      {"resourceVersionMatch=Exact", 422,
       "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: "
       "resourceVersionMatch is forbidden unless resourceVersion is provided"},
      {"resourceVersionMatch=Exact&resourceVersion=0", 422,
       "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: "
       "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\""},
      {"resourceVersionMatch=Newest&resourceVersion=1", 422,
       "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Unsupported value: "
       "\"Newest\": supported values: \"Exact\", \"NotOlderThan\", \"\""},
      {"resourceVersion=99999", 504, "Too large resource version: 99999, current: 2"},
      {"resourceVersion=abc", 500,
       "resourceVersion: Invalid value: \"abc\": strconv.ParseUint: parsing \"abc\": invalid "
       "syntax"},
      {"limit=1&resourceVersion=abc", 400,
       "invalid resource version: resourceVersion: Invalid value: \"abc\": strconv.ParseUint: "
       "parsing \"abc\": invalid syntax"},
  };
  for (const Case& c : cases) {
    HttpResponse r = http_->Get(RoutesPath() + "?" + c.query);
    EXPECT_EQ(r.code, c.code) << c.query << " " << r.body;
    EXPECT_EQ(Body(r)["message"], c.message) << c.query;
  }
  json first = MustCreate("a", "a.example.com");
  std::string rv = first["metadata"]["resourceVersion"];
  HttpResponse token_and_rv =
      http_->Get(RoutesPath() + "?limit=1&continue=x&resourceVersion=" + rv);
  EXPECT_EQ(token_and_rv.code, 400);
  EXPECT_EQ(Body(token_and_rv)["message"],
            "specifying resource version is not allowed when using continue");
  MustCreate("b", "b.example.com");
  // Exact: the list as it was at that version.
  json exact = Body(http_->Get(RoutesPath() + "?resourceVersionMatch=Exact&resourceVersion=" + rv));
  EXPECT_EQ(exact["items"].size(), 1u);
  EXPECT_EQ(exact["metadata"]["resourceVersion"], rv);
  json newer = Body(http_->Get(RoutesPath() + "?resourceVersion=" + rv));
  EXPECT_EQ(newer["items"].size(), 2u);
  server_->Compact();
  HttpResponse gone =
      http_->Get(RoutesPath() + "?resourceVersionMatch=Exact&resourceVersion=" + rv);
  EXPECT_EQ(gone.code, 410);
  EXPECT_EQ(Body(gone)["reason"], "Expired");
}

// Which state a list reads, by resourceVersion, as kube-apiserver 1.26's
// cacher and etcd3 store choose it: "" the latest (storage); "0" any (the
// watch cache, which ignores limit); N with a limit and no
// resourceVersionMatch the snapshot at N (etcd's legacy paged read); N with
// NotOlderThan, or without a limit, the latest (at least N).
TEST_F(ServerTest, ListResourceVersionPicksTheStateLikeKube) {
  MustCreate("a", "a.example.com");
  std::string at_b = MustCreate("b", "b.example.com")["metadata"]["resourceVersion"];
  MustCreate("c", "c.example.com");
  auto names = [](const json& list) {
    std::vector<std::string> out;
    for (const json& item : list["items"]) out.push_back(item["metadata"]["name"]);
    return out;
  };
  using Names = std::vector<std::string>;
  // Legacy paged read at N: the snapshot at N, page by page.
  json first = Body(http_->Get(RoutesPath() + "?limit=1&resourceVersion=" + at_b));
  EXPECT_EQ(names(first), Names({"a"}));
  EXPECT_EQ(first["metadata"]["resourceVersion"], at_b);
  EXPECT_EQ(first["metadata"]["remainingItemCount"], 1);
  std::string token = first["metadata"]["continue"];
  json second = Body(http_->Get(RoutesPath() + "?limit=1&continue=" + token));
  EXPECT_EQ(names(second), Names({"b"}));
  EXPECT_EQ(second["metadata"]["resourceVersion"], at_b);
  EXPECT_EQ(second["metadata"]["continue"], "");
  // NotOlderThan with a limit: the latest state, paged.
  json newest = Body(http_->Get(RoutesPath() + "?limit=2&resourceVersionMatch=NotOlderThan&" +
                                "resourceVersion=" + at_b));
  EXPECT_EQ(names(newest), Names({"a", "b"}));
  EXPECT_EQ(newest["metadata"]["remainingItemCount"], 1);
  // "0": the watch cache, which serves every item and ignores the limit.
  for (const char* query : {"?limit=1&resourceVersion=0",
                            "?limit=1&resourceVersion=0&resourceVersionMatch=NotOlderThan"}) {
    json any = Body(http_->Get(RoutesPath() + query));
    EXPECT_EQ(names(any), Names({"a", "b", "c"})) << query;
    EXPECT_EQ(any["metadata"]["continue"], "") << query;
    EXPECT_FALSE(any["metadata"].contains("remainingItemCount")) << query;
  }
  // Without a limit, N is a lower bound: the latest state.
  EXPECT_EQ(names(Body(http_->Get(RoutesPath() + "?resourceVersion=" + at_b))),
            Names({"a", "b", "c"}));
  // A future N: 504 (kube passes etcd's future-revision error on as 500;
  // apiserver/README.md, "Differs on purpose").
  HttpResponse future = http_->Get(RoutesPath() + "?limit=1&resourceVersion=99999");
  EXPECT_EQ(future.code, 504) << future.body;
  // Once N is compacted the paged read at N is gone; the cache still answers.
  server_->Compact();
  HttpResponse gone = http_->Get(RoutesPath() + "?limit=1&resourceVersion=" + at_b);
  EXPECT_EQ(gone.code, 410) << gone.body;
  EXPECT_EQ(Body(gone)["reason"], "Expired");
  EXPECT_EQ(Body(gone)["message"], "The resourceVersion for the provided list is too old.");
  EXPECT_EQ(http_->Get(RoutesPath() + "?resourceVersion=" + at_b).code, 200);
}

TEST_F(ServerTest, UnknownFieldsArePrunedWarnedOrRefused) {
  json route = Route("a", "a.example.com");
  route["bogus"] = 1;
  route["status"] = {{"ingress", json::array()}};
  HttpResponse warned = Post(RoutesPath(), route);
  ASSERT_EQ(warned.code, 201) << warned.body;
  EXPECT_EQ(warned.headers["warning"], "299 - \"unknown field \\\"bogus\\\"\"");
  EXPECT_FALSE(Body(warned).contains("bogus"));
  route["metadata"]["name"] = "b";
  HttpResponse strict = Post(RoutesPath() + "?fieldValidation=Strict", route);
  EXPECT_EQ(strict.code, 400);
  EXPECT_EQ(Body(strict)["message"], "strict decoding error: unknown field \"bogus\"");
  HttpResponse ignored = Post(RoutesPath() + "?fieldValidation=Ignore", route);
  EXPECT_EQ(ignored.code, 201);
  EXPECT_EQ(ignored.headers.count("warning"), 0u);
  HttpResponse bad = Post(RoutesPath() + "?fieldValidation=Nope", route);
  EXPECT_EQ(bad.code, 422);
  EXPECT_EQ(Body(bad)["message"],
            "CreateOptions.meta.k8s.io \"\" is invalid: fieldValidation: Unsupported value: "
            "\"Nope\": supported values: \"\", \"Ignore\", \"Strict\", \"Warn\"");
  // spec keeps unknown fields (x-kubernetes-preserve-unknown-fields in deploy/crd).
  json spec_extra = Route("c", "c.example.com");
  spec_extra["spec"]["tls"] = {{"termination", "edge"}, {"extra", true}};
  EXPECT_EQ(
      Body(Post(RoutesPath() + "?fieldValidation=Strict", spec_extra))["spec"]["tls"]["extra"],
      true);
}

TEST_F(ServerTest, DeleteOptionsAreValidatedLikeKube) {
  MustCreate("a", "a.example.com");
  HttpResponse policy = http_->Request("DELETE", RoutesPath() + "/a?propagationPolicy=Nope");
  EXPECT_EQ(policy.code, 422);
  EXPECT_EQ(Body(policy)["message"],
            "DeleteOptions.meta.k8s.io \"\" is invalid: propagationPolicy: Unsupported value: "
            "\"Nope\": supported values: \"Foreground\", \"Background\", \"Orphan\", \"nil\"");
  HttpResponse both = http_->Request(
      "DELETE", RoutesPath() + "/a",
      R"({"kind":"DeleteOptions","apiVersion":"v1","orphanDependents":true,"propagationPolicy":"Orphan"})");
  EXPECT_EQ(both.code, 422);
  EXPECT_EQ(Body(both)["message"],
            "DeleteOptions.meta.k8s.io \"\" is invalid: propagationPolicy: Invalid value: "
            "\"Orphan\": orphanDependents and deletionPropagation cannot be both set");
  HttpResponse grace = http_->Request("DELETE", RoutesPath() + "/a?gracePeriodSeconds=soon");
  EXPECT_EQ(grace.code, 400);
  EXPECT_EQ(http_->Request("DELETE", RoutesPath() + "/a?propagationPolicy=Foreground").code, 200);
}

TEST_F(ServerTest, PrettyOutputAndAuditIdLikeKube) {
  HttpResponse plain = http_->Get("/api/v1/namespaces/team-a");
  EXPECT_EQ(plain.body.find('\n'), std::string::npos);
  EXPECT_EQ(plain.headers["cache-control"], "no-cache, private");
  EXPECT_EQ(plain.headers["audit-id"].size(), 36u);
  HttpResponse pretty = http_->Get("/api/v1/namespaces/team-a?pretty=true");
  EXPECT_NE(pretty.body.find("\n  \"kind\": \"Namespace\""), std::string::npos) << pretty.body;
  HttpResponse curl = http_->Request("GET", "/api/v1/namespaces/team-a", "", "application/json",
                                     {{"User-Agent", "curl/7.88.1"}, {"Audit-ID", "given-id"}});
  EXPECT_NE(curl.body.find("\n  \"kind\""), std::string::npos);
  EXPECT_EQ(curl.headers["audit-id"], "given-id");
  EXPECT_NE(http_->Get("/version").body.find("\n  \"major\""), std::string::npos);
}

TEST_F(FakeClockServerTest, BookmarksEveryMinuteAndTwoSecondsBeforeTheTimeout) {
  std::string rv = std::to_string(server_->store().CurrentRv());
  LineStream w(
      server_->port(),
      RoutesPath() + "?watch=1&allowWatchBookmarks=true&timeoutSeconds=150&resourceVersion=" + rv);
  ASSERT_EQ(w.code(), 200);
  // Why a change: kube bookmarks a watch only once its resource moved past
  // the version the watch began at (bookmark_test.cc).
  MustCreate("a", "a.example.com");
  EXPECT_EQ(Drain(w), std::vector<std::string>{"ADDED"});
  clock_.Advance(std::chrono::seconds(59));
  EXPECT_EQ(Drain(w), std::vector<std::string>{});
  clock_.Advance(std::chrono::seconds(1));
  EXPECT_EQ(Drain(w), std::vector<std::string>{"BOOKMARK"});  // 60 s
  clock_.Advance(std::chrono::seconds(60));
  EXPECT_EQ(Drain(w), std::vector<std::string>{"BOOKMARK"});  // 120 s
  clock_.Advance(std::chrono::seconds(28));
  EXPECT_EQ(Drain(w), std::vector<std::string>{"BOOKMARK"});  // 148 s = timeout - 2 s
  EXPECT_FALSE(w.ended());
  clock_.Advance(std::chrono::seconds(2));
  EXPECT_EQ(Drain(w), std::vector<std::string>{});
  EXPECT_TRUE(w.ended());
  // Without allowWatchBookmarks, none (though this watch, begun before the
  // route, would have one due 2 s before its timeout).
  LineStream quiet(server_->port(),
                   RoutesPath() + "?watch=1&timeoutSeconds=3&resourceVersion=" + rv);
  clock_.Advance(std::chrono::seconds(3));
  EXPECT_EQ(Drain(quiet), std::vector<std::string>{"ADDED"});
  EXPECT_TRUE(quiet.ended());
}

}  // namespace
}  // namespace routestatus::apiserver::testing
