// Start-up of N replicas that all begin in Election, against a tiny model of
// one API server (resourceVersion conflicts) and watch delivery delays. A
// first measurement of the "at most N-1 conflicting PUTs before one leads"
// goal; the full simulator (test/sim) models much more.
#include <algorithm>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "lease/backoff_write_lease.h"
#include "lease/lease_presets.h"
#include "test/testing/fake_clock.h"

namespace routestatus::lease {
namespace {

using std::chrono::milliseconds;

struct Result {
  int conflicts = 0;
  int writes = 0;
  milliseconds last_write{0};
};

// N replicas x M routes whose entries are all missing at start. PUTs take no
// time; every write reaches each replica's watch after 1..max_watch_ms,
// in order per replica.
Result RunStartup(uint64_t seed, int replicas, int routes, milliseconds election_delay,
                  int max_watch_ms = 50) {
  testing::FakeClock clock;
  const SteadyTime start = clock.Now();
  std::mt19937_64 rng(seed);
  struct Server {
    int version = 1;
    bool ok = false;
  };
  std::vector<Server> server(routes);
  struct Replica {
    std::unique_ptr<BackoffWriteLease> lease;
    std::vector<int> cached_version;
    std::vector<bool> cached_ok;
    SteadyTime last_delivery{};
  };
  std::vector<Replica> fleet(replicas);
  // (time, seq) -> (replica, route, version)
  // (replica, route, version, writer) per watch delivery.
  std::map<std::pair<SteadyTime, uint64_t>, std::tuple<int, int, int, int>> deliveries;
  uint64_t seq = 0;
  Result result;

  for (int r = 0; r < replicas; ++r) {
    // The plain lease (no takeover, 40 ms follower floor, Election ignores
    // Extend) with a 15 s interval; each run sets the election delay.
    WriteLeaseOptions o = OpenshiftLikeLeaseOptions();
    o.interval = std::chrono::seconds(15);
    o.name = "r" + std::to_string(r);
    o.seed = seed * 1000 + r;
    o.election_delay = election_delay;
    fleet[r].lease = std::make_unique<BackoffWriteLease>(clock, o);
    fleet[r].cached_version.assign(routes, 1);
    fleet[r].cached_ok.assign(routes, false);
  }
  auto work = [&](int r, int k) {
    return [&, r, k]() -> WorkOutcome {
      Replica& me = fleet[r];
      if (me.cached_ok[k]) return {WorkResult::kNone, false};
      if (server[k].version != me.cached_version[k]) {
        ++result.conflicts;
        return {WorkResult::kRelease, true};
      }
      ++server[k].version;
      server[k].ok = true;
      ++result.writes;
      result.last_write = std::chrono::duration_cast<milliseconds>(clock.Now() - start);
      for (int j = 0; j < replicas; ++j) {
        SteadyTime at = clock.Now() + milliseconds(1 + rng() % max_watch_ms);
        at = std::max(at, fleet[j].last_delivery);
        fleet[j].last_delivery = at;
        deliveries[{at, seq++}] = {j, k, server[k].version, r};
      }
      return {WorkResult::kExtend, false};
    };
  };
  for (int r = 0; r < replicas; ++r) {
    for (int k = 0; k < routes; ++k) fleet[r].lease->Try(std::to_string(k), work(r, k));
  }
  std::vector<int> order(replicas);
  for (int r = 0; r < replicas; ++r) order[r] = r;
  for (int step = 0; step < 100000; ++step) {
    while (!deliveries.empty() && deliveries.begin()->first.first <= clock.Now()) {
      auto [r, k, version, writer] = deliveries.begin()->second;
      deliveries.erase(deliveries.begin());
      fleet[r].cached_version[k] = version;
      fleet[r].cached_ok[k] = true;
      fleet[r].lease->Extend(std::to_string(k),  // correct and newest
                             writer == r ? EntryWriter::kUs : EntryWriter::kPeer);
    }
    std::shuffle(order.begin(), order.end(), rng);
    for (int r : order) fleet[r].lease->RunDue();
    SteadyTime next = SteadyTime::max();
    if (!deliveries.empty()) next = deliveries.begin()->first.first;
    for (auto& replica : fleet) {
      if (auto due = replica.lease->NextDue()) next = std::min(next, *due);
    }
    if (next == SteadyTime::max()) break;
    if (next > clock.Now()) clock.Advance(next - clock.Now());
  }
  for (const auto& s : server) EXPECT_TRUE(s.ok) << "seed " << seed;
  return result;
}

struct Summary {
  int total = 0;
  int worst = 0;
  milliseconds latest{0};
};

Summary RunSeeds(int replicas, milliseconds election_delay, int max_watch_ms) {
  Summary s;
  for (uint64_t seed = 1; seed <= 100; ++seed) {
    Result r = RunStartup(seed, replicas, 30, election_delay, max_watch_ms);
    EXPECT_EQ(r.writes, 30) << "seed " << seed;
    s.total += r.conflicts;
    s.worst = std::max(s.worst, r.conflicts);
    s.latest = std::max(s.latest, r.last_write);
  }
  std::cout << "replicas=" << replicas << " election_delay=" << election_delay.count()
            << "ms watch<=" << max_watch_ms << "ms: conflicts over 100 seeds total=" << s.total
            << " worst=" << s.worst << ", all written by " << s.latest.count() << "ms\n";
  return s;
}

// Watch faster than backoff(0) = 20 ms: the losers of the first write see
// the leader's writes before their lease expires: N-1 conflicts at most.
TEST(LeaseStartupTest, FastWatchAtMostNMinusOneConflicts) {
  for (int n : {2, 3, 5}) {
    Summary s = RunSeeds(n, milliseconds(0), 15);
    EXPECT_LE(s.worst, n - 1) << "replicas " << n;
  }
}

// Watch slower than backoff(0): a new follower may probe once more before
// it sees the leader (tick 1 then covers 80..120 ms): 2 (N-1) at most.
TEST(LeaseStartupTest, SlowWatchAtMostTwiceNMinusOneConflicts) {
  for (int n : {2, 3, 5}) {
    Summary s = RunSeeds(n, milliseconds(0), 50);
    EXPECT_LE(s.worst, 2 * (n - 1)) << "replicas " << n;
  }
}

// A random start-up delay (one draw per replica) lets one replica write
// first and the others see it: most seeds have no conflict at all.
TEST(LeaseStartupTest, ElectionDelayAvoidsMostConflicts) {
  for (int n : {2, 3, 5}) {
    Summary without = RunSeeds(n, milliseconds(0), 50);
    Summary with = RunSeeds(n, milliseconds(1000), 50);
    EXPECT_LE(with.worst, 2 * (n - 1)) << "replicas " << n;
    EXPECT_LT(with.total * 3, without.total) << "replicas " << n;
    // The gates lie in [0.1, 1.1) x the delay (lease/backoff_write_lease.h).
    EXPECT_LT(with.latest, milliseconds(1100));
  }
}

}  // namespace
}  // namespace routestatus::lease
