#include "test/sim/engine.h"

#include <algorithm>
#include <cmath>
#include <iostream>

#include <glog/logging.h>

#include "kubeclient/label_selector.h"

namespace routestatus::sim::internal {

using std::chrono::milliseconds;
using std::chrono::seconds;

std::string Expand(std::string tmpl, const Route& r) {
  auto replace = [&](const std::string& var, const std::string& value) {
    for (size_t at = tmpl.find(var); at != std::string::npos; at = tmpl.find(var, at)) {
      tmpl.replace(at, var.size(), value);
      at += value.size();
    }
  };
  replace("${name}", r.metadata.name);
  replace("${namespace}", r.metadata.namespace_name);
  return tmpl;
}

Expect Expected(const Route* r, int config) {
  Expect e;
  if (r == nullptr) return e;
  auto it = r->metadata.labels.find(kShardLabel);
  if (it != r->metadata.labels.end() && it->second == kExcluded) return e;
  e.present = true;
  e.host = r->spec.host.empty() ? Expand(kTemplates[config], *r) : r->spec.host;
  return e;
}

bool Matches(const Route& r, const Expect& e) {
  const auto entry = r.FindIngress(kRouterName);
  if (!e.present) return !entry;
  if (!entry || entry->host != e.host || entry->conditions.size() != 1) return false;
  return entry->conditions[0].type == "Admitted" && entry->conditions[0].status == "True";
}

std::string Ms(Duration d) {
  return std::to_string(std::chrono::duration_cast<milliseconds>(d).count()) + "ms";
}

void Engine::AddSlot(int config) {
  Slot slot;
  ReplicaSpec& s = slot.spec;
  s.id = static_cast<int>(slots_.size());
  s.config = config;
  s.admission.router_name = kRouterName;
  s.admission.canonical_hostname = "router-default.apps.example.com";
  s.admission.router_domain = "apps.example.com";
  s.admission.hostname_template = kTemplates[config];
  auto selector = kubeclient::LabelSelector::Parse(std::string(kShardLabel) + "!=" + kExcluded);
  CHECK(selector.ok()) << selector.status().ToString();
  s.shard.route_selector = *selector;
  s.lease.name = "replica-" + std::to_string(s.id);
  s.lease.interval = o_.lease_interval;
  s.lease.retry = o_.lease_retry;
  s.lease.election_delay = o_.election_delay;
  s.lease.single_probe = o_.single_probe;
  s.lease.election_follows_extend = o_.election_follows_extend;
  s.lease.follower_min_delay = o_.follower_min_delay;
  s.lease.leader_follows_foreign_extend = o_.leader_follows_foreign_extend;
  s.lease.follower_delay_jitter = o_.follower_delay_jitter;
  s.tracker.router_name = kRouterName;
  s.tracker.interval = o_.contention_interval;
  s.tracker.limit = o_.contention_limit;
  if (Chance(0.15)) slot.extra_lag = UniformMs(100, 2000);
  slots_.push_back(std::move(slot));
}

void Engine::StartReplica(int i) {
  Slot& slot = slots_[i];
  ++slot.generation;
  slot.spec.lease.seed = o_.seed * 7919 + static_cast<uint64_t>(i) * 104729 +
                         static_cast<uint64_t>(slot.generation);
  slot.live.reset();
  slot.live = std::make_unique<Replica>(clock_, api_, slot.spec,
                                        [this](Duration d, std::function<void()> fn) {
                                          After(d, std::move(fn));
                                        });
  slot.last_delivery = clock_.Now();
  Trace("start replica " + std::to_string(i) + " (config " + std::to_string(slot.spec.config) +
        ", generation " + std::to_string(slot.generation) + ")");
  slot.live->Start(api_.List());
  if (o_.trace) {
    const auto snap = slot.live->LeaseStats();
    Trace("replica " + std::to_string(i) + " listed: lease " + lease::LeaseStateName(snap.state) +
          " tick " + std::to_string(snap.tick) + ", " + std::to_string(snap.extend_drops) +
          " extend drops, " + std::to_string(snap.pending_keys) + " pending; syncs: " +
          std::to_string(slot.live->stats().skipped_follower.load()) + " follower, " +
          std::to_string(slot.live->stats().skipped_no_change.load()) + " no change");
  }
}

void Engine::CrashReplica(int i) {
  Slot& slot = slots_[i];
  if (!slot.live) return;
  ++slot.generation;
  slot.live.reset();
  ++result_.crashes;
  Trace("crash replica " + std::to_string(i));
}

void Engine::OnModelEvent(const ModelEvent& event) {
  for (size_t i = 0; i < slots_.size(); ++i) {
    Slot& slot = slots_[i];
    if (!slot.live) continue;
    if (o_.drop_event_probability > 0 && Chance(o_.drop_event_probability)) continue;
    SteadyTime at = clock_.Now() + UniformMs(1, max_watch_ms_) +
                    (Chance(0.1) ? slot.extra_lag : Duration::zero());
    // Why: one watch stream per replica delivers in order.
    at = std::max(at, slot.last_delivery);
    slot.last_delivery = at;
    const int generation = slot.generation;
    At(at, [this, i, generation, event] {
      Slot& s = slots_[i];
      if (s.live && s.generation == generation) s.live->Deliver(event);
    });
  }
}

void Engine::OnWrite(int writer, const Route& written) {
  Slot& slot = slots_[writer];
  slot.last_write = clock_.Now();
  ++slot.writes;
  if (fight_start_) fight_writes_.emplace_back(clock_.Now(), slot.spec.config);
  const auto entry = written.FindIngress(kRouterName);
  Trace("write by replica " + std::to_string(writer) + ": " + written.Key() + " -> " +
        (entry ? entry->host : "(removed)") + " rv " + written.metadata.resource_version);
  if (!written.FindIngress("other").has_value()) {
    Fail("route " + written.Key() + ": another router's entry was lost by a write of replica " +
         std::to_string(writer));
  }
  if (probe_ && probe_->key == written.Key() && Matches(written, probe_->expect)) {
    const Duration gap = clock_.Now() - probe_->changed;
    ++result_.failovers;
    result_.max_failover_gap = std::max(result_.max_failover_gap, gap);
    Trace("failover: change written after " + Ms(gap));
    if (gap > o_.lease_interval + o_.lease_retry) {
      Fail("failover: change of " + probe_->key + " written " + Ms(gap) +
           " after it was made, more than lease interval + retry (" +
           Ms(o_.lease_interval + o_.lease_retry) + ")");
    }
    probe_.reset();
  }
}

void Engine::Owner(const std::string& key, const std::function<void()>& op) {
  auto before = api_.Get(key);
  op();
  auto after = api_.Get(key);
  // Deleting a route needs no write; everything else needs one when our
  // expected entry changes.
  if (after && !(Expected(before.get(), 0) == Expected(after.get(), 0))) {
    if (counting_changes_) {
      ++result_.changes;
    } else {
      ++result_.startup_changes;
    }
  }
}

void Engine::OwnerCreate(bool in_shard, bool templated) {
  const int n = next_route_++;
  const std::string ns = "ns-" + std::to_string(n % 3);
  const std::string name = "r" + std::to_string(n);
  std::map<std::string, std::string> labels = {{"app", name}};
  if (!in_shard) labels[kShardLabel] = kExcluded;
  const std::string host = templated ? "" : NewHost();
  Trace("owner: create " + ns + "/" + name);
  Owner(ns + "/" + name, [&] { api_.Create(ns, name, host, labels); });
}

std::string Engine::PickRoute(bool in_shard_only) {
  std::vector<std::string> keys;
  for (const auto& r : api_.List()) {
    if (!in_shard_only || Expected(r.get(), 0).present) keys.push_back(r->Key());
  }
  if (keys.empty()) return "";
  return keys[Uniform(0, static_cast<int64_t>(keys.size()) - 1)];
}

void Engine::OwnerRandomChange() {
  const double op = Unit();
  const auto routes = api_.List().size();
  if (op < 0.2 || routes < 3) {
    OwnerCreate(Chance(0.85), Chance(0.3));
    return;
  }
  const std::string key = PickRoute(false);
  if (op < 0.55) {
    const std::string host = Chance(0.2) ? "" : NewHost();
    Trace("owner: host of " + key + " -> " + (host.empty() ? "(template)" : host));
    Owner(key, [&] { api_.SetHost(key, host); });
  } else if (op < 0.75) {
    const bool in = Expected(api_.Get(key).get(), 0).present;
    Trace("owner: " + key + (in ? " leaves" : " joins") + " the shard");
    Owner(key, [&] { api_.SetLabel(key, kShardLabel, in ? kExcluded : ""); });
  } else if (op < 0.85) {
    Trace("owner: relabel " + key + " (same shard)");
    Owner(key, [&] { api_.SetLabel(key, "team", "t" + std::to_string(Uniform(0, 9))); });
  } else {
    Trace("owner: delete " + key);
    Owner(key, [&] { api_.Delete(key); });
  }
}

void Engine::ScheduleChanges(Duration from, Duration length) {
  const Duration mean = UniformMs(200, 5000);
  Duration t = from;
  while (true) {
    // Why: bursts (several changes within one watch delay) test that work
    // collapses to one write per route.
    t += Chance(0.2) ? UniformMs(0, 50) : Exponential(mean);
    if (t > from + length) break;
    At(T(t), [this] { OwnerRandomChange(); });
  }
}

void Engine::ScheduleCrashes(Duration from, Duration length) {
  const Duration mean = UniformMs(5000, 30000);
  for (Duration t = from + Exponential(mean); t < from + length; t += Exponential(mean)) {
    At(T(t), [this] {
      std::vector<int> alive;
      for (size_t i = 0; i < slots_.size(); ++i) {
        if (slots_[i].live) alive.push_back(static_cast<int>(i));
      }
      if (alive.empty()) return;
      const int i = Chance(0.5) ? LeaderSlot() : alive[Uniform(0, alive.size() - 1)];
      if (i < 0 || !slots_[i].live) return;
      CrashReplica(i);
      After(UniformMs(200, 20000), [this, i] {
        if (!slots_[i].live) StartReplica(i);
      });
    });
  }
}

int Engine::LeaderSlot() const {
  int best = -1;
  for (size_t i = 0; i < slots_.size(); ++i) {
    const Slot& s = slots_[i];
    if (!s.live) continue;
    const bool leads = s.live->LeaseState() == lease::LeaseState::kLeader;
    if (best < 0) {
      best = static_cast<int>(i);
      continue;
    }
    const Slot& b = slots_[best];
    const bool best_leads = b.live->LeaseState() == lease::LeaseState::kLeader;
    if ((leads && !best_leads) || (leads == best_leads && s.last_write > b.last_write)) {
      best = static_cast<int>(i);
    }
  }
  return best;
}

void Engine::ScheduleFailovers(Duration from, int rounds) {
  const Duration spacing = 2 * o_.lease_interval + o_.lease_retry + seconds(10);
  for (int k = 0; k < rounds; ++k) {
    const Duration crash_at = from + k * spacing;
    // Why: a leader write just before the crash extends every follower's
    // lease (up to the cap): the worst case for the failover gap.
    if (Chance(0.5)) {
      At(T(crash_at - UniformMs(50, 2000)), [this] {
        const std::string key = PickRoute(true);
        if (key.empty()) return;
        const std::string host = NewHost();
        Trace("owner (before the crash): host of " + key + " -> " + host);
        Owner(key, [&] { api_.SetHost(key, host); });
      });
    }
    At(T(crash_at), [this, spacing] {
      const int leader = LeaderSlot();
      if (leader < 0) return;
      CrashReplica(leader);
      const Duration gap = Duration(static_cast<int64_t>(
          Unit() * static_cast<double>((o_.lease_interval + o_.lease_interval / 2).count())));
      After(gap, [this] {
        const std::string key = PickRoute(true);
        if (key.empty()) return;
        const std::string host = NewHost();
        Trace("owner (failover probe): host of " + key + " -> " + host);
        Owner(key, [&] { api_.SetHost(key, host); });
        probe_ = Probe{key, Expected(api_.Get(key).get(), 0), clock_.Now()};
      });
      After(spacing - seconds(5), [this, leader] {
        if (probe_) {
          Fail("failover: change of " + probe_->key + " still not written after " +
               Ms(clock_.Now() - probe_->changed));
          probe_.reset();
        }
        if (!slots_[leader].live) StartReplica(leader);
      });
    });
  }
}

void Engine::ScheduleResyncs(Duration period, Duration until) {
  for (size_t i = 0; i < slots_.size(); ++i) {
    for (Duration t = UniformMs(0, std::chrono::duration_cast<milliseconds>(period).count());
         t < until; t += period) {
      At(T(t), [this, i] {
        if (slots_[i].live) slots_[i].live->Resync();
      });
    }
  }
}

void Engine::RunUntil(SteadyTime end, bool until_quiet) {
  std::vector<int> order;
  for (int64_t steps = 0;; ++steps) {
    if (steps > 20'000'000) {
      Fail("livelock: more than 20M steps");
      return;
    }
    SteadyTime next = events_.empty() ? SteadyTime::max() : events_.begin()->first.first;
    for (auto& slot : slots_) {
      if (!slot.live) continue;
      if (auto due = slot.live->NextDue()) next = std::min(next, *due);
    }
    if (next == SteadyTime::max() && until_quiet) return;
    if (next > end) break;
    clock_.Set(std::max(next, clock_.Now()));
    while (!events_.empty() && events_.begin()->first.first <= clock_.Now()) {
      auto fn = std::move(events_.begin()->second);
      events_.erase(events_.begin());
      fn();
    }
    // Why: replicas whose work is due at the same instant race; the order
    // is random (which one's PUT reaches the server first).
    order.clear();
    for (size_t i = 0; i < slots_.size(); ++i) {
      if (slots_[i].live) order.push_back(static_cast<int>(i));
    }
    std::shuffle(order.begin(), order.end(), rng_);
    for (int i : order) {
      if (slots_[i].live) slots_[i].live->Run();
    }
  }
  if (end != SteadyTime::max() && end > clock_.Now()) clock_.Set(end);
}

}  // namespace routestatus::sim::internal
