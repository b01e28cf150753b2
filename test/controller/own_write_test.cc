// Issue 23 item 2: the record of our own writes when the work queue
// coalesces our write's echo with a later update that leaves our entry
// alone. Such an update is our echo (or nobody's), never a peer's write:
// taking it for a peer's made the leader step down.

#include <functional>
#include <string>

#include <gtest/gtest.h>

#include "controller/status_syncer.h"
#include "test/controller/harness.h"
#include "test/testing/status_patch.h"

namespace routestatus::controller::testing {
namespace {

using lease::EntryWriter;
using nlohmann::json;

// Our first write of ns/web, then its echo delivered (the key is queued, not
// reconciled), then `change` applied on the server and delivered too: the
// queue holds the key once, so one reconcile sees both updates.
void WriteThenCoalesce(Harness& h, const std::function<void(json&)>& change) {
  h.Create(Harness::RouteJson("ns", "web", "www.example.com"));
  ASSERT_EQ(h.Drain(), 1);
  ASSERT_EQ(h.api.successful_puts, 1);
  h.Deliver("ns", "web");  // our write's echo
  json o = h.api.Object("ns", "web");
  change(o);
  h.api.Put(o);
  h.Deliver("ns", "web");
  ASSERT_EQ(h.queue.keys.size(), 1u) << "one reconcile for both updates";
  h.Drain();
}

void ExpectOurEcho(const Harness& h) {
  EXPECT_EQ(h.api.successful_puts, 1) << "nothing to write";
  EXPECT_EQ(h.lease.writers, std::vector<EntryWriter>{EntryWriter::kUs})
      << "the leader would step down";
  EXPECT_EQ(h.stats.skipped_own_write.load(), 1);
  EXPECT_EQ(h.stats.skipped_follower.load(), 0);
  EXPECT_EQ(h.syncer.own_write_records(), 0u) << "the echo was seen";
}

// Each of these failed before the fix: the lease was told kPeer.
TEST(OwnWriteTest, EchoCoalescedWithALabelChangeIsOurs) {
  Harness h;
  WriteThenCoalesce(h, [](json& o) { o["metadata"]["labels"] = {{"tier", "web"}}; });
  ExpectOurEcho(h);
}

TEST(OwnWriteTest, EchoCoalescedWithAnAnnotationChangeIsOurs) {
  Harness h;
  WriteThenCoalesce(h, [](json& o) { o["metadata"]["annotations"]["note"] = "changed"; });
  ExpectOurEcho(h);
}

TEST(OwnWriteTest, EchoCoalescedWithAnotherRoutersEntryInTheSameSecondIsOurs) {
  Harness h;
  WriteThenCoalesce(h, [](json& o) {
    json ours = o["status"]["ingress"][0];
    json other = ours;
    other["routerName"] = "internal";
    other["host"] = "www.internal.example.com";
    o["status"]["ingress"].push_back(other);  // same lastTransitionTime: a tie is ours
  });
  ExpectOurEcho(h);
}

// The other way round: our echo coalesced with a peer's write of another
// entry (the route moved, a replica of our router name wrote first) is
// the peer's write, and the leader follows.
TEST(OwnWriteTest, EchoCoalescedWithAPeersDifferentEntryIsThePeers) {
  Harness h;
  WriteThenCoalesce(h, [&h](json& o) {
    o["spec"]["host"] = "moved.example.com";
    auto moved = kubeclient::RouteFromJson(o).value();
    auto entry = h.syncer.Desired(moved, nullptr);
    ASSERT_TRUE(entry.has_value());
    o = routestatus::testing::WithIngressEntry(o, "default", entry).value();
  });
  EXPECT_EQ(h.api.successful_puts, 1) << "the peer wrote what we compute";
  EXPECT_EQ(h.lease.writers, std::vector<EntryWriter>{EntryWriter::kPeer});
  EXPECT_EQ(h.stats.skipped_follower.load(), 1);
  EXPECT_EQ(h.syncer.own_write_records(), 0u);
}

// A peer's write of our entry reaches the cache together with a newer
// change of the route, so the entry is not what we want now: nothing is
// extended, and our work for the newer change is queued.
TEST(OwnWriteTest, PeersWriteCoalescedWithANewerChangeQueuesTheNewerChange) {
  Harness h;
  h.lease.run_immediately = false;  // we follow: the work is held
  h.Create(Harness::RouteJson("ns", "web", "www.example.com"));
  h.Drain();
  ASSERT_EQ(h.lease.pending.count("ns/web"), 1u);
  json o = h.api.Object("ns", "web");
  auto route = kubeclient::RouteFromJson(o).value();
  auto entry = h.syncer.Desired(route, nullptr);
  ASSERT_TRUE(entry.has_value());
  h.api.Put(routestatus::testing::WithIngressEntry(o, "default", entry).value());  // the leader
  h.Deliver("ns", "web");
  json moved = h.api.Object("ns", "web");
  moved["spec"]["host"] = "moved.example.com";
  h.api.Put(moved);
  h.Deliver("ns", "web");
  ASSERT_EQ(h.queue.keys.size(), 1u) << "one reconcile for both updates";
  h.Drain();
  EXPECT_TRUE(h.lease.extended.empty());
  EXPECT_EQ(h.lease.pending.count("ns/web"), 1u) << "the newer change is queued";
  EXPECT_EQ(h.api.successful_puts, 0);
}

// Our own echo coalesced with a newer change: the newer change is written.
TEST(OwnWriteTest, OurEchoCoalescedWithANewerChangeWritesTheNewerChange) {
  Harness h;
  WriteThenCoalesce(h, [](json& o) { o["spec"]["host"] = "moved.example.com"; });
  EXPECT_EQ(h.api.successful_puts, 2) << "the newer change is written";
}

// While our PUT is in flight, the watch brings its echo coalesced with a
// label change: not a peer's write either.
TEST(OwnWriteTest, EchoInFlightCoalescedWithALabelChangeIsOurs) {
  Harness h;
  h.Create(Harness::RouteJson("ns", "web", "www.example.com"));
  h.api.after_status_put = [&h] {
    h.Deliver("ns", "web");  // echo
    json o = h.api.Object("ns", "web");
    o["metadata"]["labels"] = {{"tier", "web"}};
    h.api.Put(o);
    h.Deliver("ns", "web");
    h.Drain();  // reconciled before our PUT's answer is back
  };
  h.Drain();
  EXPECT_EQ(h.api.successful_puts, 1);
  EXPECT_EQ(h.lease.writers, std::vector<EntryWriter>{EntryWriter::kUs});
  EXPECT_EQ(h.syncer.own_write_records(), 0u);
}

// Issue 23 (simulator steady seed 46, perturbed): we wrote ns/a; before
// its echo reached the cache, a twin claiming the same host was created,
// and the claim fan-out reconciled ns/a again from the cache, which is
// still behind our write. The entry we compute is the one we just wrote
// over that very version: nothing to write (before: a PUT naming the old
// version, a 409 against our own write, and the leader followed).
TEST(OwnWriteTest, ReconcileBeforeOurEchoDoesNotWriteAgain) {
  Harness h;
  h.Create(Harness::RouteJson("ns", "a", "www.example.com"));
  ASSERT_EQ(h.Drain(), 1);
  ASSERT_EQ(h.api.successful_puts, 1);
  h.Create(Harness::RouteJson("ns", "b", "www.example.com", "2026-01-02T00:00:00Z"));
  h.Drain();
  EXPECT_EQ(h.api.successful_puts, 2) << "b: rejected, host claimed by a";
  EXPECT_EQ(h.api.puts.size(), 2u) << "no PUT of a naming the version before our write";
  for (lease::WorkResult r : h.lease.results) EXPECT_NE(r, lease::WorkResult::kRelease);
  // The echo: ours, nothing more to write.
  h.Deliver("ns", "a");
  h.Drain();
  EXPECT_EQ(h.api.puts.size(), 2u);
  EXPECT_EQ(h.syncer.own_write_records(), 1u) << "b's echo is still to come";
}

// Issue 23 (the simulator's partitioned slow-leader seed 20116): our write
// of ns/web (host changed) was answered, but its echo never reached the
// watch: the watch broke, and the relist that followed showed a later
// version in which the owner had moved the host back and a peer had
// written the entry we had before. The cache went from the version before
// our write to one past it with our entry as it was, so no reconcile saw
// an entry change, and the record of our write stayed for good (one per
// such route). A reconcile that finds the cache past our write forgets it.
TEST(OwnWriteTest, EchoSkippedByARelistIsForgotten) {
  Harness h;
  h.Create(Harness::RouteJson("ns", "web", "www.example.com"));
  ASSERT_EQ(h.Drain(), 1);
  h.Deliver("ns", "web");  // our first write's echo
  h.Drain();
  ASSERT_EQ(h.syncer.own_write_records(), 0u);
  json moved = h.api.Object("ns", "web");
  moved["spec"]["host"] = "other.example.com";
  h.api.Put(moved);
  h.Deliver("ns", "web");
  h.Drain();
  ASSERT_EQ(h.api.successful_puts, 2) << "our entry for the new host";
  ASSERT_EQ(h.syncer.own_write_records(), 1u) << "its echo is to come";
  // Not delivered. The owner moves the host back; a peer writes the entry
  // for it; the relist shows only that.
  json back = h.api.Object("ns", "web");
  back["spec"]["host"] = "www.example.com";
  h.api.Put(back);
  kubeclient::Route typed = kubeclient::RouteFromJson(h.api.Object("ns", "web")).value();
  h.api.Put(routestatus::testing::WithIngressEntry(h.api.Object("ns", "web"), "default",
                                                   h.syncer.Desired(typed, nullptr))
                .value());
  h.Deliver("ns", "web");
  h.Drain();
  EXPECT_EQ(h.api.successful_puts, 2) << "the entry is the one we would write";
  EXPECT_EQ(h.syncer.own_write_records(), 0u) << "the cache is past our write";
}

}  // namespace
}  // namespace routestatus::controller::testing
