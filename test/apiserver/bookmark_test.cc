// Watch bookmarks as kube-apiserver's watch cache sends them (issue 43): a
// bookmark carries its resource's last processed resourceVersion, which
// moves with that resource's own events and with etcd's progress
// notifications (every 10 minutes), and a watcher gets none at or below the
// version it began at. On a fake clock with kube's defaults.

#include <string>
#include <thread>
#include <vector>

#include "test/apiserver/fake_clock_server_test.h"

namespace routestatus::apiserver::testing {
namespace {

using nlohmann::json;
using std::chrono::seconds;

std::string Rv(const json& event) { return event["object"]["metadata"]["resourceVersion"]; }

class BookmarkTest : public FakeClockServerTest {
 protected:
  // A routes watch with bookmarks in team-a from `rv`, and `query` added.
  std::unique_ptr<LineStream> Watch(uint64_t rv, const std::string& query = "") {
    auto w = std::make_unique<LineStream>(
        server_->port(), RoutesPath() + "?watch=1&allowWatchBookmarks=true&resourceVersion=" +
                             std::to_string(rv) + query);
    EXPECT_EQ(w->code(), 200);
    return w;
  }
  // Moves the clock a minute at a time (each a bookmark due time) and
  // returns what the watch got meanwhile.
  std::vector<json> Minutes(LineStream& w, int minutes) {
    std::vector<json> got;
    for (int i = 0; i < minutes; ++i) {
      clock_.Advance(seconds(60));
      for (json& e : DrainEvents(w)) got.push_back(std::move(e));
    }
    return got;
  }
  uint64_t Current() { return server_->store().CurrentRv(); }
};

TEST_F(BookmarkTest, AQuietWatchBegunAtTheCurrentVersionHearsNothing) {
  auto w = Watch(Current());
  // Past a progress notification too: nothing changed, so it brings the
  // resource to the version the watch began at, not above it.
  EXPECT_EQ(Minutes(*w, 11), std::vector<json>{});
  EXPECT_FALSE(w->ended());
}

TEST_F(BookmarkTest, AChangeOfItsResourceIsSentThenBookmarkedAtItsVersion) {
  auto w = Watch(Current());
  json route = MustCreate("a", "a.example.com");
  std::vector<json> added = DrainEvents(*w);
  ASSERT_EQ(added.size(), 1u);
  EXPECT_EQ(added[0]["type"], "ADDED");
  const std::string rv = route["metadata"]["resourceVersion"];
  std::vector<json> marks = Minutes(*w, 2);
  // Why twice at one version: kube sends a due bookmark again even when its
  // version has not moved; only versions not above the start are dropped.
  ASSERT_EQ(marks.size(), 2u);
  for (const json& m : marks) {
    EXPECT_EQ(m["type"], "BOOKMARK");
    EXPECT_EQ(Rv(m), rv);
  }
}

TEST_F(BookmarkTest, AnotherResourcesChangeBookmarksOnlyAfterAProgressNotification) {
  auto w = Watch(Current());
  ASSERT_TRUE(server_->CreateNamespace("team-b").ok());
  const uint64_t global = Current();
  // Before etcd's first progress notification (at 10 minutes): nothing.
  EXPECT_EQ(Minutes(*w, 9), std::vector<json>{});
  // The notification moves the routes' version to the global revision, and
  // the bookmark due at the same moment carries it.
  std::vector<json> marks = Minutes(*w, 1);
  ASSERT_EQ(marks.size(), 1u);
  EXPECT_EQ(marks[0]["type"], "BOOKMARK");
  EXPECT_EQ(Rv(marks[0]), std::to_string(global));
  // A watch begun there is quiet again.
  auto later = Watch(global);
  EXPECT_EQ(Minutes(*later, 2).size(), 0u);
}

TEST_F(BookmarkTest, ANotificationSkipsAResourceWithEventsSinceTheLastOne) {
  auto w = Watch(Current());
  Minutes(*w, 9);
  json route = MustCreate("a", "a.example.com");  // at 9 minutes
  const std::string route_rv = route["metadata"]["resourceVersion"];
  ASSERT_TRUE(server_->CreateNamespace("team-b").ok());
  const uint64_t global = Current();
  // etcd elides the 10-minute notification of a watch that just sent an
  // event: the routes stay at their own version until the next one.
  std::vector<json> got = Minutes(*w, 10);  // 10 to 19 minutes
  ASSERT_EQ(got.size(), 11u);  // the ADDED, then a bookmark a minute
  EXPECT_EQ(got[0]["type"], "ADDED");
  for (size_t i = 1; i < got.size(); ++i) {
    EXPECT_EQ(got[i]["type"], "BOOKMARK");
    EXPECT_EQ(Rv(got[i]), route_rv) << i;
  }
  std::vector<json> marks = Minutes(*w, 1);  // 20 minutes: the next notification
  ASSERT_EQ(marks.size(), 1u);
  EXPECT_EQ(Rv(marks[0]), std::to_string(global));
}

TEST_F(BookmarkTest, AWatchBegunBelowTheLastProcessedVersionIsBookmarkedAtItsFirstDueTime) {
  json a = MustCreate("a", "a.example.com", {{"app", "a"}});
  const uint64_t start = std::stoull(a["metadata"]["resourceVersion"].get<std::string>());
  json b = MustCreate("b", "b.example.com", {{"app", "b"}});
  // Why a selector: the watch replays no event, yet its resource moved on.
  auto w = Watch(start, "&labelSelector=app%3Da");
  clock_.Advance(seconds(59));
  EXPECT_EQ(DrainEvents(*w), std::vector<json>{});
  clock_.Advance(seconds(1));
  std::vector<json> marks = DrainEvents(*w);
  ASSERT_EQ(marks.size(), 1u);
  EXPECT_EQ(marks[0]["type"], "BOOKMARK");
  EXPECT_EQ(Rv(marks[0]), b["metadata"]["resourceVersion"]);
}

TEST_F(BookmarkTest, ARestartedWatchCacheBookmarksNothingBeforeAnEvent) {
  MustCreate("a", "a.example.com");
  const uint64_t restarted = server_->store().RestartWatchCache();
  // Why from 0: the initial state is stamped with the fresh cache's version.
  auto w = Watch(0);
  EXPECT_EQ(DrainEvents(*w).size(), 1u);  // the route, ADDED
  EXPECT_EQ(Minutes(*w, 3), std::vector<json>{});
  json b = MustCreate("b", "b.example.com");
  ASSERT_GT(std::stoull(b["metadata"]["resourceVersion"].get<std::string>()), restarted);
  std::vector<json> got = Minutes(*w, 1);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[1]["type"], "BOOKMARK");
  EXPECT_EQ(Rv(got[1]), b["metadata"]["resourceVersion"]);
}

// A quiet watch writes nothing, so the server must see its client go
// without a failed write, as kube-apiserver does (HangupMonitor).
TEST_F(BookmarkTest, AQuietWatchEndsWhenItsClientGoes) {
  auto w = Watch(Current());
  ASSERT_EQ(server_->OpenWatches(), 1u);
  w.reset();
  // Why real time: the server polls sockets, which the fake clock does not move.
  for (int i = 0; i < 500 && server_->OpenWatches() > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(server_->OpenWatches(), 0u);
}

// The old behaviour, kept behind ServerOptions::legacy_bookmarks for tests
// that need a bookmark from a quiet watch.
class LegacyBookmarkTest : public BookmarkTest {
 protected:
  ServerOptions Options() override {
    ServerOptions o = BookmarkTest::Options();
    o.legacy_bookmarks = true;
    return o;
  }
};

TEST_F(LegacyBookmarkTest, EveryDueBookmarkIsSentAtTheGlobalRevision) {
  auto w = Watch(Current());
  std::vector<json> marks = Minutes(*w, 2);
  ASSERT_EQ(marks.size(), 2u);
  EXPECT_EQ(Rv(marks[1]), std::to_string(Current()));
}

}  // namespace
}  // namespace routestatus::apiserver::testing
