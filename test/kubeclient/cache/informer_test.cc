#include "kubeclient/cache/informer.h"

#include <algorithm>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <glog/logging.h>
#include <gtest/gtest.h>

#include "test/kubeclient/cache/fake_kube_client.h"
#include "test/testing/fake_clock.h"

namespace routestatus::kubeclient::cache {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::FakeKubeClient;
using testing::MakeNamespaceJson;
using testing::MakeRouteJson;
using testing::WatchScript;

// Records handler calls as text: "add ns/a 5 initial", "update ns/a 5->6",
// "delete ns/a 6".
class Recorder final : public EventHandler<Route> {
 public:
  void OnAdd(const Ptr& obj, bool initial) override {
    log.push_back("add " + obj->Key() + " " + obj->metadata.resource_version +
                  (initial ? " initial" : ""));
    if (on_event) on_event();
  }
  void OnUpdate(const Ptr& o, const Ptr& n) override {
    log.push_back("update " + n->Key() + " " + o->metadata.resource_version + "->" +
                  n->metadata.resource_version);
    if (on_event) on_event();
  }
  void OnDelete(const Ptr& last) override {
    log.push_back("delete " + last->Key() + " " + last->metadata.resource_version);
    if (on_event) on_event();
  }
  std::vector<std::string> log;
  std::function<void()> on_event;  // after each call, when set
};

WatchEvent Event(WatchEventType type, nlohmann::json object) {
  WatchEvent e;
  e.type = type;
  e.object = std::move(object);
  return e;
}

WatchEvent Bookmark(int64_t rv) {
  return Event(WatchEventType::kBookmark,
               {{"kind", "Route"}, {"metadata", {{"resourceVersion", std::to_string(rv)}}}});
}

WatchEvent GoneEvent() {
  return Event(WatchEventType::kError, {{"kind", "Status"},
                                        {"status", "Failure"},
                                        {"reason", "Expired"},
                                        {"message", "too old resource version"},
                                        {"code", 410}});
}

class InformerTest : public ::testing::Test {
 protected:
  InformerTest() {
    options_.name = "routes";
    options_.watch_timeout_min = seconds(300);
    options_.watch_timeout_max = seconds(600);
  }

  void AddServerRoute(const std::string& ns, const std::string& name, int64_t rv,
                      const std::string& host = "") {
    client_.SetObject(ns + "/" + name, MakeRouteJson(ns, name, rv, host));
  }

  // The cache's keys with their resourceVersions, sorted.
  static std::vector<std::string> CacheContent(const RouteInformer& inf) {
    std::vector<std::string> out;
    for (const auto& r : inf.List()) out.push_back(r->Key() + "@" + r->metadata.resource_version);
    std::sort(out.begin(), out.end());
    return out;
  }

  ::routestatus::testing::FakeClock clock_;
  FakeKubeClient client_;
  InformerOptions options_;
  Recorder recorder_;
};

TEST_F(InformerTest, InitialListIsPaginatedAndSyncs) {
  for (int i = 0; i < 1200; ++i) AddServerRoute("ns", "r" + std::to_string(i), 10);
  client_.SetListResourceVersion(50);
  client_.AddWatch(WatchScript{});
  RouteInformer inf(client_, clock_, options_);
  inf.AddEventHandler(&recorder_);
  EXPECT_FALSE(inf.HasSynced());
  EXPECT_EQ(inf.reflector().Step(), Duration::zero());
  EXPECT_TRUE(inf.HasSynced());
  EXPECT_EQ(client_.list_calls(), 3);  // 500 + 500 + 200
  EXPECT_EQ(inf.List().size(), 1200u);
  ASSERT_EQ(recorder_.log.size(), 1200u);
  EXPECT_EQ(recorder_.log[0].substr(recorder_.log[0].size() - 7), "initial");
  ASSERT_NE(inf.Get("ns/r7"), nullptr);
  EXPECT_EQ(inf.Get("ns/r7")->spec.host, "r7.ns.example.com");
  // The watch starts at the list's version.
  inf.reflector().Step();
  ASSERT_EQ(client_.watch_calls().size(), 1u);
  EXPECT_EQ(client_.watch_calls()[0].resource_version, "50");
  EXPECT_TRUE(client_.watch_calls()[0].allow_bookmarks);
}

WatchEvent InitialEventsEnd(int64_t rv) {
  WatchEvent e = Bookmark(rv);
  e.object["metadata"]["annotations"] = {{"k8s.io/initial-events-end", "true"}};
  return e;
}

// A watch list: the initial state streams in, the end bookmark syncs the
// cache at its version, and the same watch goes on (no list request, no
// second watch); a repeat of a streamed version is still ignored.
TEST_F(InformerTest, StreamedInitialEventsSyncAndTheSameWatchGoesOn) {
  options_.stream_initial_events = true;
  AddServerRoute("ns", "never-listed", 3);
  WatchScript w;
  w.events = {Event(WatchEventType::kAdded, MakeRouteJson("ns", "a", 5)),
              Event(WatchEventType::kAdded, MakeRouteJson("ns", "b", 7)), InitialEventsEnd(9),
              Event(WatchEventType::kModified, MakeRouteJson("ns", "b", 7)),
              Event(WatchEventType::kModified, MakeRouteJson("ns", "a", 10))};
  client_.AddWatch(w);
  client_.AddWatch(WatchScript{});
  RouteInformer inf(client_, clock_, options_);
  inf.AddEventHandler(&recorder_);
  EXPECT_EQ(inf.reflector().Step(), Duration::zero());
  EXPECT_TRUE(inf.HasSynced());
  EXPECT_EQ(client_.list_calls(), 0);
  EXPECT_EQ(CacheContent(inf), (std::vector<std::string>{"ns/a@5", "ns/b@7"}));
  ASSERT_EQ(client_.watch_calls().size(), 1u);
  EXPECT_TRUE(client_.watch_calls()[0].send_initial_events);
  EXPECT_TRUE(client_.watch_calls()[0].allow_bookmarks);
  EXPECT_EQ(client_.watch_calls()[0].resource_version, "");
  inf.reflector().Step();  // the rest of the same stream
  EXPECT_EQ(client_.watch_calls().size(), 1u);
  std::vector<std::string> log = recorder_.log;
  std::sort(log.begin(), log.end());  // Why: a list's adds come in no particular order
  EXPECT_EQ(log, (std::vector<std::string>{"add ns/a 5 initial", "add ns/b 7 initial",
                                           "update ns/a 5->10"}));
  InformerStats s = inf.Stats();
  EXPECT_EQ(s.streamed_lists, 1u);
  EXPECT_EQ(s.stale_events_ignored, 1u);
  EXPECT_FALSE(s.streaming_paused);
  EXPECT_EQ(s.initial_states[static_cast<size_t>(InitialStateSource::kStreamed)], 1u);
  inf.reflector().Step();  // the stream closed: resume after the newest version
  ASSERT_EQ(client_.watch_calls().size(), 2u);
  EXPECT_FALSE(client_.watch_calls()[1].send_initial_events);
  EXPECT_EQ(client_.watch_calls()[1].resource_version, "10");
}

// kube-apiserver 1.26 answers the watch list 422 ("resourceVersionMatch is
// forbidden for watch"): page through lists, then and on every relist for
// stream_retry_after; the first relist after that streams again.
TEST_F(InformerTest, RefusedWatchListFallsBackToListsUntilTheRetryInterval) {
  options_.stream_initial_events = true;
  for (int i = 0; i < 600; ++i) AddServerRoute("ns", "r" + std::to_string(i), 10);
  client_.SetListResourceVersion(50);
  WatchScript refused;
  refused.open_error = Status(StatusCode::kInvalid,
                              "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: "
                              "Forbidden: resourceVersionMatch is forbidden for watch");
  client_.AddWatch(refused);
  WatchScript gone;
  gone.events = {GoneEvent()};
  client_.AddWatch(gone);
  client_.AddWatch(WatchScript{});
  RouteInformer inf(client_, clock_, options_);
  EXPECT_EQ(inf.reflector().Step(), Duration::zero());
  EXPECT_TRUE(inf.HasSynced());
  EXPECT_EQ(client_.list_calls(), 2);
  EXPECT_EQ(inf.List().size(), 600u);
  EXPECT_TRUE(inf.Stats().streaming_paused);
  EXPECT_EQ(inf.Stats().stream_fallbacks[static_cast<size_t>(StreamFallback::kRefused)], 1u);
  inf.reflector().Step();  // 410: relist
  inf.reflector().Step();  // paged again, no second watch-list attempt
  EXPECT_EQ(client_.list_calls(), 4);
  auto calls = client_.watch_calls();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_FALSE(calls[1].send_initial_events);
  EXPECT_EQ(inf.Stats().streamed_lists, 0u);
  // Ten minutes on (the server upgraded meanwhile), the next relist streams.
  clock_.Advance(options_.stream_retry_after);
  inf.reflector().Step();  // the third script: a watch that closes at once
  WatchScript gone_again;
  gone_again.events = {GoneEvent()};
  client_.AddWatch(gone_again);
  WatchScript streams;
  streams.events = {Event(WatchEventType::kAdded, MakeRouteJson("ns", "r1", 10)),
                    InitialEventsEnd(60)};
  client_.AddWatch(streams);
  inf.reflector().Step();  // 410
  inf.reflector().Step();  // the relist: streamed
  EXPECT_EQ(client_.list_calls(), 4);
  calls = client_.watch_calls();
  ASSERT_EQ(calls.size(), 5u);
  EXPECT_TRUE(calls[4].send_initial_events);
  EXPECT_EQ(inf.Stats().streamed_lists, 1u);
  EXPECT_FALSE(inf.Stats().streaming_paused);
  EXPECT_EQ(CacheContent(inf), std::vector<std::string>{"ns/r1@10"});
}

// Counts the glog lines that say the server does not stream initial
// events, by severity.
class FallbackLogSink : public google::LogSink {
 public:
  using google::LogSink::send;
  void send(google::LogSeverity severity, const char*, const char*, int,
            const google::LogMessageTime&, const char* message, size_t len) override {
    if (std::string(message, len).find("did not stream the initial state") == std::string::npos) {
      return;
    }
    std::lock_guard<std::mutex> l(mu_);
    ++by_severity_[severity];
  }
  int Count(google::LogSeverity severity) {
    std::lock_guard<std::mutex> l(mu_);
    return by_severity_[severity];
  }

 private:
  std::mutex mu_;
  std::map<google::LogSeverity, int> by_severity_;
};

// Issue 43: against kube 1.26 (the normal case) the fallback is one INFO
// line a process, never a WARNING, however many informers meet it. At most
// one: an earlier test of this process may have logged it already.
TEST_F(InformerTest, TheFallbackToPagedListsIsLoggedOnceAtInfo) {
  options_.stream_initial_events = true;
  FallbackLogSink sink;
  google::AddLogSink(&sink);
  for (int i = 0; i < 2; ++i) {
    WatchScript refused;
    refused.open_error = Status(StatusCode::kInvalid, "resourceVersionMatch is forbidden for watch");
    client_.AddWatch(refused);
    RouteInformer inf(client_, clock_, options_);
    EXPECT_EQ(inf.reflector().Step(), Duration::zero());  // refused, then a paged list
    EXPECT_TRUE(inf.Stats().streaming_paused);
  }
  google::RemoveLogSink(&sink);
  EXPECT_EQ(sink.Count(google::GLOG_WARNING), 0);
  EXPECT_LE(sink.Count(google::GLOG_INFO), 1);
}

// A server that ignores sendInitialEvents sends a plain bookmark (or a
// change) before any end marker: it does not stream; page instead.
TEST_F(InformerTest, BookmarkWithoutTheEndMarkerMeansNoStreaming) {
  options_.stream_initial_events = true;
  AddServerRoute("ns", "a", 5);
  client_.SetListResourceVersion(8);
  WatchScript ignored;
  ignored.events = {Event(WatchEventType::kAdded, MakeRouteJson("ns", "a", 5)), Bookmark(8)};
  client_.AddWatch(ignored);
  client_.AddWatch(WatchScript{});
  RouteInformer inf(client_, clock_, options_);
  EXPECT_EQ(inf.reflector().Step(), Duration::zero());
  EXPECT_TRUE(inf.HasSynced());
  EXPECT_EQ(client_.list_calls(), 1);
  EXPECT_TRUE(inf.Stats().streaming_paused);
  EXPECT_EQ(inf.Stats().stream_fallbacks[static_cast<size_t>(StreamFallback::kNoEndBookmark)], 1u);
  EXPECT_EQ(CacheContent(inf), std::vector<std::string>{"ns/a@5"});
}

// Issue 24: a continue token that expires in the middle of a slow
// paginated list (410 Expired on a continue page) gets one full list, as
// client-go's pager does (FullListIfExpired), instead of a retry of the
// same paginated list for ever.
TEST_F(InformerTest, ExpiredContinueTokenFallsBackToOneFullList) {
  for (int i = 0; i < 1200; ++i) AddServerRoute("ns", "r" + std::to_string(i), 10);
  client_.SetListResourceVersion(50);
  client_.ExpireNextContinues(1000);  // every continue page expires
  RouteInformer inf(client_, clock_, options_);
  inf.AddEventHandler(&recorder_);
  Status s = inf.reflector().ListAndReplace();
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(inf.HasSynced());
  EXPECT_EQ(inf.List().size(), 1200u);
  EXPECT_EQ(recorder_.log.size(), 1200u) << "the first page's objects are not added twice";
  auto calls = client_.list_options();
  ASSERT_EQ(calls.size(), 3u);  // page 1, the expired page 2, the full list
  EXPECT_EQ(calls[0].limit, 500);
  EXPECT_FALSE(calls[1].continue_token.empty());
  EXPECT_EQ(calls[2].limit, 0);
  EXPECT_TRUE(calls[2].continue_token.empty());
}

TEST_F(InformerTest, ClosedWatchResumesFromNewestVersionWithoutRelist) {
  AddServerRoute("ns", "a", 5);
  client_.SetListResourceVersion(10);
  WatchScript w1;
  w1.events = {Event(WatchEventType::kAdded, MakeRouteJson("ns", "b", 11)),
               Event(WatchEventType::kModified, MakeRouteJson("ns", "a", 12))};
  client_.AddWatch(w1);
  WatchScript w2;
  w2.events = {Event(WatchEventType::kDeleted, MakeRouteJson("ns", "b", 13))};
  w2.end = Status(StatusCode::kUnavailable, "connection reset");
  client_.AddWatch(w2);
  client_.AddWatch(WatchScript{});
  RouteInformer inf(client_, clock_, options_);
  inf.AddEventHandler(&recorder_);
  inf.reflector().Step();  // list
  EXPECT_EQ(inf.reflector().Step(), Duration::zero()) << "a normal close resumes at once";
  inf.reflector().Step();  // w2: error after an event: backoff, then resume
  inf.reflector().Step();
  auto calls = client_.watch_calls();
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[0].resource_version, "10");
  EXPECT_EQ(calls[1].resource_version, "12");
  EXPECT_EQ(calls[2].resource_version, "13");
  EXPECT_EQ(client_.list_calls(), 1);
  EXPECT_EQ(recorder_.log, (std::vector<std::string>{"add ns/a 5 initial", "add ns/b 11",
                                                     "update ns/a 5->12", "delete ns/b 11"}));
  EXPECT_EQ(CacheContent(inf), std::vector<std::string>{"ns/a@12"});
  InformerStats s = inf.Stats();
  EXPECT_EQ(s.relists, 0u);
  EXPECT_EQ(s.watch_restarts, 2u);
  EXPECT_EQ(s.events_added, 1u);
  EXPECT_EQ(s.events_modified, 1u);
  EXPECT_EQ(s.events_deleted, 1u);
  EXPECT_EQ(s.resource_version, "13");
}

TEST_F(InformerTest, BookmarksAdvanceTheResumeVersion) {
  client_.SetListResourceVersion(10);
  WatchScript w1;
  w1.events = {Bookmark(20), Bookmark(25)};
  client_.AddWatch(w1);
  client_.AddWatch(WatchScript{});
  RouteInformer inf(client_, clock_, options_);
  inf.reflector().Step();
  inf.reflector().Step();
  inf.reflector().Step();
  ASSERT_EQ(client_.watch_calls().size(), 2u);
  EXPECT_EQ(client_.watch_calls()[1].resource_version, "25");
  EXPECT_EQ(inf.Stats().events_bookmark, 2u);
}

TEST_F(InformerTest, GoneEventRelistsAndReplacesCache) {
  AddServerRoute("ns", "a", 5);
  AddServerRoute("ns", "b", 6);
  AddServerRoute("ns", "c", 7);
  client_.SetListResourceVersion(10);
  WatchScript w1;
  w1.events = {GoneEvent()};
  client_.AddWatch(w1);
  RouteInformer inf(client_, clock_, options_);
  inf.AddEventHandler(&recorder_);
  inf.reflector().Step();
  recorder_.log.clear();
  // While we were away: a deleted, b changed, c unchanged, d created.
  client_.RemoveObject("ns/a");
  AddServerRoute("ns", "b", 30);
  AddServerRoute("ns", "d", 31);
  client_.SetListResourceVersion(40);
  EXPECT_TRUE(inf.IsCurrent());
  inf.reflector().Step();  // watch -> 410
  EXPECT_TRUE(inf.reflector().NeedsList());
  // Synced, but the changes since version 10 are lost until the relist.
  EXPECT_TRUE(inf.HasSynced());
  EXPECT_FALSE(inf.IsCurrent());
  std::vector<bool> current_in_handler;
  recorder_.on_event = [&] { current_in_handler.push_back(inf.IsCurrent()); };
  inf.reflector().Step();  // relist
  EXPECT_TRUE(inf.IsCurrent());
  EXPECT_EQ(current_in_handler, std::vector<bool>(3, true)) << "handlers' work finds it current";
  // Why not "initial": only the first list is; an object a relist adds is
  // new to the handlers (the controller fans out its host claims).
  EXPECT_EQ(recorder_.log, (std::vector<std::string>{"delete ns/a 5", "update ns/b 6->30",
                                                     "add ns/d 31"}));
  EXPECT_EQ(CacheContent(inf), (std::vector<std::string>{"ns/b@30", "ns/c@7", "ns/d@31"}));
  EXPECT_EQ(inf.Stats().relists, 1u);
  client_.AddWatch(WatchScript{});
  inf.reflector().Step();
  EXPECT_EQ(client_.watch_calls().back().resource_version, "40");
}

// Issue 44: lists as client-go's reflector makes them. The first asks the
// API server's watch cache (resourceVersion "0": no storage read); a relist
// after a 410 asks for at least what we have seen (the last version, no
// limit: the cache serves it, never older); storage (resourceVersion "",
// paged) only when the cache cannot serve that version.
TEST_F(InformerTest, ListsAskTheWatchCacheAndNeverGoBackInTime) {
  AddServerRoute("ns", "a", 5);
  client_.SetListResourceVersion(10);
  WatchScript w1;
  w1.events = {Event(WatchEventType::kModified, MakeRouteJson("ns", "a", 12)), GoneEvent()};
  client_.AddWatch(w1);
  RouteInformer inf(client_, clock_, options_);
  inf.reflector().Step();  // list
  inf.reflector().Step();  // watch: 12, then 410
  client_.SetListResourceVersion(20);
  inf.reflector().Step();  // relist
  auto calls = client_.list_options();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].resource_version, "0");
  EXPECT_EQ(calls[0].limit, 500);
  EXPECT_EQ(calls[1].resource_version, "12") << "not older than what we have seen";
  EXPECT_EQ(calls[1].limit, 0) << "a limit would send it to storage";
}

TEST_F(InformerTest, AVersionTheCacheCannotServeIsListedFromStorage) {
  AddServerRoute("ns", "a", 5);
  client_.SetListResourceVersion(10);
  WatchScript w1;
  w1.events = {GoneEvent()};
  client_.AddWatch(w1);
  WatchScript w2;
  w2.events = {GoneEvent()};
  client_.AddWatch(w2);
  RouteInformer inf(client_, clock_, options_);
  inf.reflector().Step();  // list "0"
  inf.reflector().Step();  // watch -> 410
  client_.FailNextLists({Status(StatusCode::kTimeout, "Too large resource version", std::nullopt,
                                504)});
  inf.reflector().Step();  // relist at "10": 504, then from storage
  auto calls = client_.list_options();
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[1].resource_version, "10");
  EXPECT_EQ(calls[2].resource_version, "");
  EXPECT_EQ(calls[2].limit, 500);
  EXPECT_FALSE(inf.reflector().NeedsList());
  // The next relist asks the cache again.
  inf.reflector().Step();  // watch -> 410
  inf.reflector().Step();
  calls = client_.list_options();
  ASSERT_EQ(calls.size(), 4u);
  EXPECT_EQ(calls[3].resource_version, "10");
}

// A server that pages a list asked of its watch cache has the cache off:
// relists page too, and a continue token never carries a version.
TEST_F(InformerTest, AServerThatPagesCachedListsIsPagedFromThenOn) {
  for (int i = 0; i < 700; ++i) AddServerRoute("ns", "r" + std::to_string(i), 5);
  client_.SetListResourceVersion(10);
  WatchScript w1;
  w1.events = {GoneEvent()};
  client_.AddWatch(w1);
  RouteInformer inf(client_, clock_, options_);
  inf.reflector().Step();
  inf.reflector().Step();  // watch -> 410
  inf.reflector().Step();
  auto calls = client_.list_options();
  ASSERT_EQ(calls.size(), 4u);
  EXPECT_EQ(calls[1].resource_version, "");
  EXPECT_FALSE(calls[1].continue_token.empty());
  EXPECT_EQ(calls[2].resource_version, "10");
  EXPECT_EQ(calls[2].limit, 500);
  EXPECT_EQ(calls[3].resource_version, "");
  EXPECT_EQ(inf.List().size(), 700u);
}

TEST_F(InformerTest, GoneOnWatchOpenRelists) {
  client_.SetListResourceVersion(10);
  WatchScript w1;
  w1.open_error = Status(StatusCode::kGone, "too old resource version");
  client_.AddWatch(w1);
  RouteInformer inf(client_, clock_, options_);
  inf.reflector().Step();
  inf.reflector().Step();
  EXPECT_TRUE(inf.reflector().NeedsList());
  inf.reflector().Step();
  EXPECT_EQ(client_.list_calls(), 2);
  EXPECT_FALSE(inf.reflector().NeedsList());
}

Status Refused() { return Status(StatusCode::kUnavailable, "GET /apis: Connection refused"); }

// Issue 15: an API server restart. While the server refuses connections the
// watch is retried at most reconnect.max (500 ms) apart however long the
// outage, so the informer finds the server within that of its return; the
// restarted server's 410 (fresh watch cache) is an answer: relist now.
TEST_F(InformerTest, RestartedServerIsFoundWithinReconnectMaxAndItsGoneRelistsAtOnce) {
  AddServerRoute("ns", "a", 5);
  client_.SetListResourceVersion(10);
  WatchScript healthy;
  healthy.events = {Bookmark(11)};  // then the server goes down: closed
  client_.AddWatch(healthy);
  WatchScript refused;
  refused.open_error = Refused();
  for (int i = 0; i < 20; ++i) client_.AddWatch(refused);
  WatchScript gone;
  gone.events = {GoneEvent()};
  client_.AddWatch(gone);
  RouteInformer inf(client_, clock_, options_);
  inf.reflector().Step();
  EXPECT_EQ(inf.reflector().Step(), Duration::zero());
  Duration outage{0};
  for (int i = 0; i < 20; ++i) {
    Duration d = inf.reflector().Step();
    EXPECT_GT(d, Duration::zero()) << "attempt " << i;
    EXPECT_LE(d, options_.reconnect.max) << "attempt " << i;
    outage += d;
  }
  EXPECT_GE(outage, milliseconds(200 + 400 + 18 * 500)) << "no hot loop";
  EXPECT_EQ(inf.reflector().Step(), Duration::zero()) << "410 after the outage: relist now";
  EXPECT_TRUE(inf.reflector().NeedsList());
  EXPECT_EQ(inf.reflector().Step(), Duration::zero());
  EXPECT_EQ(inf.Stats().relists, 1u);
  EXPECT_EQ(inf.Stats().watch_failures, 20u);
  EXPECT_EQ(client_.watch_calls().back().resource_version, "11");
}

// The guard the 410 fast path keeps: a server that expires the watch right
// after every relist gets a doubling backoff, not a relist loop.
TEST_F(InformerTest, GoneRightAfterEveryRelistBacksOff) {
  client_.SetListResourceVersion(10);
  WatchScript gone;
  gone.events = {GoneEvent()};
  for (int i = 0; i < 5; ++i) client_.AddWatch(gone);
  RouteInformer inf(client_, clock_, options_);
  Duration total{0};
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(inf.reflector().Step(), Duration::zero()) << "list " << i;
    Duration d = inf.reflector().Step();
    EXPECT_GT(d, Duration::zero()) << "410 right after relist " << i;
    total += d;
  }
  EXPECT_GE(total, milliseconds(200 + 400 + 800 + 1600 + 3200));
  EXPECT_EQ(client_.list_calls(), 5);
}

// Issue 23 (simulator outage seed 29699616751385): namespace lists were
// forbidden for 30 s, so the backoff had grown to its cap; the list that
// finally succeeded was followed at once by a compaction's 410, and the
// guard above drew its delay from that grown backoff: the cache stayed 20 s
// behind (the replica then took over removals computed from old labels).
// A list the server answered ends the failures' backoff; only 410s right
// after relists grow the guard's own.
TEST_F(InformerTest, GoneRightAfterAListThatEndedFailuresRelistsSoon) {
  client_.SetListResourceVersion(10);
  const Status forbidden(StatusCode::kForbidden, "namespaces is forbidden");
  client_.FailNextLists(std::vector<Status>(10, forbidden));
  WatchScript gone;
  gone.events = {GoneEvent()};
  client_.AddWatch(gone);
  RouteInformer inf(client_, clock_, options_);
  Duration last{0};
  for (int i = 0; i < 10; ++i) last = inf.reflector().Step();
  EXPECT_GE(last, seconds(10)) << "ten failed lists grew the backoff";
  EXPECT_EQ(inf.reflector().Step(), Duration::zero()) << "the list succeeds";
  Duration after_gone = inf.reflector().Step();
  EXPECT_GT(after_gone, Duration::zero()) << "410 right after the relist: the guard still waits";
  EXPECT_LE(after_gone, milliseconds(300)) << "but from its own first step, not the list's backoff";
  EXPECT_EQ(inf.reflector().Step(), Duration::zero()) << "relisted";
  EXPECT_FALSE(inf.reflector().NeedsList());
}

// An outage right after a relist explains the 410 that follows it.
TEST_F(InformerTest, GoneAfterAnOutageRightAfterARelistRelistsAtOnce) {
  client_.SetListResourceVersion(10);
  WatchScript refused;
  refused.open_error = Refused();
  client_.AddWatch(refused);
  client_.AddWatch(refused);
  WatchScript gone;
  gone.events = {GoneEvent()};
  client_.AddWatch(gone);
  RouteInformer inf(client_, clock_, options_);
  inf.reflector().Step();
  EXPECT_LE(inf.reflector().Step(), options_.reconnect.max);
  EXPECT_LE(inf.reflector().Step(), options_.reconnect.max);
  EXPECT_EQ(inf.reflector().Step(), Duration::zero());
  EXPECT_TRUE(inf.reflector().NeedsList());
}

// Lists refused (start-up during an outage) follow the reconnect schedule;
// lists the server fails (5xx) keep the doubling backoff.
TEST_F(InformerTest, RefusedListsRetryWithinReconnectMaxServerErrorsBackOff) {
  client_.FailNextLists(std::vector<Status>(8, Refused()));
  RouteInformer inf(client_, clock_, options_);
  for (int i = 0; i < 8; ++i) EXPECT_LE(inf.reflector().Step(), options_.reconnect.max);
  EXPECT_EQ(inf.reflector().Step(), Duration::zero());
  EXPECT_TRUE(inf.HasSynced());
  client_.FailNextLists(std::vector<Status>(8, StatusFromResponse(503, "")));
  RouteInformer other(client_, clock_, options_);
  Duration last{0};
  for (int i = 0; i < 8; ++i) last = other.reflector().Step();
  EXPECT_GE(last, seconds(12)) << "the 8th doubling of 200 ms";
}

// The stale-event guard matches versions, never orders them: a watch
// delivers in the server's order, so an event is newer than the cache unless
// it repeats a version already applied.
TEST_F(InformerTest, RepeatedVersionsDoNotResurrectOrRollBack) {
  AddServerRoute("ns", "a", 10);
  AddServerRoute("ns", "b", 11);
  client_.SetListResourceVersion(20);
  WatchScript w1;
  w1.events = {Event(WatchEventType::kModified, MakeRouteJson("ns", "a", 10)),  // duplicate
               Event(WatchEventType::kDeleted, MakeRouteJson("ns", "b", 21)),
               Event(WatchEventType::kAdded, MakeRouteJson("ns", "b", 11)),   // replay: ignored
               Event(WatchEventType::kDeleted, MakeRouteJson("ns", "c", 8)),  // not cached
               Event(WatchEventType::kAdded, MakeRouteJson("ns", "b", 22))};  // re-created
  client_.AddWatch(w1);
  RouteInformer inf(client_, clock_, options_);
  inf.AddEventHandler(&recorder_);
  inf.reflector().Step();
  recorder_.log.clear();
  inf.reflector().Step();
  EXPECT_EQ(recorder_.log, (std::vector<std::string>{"delete ns/b 11", "add ns/b 22"}));
  EXPECT_EQ(CacheContent(inf), (std::vector<std::string>{"ns/a@10", "ns/b@22"}));
  EXPECT_EQ(inf.Stats().stale_events_ignored, 2u);
}

nlohmann::json WithVersion(nlohmann::json object, const std::string& rv) {
  object["metadata"]["resourceVersion"] = rv;
  return object;
}

// resourceVersions are opaque (API conventions): not numbers, not ordered.
// Arrival order on the watch is the server's order.
TEST_F(InformerTest, OpaqueVersionsFollowArrivalOrder) {
  client_.SetObject("ns/a", WithVersion(MakeRouteJson("ns", "a", 0), "x10"));
  client_.SetObject("ns/b", WithVersion(MakeRouteJson("ns", "b", 0), "x11"));
  client_.SetObject("ns/c", WithVersion(MakeRouteJson("ns", "c", 0), "900"));
  client_.SetListResourceVersion("x20");
  WatchScript w1;
  WatchEvent bookmark = Bookmark(0);
  bookmark.object["metadata"]["resourceVersion"] = "m3";
  w1.events = {
      Event(WatchEventType::kModified, WithVersion(MakeRouteJson("ns", "a", 0), "q5")),
      Event(WatchEventType::kDeleted, WithVersion(MakeRouteJson("ns", "b", 0), "k1")),
      Event(WatchEventType::kAdded, WithVersion(MakeRouteJson("ns", "b", 0), "z9")),
      Event(WatchEventType::kModified, WithVersion(MakeRouteJson("ns", "a", 0), "q5")),  // dup
      // Numeric-looking versions are not compared either.
      Event(WatchEventType::kModified, WithVersion(MakeRouteJson("ns", "c", 0), "80")),
      bookmark};
  client_.AddWatch(w1);
  client_.AddWatch(WatchScript{});
  RouteInformer inf(client_, clock_, options_);
  inf.AddEventHandler(&recorder_);
  inf.reflector().Step();
  recorder_.log.clear();
  inf.reflector().Step();
  EXPECT_EQ(recorder_.log,
            (std::vector<std::string>{"update ns/a x10->q5", "delete ns/b x11", "add ns/b z9",
                                      "update ns/c 900->80"}));
  EXPECT_EQ(CacheContent(inf), (std::vector<std::string>{"ns/a@q5", "ns/b@z9", "ns/c@80"}));
  EXPECT_EQ(inf.Stats().stale_events_ignored, 1u);
  inf.reflector().Step();
  ASSERT_EQ(client_.watch_calls().size(), 2u);
  EXPECT_EQ(client_.watch_calls()[0].resource_version, "x20");
  EXPECT_EQ(client_.watch_calls()[1].resource_version, "m3") << "the last version received";
}

// Deleted keys are remembered up to max_tombstones on every path, including
// a delete whose object does not decode.
TEST_F(InformerTest, TombstonesStayCappedOnEveryPath) {
  for (int i = 0; i < 6; ++i) AddServerRoute("ns", "r" + std::to_string(i), 5);
  client_.SetListResourceVersion(10);
  WatchScript w;
  for (int i = 0; i < 6; ++i) {
    nlohmann::json bad = MakeRouteJson("ns", "r" + std::to_string(i), 11 + i);
    if (i >= 2) bad["spec"] = "garbage";  // undecodable: the decode-failure path
    w.events.push_back(Event(WatchEventType::kDeleted, bad));
  }
  client_.AddWatch(w);
  options_.max_tombstones = 2;
  RouteInformer inf(client_, clock_, options_);
  inf.reflector().Step();
  inf.reflector().Step();
  EXPECT_EQ(inf.List().size(), 0u);
  EXPECT_LE(inf.Stats().tombstones, 2u);
  EXPECT_GE(inf.Stats().tombstones, 1u);
}

TEST_F(InformerTest, DecodeFailuresAreSkippedAndCounted) {
  AddServerRoute("ns", "a", 5);
  client_.SetObject("ns/bad", {{"metadata", {{"namespace", "ns"}}}});  // no name
  client_.SetObject("ns/bad2", {{"metadata", {{"name", "bad2"}, {"namespace", "ns"}}},
                                {"spec", "not an object"}});
  client_.SetListResourceVersion(10);
  WatchScript w1;
  nlohmann::json bad = MakeRouteJson("ns", "c", 12);
  bad["status"]["ingress"] = "oops";
  w1.events = {Event(WatchEventType::kAdded, bad),
               Event(WatchEventType::kAdded, MakeRouteJson("ns", "d", 13))};
  client_.AddWatch(w1);
  client_.AddWatch(WatchScript{});
  RouteInformer inf(client_, clock_, options_);
  inf.AddEventHandler(&recorder_);
  inf.reflector().Step();
  inf.reflector().Step();
  inf.reflector().Step();
  EXPECT_EQ(CacheContent(inf), (std::vector<std::string>{"ns/a@5", "ns/d@13"}));
  EXPECT_EQ(inf.Stats().decode_errors, 3u);
  EXPECT_TRUE(inf.HasSynced());
  EXPECT_EQ(client_.watch_calls().back().resource_version, "13");
}

TEST_F(InformerTest, UndecodableDeleteStillRemovesTheObject) {
  AddServerRoute("ns", "a", 5);
  client_.SetListResourceVersion(10);
  nlohmann::json bad = MakeRouteJson("ns", "a", 11);
  bad["spec"] = "garbage";
  WatchScript w;
  w.events = {Event(WatchEventType::kDeleted, bad)};
  client_.AddWatch(w);
  RouteInformer inf(client_, clock_, options_);
  inf.AddEventHandler(&recorder_);
  inf.reflector().Step();
  inf.reflector().Step();
  EXPECT_EQ(inf.Get("ns/a"), nullptr);
  EXPECT_EQ(recorder_.log.back(), "delete ns/a 5");
  EXPECT_EQ(inf.Stats().decode_errors, 1u);
}

// Events as the REST stream's NextRaw() gives them: the object as text.
WatchEvent TextEvent(WatchEventType type, const nlohmann::json& object) {
  WatchEvent e;
  e.type = type;
  e.object_text = object.dump();
  return e;
}

TEST_F(InformerTest, TextEventsAreDecodedFromTheirText) {
  AddServerRoute("ns", "a", 5);
  AddServerRoute("ns", "b", 6);
  client_.SetListResourceVersion(10);
  nlohmann::json bad = MakeRouteJson("ns", "c", 12);
  bad["status"]["ingress"] = "oops";
  nlohmann::json bad_delete = MakeRouteJson("ns", "b", 15);
  bad_delete["spec"] = "garbage";
  nlohmann::json a = MakeRouteJson("ns", "a", 14, "a.example.com");
  a["futureField"] = {{"kept", true}};
  a["status"]["ingress"] = {{{"routerName", "other"}, {"futureField", 1}}};
  WatchScript w;
  w.events = {TextEvent(WatchEventType::kAdded, bad),
              TextEvent(WatchEventType::kAdded, MakeRouteJson("ns", "d", 13)),
              TextEvent(WatchEventType::kModified, a),
              TextEvent(WatchEventType::kModified, a),  // a duplicate: ignored
              TextEvent(WatchEventType::kDeleted, bad_delete)};
  client_.AddWatch(w);
  client_.AddWatch(WatchScript{});
  RouteInformer inf(client_, clock_, options_);
  inf.AddEventHandler(&recorder_);
  inf.reflector().Step();
  inf.reflector().Step();
  inf.reflector().Step();
  EXPECT_EQ(CacheContent(inf), (std::vector<std::string>{"ns/a@14", "ns/d@13"}));
  EXPECT_EQ(inf.Get("ns/a")->ingress_json, a["status"]["ingress"].dump());
  EXPECT_EQ(inf.Get("ns/a")->spec.host, "a.example.com");
  EXPECT_EQ(inf.Stats().decode_errors, 2u);
  EXPECT_EQ(inf.Stats().stale_events_ignored, 1u);
  EXPECT_EQ(recorder_.log.back(), "delete ns/b 6");
  EXPECT_EQ(client_.watch_calls().back().resource_version, "15");
}

TEST_F(InformerTest, BackoffIsBoundedWhileServerFails) {
  std::vector<Status> errors(100, Status(StatusCode::kUnavailable, "500 internal error"));
  client_.FailNextLists(errors);
  RouteInformer inf(client_, clock_, options_);
  // Drive the loop in fake time for 30 s of failures.
  Duration elapsed{0};
  int attempts = 0;
  std::vector<Duration> waits;
  while (elapsed < seconds(30)) {
    Duration d = inf.reflector().Step();
    ++attempts;
    waits.push_back(d);
    EXPECT_GT(d, Duration::zero()) << "no hot loop";
    EXPECT_LE(d, options_.backoff.max);
    clock_.Advance(d);
    elapsed += d;
  }
  // 200 ms doubling with up to +50% jitter: about 7-8 attempts in 30 s.
  EXPECT_GE(attempts, 5);
  EXPECT_LE(attempts, 9);
  for (size_t i = 1; i + 1 < waits.size(); ++i) EXPECT_GE(waits[i] * 3, waits[i - 1] * 2);
  EXPECT_FALSE(inf.HasSynced());
}

TEST_F(InformerTest, RecoversWhenServerReturns) {
  client_.FailNextLists(std::vector<Status>(3, Status(StatusCode::kUnavailable, "500")));
  AddServerRoute("ns", "a", 5);
  WatchScript w;
  w.open_error = Status(StatusCode::kUnavailable, "500");
  for (int i = 0; i < 3; ++i) client_.AddWatch(w);
  client_.AddWatch(WatchScript{});  // healthy again
  RouteInformer inf(client_, clock_, options_);
  int steps = 0;
  while (client_.watch_calls().size() < 4 && steps < 20) {
    clock_.Advance(inf.reflector().Step());
    ++steps;
  }
  EXPECT_TRUE(inf.HasSynced());
  EXPECT_EQ(client_.list_calls(), 4);
  EXPECT_EQ(client_.watch_calls().size(), 4u);
  EXPECT_EQ(inf.Stats().watch_failures, 3u);
  EXPECT_EQ(inf.Stats().list_failures, 3u);
}

TEST_F(InformerTest, WatchThatClosesAtOnceBacksOff) {
  for (int i = 0; i < 5; ++i) client_.AddWatch(WatchScript{});
  RouteInformer inf(client_, clock_, options_);
  inf.reflector().Step();
  Duration total{0};
  for (int i = 0; i < 5; ++i) {
    Duration d = inf.reflector().Step();
    EXPECT_GT(d, Duration::zero());
    total += d;
  }
  EXPECT_GE(total, milliseconds(200 + 400 + 800 + 1600 + 3200));
}

TEST_F(InformerTest, WatchTimeoutIsRandomisedWithinBounds) {
  options_.watch_timeout_min = seconds(5);
  options_.watch_timeout_max = seconds(9);
  for (int i = 0; i < 30; ++i) {
    WatchScript w;
    w.events = {Bookmark(100 + i)};
    client_.AddWatch(w);
  }
  RouteInformer inf(client_, clock_, options_);
  inf.reflector().Step();
  for (int i = 0; i < 30; ++i) inf.reflector().Step();
  std::set<int64_t> seen;
  for (const auto& c : client_.watch_calls()) {
    EXPECT_GE(c.timeout.count(), 5);
    EXPECT_LE(c.timeout.count(), 9);
    seen.insert(c.timeout.count());
  }
  EXPECT_GE(seen.size(), 3u);
}

TEST_F(InformerTest, HostIndexFollowsChanges) {
  AddServerRoute("ns", "a", 5, "www.example.com");
  AddServerRoute("other", "b", 6, "www.example.com");
  AddServerRoute("ns", "c", 7, "api.example.com");
  client_.SetListResourceVersion(10);
  WatchScript w;
  w.events = {Event(WatchEventType::kModified, MakeRouteJson("ns", "a", 11, "new.example.com")),
              Event(WatchEventType::kDeleted, MakeRouteJson("ns", "c", 12, "api.example.com"))};
  client_.AddWatch(w);
  RouteInformer inf(client_, clock_, options_);
  inf.AddIndex("host", [](const Route& r) { return std::vector<std::string>{r.spec.host}; });
  inf.reflector().Step();
  EXPECT_EQ(inf.ByIndex("host", "www.example.com").size(), 2u);
  inf.reflector().Step();
  auto www = inf.ByIndex("host", "www.example.com");
  ASSERT_EQ(www.size(), 1u);
  EXPECT_EQ(www[0]->Key(), "other/b");
  EXPECT_EQ(inf.ByIndex("host", "new.example.com").size(), 1u);
  EXPECT_TRUE(inf.ByIndex("host", "api.example.com").empty());
  EXPECT_TRUE(inf.ByIndex("nosuchindex", "x").empty());
}

TEST_F(InformerTest, StopCancelsBlockedWatch) {
  AddServerRoute("ns", "a", 5);
  RouteInformer inf(client_, clock_, options_);
  inf.Start();
  EXPECT_TRUE(inf.WaitForSync());
  client_.WaitForIdleWatch();  // the informer thread is blocked in Next()
  inf.Stop();                  // must return: the watch is cancelled
  EXPECT_EQ(inf.Get("ns/a")->metadata.resource_version, "5");
}

TEST_F(InformerTest, StopWakesBackoffWait) {
  client_.FailNextLists(std::vector<Status>(5, Status(StatusCode::kUnavailable, "500")));
  RouteInformer inf(client_, clock_, options_);
  inf.Start();
  inf.Stop();  // returns although fake time never advances
  EXPECT_FALSE(inf.HasSynced());
  EXPECT_FALSE(inf.WaitForSync());
}

// Issue 57: a backoff grown by failures during an outage does not delay the
// cache once the server answers again: the wait ends within the jitter.
TEST_F(InformerTest, ServerAnswersAgainEndsAGrownBackoffWithinTheJitter) {
  client_.FailNextLists(std::vector<Status>(6, StatusFromResponse(503, "")));
  AddServerRoute("ns", "a", 5);
  RouteInformer inf(client_, clock_, options_);
  inf.Start();
  uint64_t seen = 0;
  std::optional<SteadyTime> until;
  for (int i = 0; i < 6; ++i) {
    until = inf.reflector().AwaitIdleWait(&seen);
    ASSERT_TRUE(until.has_value());
    if (i < 5) clock_.Advance(*until - clock_.Now());
  }
  EXPECT_GE(*until - clock_.Now(), milliseconds(6400)) << "200 ms doubled five times";
  inf.reflector().ServerAnswersAgain();
  clock_.Advance(options_.recovery_jitter);
  // Real time: the informer thread notices the fake clock within ~1 ms.
  for (int i = 0; i < 500 && !inf.HasSynced(); ++i) std::this_thread::sleep_for(milliseconds(10));
  EXPECT_TRUE(inf.HasSynced()) << "still waiting out the grown backoff";
  inf.Stop();
}

TEST_F(InformerTest, NamespaceInformerDecodesLabels) {
  client_.SetObject("team-a", MakeNamespaceJson("team-a", 3, {{"shard", "x"}}));
  client_.SetObject("team-b", MakeNamespaceJson("team-b", 4));
  NamespaceInformer inf(client_, clock_, options_);
  inf.reflector().Step();
  ASSERT_NE(inf.Get("team-a"), nullptr);
  EXPECT_EQ(inf.Get("team-a")->metadata.labels.at("shard"), "x");
  EXPECT_EQ(inf.List().size(), 2u);
}

}  // namespace
}  // namespace routestatus::kubeclient::cache
