#include "conflict/contention_tracker.h"

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <glog/logging.h>
#include <gtest/gtest.h>

#include "test/testing/fake_clock.h"

namespace routestatus::conflict {
namespace {

using kubeclient::RouteCondition;
using kubeclient::RouteIngress;
using std::chrono::minutes;
using std::chrono::seconds;
using testing::FakeClock;

RouteIngress Entry(const std::string& host, const std::string& canonical = "router.apps.example.com",
                   const std::string& status = "True", const std::string& reason = "",
                   const std::string& ltt = "2026-11-29T14:00:00Z") {
  RouteIngress e;
  e.router_name = "default";
  e.host = host;
  e.router_canonical_hostname = canonical;
  e.wildcard_policy = "None";
  e.conditions.push_back(RouteCondition{"Admitted", status, reason, "", ltt});
  return e;
}

// Collects glog WARNING lines that this tracker logs.
class WarningSink : public google::LogSink {
 public:
  using google::LogSink::send;
  void send(google::LogSeverity severity, const char*, const char*, int,
            const google::LogMessageTime&, const char* message, size_t len) override {
    if (severity != google::GLOG_WARNING) return;
    std::lock_guard<std::mutex> l(mu_);
    lines_.emplace_back(message, len);
  }
  std::vector<std::string> Lines() {
    std::lock_guard<std::mutex> l(mu_);
    return lines_;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> lines_;
};

class TrackerTest : public ::testing::Test {
 protected:
  ContentionTrackerOptions Options() {
    ContentionTrackerOptions o;
    o.router_name = "default";
    return o;
  }
  // Another writer changes route `n` from our value to theirs.
  void Fight(ContentionTracker& t, int n) {
    const std::string uid = "uid-" + std::to_string(n);
    const RouteIngress ours = Entry("r" + std::to_string(n) + ".example.com");
    const RouteIngress theirs = Entry("r" + std::to_string(n) + ".other.com", "router.other.com");
    t.Clear(uid, ours);
    t.Changed(uid, "ns/r" + std::to_string(n), ours, theirs, &ours);
  }
  FakeClock clock_;
};

TEST_F(TrackerTest, OurOwnWriteObservedIsNotContention) {
  ContentionTracker t(clock_, Options());
  const RouteIngress v0 = Entry("a.example.com"), v1 = Entry("b.example.com");
  t.Clear("u", v1);
  t.Changed("u", "ns/a", v0, v1);  // the watch shows our write
  EXPECT_FALSE(t.IsChangeContended("u"));
  EXPECT_EQ(t.Snapshot().contentions, 0);
}

TEST_F(TrackerTest, OurWriteSeenBeforeClearIsNotContentionWithDesired) {
  ContentionTracker t(clock_, Options());
  const RouteIngress v0 = Entry("a.example.com"), v1 = Entry("b.example.com");
  t.Clear("u", v0);
  t.Changed("u", "ns/a", v0, v1, &v1);  // watch event raced ahead of Clear
  t.Clear("u", v1);
  EXPECT_FALSE(t.IsChangeContended("u"));
  EXPECT_EQ(t.Snapshot().contentions, 0);
}

TEST_F(TrackerTest, ExternalChangeIsContendedUntilWindowPasses) {
  ContentionTracker t(clock_, Options());
  const RouteIngress ours = Entry("a.example.com"), theirs = Entry("a.other.com");
  t.Clear("u", ours);
  t.Changed("u", "ns/a", ours, theirs, &ours);
  EXPECT_TRUE(t.IsChangeContended("u"));
  EXPECT_FALSE(t.IsChangeContended("other-uid"));
  auto s = t.Snapshot();
  EXPECT_EQ(s.contentions, 1);
  EXPECT_EQ(s.contended_routes, 1u);
  clock_.Advance(minutes(3) - seconds(1));
  EXPECT_TRUE(t.IsChangeContended("u"));
  clock_.Advance(seconds(1));
  EXPECT_FALSE(t.IsChangeContended("u"));  // at + interval > now no longer holds
  // We write again: a Candidate; a new fight is detected again.
  t.Clear("u", ours);
  EXPECT_FALSE(t.IsChangeContended("u"));
  t.Changed("u", "ns/a", ours, theirs, &ours);
  EXPECT_TRUE(t.IsChangeContended("u"));
}

TEST_F(TrackerTest, EntryCreatedByAnotherConfigurationIsContended) {
  ContentionTracker t(clock_, Options());
  const RouteIngress ours = Entry("a.example.com"), theirs = Entry("a.other.com", "router.other.com");
  t.Appeared("u", "ns/a", theirs, &ours);
  EXPECT_TRUE(t.IsChangeContended("u"));
  EXPECT_EQ(t.Snapshot().contentions, 1);
  // Seeing it again (e.g. a relist update) is the same fight, not a new one.
  t.Appeared("u", "ns/a", theirs, &ours);
  EXPECT_EQ(t.Snapshot().contentions, 1);
}

// Issue 13, start-up race: the initial list is read as if we had watched
// since we started. An entry a router configured differently wrote after
// we started (or just before) is contended at once, so we do not overwrite
// every route once before noticing the fight. One written well before we
// started (a previous configuration of ours), one differing only in host
// claims, one equal to ours, and one where we would have no entry are not.
TEST_F(TrackerTest, ListedEntryWrittenSinceWeStartedByAnotherConfigurationIsContended) {
  ContentionTracker t(clock_, Options());
  const RouteIngress ours = Entry("a.example.com"), theirs = Entry("a.other.com");
  const auto started = clock_.WallNow();
  clock_.Advance(minutes(10));  // a slow initial list
  const auto d = ContentionTracker::Difference::kConfiguration;
  t.Listed("u", "ns/a", theirs, &ours, d, started + minutes(5));
  EXPECT_TRUE(t.IsChangeContended("u"));
  EXPECT_EQ(t.Snapshot().contentions, 1);
  // Whole-second times and a writer's clock a little behind ours.
  t.Listed("w", "ns/w", theirs, &ours, d, started - seconds(1));
  EXPECT_TRUE(t.IsChangeContended("w"));

  // Written in the 5 s before that (listed_recent): a live router started
  // with us, passed by the gate only when many were listed (issue 59).
  t.Listed("r", "ns/r", theirs, &ours, d, started - seconds(5));
  EXPECT_TRUE(t.IsChangeContended("r"));

  t.Listed("v", "ns/b", theirs, &ours, d, started - seconds(7));
  EXPECT_FALSE(t.IsChangeContended("v"));
  t.Listed("x", "ns/c", theirs, &ours, ContentionTracker::Difference::kView, started);
  EXPECT_FALSE(t.IsChangeContended("x"));
  t.Listed("y", "ns/d", ours, &ours, d, started);
  EXPECT_FALSE(t.IsChangeContended("y"));
  t.Listed("z", "ns/e", theirs, nullptr, d, started);
  EXPECT_FALSE(t.IsChangeContended("z"));
  EXPECT_EQ(t.Snapshot().contentions, 3);
}

TEST_F(TrackerTest, EntryCreatedByOurPeerIsNotContention) {
  ContentionTracker t(clock_, Options());
  const RouteIngress ours = Entry("a.example.com");
  t.Appeared("u", "ns/a", ours, &ours);
  EXPECT_FALSE(t.IsChangeContended("u"));
  EXPECT_EQ(t.Snapshot().contentions, 0);
  // Created where we would have none (our namespace labels may lag): a
  // view difference, Suspect for a short while, never counted.
  t.Appeared("v", "ns/b", Entry("b.other.com"), nullptr);
  EXPECT_EQ(t.Snapshot().contentions, 0);
  EXPECT_EQ(t.Snapshot().suspect_routes, 1u);
}

TEST_F(TrackerTest, UnknownRouteBecomesCandidateFirst) {
  ContentionTracker t(clock_, Options());
  const RouteIngress a = Entry("a.example.com"), b = Entry("b.example.com"),
                     c = Entry("c.example.com"), ours = Entry("d.example.com");
  t.Changed("u", "ns/a", a, b, &ours);
  EXPECT_FALSE(t.IsChangeContended("u"));
  t.Changed("u", "ns/a", b, b, &ours);  // no change
  EXPECT_FALSE(t.IsChangeContended("u"));
  t.Changed("u", "ns/a", b, c, &ours);
  EXPECT_TRUE(t.IsChangeContended("u"));
  t.Changed("u", "ns/a", c, a, &ours);  // still contended: counted again
  EXPECT_EQ(t.Snapshot().contentions, 2);
}

// A replica that listed route u after a peer of ours wrote it (so it never
// wrote or tracked u) sees another writer replace that correct entry with a
// value we do not compute: a fight, not a Candidate. Found by the simulator
// (route-sim --scenario=fight --seed=13): without this rule such replicas
// wrote every route back at once, 2 x M writes in the first window.
TEST_F(TrackerTest, UnknownRouteWhoseCorrectEntryIsReplacedIsContended) {
  ContentionTracker t(clock_, Options());
  const RouteIngress ours = Entry("a.example.com"),
                     theirs = Entry("a.b.example.com", "router.b.example.com");
  t.Changed("u", "ns/a", ours, theirs, &ours);
  EXPECT_TRUE(t.IsChangeContended("u"));
  EXPECT_EQ(t.Snapshot().contentions, 1);
  // Unknown and the old entry was not what we compute (e.g. a stale entry
  // of an older configuration being replaced): still only a Candidate.
  t.Changed("v", "ns/b", Entry("old.example.com"), theirs, &ours);
  EXPECT_FALSE(t.IsChangeContended("v"));
  EXPECT_EQ(t.Snapshot().contentions, 1);
}

// Issue 13 item 2: a value that differs from ours only in what other
// objects decide (host claims) may be a slightly older view, the writer's or
// ours. It blocks our changes of the route for suspect_block (then we
// reconcile it again) but counts only as a second change away: after the
// entry was restored to ours at least suspect_block after the suspicion.
TEST_F(TrackerTest, ViewDifferenceIsSuspectUntilItHappensAgain) {
  using D = ContentionTracker::Difference;
  ContentionTracker t(clock_, Options());
  const RouteIngress admitted = Entry("a.example.com");
  const RouteIngress claimed = Entry("a.example.com", "router.apps.example.com", "False",
                                     "HostAlreadyClaimed");
  // A follower: its leader wrote `admitted`, then a stale peer writes
  // `claimed` (or creates it).
  t.Changed("u", "ns/a", Entry("old.example.com"), admitted, &admitted);
  t.Changed("u", "ns/a", admitted, claimed, &admitted, D::kView);
  t.Appeared("v", "ns/b", claimed, &admitted, D::kView);
  ContentionSnapshot s = t.Snapshot();
  EXPECT_EQ(s.contentions, 0);
  EXPECT_EQ(s.suspect_routes, 2u);
  EXPECT_TRUE(t.IsChangeContended("u")) << "not overwritten meanwhile";
  EXPECT_EQ(t.RecheckAfter("u"), seconds(15));
  // The peer then writes what we compute: writable again, nothing counted.
  t.Changed("u", "ns/a", claimed, admitted, &admitted, D::kView);
  EXPECT_FALSE(t.IsChangeContended("u"));
  EXPECT_EQ(t.RecheckAfter("u"), seconds(0));
  // Restored early (views may still differ): another view difference is
  // Suspect again, not counted.
  t.Changed("u", "ns/a", admitted, claimed, &admitted, D::kView);
  EXPECT_EQ(t.Snapshot().contentions, 0);
  EXPECT_TRUE(t.IsChangeContended("u"));
  // The same value again: no change at all.
  t.Changed("v", "ns/b", claimed, claimed, &admitted, D::kView);
  EXPECT_EQ(t.Snapshot().contentions, 0);
  // The block ends; we restore ours (our write): every view has caught up,
  // so changing it away again is a considered disagreement and counts.
  clock_.Advance(seconds(15));
  EXPECT_FALSE(t.IsChangeContended("u"));
  EXPECT_EQ(t.RecheckAfter("u"), seconds(0));
  t.Clear("u", admitted);
  clock_.Advance(seconds(5));
  t.Changed("u", "ns/a", admitted, claimed, &admitted, D::kView);
  EXPECT_EQ(t.Snapshot().contentions, 1);
  EXPECT_TRUE(t.IsChangeContended("u"));
  EXPECT_EQ(t.RecheckAfter("u"), minutes(3)) << "contended: asked again when the interval ends";
  clock_.Advance(minutes(3));
  EXPECT_FALSE(t.IsChangeContended("u"));
  EXPECT_EQ(t.RecheckAfter("u"), seconds(0));
}

// A Suspect route blocks only what a view explains: when the route's own
// spec changes (a new host), the entry we would write differs from the
// existing one beyond the view and is written at once (issue 23, the
// simulator's claims seed 106044529741049: the leader was partitioned just
// after a suspicion and the probe's host change waited 9.6 s). A Contended
// route stays blocked either way.
TEST_F(TrackerTest, SuspicionDoesNotBlockAChangeBeyondTheView) {
  ContentionTracker t(clock_, Options());
  const RouteIngress admitted = Entry("a.example.com");
  // A peer with an older view rejects what we admit.
  t.Changed("u", "ns/a", Entry("old.example.com"), admitted, &admitted);
  t.Changed("u", "ns/a", admitted,
            Entry("a.example.com", "router.apps.example.com", "False", "HostAlreadyClaimed"),
            &admitted, ContentionTracker::Difference::kView);
  EXPECT_TRUE(t.IsChangeContended("u"));
  EXPECT_TRUE(t.IsChangeContended("u", /*beyond_view=*/false));
  EXPECT_FALSE(t.IsChangeContended("u", /*beyond_view=*/true));
  Fight(t, 1);
  EXPECT_TRUE(t.IsChangeContended("uid-1", /*beyond_view=*/true));
}

// Issue 23 item 4: every block tells when it may end, so the status path
// reconciles the route again then (before: a Contended route, and every
// route held by the cut-off, waited for its next change or the resync).
TEST_F(TrackerTest, RecheckAfterTellsWhenEachBlockEnds) {
  ContentionTracker t(clock_, Options());
  const RouteIngress ours = Entry("a.example.com");
  const RouteIngress theirs = Entry("a.other.com");
  t.Clear("u", ours);
  clock_.Advance(seconds(20));
  t.Changed("u", "ns/a", ours, theirs, &ours);
  ASSERT_TRUE(t.IsChangeContended("u"));
  EXPECT_EQ(t.RecheckAfter("u"), minutes(3));
  clock_.Advance(minutes(1));
  EXPECT_EQ(t.RecheckAfter("u"), minutes(2));
  EXPECT_EQ(t.RecheckAfter("never-seen"), seconds(0)) << "not blocked";
  // More than the limit (5): the cut-off holds every route until the flush
  // (6 min after the tracker was made), whatever its own state.
  for (int i = 0; i < 5; ++i) {
    const std::string uid = "v" + std::to_string(i);
    t.Clear(uid, ours);
    t.Changed(uid, "ns/v", ours, theirs, &ours);
  }
  ASSERT_TRUE(t.Snapshot().cutoff_active);
  const Duration to_flush = t.NextFlush() - clock_.Now();
  EXPECT_EQ(to_flush, minutes(6) - seconds(80));
  EXPECT_TRUE(t.IsChangeContended("never-seen"));
  EXPECT_EQ(t.RecheckAfter("never-seen"), to_flush);
  EXPECT_EQ(t.RecheckAfter("u"), to_flush);
  clock_.Advance(to_flush);
  EXPECT_FALSE(t.IsChangeContended("never-seen")) << "the flush ended the cut-off";
  EXPECT_FALSE(t.IsChangeContended("u"));
  EXPECT_EQ(t.RecheckAfter("u"), seconds(0));
}

// The leader of item 2 wrote an entry computed before a host holder was
// deleted: it replaces our own write with a value that differs only in
// host claims. Suspect, not counted (it was counted before the fix).
TEST_F(TrackerTest, ViewDifferenceReplacingOurOwnWriteIsSuspect) {
  using D = ContentionTracker::Difference;
  ContentionTracker t(clock_, Options());
  const RouteIngress admitted = Entry("a.example.com");
  const RouteIngress claimed = Entry("a.example.com", "router.apps.example.com", "False",
                                     "HostAlreadyClaimed");
  t.Clear("u", admitted);  // we wrote it
  t.Changed("u", "ns/a", admitted, claimed, &admitted, D::kView);
  EXPECT_EQ(t.Snapshot().contentions, 0);
  EXPECT_TRUE(t.IsChangeContended("u"));
  EXPECT_EQ(t.RecheckAfter("u"), seconds(15));
}

// Removals: another writer removing an entry we would remove too ends a
// suspicion; removing one we keep is a view difference (namespace labels).
TEST_F(TrackerTest, RemovalByAnotherWriter) {
  ContentionTracker t(clock_, Options());
  const RouteIngress ours = Entry("a.example.com");
  t.Clear("u", ours);
  t.Removed("u", "ns/a", ours, &ours);
  EXPECT_EQ(t.Snapshot().contentions, 0);
  EXPECT_EQ(t.Snapshot().suspect_routes, 1u);
  t.Appeared("x", "ns/d", Entry("d.other.com"), nullptr);  // suspect: we would have none
  EXPECT_TRUE(t.IsChangeContended("x"));
  t.Removed("x", "ns/d", Entry("d.other.com"), nullptr);  // removed as we would
  EXPECT_FALSE(t.IsChangeContended("x"));
  // A router that keeps re-creating what we remove: once we removed it
  // after the block, its next creation counts.
  t.Appeared("w", "ns/c", Entry("c.other.com"), nullptr);
  clock_.Advance(seconds(15));
  t.Clear("w", std::nullopt);  // we remove it again, 15 s after the suspicion
  t.Appeared("w", "ns/c", Entry("c.other.com"), nullptr);
  EXPECT_EQ(t.Snapshot().contentions, 1);
}

// Issue 23 (simulator steady seed 91): an entry we keep, removed by
// another writer, is not re-created while the route is Suspect; the
// cut-off blocks changes of existing entries, never a creation, so a
// blocked creation ends with the route's own block.
TEST_F(TrackerTest, RemovalBlocksOurCreationForTheRouteOnly) {
  using D = ContentionTracker::Difference;
  ContentionTracker t(clock_, Options());
  const RouteIngress ours = Entry("a.example.com");
  t.Clear("u", ours);
  t.Removed("u", "ns/a", ours, &ours);
  EXPECT_TRUE(t.IsCreationBlocked("u"));
  EXPECT_EQ(t.RecheckCreationAfter("u"), seconds(15));
  EXPECT_FALSE(t.IsCreationBlocked("never-seen"));
  for (int i = 0; i <= Options().limit; ++i) {
    const std::string uid = "c" + std::to_string(i);
    const RouteIngress mine = Entry(uid + ".example.com");
    t.Clear(uid, mine);
    t.Changed(uid, "ns/" + uid, mine, Entry("x.other.com"), &mine, D::kConfiguration);
  }
  ASSERT_TRUE(t.Snapshot().cutoff_active);
  EXPECT_FALSE(t.IsCreationBlocked("never-seen")) << "the cut-off never blocks a creation";
  EXPECT_EQ(t.RecheckCreationAfter("u"), seconds(15));
  EXPECT_GT(t.RecheckAfter("u"), seconds(15)) << "a change waits for the flush";
  clock_.Advance(seconds(15));
  EXPECT_FALSE(t.IsCreationBlocked("u"));
  EXPECT_TRUE(t.IsChangeContended("u"));
}

// Issue 23 (simulator claims seed 278486999058658, perturbed): a peer
// removed our entry (its namespace view said the route left the shard):
// Suspect. A minute later the namespace is back in the shard and a peer
// replica writes our entry again: the suspicion is over, but that write is
// no considered disagreement of ours, so it does not arm the route. When
// the namespace leaves again, the leader's removal reaching us before our
// namespace watch does is a view difference again, not a contention
// (before: armed by the peer's write, it counted, with one configuration).
TEST_F(TrackerTest, PeerRestoringASuspectValueDoesNotArmTheRoute) {
  ContentionTracker t(clock_, Options());
  const RouteIngress ours = Entry("a.example.com");
  t.Clear("u", ours);
  t.Removed("u", "ns/a", ours, &ours);
  ASSERT_EQ(t.Snapshot().suspect_routes, 1u);
  clock_.Advance(seconds(60));
  t.Appeared("u", "ns/a", ours, &ours);  // a peer replica of ours
  EXPECT_EQ(t.Snapshot().suspect_routes, 0u);
  clock_.Advance(seconds(10));
  t.Removed("u", "ns/a", ours, &ours);
  EXPECT_EQ(t.Snapshot().contentions, 0);
  EXPECT_EQ(t.Snapshot().suspect_routes, 1u);
}

// Issue 23 (simulator claims seed 33): the same, but our own view caught
// up with the peer's removal (Agreed: our reconcile found no entry and
// would keep none), and we re-created the entry ourselves much later. That
// write is no restore of a suspicion either: it does not arm the route
// (before: still Suspect, our write armed it and the next view difference
// counted).
TEST_F(TrackerTest, AgreementEndsASuspicionWithoutArming) {
  ContentionTracker t(clock_, Options());
  const RouteIngress ours = Entry("a.example.com");
  t.Clear("u", ours);
  t.Removed("u", "ns/a", ours, &ours);
  ASSERT_EQ(t.Snapshot().suspect_routes, 1u);
  t.Agreed("u");
  EXPECT_EQ(t.Snapshot().suspect_routes, 0u);
  EXPECT_FALSE(t.IsCreationBlocked("u"));
  clock_.Advance(seconds(60));
  t.Clear("u", ours);  // we re-create it
  clock_.Advance(seconds(10));
  t.Removed("u", "ns/a", ours, &ours);
  EXPECT_EQ(t.Snapshot().contentions, 0);
  EXPECT_EQ(t.Snapshot().suspect_routes, 1u);
  // Agreement with a Contended route's value ends nothing: only a
  // suspicion of an older view is resolved by our view catching up.
  const RouteIngress theirs = Entry("b.example.com", "router.other.com");
  t.Clear("v", ours);
  t.Changed("v", "ns/b", ours, theirs, &ours);
  ASSERT_EQ(t.Snapshot().contended_routes, 1u);
  t.Agreed("v");
  EXPECT_EQ(t.Snapshot().contended_routes, 1u);
}

TEST_F(TrackerTest, ManyStaleViewsNeverCutOff) {
  using D = ContentionTracker::Difference;
  ContentionTracker t(clock_, Options());
  for (int i = 0; i < 20; ++i) {
    const RouteIngress admitted = Entry("r" + std::to_string(i) + ".example.com");
    RouteIngress claimed = admitted;
    claimed.conditions[0].status = "False";
    claimed.conditions[0].reason = "HostAlreadyClaimed";
    t.Appeared("u" + std::to_string(i), "ns/r" + std::to_string(i), claimed, &admitted, D::kView);
  }
  EXPECT_FALSE(t.Snapshot().cutoff_active);
  EXPECT_FALSE(t.IsChangeContended("never-seen"));
  EXPECT_EQ(t.Flush(), "") << "nothing to warn about";
}

TEST_F(TrackerTest, HostChangeByRouteOwnerIsNeverContention) {
  // A follower replica never wrote route u. The owner changes spec.host
  // twice; each time our leader writes the new host, which is exactly what
  // this replica computes for the new object.
  ContentionTracker t(clock_, Options());
  const RouteIngress v1 = Entry("one.example.com"), v2 = Entry("two.example.com"),
                     v3 = Entry("three.example.com");
  t.Changed("u", "ns/a", v1, v2, &v2);
  t.Changed("u", "ns/a", v2, v3, &v3);
  EXPECT_FALSE(t.IsChangeContended("u"));
  EXPECT_EQ(t.Snapshot().contentions, 0);
  // Without `desired` (we would have no entry) a change tells nothing.
  ContentionTracker blind(clock_, Options());
  blind.Changed("u", "ns/a", v1, v2);
  blind.Changed("u", "ns/a", v2, v3);
  EXPECT_FALSE(blind.IsChangeContended("u"));
  EXPECT_EQ(blind.Snapshot().contentions, 0);
}

TEST_F(TrackerTest, ConditionOnlyChangeCounts) {
  ContentionTracker t(clock_, Options());
  const RouteIngress ours = Entry("a.example.com");
  const RouteIngress theirs = Entry("a.example.com", "router.apps.example.com", "False",
                                    "HostAlreadyClaimed");
  t.Clear("u", ours);
  t.Changed("u", "ns/a", ours, theirs, &ours);
  EXPECT_TRUE(t.IsChangeContended("u"));
}

TEST_F(TrackerTest, TransitionTimeOrConditionOrderOnlyDoNotCount) {
  ContentionTracker t(clock_, Options());
  RouteIngress ours = Entry("a.example.com");
  ours.conditions.push_back(RouteCondition{"Extra", "True", "", "", ""});
  RouteIngress ltt = ours;
  ltt.conditions[0].last_transition_time = "2026-11-29T15:00:00Z";
  RouteIngress reordered = ours;
  std::swap(reordered.conditions[0], reordered.conditions[1]);
  t.Clear("u", ours);
  t.Changed("u", "ns/a", ours, ltt, &ours);
  t.Changed("u", "ns/a", ours, reordered);  // no `desired`: still no change
  EXPECT_FALSE(t.IsChangeContended("u"));
  EXPECT_EQ(t.Snapshot().contentions, 0);
  EXPECT_EQ(t.Snapshot().tracked_routes, 1u);
}

TEST_F(TrackerTest, GlobalCutoffAndResetOnFlush) {
  ContentionTracker t(clock_, Options());  // limit 5
  for (int n = 0; n < 5; ++n) Fight(t, n);
  EXPECT_FALSE(t.IsChangeContended("fresh"));
  EXPECT_FALSE(t.Snapshot().cutoff_active);
  Fight(t, 5);  // the 6th: more than the limit
  EXPECT_TRUE(t.Snapshot().cutoff_active);
  EXPECT_TRUE(t.IsChangeContended("fresh"));  // every existing entry is blocked
  Fight(t, 6);                                 // not tracked during the cut-off
  EXPECT_EQ(t.Snapshot().contentions, 6);
  // A flush within the interval keeps the still-Contended routes counted.
  clock_.Advance(minutes(1));
  t.Flush();
  EXPECT_EQ(t.Snapshot().contentions, 6);
  EXPECT_TRUE(t.IsChangeContended("fresh"));
  // Once they are older than the interval, a flush drops them.
  clock_.Advance(minutes(2) + seconds(1));
  t.Flush();
  auto s = t.Snapshot();
  EXPECT_EQ(s.contentions, 0);
  EXPECT_FALSE(s.cutoff_active);
  EXPECT_FALSE(t.IsChangeContended("fresh"));
  EXPECT_FALSE(t.IsChangeContended("uid-0"));
}

TEST_F(TrackerTest, FlushResetsCountToStillContended) {
  ContentionTracker t(clock_, Options());
  for (int n = 0; n < 3; ++n) Fight(t, n);
  clock_.Advance(minutes(2));
  for (int n = 3; n < 5; ++n) Fight(t, n);
  clock_.Advance(minutes(1) + seconds(30));  // first three are 3.5 min old
  t.Flush();
  auto s = t.Snapshot();
  EXPECT_EQ(s.contentions, 2);
  EXPECT_EQ(s.contended_routes, 2u);
  EXPECT_EQ(s.contentions_in_window, 0);
  EXPECT_FALSE(t.IsChangeContended("uid-0"));
  EXPECT_TRUE(t.IsChangeContended("uid-4"));
}

TEST_F(TrackerTest, WarningText) {
  ContentionTracker t(clock_, Options());
  RouteIngress ours = Entry("a.apps.example.com", "router-default.apps.example.com");
  RouteIngress theirs = Entry("a.apps.other.com", "router-default.apps.other.com", "False",
                              "HostAlreadyClaimed");
  t.Clear("u", ours);
  clock_.Advance(minutes(1));
  t.Changed("u", "team/a", ours, theirs, &ours);
  // Logged at once (issue 13: before, at the next flush, up to 6 min later).
  const std::string prompt =
      "router \"default\": another writer using router name \"default\" changed the "
      "status.ingress entry of team/a to a value this router does not compute "
      "(ours={host=a.apps.example.com canonicalHostname=router-default.apps.example.com "
      "wildcardPolicy=None Admitted=True} theirs={host=a.apps.other.com "
      "canonicalHostname=router-default.apps.other.com wildcardPolicy=None "
      "Admitted=False(HostAlreadyClaimed)}). Writes to this route are paused for 3m; more "
      "than 5 contentions pause all changes of existing entries. Make the configuration of "
      "every router using router name \"default\" consistent (hostname template, canonical "
      "hostname, wildcard policy, route and namespace selectors), or give them different "
      "router names.";
  EXPECT_EQ(t.LastWarning(), prompt);
  EXPECT_EQ(t.Snapshot().warnings, 1u);
  clock_.Advance(minutes(1) + seconds(30));
  // The flush returns the window's summary (VLOG only).
  const std::string expected =
      "router \"default\": 1 status contention(s) in the last 2m30s: another writer using "
      "router name \"default\" changed our status.ingress entries to values this router does "
      "not compute (team/a ours={host=a.apps.example.com "
      "canonicalHostname=router-default.apps.example.com wildcardPolicy=None Admitted=True} "
      "theirs={host=a.apps.other.com canonicalHostname=router-default.apps.other.com "
      "wildcardPolicy=None Admitted=False(HostAlreadyClaimed)}). Writes to contended routes "
      "are paused for 3m. Make the configuration of every router using router name "
      "\"default\" consistent (hostname template, canonical hostname, wildcard policy, route "
      "and namespace selectors), or give them different router names.";
  EXPECT_EQ(t.Flush(), expected);
  EXPECT_EQ(t.Flush(), "");  // no new contention: no summary
  EXPECT_EQ(t.LastWarning(), prompt);
  EXPECT_EQ(t.Snapshot().warnings, 1u);
}

// Issue 13: the operator is told at once (the first contention of a window,
// naming the route with ours and theirs; the one that engages the cut-off),
// at most one warning of each kind per window, however long the fight.
TEST_F(TrackerTest, WarningsAreLoggedAtOnceAtMostOneOfEachPerWindow) {
  WarningSink sink;
  google::AddLogSink(&sink);
  ContentionTracker t(clock_, Options());  // limit 5, interval 3m
  clock_.Advance(seconds(10));
  Fight(t, 0);
  auto lines = sink.Lines();
  ASSERT_EQ(lines.size(), 1u) << "the first contention is logged at once";
  EXPECT_NE(lines[0].find("changed the status.ingress entry of ns/r0"), std::string::npos);
  EXPECT_NE(lines[0].find("ours={host=r0.example.com"), std::string::npos);
  EXPECT_NE(lines[0].find("theirs={host=r0.other.com"), std::string::npos);
  for (int n = 1; n < 5; ++n) Fight(t, n);
  EXPECT_EQ(sink.Lines().size(), 1u) << "below the limit: one warning per window";
  clock_.Advance(seconds(20));
  Fight(t, 5);  // the 6th engages the cut-off: logged at once
  lines = sink.Lines();
  ASSERT_EQ(lines.size(), 2u);
  const std::string& w = lines[1];
  EXPECT_NE(w.find("router \"default\": 6 status contention(s) in the last 30s"),
            std::string::npos)
      << w;
  EXPECT_NE(w.find("ns/r0 ours="), std::string::npos);
  EXPECT_NE(w.find("; ns/r1 ours="), std::string::npos);
  EXPECT_NE(w.find("; ns/r2 ours="), std::string::npos);
  EXPECT_EQ(w.find("ns/r3"), std::string::npos) << "at most three examples";
  EXPECT_NE(w.find("more than 5 contentions paused all changes"), std::string::npos);
  // The fight goes on: nothing more this window (not tracked under the
  // cut-off; and no warning from calls or the flush).
  for (int n = 6; n < 40; ++n) Fight(t, n);
  for (int i = 0; i < 10; ++i) t.IsChangeContended("uid-1");
  EXPECT_EQ(sink.Lines().size(), 2u);
  EXPECT_EQ(t.NextFlush(), clock_.Now() - seconds(30) + minutes(6));
  clock_.Advance(minutes(6));  // the next call flushes: a new window
  EXPECT_EQ(sink.Lines().size(), 2u) << "the flush logs no warning";
  Fight(t, 41);
  Fight(t, 42);
  google::RemoveLogSink(&sink);
  lines = sink.Lines();
  ASSERT_EQ(lines.size(), 3u) << "the new window's first contention";
  EXPECT_NE(lines[2].find("entry of ns/r41"), std::string::npos);
  EXPECT_EQ(lines[2], t.LastWarning());
  auto s = t.Snapshot();
  EXPECT_EQ(s.flushes, 1u);
  EXPECT_EQ(s.warnings, 3u);
  EXPECT_EQ(s.contentions_in_window, 2);
}

TEST_F(TrackerTest, PrunesOldCandidates) {
  ContentionTracker t(clock_, Options());
  t.Clear("old", Entry("old.example.com"));
  clock_.Advance(minutes(6));
  t.Clear("new", Entry("new.example.com"));
  t.Flush();  // "old" is 6 min old: kept (candidates live 3 x interval)
  EXPECT_EQ(t.Snapshot().tracked_routes, 2u);
  clock_.Advance(minutes(3) + seconds(1));
  t.Flush();  // "old" is 9m1s old: dropped; "new" 3m1s: kept
  EXPECT_EQ(t.Snapshot().tracked_routes, 1u);
  // A dropped candidate starts over: its next change is a Candidate again.
  t.Changed("old", "ns/old", Entry("old.example.com"), Entry("old.other.com"));
  EXPECT_FALSE(t.IsChangeContended("old"));
}

TEST_F(TrackerTest, ClearWithoutEntryAndForget) {
  ContentionTracker t(clock_, Options());
  Fight(t, 1);
  EXPECT_TRUE(t.IsChangeContended("uid-1"));
  t.Forget("uid-1");
  EXPECT_FALSE(t.IsChangeContended("uid-1"));
  t.Clear("uid-2", Entry("x.example.com"));
  t.Clear("uid-2", std::nullopt);  // we removed our entry
  EXPECT_EQ(t.Snapshot().tracked_routes, 1u) << "until its echo";
  t.Removed("uid-2", "ns/r2", Entry("x.example.com"), nullptr);  // the echo
  EXPECT_EQ(t.Snapshot().tracked_routes, 0u);
}

// The simulator's claims seed 71387308572265: our leader removed an entry
// (its namespace view lagged), and by the time the removal's echo arrived
// its view had caught up and wanted the entry. The echo looked like another
// writer removing what we keep: Suspect on our own write, armed by our
// restore 15 s later, and a legitimate removal a minute after (the
// namespace left the shard; our namespace watch 36 ms behind) counted as a
// contention with one configuration.
TEST_F(TrackerTest, EchoOfOurRemovalAfterOurViewChangedIsNoEvidence) {
  ContentionTracker t(clock_, Options());
  const RouteIngress entry = Entry("a.example.com");
  t.Clear("u", entry);
  t.Clear("u", std::nullopt);                // we removed it (our view: outside the shard)
  t.Removed("u", "ns/a", entry, &entry);     // its echo, our view now keeps it
  ContentionSnapshot s = t.Snapshot();
  EXPECT_EQ(s.suspect_routes, 0u);
  EXPECT_EQ(s.contentions, 0);
  EXPECT_FALSE(t.IsChangeContended("u")) << "our own write blocks nothing";
  clock_.Advance(seconds(15));
  t.Clear("u", entry);  // we restore it (before the fix: blocked until now, then armed)
  clock_.Advance(minutes(1));
  t.Removed("u", "ns/a", entry, &entry);
  EXPECT_EQ(t.Snapshot().contentions, 0) << "a lagging view difference later is not counted";
  EXPECT_EQ(t.Snapshot().suspect_routes, 1u);
}

TEST_F(TrackerTest, CustomLimitAndInterval) {
  auto o = Options();
  o.limit = 0;
  o.interval = seconds(10);
  ContentionTracker t(clock_, o);
  Fight(t, 1);
  EXPECT_TRUE(t.Snapshot().cutoff_active);
  EXPECT_TRUE(t.IsChangeContended("any"));
  clock_.Advance(seconds(20));  // auto flush after 2 x interval
  EXPECT_FALSE(t.IsChangeContended("any"));
  EXPECT_NE(t.LastWarning().find("paused for 10s"), std::string::npos);
}

TEST_F(TrackerTest, ConcurrentInformerAndWriters) {
  ContentionTracker t(clock_, Options());
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    int i = 0;
    while (!stop) {
      const std::string uid = "uid-" + std::to_string(i++ % 50);
      t.IsChangeContended(uid);
      t.Clear(uid, Entry("w.example.com"));
    }
  });
  for (int i = 0; i < 5000; ++i) {
    const std::string uid = "uid-" + std::to_string(i % 50);
    t.Changed(uid, "ns/x", Entry("w.example.com"), Entry("i" + std::to_string(i) + ".com"));
  }
  stop = true;
  writer.join();
  auto s = t.Snapshot();
  EXPECT_LE(s.contended_routes, 50u);
  EXPECT_LE(s.contentions, 6);  // tracking stops past the limit
}

// Issue 23: a route re-queued when its block ends is rewritten once (the
// probe: a careless writer's value is repaired); a writer that fights the
// probe again is a live fight, and the route is then held (not re-queued,
// not rewritten) until another writer sets ours, so a fight settles
// instead of replaying every window. As seen by a follower replica, whose
// leader makes the writes, and under the cut-off.
TEST_F(TrackerTest, AFightAnsweringTheProbeIsHeld) {
  ContentionTrackerOptions o = Options();
  o.limit = 1;
  ContentionTracker t(clock_, o);
  const int n = 4;
  auto uid = [](int i) { return "u" + std::to_string(i); };
  std::vector<RouteIngress> our_entries, their_entries;
  for (int i = 0; i < n; ++i) {
    our_entries.push_back(Entry("r" + std::to_string(i) + ".example.com"));
    their_entries.push_back(Entry("r" + std::to_string(i) + ".other.com"));
  }
  auto ours = [&](int i) -> const RouteIngress& { return our_entries[i]; };
  auto theirs = [&](int i) -> const RouteIngress& { return their_entries[i]; };
  for (int i = 0; i < n; ++i) t.Changed(uid(i), "ns/r", theirs(i), ours(i), &ours(i));
  clock_.Advance(seconds(30));
  for (int i = 0; i < n; ++i) t.Changed(uid(i), "ns/r", ours(i), theirs(i), &ours(i));
  ASSERT_TRUE(t.Snapshot().cutoff_active) << "2 counted, 2 under the cut-off";
  for (int i = 0; i < n; ++i) EXPECT_GT(t.RecheckAfter(uid(i)), seconds(0)) << i;
  clock_.Advance(t.NextFlush() - clock_.Now());
  for (int i = 0; i < n; ++i) {
    EXPECT_FALSE(t.IsChangeContended(uid(i))) << "the block ended: " << i;
    t.Changed(uid(i), "ns/r", theirs(i), ours(i), &ours(i));  // our leader's probe
  }
  clock_.Advance(seconds(30));
  for (int i = 0; i < n; ++i) t.Changed(uid(i), "ns/r", ours(i), theirs(i), &ours(i));
  clock_.Advance(minutes(30));
  for (int i = 0; i < n; ++i) {
    EXPECT_TRUE(t.IsChangeContended(uid(i))) << "held: " << i;
    EXPECT_EQ(t.RecheckAfter(uid(i)), seconds(0)) << "held: " << i;
  }
  EXPECT_FALSE(t.Snapshot().cutoff_active) << "held routes are not counted";
  // The other writer gives in: it writes ours; the route is free again.
  t.Changed(uid(0), "ns/r", theirs(0), ours(0), &ours(0));
  EXPECT_FALSE(t.IsChangeContended(uid(0)));
}

// Issue 23, fight seed 179923308602931: a follower that listed a route
// after its leader wrote it has no record of it; when another writer then
// replaces our entry after the cut-off engaged, the fight must still be
// remembered, so that the leader's rewrite at the flush is the probe and
// the other writer's answer holds the route (before, the follower
// forgot it, took the answer for a first contention, and probed again
// itself once it led: the fight went on every window).
TEST_F(TrackerTest, ARouteFirstFoughtUnderTheCutoffIsHeldAfterItsProbe) {
  ContentionTrackerOptions o = Options();
  o.limit = 1;
  ContentionTracker t(clock_, o);
  for (int i = 0; i < 2; ++i) Fight(t, i);
  ASSERT_TRUE(t.Snapshot().cutoff_active);
  const RouteIngress ours = Entry("late.example.com");
  const RouteIngress theirs = Entry("late.other.com", "router.other.com");
  t.Changed("late", "ns/late", ours, theirs, &ours);  // no record before: listed as ours
  EXPECT_TRUE(t.IsChangeContended("late")) << "the cut-off blocks it";
  EXPECT_GT(t.RecheckAfter("late"), seconds(0)) << "asked again at the flush";
  clock_.Advance(t.NextFlush() - clock_.Now());
  EXPECT_FALSE(t.IsChangeContended("late")) << "the block ended";
  t.Changed("late", "ns/late", theirs, ours, &ours);  // our leader's probe
  clock_.Advance(seconds(30));
  t.Changed("late", "ns/late", ours, theirs, &ours);  // the other writer answers
  clock_.Advance(minutes(30));
  EXPECT_TRUE(t.IsChangeContended("late")) << "a live fight: held";
  EXPECT_EQ(t.RecheckAfter("late"), seconds(0)) << "held, not re-queued";
  // Another writer's value we never computed (a stale entry replaced) is no fight.
  const RouteIngress stale = Entry("stale.example.com");
  for (int i = 2; i < 4; ++i) Fight(t, i);
  ASSERT_TRUE(t.Snapshot().cutoff_active);
  t.Changed("other", "ns/other", stale, theirs, &ours);
  clock_.Advance(t.NextFlush() - clock_.Now());
  t.Changed("other", "ns/other", theirs, ours, &ours);
  t.Changed("other", "ns/other", ours, theirs, &ours);
  clock_.Advance(minutes(30));
  EXPECT_FALSE(t.IsChangeContended("other")) << "counted once, not held";
}

// A careless writer's value is repaired by the probe and, left alone
// afterwards, never held.
TEST_F(TrackerTest, ACarelessWriterIsRepairedOnce) {
  ContentionTracker t(clock_, Options());
  const RouteIngress ours = Entry("a.example.com");
  const RouteIngress garbage = Entry("a.example.com", "router.apps.example.com", "False", "Garbage");
  t.Clear("u", ours);
  t.Changed("u", "ns/a", ours, garbage, &ours);
  EXPECT_EQ(t.RecheckAfter("u"), minutes(3));
  clock_.Advance(minutes(3));
  EXPECT_FALSE(t.IsChangeContended("u"));
  t.Clear("u", ours);  // the probe
  t.Changed("u", "ns/a", garbage, ours, &ours);  // its echo
  clock_.Advance(minutes(30));
  EXPECT_FALSE(t.IsChangeContended("u"));
  EXPECT_EQ(t.Snapshot().contended_routes, 0u);
}


// Issue 23 item 5, confirmed: the start-up rule reads the writer's wall
// clock (lastTransitionTime) against ours with 1 s of slack (and, for the
// gate's ambiguous entries, 5 s more), so a writer whose clock is far off
// is misjudged both ways. What bounds the damage
// since item 4: a false positive (a previous configuration's entry taken
// for a live fight) is repaired when its block ends, not at the resync;
// a false negative is overwritten once, and a live writer's answer then
// counts through the watch as usual.
TEST_F(TrackerTest, ListedRuleMisjudgesSkewedWritersAndTheBlockEndBoundsIt) {
  ContentionTracker t(clock_, Options());
  const RouteIngress ours = Entry("a.example.com"), theirs = Entry("a.other.com");
  const auto d = ContentionTracker::Difference::kConfiguration;
  const auto started = clock_.WallNow();
  clock_.Advance(seconds(2));  // the initial list
  // Writer 5 s ahead: written 4 s before we started, stamped 1 s after.
  t.Listed("ahead", "ns/a", theirs, &ours, d, started - seconds(4) + seconds(5));
  EXPECT_TRUE(t.IsChangeContended("ahead")) << "misjudged as written since we started";
  EXPECT_EQ(t.RecheckAfter("ahead"), minutes(3)) << "repaired when its block ends";
  clock_.Advance(minutes(3));
  EXPECT_FALSE(t.IsChangeContended("ahead"));
  // Writer 10 s behind: written 1 s after we started, stamped 9 s before
  // (up to 6 s behind it would still fall in listed_recent, issue 59).
  t.Listed("behind", "ns/b", theirs, &ours, d, started + seconds(1) - seconds(10));
  EXPECT_FALSE(t.IsChangeContended("behind")) << "misjudged as older than us: overwritten";
  t.Clear("behind", ours);
  t.Changed("behind", "ns/b", ours, theirs, &ours);  // the live writer answers
  EXPECT_TRUE(t.IsChangeContended("behind"));
  EXPECT_EQ(t.Snapshot().contentions, 2) << "the misjudged entry's and the live writer's";
}

}  // namespace
}  // namespace routestatus::conflict
