// A namespace label that flaps (20 flips 200 ms apart, 13 routes) cost one
// write per route per flip: 260. With the settle window the first change is
// applied at once and later ones at the end of each window. Both are
// measured here on simulated time: writes, and how long after the last flip
// every entry is right.
#include <chrono>
#include <cstdio>
#include <map>
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "test/controller/harness.h"

namespace routestatus::controller::testing {
namespace {

using std::chrono::milliseconds;

struct Outcome {
  int writes = 0;
  Duration settled_after_last_flip{};  // until every entry matches the last labels
  std::optional<Duration> first_change_latency;  // from the first flip to its entries written
};

Outcome Flap(Duration settle) {
  ShardOptions shard;
  shard.namespace_selector = kubeclient::LabelSelector::Parse("env in (prod)").value();
  Harness h(shard, Harness::DefaultOptions(), settle);
  kubeclient::Namespace ns;
  ns.metadata.name = "team";
  ns.metadata.labels = {{"env", "dev"}};
  h.namespaces.Set(ns);
  constexpr int kRoutes = 13;
  for (int i = 0; i < kRoutes; ++i) {
    h.Create(Harness::RouteJson("team", "r" + std::to_string(i), "r" + std::to_string(i) + ".example.com"));
  }
  const int writes_before = h.api.successful_puts;
  // The delayed keys the queue holds, as RateLimitingWorkQueue does (the
  // earliest pending time per key wins).
  std::map<std::string, SteadyTime> pending;
  auto collect = [&] {
    for (const auto& [key, delay] : h.queue.delays) {
      SteadyTime at = h.clock.Now() + delay;
      auto it = pending.find(key);
      if (it == pending.end() || at < it->second) pending[key] = at;
    }
    h.queue.delays.clear();
    h.queue.delayed.clear();
  };
  // The informer: the server's objects (our writes) back into the cache.
  auto drain = [&] {
    h.Drain();
    for (int i = 0; i < kRoutes; ++i) {
      std::string name = "r" + std::to_string(i);
      auto cached = h.routes.Get("team/" + name);
      if (h.api.Typed("team", name).metadata.resource_version != cached->metadata.resource_version) {
        h.Deliver("team", name);
      }
    }
    h.Drain();
  };
  auto release_due = [&] {
    for (auto it = pending.begin(); it != pending.end();) {
      if (it->second <= h.clock.Now()) {
        h.queue.Add(it->first);
        it = pending.erase(it);
      } else {
        ++it;
      }
    }
    drain();
  };
  auto all_match = [&](bool in_shard) {
    for (int i = 0; i < kRoutes; ++i) {
      if (h.ServerEntry("team", "r" + std::to_string(i)).has_value() != in_shard) return false;
    }
    return true;
  };
  Outcome out;
  const SteadyTime first_flip = h.clock.Now();
  bool in_shard = false;
  constexpr int kFlips = 20;
  constexpr auto kStep = milliseconds(10);
  for (int flip = 0; flip < kFlips; ++flip) {
    auto old_ns = h.namespaces.Get("team");
    in_shard = !in_shard;
    ns.metadata.labels["env"] = in_shard ? "prod" : "dev";
    h.namespaces.Set(ns);
    h.controller.namespace_handler().OnUpdate(old_ns, h.namespaces.Get("team"));
    collect();
    drain();
    // 200 ms to the next flip, in 10 ms steps that release due keys.
    for (int step = 0; step < 20; ++step) {
      if (flip == 0 && !out.first_change_latency && all_match(true)) {
        out.first_change_latency = h.clock.Now() - first_flip;
      }
      if (flip == kFlips - 1) break;
      h.clock.Advance(kStep);
      release_due();
    }
  }
  const SteadyTime last_flip = h.clock.Now();
  for (int step = 0; step < 500 && !(all_match(in_shard) && pending.empty()); ++step) {
    h.clock.Advance(kStep);
    release_due();
  }
  EXPECT_TRUE(all_match(in_shard));
  EXPECT_TRUE(pending.empty());
  out.settled_after_last_flip = h.clock.Now() - last_flip;
  out.writes = h.api.successful_puts - writes_before;
  return out;
}

TEST(NamespaceSettleTest, FlappingLabelCostsOneWritePerRoutePerWindow) {
  Outcome immediate = Flap(Duration::zero());
  Outcome settled = Flap(Controller::kDefaultNamespaceSettle);
  auto ms = [](Duration d) { return static_cast<long>(std::chrono::duration_cast<milliseconds>(d).count()); };
  std::printf("[ figures ] 20 namespace label flips 200 ms apart, 13 routes: no window %d writes, "
              "settled %ld ms after the last flip; 1 s window %d writes, settled %ld ms after the "
              "last flip; first change written after %ld ms / %ld ms\n",
              immediate.writes, ms(immediate.settled_after_last_flip), settled.writes,
              ms(settled.settled_after_last_flip), ms(immediate.first_change_latency.value_or(Duration(-1))),
              ms(settled.first_change_latency.value_or(Duration(-1))));
  EXPECT_EQ(immediate.writes, 13 * 20);
  // 20 flips over 3.8 s: the first at once, then one reconcile per 1 s
  // window (at 1, 2, 3 and 4 s) each writing when the state differs.
  EXPECT_LE(settled.writes, 13 * 5);
  EXPECT_EQ(settled.first_change_latency, Duration::zero());
  EXPECT_EQ(immediate.settled_after_last_flip, Duration::zero());  // isolated changes are not delayed
  EXPECT_LE(settled.settled_after_last_flip, Controller::kDefaultNamespaceSettle);
}

}  // namespace
}  // namespace routestatus::controller::testing
