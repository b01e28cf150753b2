// Conformance over real HTTP: list (selectors, pagination over a consistent
// snapshot, 410 for an expired continue) and watch (ordering, resume, 410
// ERROR events, bookmarks, timeoutSeconds, selector transitions).

#include <thread>

#include "test/apiserver/test_server.h"

namespace routestatus::apiserver::testing {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;

std::vector<std::string> Names(const json& list) {
  std::vector<std::string> names;
  for (const auto& item : list["items"]) names.push_back(item["metadata"]["name"]);
  return names;
}

json NextEvent(LineStream& s, milliseconds timeout = milliseconds(5000)) {
  while (true) {
    auto line = s.NextLine(timeout);
    if (!line) return nullptr;
    json e = json::parse(*line, nullptr, false);
    if (e.is_discarded() || e["type"] != "BOOKMARK") return e;
  }
}

TEST_F(ServerTest, ListWithSelectors) {
  MustCreate("a", "a.example.com", {{"app", "web"}, {"tier", "1"}});
  MustCreate("b", "b.example.com", {{"app", "api"}});
  MustCreate("c", "c.example.com");
  EXPECT_EQ(Names(Body(http_->Get(RoutesPath() + "?labelSelector=app%3Dweb"))),
            std::vector<std::string>({"a"}));
  EXPECT_EQ(Names(Body(http_->Get(RoutesPath() + "?labelSelector=app%20in%20(web,api)"))),
            std::vector<std::string>({"a", "b"}));
  EXPECT_EQ(Names(Body(http_->Get(RoutesPath() + "?labelSelector=!app"))),
            std::vector<std::string>({"c"}));
  EXPECT_EQ(Names(Body(http_->Get(RoutesPath() + "?labelSelector=app!%3Dweb"))),
            std::vector<std::string>({"b", "c"}));
  EXPECT_EQ(Names(Body(http_->Get("/apis/route.openshift.io/v1/routes?fieldSelector=metadata.name%3Db"))),
            std::vector<std::string>({"b"}));
  EXPECT_EQ(Names(Body(http_->Get("/apis/route.openshift.io/v1/routes?fieldSelector=metadata.namespace%3Dother"))),
            std::vector<std::string>());
  json list = Body(http_->Get("/apis/route.openshift.io/v1/routes"));
  EXPECT_EQ(list["kind"], "RouteList");
  EXPECT_EQ(list["metadata"]["resourceVersion"], std::to_string(server_->store().CurrentRv()));
}

TEST_F(ServerTest, PaginationIsConsistentWhileWritesHappen) {
  for (int i = 0; i < 25; ++i) {
    char name[16];
    snprintf(name, sizeof(name), "r%02d", i);
    MustCreate(name, std::string(name) + ".example.com");
  }
  json page = Body(http_->Get(RoutesPath() + "?limit=10"));
  std::vector<std::string> seen = Names(page);
  std::string snapshot_rv = page["metadata"]["resourceVersion"];
  // Writes after the first page: a delete, an update, a create.
  ASSERT_EQ(http_->Request("DELETE", RoutesPath() + "/r15").code, 200);
  MustCreate("r99", "r99.example.com");
  json r20 = Body(http_->Get(RoutesPath() + "/r20"));
  r20["spec"]["host"] = "changed.example.com";
  ASSERT_EQ(Put(RoutesPath() + "/r20", r20).code, 200);
  // A custom resource list always carries "continue" ("" on the last page).
  while (page["metadata"].value("continue", "") != "") {
    std::string token = page["metadata"]["continue"];
    page = Body(http_->Get(RoutesPath() + "?limit=10&continue=" + token));
    EXPECT_EQ(page["metadata"]["resourceVersion"], snapshot_rv);
    for (const auto& item : page["items"]) {
      seen.push_back(item["metadata"]["name"]);
      if (item["metadata"]["name"] == "r20") {
        EXPECT_EQ(item["spec"]["host"], "r20.example.com");
      }
    }
  }
  ASSERT_EQ(seen.size(), 25u);
  EXPECT_EQ(seen.front(), "r00");
  EXPECT_EQ(seen.back(), "r24");
  EXPECT_NE(std::find(seen.begin(), seen.end(), "r15"), seen.end());
}

// Where kube-apiserver 1.26 serves a list (the cacher's shouldDelegateList):
// "0" from the watch cache, its limit ignored (one page); a version without
// a limit from the watch cache; a limited version, "" or a continue token
// from storage; a continue token with a version is refused.
TEST_F(ServerTest, ListsAreServedWhereKubeApiserverServesThem) {
  for (int i = 0; i < 5; ++i) MustCreate("r" + std::to_string(i), "r" + std::to_string(i) + ".example.com");
  json cached = Body(http_->Get(RoutesPath() + "?resourceVersion=0&limit=2"));
  EXPECT_EQ(cached["items"].size(), 5u) << "the watch cache ignores the limit";
  // (a custom resource's list always carries "continue", empty on the last page)
  EXPECT_EQ(cached["metadata"].value("continue", ""), "");
  const std::string rv = cached["metadata"]["resourceVersion"];
  ASSERT_EQ(http_->Get(RoutesPath() + "?resourceVersion=" + rv).code, 200);
  EXPECT_EQ(server_->metrics().ListCount(ListSource::kWatchCache, "routes"), 2u);
  EXPECT_EQ(server_->metrics().ListCount(ListSource::kStorage, "routes"), 0u);
  json page = Body(http_->Get(RoutesPath() + "?limit=2"));
  ASSERT_TRUE(page["metadata"].contains("continue"));
  const std::string token = page["metadata"]["continue"];
  EXPECT_EQ(http_->Get(RoutesPath() + "?limit=2&resourceVersion=" + rv + "&continue=" + token).code,
            400);
  EXPECT_EQ(http_->Get(RoutesPath() + "?limit=2&continue=" + token).code, 200);
  EXPECT_EQ(server_->metrics().ListCount(ListSource::kStorage, "routes"), 2u);
}

TEST_F(ServerTest, ExpiredContinueIsGone) {
  for (int i = 0; i < 5; ++i) MustCreate("r" + std::to_string(i), "h" + std::to_string(i));
  json page = Body(http_->Get(RoutesPath() + "?limit=2"));
  MustCreate("late", "late.example.com");
  server_->Compact();
  HttpResponse r = http_->Get(RoutesPath() + "?limit=2&continue=" + page["metadata"]["continue"].get<std::string>());
  EXPECT_EQ(r.code, 410);
  EXPECT_EQ(Body(r)["reason"], "Expired");
  EXPECT_EQ(http_->Get(RoutesPath() + "?limit=2&continue=garbage").code, 400);
}

TEST_F(ServerTest, WatchDeliversOrderedEventsAndResumes) {
  json a = MustCreate("a", "a.example.com");
  std::string rv = a["metadata"]["resourceVersion"];
  LineStream w(server_->port(), RoutesPath() + "?watch=1&resourceVersion=" + rv);
  ASSERT_EQ(w.code(), 200);
  MustCreate("b", "b.example.com");
  json b = Body(http_->Get(RoutesPath() + "/b"));
  b["status"] = {{"ingress", json::array({{{"routerName", "r"}}})}};
  ASSERT_EQ(Put(RoutesPath() + "/b/status", b).code, 200);
  ASSERT_EQ(http_->Request("DELETE", RoutesPath() + "/a").code, 200);
  std::vector<std::string> got;
  uint64_t last = 0;
  for (int i = 0; i < 3; ++i) {
    json e = NextEvent(w);
    ASSERT_FALSE(e.is_null());
    got.push_back(e["type"].get<std::string>() + " " + e["object"]["metadata"]["name"].get<std::string>());
    uint64_t erv = std::stoull(e["object"]["metadata"]["resourceVersion"].get<std::string>());
    EXPECT_GT(erv, last);
    last = erv;
  }
  EXPECT_EQ(got, std::vector<std::string>({"ADDED b", "MODIFIED b", "DELETED a"}));
  // Resume from the middle replays only what came after.
  LineStream resume(server_->port(), RoutesPath() + "?watch=1&resourceVersion=" + std::to_string(last - 1));
  json e = NextEvent(resume);
  EXPECT_EQ(e["type"], "DELETED");
  EXPECT_EQ(e["object"]["metadata"]["name"], "a");
}

TEST_F(ServerTest, WatchWithoutVersionStartsWithCurrentState) {
  MustCreate("a", "a.example.com");
  LineStream w(server_->port(), RoutesPath() + "?watch=true");
  json e = NextEvent(w);
  EXPECT_EQ(e["type"], "ADDED");
  EXPECT_EQ(e["object"]["metadata"]["name"], "a");
}

// KEP-3157 as kube 1.27+ serves it: the current state as ADDED events, a
// bookmark annotated k8s.io/initial-events-end at its version, then the
// changes after it; counted as a watch list, not as a storage read.
TEST_F(ServerTest, WatchListStreamsTheStateThenEndsItWithAnAnnotatedBookmark) {
  MustCreate("a", "a.example.com");
  json b = MustCreate("b", "b.example.com");
  LineStream w(server_->port(), RoutesPath() +
                                    "?watch=1&sendInitialEvents=true&allowWatchBookmarks=true&"
                                    "resourceVersionMatch=NotOlderThan&resourceVersion=");
  ASSERT_EQ(w.code(), 200);
  std::vector<json> events;
  for (int i = 0; i < 3; ++i) {
    auto line = w.NextLine(milliseconds(5000));
    ASSERT_TRUE(line.has_value());
    events.push_back(json::parse(*line));
  }
  EXPECT_EQ(events[0]["type"], "ADDED");
  EXPECT_EQ(events[0]["object"]["metadata"]["name"], "a");
  EXPECT_EQ(events[1]["object"]["metadata"]["name"], "b");
  EXPECT_EQ(events[2]["type"], "BOOKMARK");
  EXPECT_EQ(events[2]["object"]["metadata"]["resourceVersion"], b["metadata"]["resourceVersion"]);
  EXPECT_EQ(events[2]["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"], "true");
  MustCreate("c", "c.example.com");
  json e = NextEvent(w);
  EXPECT_EQ(e["type"], "ADDED");
  EXPECT_EQ(e["object"]["metadata"]["name"], "c");
  EXPECT_EQ(server_->metrics().ListCount(ListSource::kWatchList, "routes"), 1u);
  EXPECT_EQ(server_->metrics().ListCount(ListSource::kStorage), 0u);
  ASSERT_EQ(http_->Get(RoutesPath() + "?limit=1").code, 200);
  ASSERT_EQ(http_->Get(RoutesPath() + "?resourceVersion=0").code, 200);
  EXPECT_EQ(server_->metrics().ListCount(ListSource::kStorage, "routes"), 1u);
  EXPECT_EQ(server_->metrics().ListCount(ListSource::kWatchCache, "routes"), 1u);
  std::string exposition = http_->Get("/metrics").body;
  EXPECT_NE(exposition.find("apiserver_storage_list_total{resource=\"routes.route.openshift.io\"} 1"),
            std::string::npos);
  EXPECT_NE(exposition.find("apiserver_cache_list_total{index=\"\",resource_prefix=\"/"
                            "route.openshift.io/routes\"} 1"),
            std::string::npos);
}

// validateWatchOptions of kube 1.27+: sendInitialEvents needs NotOlderThan
// and bookmarks; resourceVersionMatch on a watch needs sendInitialEvents.
TEST_F(ServerTest, WatchListOptionsAreValidatedLikeKube127) {
  auto message = [&](const std::string& query) {
    HttpResponse r = http_->Get(RoutesPath() + "?watch=1&" + query);
    EXPECT_EQ(r.code, 422) << query;
    return Body(r)["message"].get<std::string>();
  };
  EXPECT_EQ(message("sendInitialEvents=true&allowWatchBookmarks=true"),
            "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: "
            "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan");
  EXPECT_EQ(message("sendInitialEvents=true&resourceVersionMatch=NotOlderThan"),
            "ListOptions.meta.k8s.io \"\" is invalid: allowWatchBookmarks: Forbidden: "
            "sendInitialEvents requires setting allowWatchBookmarks to true");
  EXPECT_EQ(message("resourceVersionMatch=NotOlderThan&resourceVersion=1"),
            "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: "
            "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided");
}

class Kube126ServerTest : public ServerTest {
  ServerOptions Options() override {
    ServerOptions o = ServerTest::Options();
    o.watch_list = false;
    return o;
  }
};

// Without WatchList (kube 1.26) a watch list is refused as 1.26 refuses it.
TEST_F(Kube126ServerTest, WatchListIsRefusedAsKube126RefusesIt) {
  HttpResponse r = http_->Get(RoutesPath() +
                              "?watch=1&sendInitialEvents=true&allowWatchBookmarks=true&"
                              "resourceVersionMatch=NotOlderThan");
  EXPECT_EQ(r.code, 422);
  EXPECT_EQ(Body(r)["message"],
            "ListOptions.meta.k8s.io \"\" is invalid: [resourceVersionMatch: Forbidden: "
            "resourceVersionMatch is forbidden for watch, resourceVersionMatch: Forbidden: "
            "resourceVersionMatch is forbidden unless resourceVersion is provided]");
}

constexpr char kWatchListQuery[] =
    "?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&"
    "timeoutSeconds=5";

class Kube133ServerTest : public ServerTest {
  ServerOptions Options() override {
    ServerOptions o = ServerTest::Options();
    o.watch_list_answer = ServerOptions::WatchListAnswer::kGateOff;
    return o;
  }
};

// kube 1.33 (its WatchList gate off by default) refuses a watch list with
// the body test/apiserver/golden/kube-apiserver-1.32/watchlist-feature-gate-off.txt
// recorded; a plain watch is served.
TEST_F(Kube133ServerTest, WatchListIsRefusedAsAServerWithTheGateOffRefusesIt) {
  HttpResponse r = http_->Get(RoutesPath() + kWatchListQuery);
  EXPECT_EQ(r.code, 422);
  json body = Body(r);
  EXPECT_EQ(body["message"],
            "ListOptions.meta.k8s.io \"\" is invalid: sendInitialEvents: Forbidden: "
            "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled");
  EXPECT_EQ(body["reason"], "Invalid");
  ASSERT_EQ(body["details"]["causes"].size(), 1u);
  EXPECT_EQ(body["details"]["causes"][0]["field"], "sendInitialEvents");
  EXPECT_EQ(body["details"]["causes"][0]["reason"], "FieldValueForbidden");
  MustCreate("a", "a.example.com");
  LineStream w(server_->port(), RoutesPath() + "?watch=1&allowWatchBookmarks=true");
  EXPECT_EQ(w.code(), 200);
}

class OldEtcdServerTest : public ServerTest {
  ServerOptions Options() override {
    ServerOptions o = ServerTest::Options();
    o.watch_list_answer = ServerOptions::WatchListAnswer::kNoProgressNotify;
    return o;
  }
};

// kube 1.32 over an etcd without RequestWatchProgress accepts a watch list
// (200), sends one ERROR event with a 500 Status, and ends the stream
// (test/apiserver/golden/kube-apiserver-1.32/watchlist-etcd-3.4.23.txt); lists and
// watches from a version are served.
TEST_F(OldEtcdServerTest, WatchListGetsOneInternalErrorEventThenTheStreamEnds) {
  json a = MustCreate("a", "a.example.com");
  LineStream w(server_->port(), RoutesPath() + kWatchListQuery);
  ASSERT_EQ(w.code(), 200);
  auto line = w.NextLine(milliseconds(5000));
  ASSERT_TRUE(line.has_value());
  EXPECT_EQ(json::parse(*line),
            json::parse("{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\","
                        "\"metadata\":{},\"status\":\"Failure\",\"message\":\"a watch stream was "
                        "requested by the client but the required storage feature "
                        "RequestWatchProgress is disabled\",\"reason\":\"InternalError\",\"code\":500}}"));
  EXPECT_FALSE(w.NextLine(milliseconds(2000)).has_value());
  EXPECT_TRUE(w.ended());
  EXPECT_EQ(http_->Get(RoutesPath() + "?resourceVersion=0").code, 200);
  LineStream plain(server_->port(), RoutesPath() + "?watch=1&resourceVersion=" +
                                        a["metadata"]["resourceVersion"].get<std::string>());
  EXPECT_EQ(plain.code(), 200);
}

class Kube132ServerTest : public ServerTest {
  ServerOptions Options() override {
    ServerOptions o = ServerTest::Options();
    o.initial_events_blueprint = true;
    return o;
  }
};

// kube 1.32's end bookmark also carries the empty list, base64, exactly as
// test/apiserver/golden/kube-apiserver-1.32/watchlist-sample.txt recorded it.
TEST_F(Kube132ServerTest, TheEndBookmarkCarriesTheListBlueprint) {
  LineStream w(server_->port(), RoutesPath() + kWatchListQuery);
  ASSERT_EQ(w.code(), 200);
  auto line = w.NextLine(milliseconds(5000));
  ASSERT_TRUE(line.has_value());
  json e = json::parse(*line);
  ASSERT_EQ(e["type"], "BOOKMARK");
  const json& annotations = e["object"]["metadata"]["annotations"];
  EXPECT_EQ(annotations["k8s.io/initial-events-end"], "true");
  EXPECT_EQ(annotations["kubernetes.io/initial-events-list-blueprint"],
            "eyJhcGlWZXJzaW9uIjoicm91dGUub3BlbnNoaWZ0LmlvL3YxIiwiaXRlbXMiOltdLCJraW5kIjoiUm91dGVM"
            "aXN0In0K");
}

// A restart's start-up answers as kube-apiserver before its CRD informer
// has synced: routes 503 "server is starting" (Retry-After 10), /readyz 500;
// /version and namespaces are served. Then everything is.
TEST_F(ServerTest, ARestartStartsUpAsKubeApiserverDoes) {
  ASSERT_TRUE(server_->Restart(milliseconds(0), milliseconds(60000)).ok());
  HttpResponse r = http_->Get(RoutesPath());
  EXPECT_EQ(r.code, 503);
  EXPECT_EQ(Body(r)["message"], "server is starting");
  EXPECT_EQ(Body(r)["reason"], "ServiceUnavailable");
  EXPECT_EQ(Body(r)["details"]["retryAfterSeconds"], 10);
  EXPECT_EQ(http_->Get("/readyz").code, 500);
  EXPECT_EQ(http_->Get("/version").code, 200);
  EXPECT_EQ(http_->Get("/api/v1/namespaces").code, 200);
  ASSERT_TRUE(server_->Restart(milliseconds(0), milliseconds(0)).ok());
  EXPECT_EQ(http_->Get(RoutesPath()).code, 200);
  EXPECT_EQ(http_->Get("/readyz").code, 200);
}

TEST_F(ServerTest, WatchFromCompactedVersionGetsGoneErrorEvent) {
  json a = MustCreate("a", "a.example.com");
  MustCreate("b", "b.example.com");
  server_->Compact();
  LineStream w(server_->port(), RoutesPath() + "?watch=1&resourceVersion=" +
                                    a["metadata"]["resourceVersion"].get<std::string>());
  ASSERT_EQ(w.code(), 200);
  json e = NextEvent(w);
  ASSERT_EQ(e["type"], "ERROR");
  EXPECT_EQ(e["object"]["kind"], "Status");
  EXPECT_EQ(e["object"]["code"], 410);
  EXPECT_EQ(e["object"]["reason"], "Expired");
  EXPECT_EQ(e["object"]["message"].get<std::string>().rfind("too old resource version: ", 0), 0u);
  EXPECT_FALSE(w.NextLine(milliseconds(2000)).has_value());
  EXPECT_TRUE(w.ended());
}

// A bookmark carries the latest version of its resource, moved by routes
// the watch does not select, but not by other resources (kube's watch cache
// keeps one version per resource; bookmark_test.cc has the rest).
TEST_F(ServerTest, BookmarksCarryTheLatestVersionOfTheirResource) {
  json a = MustCreate("a", "a.example.com");
  ASSERT_TRUE(server_->CreateNamespace("other").ok());
  HttpResponse b = Post(RoutesPath("other"), Route("b", "b.example.com"));
  ASSERT_EQ(b.code, 201) << b.body;
  ASSERT_TRUE(server_->CreateNamespace("more").ok());  // not a route: not in the bookmark
  LineStream w(server_->port(), RoutesPath() + "?watch=1&allowWatchBookmarks=true&resourceVersion=" +
                                    a["metadata"]["resourceVersion"].get<std::string>());
  auto line = w.NextLine(milliseconds(3000));
  ASSERT_TRUE(line.has_value());
  json e = json::parse(*line);
  EXPECT_EQ(e["type"], "BOOKMARK");
  EXPECT_EQ(e["object"]["kind"], "Route");
  EXPECT_EQ(e["object"]["metadata"]["resourceVersion"], Body(b)["metadata"]["resourceVersion"]);
  EXPECT_LT(std::stoull(e["object"]["metadata"]["resourceVersion"].get<std::string>()),
            server_->store().CurrentRv());
}

TEST_F(ServerTest, WatchEndsAfterTimeoutSeconds) {
  auto start = std::chrono::steady_clock::now();
  LineStream w(server_->port(), RoutesPath() + "?watch=1&timeoutSeconds=1&resourceVersion=1");
  EXPECT_FALSE(w.NextLine(milliseconds(5000)).has_value());
  EXPECT_TRUE(w.ended());
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_GE(took, milliseconds(900));
  EXPECT_LT(took, milliseconds(4000));
}

TEST_F(ServerTest, WatchSelectorTransitionsAreAddedAndDeleted) {
  json a = MustCreate("a", "a.example.com", {{"shard", "x"}});
  LineStream w(server_->port(), RoutesPath() + "?watch=1&labelSelector=shard%3Dx&resourceVersion=" +
                                    a["metadata"]["resourceVersion"].get<std::string>());
  auto patch = [&](const std::string& value) {
    ASSERT_EQ(http_->Request("PATCH", RoutesPath() + "/a",
                             R"({"metadata":{"labels":{"shard":")" + value + R"("}}})",
                             "application/merge-patch+json").code, 200);
  };
  patch("y");
  patch("z");
  patch("x");
  EXPECT_EQ(NextEvent(w)["type"], "DELETED");
  EXPECT_EQ(NextEvent(w)["type"], "ADDED");
}

TEST_F(ServerTest, CloseAllWatchesEndsStreams) {
  LineStream w(server_->port(), RoutesPath() + "?watch=1&resourceVersion=1");
  ASSERT_EQ(w.code(), 200);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (server_->OpenWatches() == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  ASSERT_EQ(http_->Request("POST", "/admin/close-watches").code, 200);
  EXPECT_FALSE(w.NextLine(milliseconds(3000)).has_value());
  EXPECT_TRUE(w.ended());
}

}  // namespace
}  // namespace routestatus::apiserver::testing
