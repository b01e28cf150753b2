// The reflector over sequences of server answers to a streamed initial
// state (a watch list, sendInitialEvents=true): every sequence ends in a
// synced cache, or in an honest not-ready with one WARNING that names the
// server's message; never a silent loop (issue 57).

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <glog/logging.h>
#include <gtest/gtest.h>

#include "kubeclient/cache/informer.h"
#include "test/kubeclient/cache/fake_kube_client.h"
#include "test/testing/captured_log.h"
#include "test/testing/fake_clock.h"

namespace routestatus::kubeclient::cache {
// Why a named namespace: the unity build joins this file with informer_test.cc.
namespace initial_state_test {
namespace {

using std::chrono::seconds;
using testing::FakeKubeClient;
using testing::MakeRouteJson;
using testing::WatchScript;

// What kube-apiserver 1.32 over etcd 3.4.23 sends as the watch list's one
// event (test/apiserver/golden/kube-apiserver-1.32/watchlist-etcd-3.4.23.txt).
constexpr char kNoProgressNotify[] =
    "a watch stream was requested by the client but the required storage feature "
    "RequestWatchProgress is disabled";

WatchEvent Event(WatchEventType type, nlohmann::json object) {
  WatchEvent e;
  e.type = type;
  e.object = std::move(object);
  return e;
}

WatchEvent Added(const std::string& name, int64_t rv) {
  return Event(WatchEventType::kAdded, MakeRouteJson("ns", name, rv));
}

WatchEvent ErrorEvent(int code, const std::string& reason, const std::string& message) {
  return Event(WatchEventType::kError, {{"kind", "Status"},
                                        {"apiVersion", "v1"},
                                        {"metadata", nlohmann::json::object()},
                                        {"status", "Failure"},
                                        {"message", message},
                                        {"reason", reason},
                                        {"code", code}});
}

WatchEvent BookmarkWith(int64_t rv, std::optional<nlohmann::json> annotations) {
  nlohmann::json meta = {{"resourceVersion", std::to_string(rv)}};
  if (annotations) meta["annotations"] = *annotations;
  return Event(WatchEventType::kBookmark, {{"apiVersion", "route.openshift.io/v1"},
                                           {"kind", "Route"},
                                           {"metadata", meta}});
}

WatchEvent EndBookmark(int64_t rv) {
  return BookmarkWith(rv, nlohmann::json{{"k8s.io/initial-events-end", "true"}});
}

Status Answer(int http_code, const std::string& reason, const std::string& message) {
  nlohmann::json body = {{"kind", "Status"}, {"apiVersion", "v1"}, {"status", "Failure"},
                         {"message", message}, {"reason", reason}, {"code", http_code}};
  return StatusFromResponse(http_code, body.dump());
}

// One row: the server's answer to the watch list, what its lists answer,
// and the outcome expected.
struct Sequence {
  std::string name;
  WatchScript stream;                 // the answer to the watch-list request
  std::vector<Status> list_failures;  // the lists after it fail with these, in order
  // Expected:
  bool synced = true;
  std::optional<StreamFallback> fallback;  // nullopt: no fallback
  std::vector<std::string> cache;          // keys@versions once synced
  std::string warning;                     // the one WARNING's text ("" = none)
};

Sequence Named(std::string name) {
  Sequence s;
  s.name = std::move(name);
  return s;
}

std::vector<Sequence> Sequences() {
  std::vector<Sequence> out;
  auto add = [&](Sequence s) { out.push_back(std::move(s)); };
  const std::vector<std::string> listed = {"ns/listed@4"};
  {
    Sequence s = Named("error event first: kube 1.32 over etcd 3.4.23");
    s.stream.events = {ErrorEvent(500, "InternalError", kNoProgressNotify)};
    s.fallback = StreamFallback::kErrorEvent;
    s.cache = listed;
    add(s);
  }
  {
    Sequence s = Named("error event in the middle");
    s.stream.events = {Added("a", 5), ErrorEvent(500, "InternalError", "etcdserver: leader changed")};
    s.fallback = StreamFallback::kErrorEvent;
    s.cache = listed;
    add(s);
  }
  {
    Sequence s = Named("error event after the end bookmark: the watch's, not the stream's");
    s.stream.events = {Added("a", 5), EndBookmark(9),
                       ErrorEvent(500, "InternalError", "etcdserver: leader changed")};
    s.cache = {"ns/a@5"};
    add(s);
  }
  {
    Sequence s = Named("410 Expired event first");
    s.stream.events = {ErrorEvent(410, "Expired", "too old resource version: 1 (9)")};
    s.fallback = StreamFallback::kErrorEvent;
    s.cache = listed;
    add(s);
  }
  {
    Sequence s = Named("503 at the request");
    s.stream.open_error = Answer(503, "ServiceUnavailable", "the server is currently unable");
    s.fallback = StreamFallback::kServerError;
    s.cache = listed;
    add(s);
  }
  {
    Sequence s = Named("410 at the request");
    s.stream.open_error = Answer(410, "Expired", "too old resource version");
    s.fallback = StreamFallback::kServerError;
    s.cache = listed;
    add(s);
  }
  {
    Sequence s = Named("422 at the request: kube 1.33, its WatchList gate off");
    s.stream.open_error =
        Answer(422, "Invalid",
               "ListOptions.meta.k8s.io \"\" is invalid: sendInitialEvents: Forbidden: "
               "sendInitialEvents is forbidden for watch unless the WatchList feature gate is "
               "enabled");
    s.fallback = StreamFallback::kRefused;
    s.cache = listed;
    add(s);
  }
  {
    Sequence s = Named("stream cut mid-object");
    s.stream.events = {Added("a", 5)};
    s.stream.end = Status(StatusCode::kUnavailable, "watch stream truncated mid-event (312 bytes)");
    s.fallback = StreamFallback::kStreamEnded;
    s.cache = listed;
    add(s);
  }
  {
    Sequence s = Named("stream closed before the end bookmark");
    s.stream.events = {Added("a", 5)};
    s.fallback = StreamFallback::kStreamEnded;
    s.cache = listed;
    add(s);
  }
  {
    Sequence s = Named("stream timed out before the end bookmark");
    s.stream.end = Status(StatusCode::kTimeout, "GET /version: no answer within 10000 ms");
    s.fallback = StreamFallback::kStreamEnded;
    s.cache = listed;
    add(s);
  }
  {
    Sequence s = Named("bookmark without the annotation");
    s.stream.events = {Added("a", 5), BookmarkWith(8, std::nullopt)};
    s.fallback = StreamFallback::kNoEndBookmark;
    s.cache = listed;
    add(s);
  }
  {
    Sequence s = Named("bookmark whose end marker is not \"true\"");
    s.stream.events = {Added("a", 5),
                       BookmarkWith(8, nlohmann::json{{"k8s.io/initial-events-end", "false"}})};
    s.fallback = StreamFallback::kNoEndBookmark;
    s.cache = listed;
    add(s);
  }
  {
    Sequence s = Named("a change among the initial events");
    s.stream.events = {Added("a", 5), Event(WatchEventType::kModified, MakeRouteJson("ns", "a", 6))};
    s.fallback = StreamFallback::kNoEndBookmark;
    s.cache = listed;
    add(s);
  }
  {
    Sequence s = Named("end bookmark with kube 1.32's list blueprint");
    s.stream.events = {
        Added("a", 5),
        BookmarkWith(9, nlohmann::json{
                            {"k8s.io/initial-events-end", "true"},
                            {"kubernetes.io/initial-events-list-blueprint",
                             "eyJhcGlWZXJzaW9uIjoicm91dGUub3BlbnNoaWZ0LmlvL3YxIiwiaXRlbXMiOltdLCJr"
                             "aW5kIjoiUm91dGVMaXN0In0K"}})};
    s.cache = {"ns/a@5"};
    add(s);
  }
  {
    Sequence s = Named("end bookmark with unknown annotations");
    s.stream.events = {Added("a", 5),
                       BookmarkWith(9, nlohmann::json{{"k8s.io/initial-events-end", "true"},
                                                      {"example.com/future", "{\"x\":1}"}})};
    s.cache = {"ns/a@5"};
    add(s);
  }
  {
    Sequence s = Named("old etcd, and the list is forbidden");
    s.stream.events = {ErrorEvent(500, "InternalError", kNoProgressNotify)};
    const std::string forbidden =
        "routes.route.openshift.io is forbidden: User \"system:serviceaccount:ns:sa\" cannot "
        "list resource \"routes\"";
    s.list_failures = std::vector<Status>(30, Answer(403, "Forbidden", forbidden));
    s.synced = false;
    s.fallback = StreamFallback::kErrorEvent;
    s.warning = forbidden;
    add(s);
  }
  {
    Sequence s = Named("old etcd, and the list fails 500");
    s.stream.events = {ErrorEvent(500, "InternalError", kNoProgressNotify)};
    s.list_failures =
        std::vector<Status>(30, Answer(500, "InternalError", "etcdserver: request timed out"));
    s.synced = false;
    s.fallback = StreamFallback::kErrorEvent;
    s.warning = "etcdserver: request timed out";
    add(s);
  }
  return out;
}

std::vector<std::string> CacheContent(const RouteInformer& inf) {
  std::vector<std::string> out;
  for (const auto& r : inf.List()) out.push_back(r->Key() + "@" + r->metadata.resource_version);
  std::sort(out.begin(), out.end());
  return out;
}

TEST(InitialStateSequenceTest, EverySequenceSyncsOrSaysWhyOnce) {
  for (const Sequence& seq : Sequences()) {
    SCOPED_TRACE(seq.name);
    ::routestatus::testing::FakeClock clock;
    FakeKubeClient client;
    client.SetObject("ns/listed", MakeRouteJson("ns", "listed", 4));
    client.SetListResourceVersion(10);
    client.AddWatch(seq.stream);
    // Why: a second watch-list request (a retried stream) gets an answer
    // instead of the fake's blocking stream, so the test fails, not hangs.
    WatchScript second;
    second.open_error = Status(StatusCode::kInvalid, "a second watch-list request");
    client.AddWatch(second);
    client.FailNextLists(seq.list_failures);
    InformerOptions options;
    options.name = "routes";
    options.stream_initial_events = true;
    RouteInformer inf(client, clock, options);
    ::routestatus::testing::CapturedLog warnings(google::GLOG_WARNING);
    // 20 steps, each wait waited out: well past the 30 failures' backoff
    // (capped at 30 s) for a minute of fake time at most.
    int stream_requests = 0;
    Duration waited{};
    for (int i = 0; i < 20 && waited < std::chrono::seconds(55) && !inf.HasSynced(); ++i) {
      Duration wait = inf.reflector().Step();
      if (!inf.HasSynced()) EXPECT_GT(wait, Duration::zero()) << "a loop without a wait";
      clock.Advance(wait);
      waited += wait;
    }
    // A streamed state: the same stream goes on (after a fallback the next
    // step would open a watch the fake leaves blocked).
    if (inf.HasSynced() && !seq.fallback) inf.reflector().Step();
    for (const auto& w : client.watch_calls()) stream_requests += w.send_initial_events ? 1 : 0;
    InformerStats stats = inf.Stats();
    EXPECT_EQ(inf.HasSynced(), seq.synced);
    EXPECT_EQ(stream_requests, 1) << "a failed stream is not retried before every list";
    for (size_t r = 0; r < kStreamFallbackCount; ++r) {
      const bool expected = seq.fallback && static_cast<size_t>(*seq.fallback) == r;
      EXPECT_EQ(stats.stream_fallbacks[r], expected ? 1u : 0u)
          << StreamFallbackName(static_cast<StreamFallback>(r));
    }
    if (seq.synced) {
      EXPECT_EQ(CacheContent(inf), seq.cache);
      const auto source = seq.fallback ? InitialStateSource::kWatchCache : InitialStateSource::kStreamed;
      EXPECT_EQ(stats.initial_states[static_cast<size_t>(source)], 1u);
    }
    if (seq.warning.empty()) {
      EXPECT_EQ(warnings.Lines().size(), 0u);
    } else {
      EXPECT_EQ(warnings.Count(seq.warning), 1) << "one WARNING naming the server's message";
      EXPECT_EQ(warnings.Lines().size(), 1u);
      EXPECT_NE(stats.last_list_error.find(seq.warning), std::string::npos);
    }
  }
}

// An outage is not a streaming failure: a request the server did not
// answer is retried on the reconnect schedule, streaming again once the
// server is back.
TEST(InitialStateSequenceTest, NoAnswerIsRetriedAsAStreamNotAFallback) {
  ::routestatus::testing::FakeClock clock;
  FakeKubeClient client;
  WatchScript refused;
  refused.open_error = Status(StatusCode::kUnavailable, "GET /apis: Connection refused");
  client.AddWatch(refused);
  WatchScript streams;
  streams.events = {Added("a", 5), EndBookmark(9)};
  client.AddWatch(streams);
  InformerOptions options;
  options.stream_initial_events = true;
  RouteInformer inf(client, clock, options);
  Duration wait = inf.reflector().Step();
  EXPECT_GT(wait, Duration::zero());
  EXPECT_LE(wait, options.reconnect.max);
  clock.Advance(wait);
  EXPECT_EQ(inf.reflector().Step(), Duration::zero());
  EXPECT_TRUE(inf.HasSynced());
  EXPECT_EQ(client.list_calls(), 0);
  InformerStats stats = inf.Stats();
  EXPECT_EQ(stats.initial_states[static_cast<size_t>(InitialStateSource::kStreamed)], 1u);
  for (uint64_t n : stats.stream_fallbacks) EXPECT_EQ(n, 0u);
}

// A server whose watch cache is off pages its lists: counted as storage.
TEST(InitialStateSequenceTest, PagedListsCountAsStorage) {
  ::routestatus::testing::FakeClock clock;
  FakeKubeClient client;
  for (int i = 0; i < 12; ++i) {
    client.SetObject("ns/r" + std::to_string(i), MakeRouteJson("ns", "r" + std::to_string(i), 4));
  }
  InformerOptions options;
  options.page_size = 5;
  RouteInformer inf(client, clock, options);
  EXPECT_EQ(inf.reflector().Step(), Duration::zero());
  InformerStats stats = inf.Stats();
  EXPECT_EQ(stats.initial_states[static_cast<size_t>(InitialStateSource::kStorage)], 1u);
  EXPECT_EQ(stats.initial_states[static_cast<size_t>(InitialStateSource::kWatchCache)], 0u);
}

}  // namespace
}  // namespace initial_state_test
}  // namespace routestatus::kubeclient::cache
