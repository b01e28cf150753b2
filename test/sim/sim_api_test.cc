// What the simulated API server counts for the bounds (test/sim/README.md):
// 409s that only owners' updates caused, and stalled requests and events.
#include <chrono>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "test/sim/delay.h"
#include "test/sim/scheduler.h"
#include "test/sim/sim_api.h"
#include "test/sim/sim_clock.h"

namespace routestatus::sim {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;

class SimApiTest : public ::testing::Test {
 protected:
  SimApiTest() : scheduler_(clock_), api_(scheduler_, rng_, SimApiOptions{}) {
    api_.CreateNamespace("ns", {});
    api_.CreateRoute("ns", "web", "www.example.com", {});
  }
  json Stored() { return api_.Get(Kind::kRoute, "ns/web").value(); }
  // A status PUT of the stored object as it was at `read`, by replica 0.
  StatusOr<json> PutAsOf(json read) {
    read["status"] = {{"ingress", json::array()}};
    return api_.ApplyStatus(0, read);
  }

  SimClock clock_;
  Scheduler scheduler_;
  std::mt19937_64 rng_{7};
  SimApi api_;
};

TEST_F(SimApiTest, ConflictCausedOnlyByAnOwnersUpdateIsCountedAsTheOwners) {
  const json read = Stored();
  ASSERT_TRUE(api_.SetRouteHost("ns/web", "moved.example.com"));
  EXPECT_FALSE(PutAsOf(read).ok());
  EXPECT_EQ(api_.TotalPuts().conflicts, 1);
  EXPECT_EQ(api_.TotalPuts().owner_conflicts, 1);
}

TEST_F(SimApiTest, ConflictWithAStatusWriteIsNotTheOwners) {
  const json read = Stored();
  ASSERT_TRUE(PutAsOf(read).ok());  // a peer's write
  ASSERT_TRUE(api_.SetRouteHost("ns/web", "moved.example.com"));
  EXPECT_FALSE(PutAsOf(read).ok());
  EXPECT_EQ(api_.TotalPuts().conflicts, 1);
  EXPECT_EQ(api_.TotalPuts().owner_conflicts, 0);
}

TEST(DelayTest, SlowPartIsReportedAndStallsCountOnlyPastTheFloor) {
  std::mt19937_64 rng(3);
  Delay always_slow{milliseconds(1), milliseconds(0), 1.0, milliseconds(2000)};
  int stalled = 0;
  for (int i = 0; i < 100; ++i) {
    Duration slow;
    const Duration d = always_slow.Sample(rng, &slow);
    EXPECT_EQ(d, milliseconds(1) + slow);
    stalled += Stalls::Stalled(d, slow) ? 1 : 0;
  }
  EXPECT_GT(stalled, 60);  // about 3/4 of U[0, 2 s) exceed 500 ms
  EXPECT_LT(stalled, 90);
  Delay never_slow{milliseconds(900), milliseconds(0), 0.0, milliseconds(0)};
  Duration slow;
  const Duration d = never_slow.Sample(rng, &slow);
  EXPECT_EQ(slow, Duration::zero());
  EXPECT_FALSE(Stalls::Stalled(d, slow)) << "a slow base is the scenario's, not a stall";
}

}  // namespace
}  // namespace routestatus::sim
