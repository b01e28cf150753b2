// The router readiness gate of a sidecar replica (--router-ready-url): the
// probe's state, its one WARNING, and the lease that withholds work while
// the router is down.

#include "cmd/route-status-controller/router_readiness.h"

#include <string>
#include <thread>
#include <vector>

#include <glog/logging.h>
#include <gtest/gtest.h>

#include "cmd/route-status-controller/gated_write_lease.h"
#include "test/testing/captured_log.h"
#include "test/testing/fake_clock.h"

namespace routestatus::cmd {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// A probe whose answer the test sets; records the deadline it was given.
struct ScriptedProbe {
  Status answer = Status(StatusCode::kUnavailable, "connect: Connection refused");
  std::vector<SteadyTime> deadlines;
  RouterProbe Get() {
    return [this](SteadyTime deadline) {
      deadlines.push_back(deadline);
      return answer;
    };
  }
};

class RouterReadinessTest : public ::testing::Test {
 protected:
  RouterReadinessOptions Options() {
    RouterReadinessOptions o;
    o.url = "http://127.0.0.1:1936/healthz/ready";
    return o;
  }
  ::routestatus::testing::FakeClock clock_;
  ScriptedProbe probe_;
};

// Not ready until the first 2xx; the handler hears each change once, and
// the probe gets the timeout as its deadline.
TEST_F(RouterReadinessTest, StartsNotReadyAndReportsEachChange) {
  RouterReadiness r(clock_, Options(), probe_.Get());
  std::vector<bool> changes;
  r.SetHandler([&](bool ready) { changes.push_back(ready); });
  EXPECT_FALSE(r.ready());
  r.Probe();  // refused: still not ready, no news
  EXPECT_FALSE(r.ready());
  EXPECT_TRUE(changes.empty());
  ASSERT_EQ(probe_.deadlines.size(), 1u);
  EXPECT_EQ(probe_.deadlines[0], clock_.Now() + seconds(1));
  probe_.answer = Status::Ok();
  r.Probe();
  r.Probe();
  EXPECT_TRUE(r.ready());
  probe_.answer = Status(StatusCode::kUnavailable, "HTTP 503");
  r.Probe();
  EXPECT_EQ(changes, (std::vector<bool>{true, false}));
  RouterReadinessSnapshot s = r.Snapshot();
  EXPECT_EQ(s.probes_ready, 2u);
  EXPECT_EQ(s.probes_not_ready, 2u);
  EXPECT_EQ(s.transitions, 2u);  // not ready -> ready -> not ready
  EXPECT_NE(s.last_error.find("HTTP 503"), std::string::npos);
}

// One WARNING once the router has been down for a minute, however many
// probes fail; one INFO when it is ready again; a new streak warns anew.
TEST_F(RouterReadinessTest, OneWarningAfterAMinuteThenOneInfoWhenReady) {
  RouterReadiness r(clock_, Options(), probe_.Get());
  ::routestatus::testing::CapturedLog warnings(google::GLOG_WARNING);
  ::routestatus::testing::CapturedLog infos(google::GLOG_INFO);
  probe_.answer = Status::Ok();
  r.Probe();
  probe_.answer = Status(StatusCode::kTimeout, "no answer within 1000 ms");
  for (int i = 0; i < 59; ++i) {
    r.Probe();
    clock_.Advance(seconds(1));
  }
  EXPECT_EQ(warnings.Count("has not been ready"), 0) << "59 s is not a minute";
  for (int i = 0; i < 30; ++i) {
    r.Probe();
    clock_.Advance(seconds(1));
  }
  EXPECT_EQ(warnings.Count("has not been ready for 1m"), 1);
  EXPECT_EQ(warnings.Count("no answer within 1000 ms"), 1) << "names the latest failure";
  probe_.answer = Status::Ok();
  r.Probe();
  EXPECT_EQ(infos.Count("the router is ready again"), 1);
  probe_.answer = Status(StatusCode::kUnavailable, "HTTP 500");
  for (int i = 0; i < 61; ++i) {
    r.Probe();
    clock_.Advance(seconds(1));
  }
  EXPECT_EQ(warnings.Count("has not been ready"), 2);
}

// A short outage (a router restart) logs nothing at INFO or above.
TEST_F(RouterReadinessTest, AShortOutageIsQuiet) {
  RouterReadiness r(clock_, Options(), probe_.Get());
  ::routestatus::testing::CapturedLog warnings(google::GLOG_WARNING);
  ::routestatus::testing::CapturedLog infos(google::GLOG_INFO);
  probe_.answer = Status::Ok();
  r.Probe();
  probe_.answer = Status(StatusCode::kUnavailable, "HTTP 503");
  r.Probe();
  clock_.Advance(seconds(10));
  probe_.answer = Status::Ok();
  r.Probe();
  EXPECT_TRUE(warnings.Lines().empty());
  EXPECT_EQ(infos.Count("router"), 0);
}

// The probe thread probes every interval on the clock and stops promptly.
TEST_F(RouterReadinessTest, ProbesEveryIntervalUntilStopped) {
  RouterReadinessOptions o = Options();
  o.interval = milliseconds(500);
  RouterReadiness r(clock_, o, probe_.Get());
  r.Start();
  for (int i = 0; i < 200 && probe_.deadlines.empty(); ++i) {
    std::this_thread::sleep_for(milliseconds(5));
  }
  clock_.Advance(milliseconds(500));
  for (int i = 0; i < 200 && probe_.deadlines.size() < 2; ++i) {
    std::this_thread::sleep_for(milliseconds(5));
  }
  r.Stop();
  EXPECT_EQ(probe_.deadlines.size(), 2u);
}

// Records the work the lease would run.
class RecordingLease final : public lease::WriteLease {
 public:
  void Try(const std::string& key, lease::Work work) override {
    keys.push_back(key);
    works.push_back(std::move(work));
  }
  void Extend(const std::string& key, lease::EntryWriter) override { extended.push_back(key); }
  void Remove(const std::string& key) override { removed.push_back(key); }
  lease::LeaseState State() const override { return lease::LeaseState::kFollower; }
  std::vector<std::string> keys, extended, removed;
  std::vector<lease::Work> works;
};

// Closed, work that comes due writes nothing (and asks no retry); the
// peers' writes still reach the lease. Open, the work runs.
TEST(GatedWriteLeaseTest, ClosedWorkDoesNothingButExtendsStillReachTheLease) {
  RecordingLease inner;
  GatedWriteLease gated(inner);
  int writes = 0;
  auto write = [&writes] {
    ++writes;
    lease::WorkOutcome o;
    o.result = lease::WorkResult::kExtend;
    return o;
  };
  gated.Try("ns/a", write);
  lease::WorkOutcome closed = inner.works.at(0)();
  EXPECT_EQ(writes, 0);
  EXPECT_EQ(closed.result, lease::WorkResult::kNone);
  EXPECT_FALSE(closed.retry);
  EXPECT_EQ(gated.withheld(), 1u);
  gated.Extend("ns/a", lease::EntryWriter::kPeer);
  gated.Remove("ns/b");
  EXPECT_EQ(inner.extended, std::vector<std::string>{"ns/a"});
  EXPECT_EQ(inner.removed, std::vector<std::string>{"ns/b"});
  gated.SetOpen(true);
  gated.Try("ns/a", write);
  EXPECT_EQ(inner.works.at(1)().result, lease::WorkResult::kExtend);
  EXPECT_EQ(writes, 1);
  EXPECT_EQ(gated.State(), lease::LeaseState::kFollower);
}

}  // namespace
}  // namespace routestatus::cmd
