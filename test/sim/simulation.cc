#include "test/sim/simulation.h"

#include <algorithm>
#include <array>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <sstream>

#include <glog/logging.h>

#include "kubeclient/label_selector.h"
#include "lease/backoff.h"
#include "test/sim/sim_api.h"
#include "test/sim/sim_clock.h"
#include "test/sim/sim_replica.h"

namespace routestatus::sim {

using kubeclient::Duration;
using kubeclient::Route;
using kubeclient::SteadyTime;
using std::chrono::milliseconds;
using std::chrono::seconds;

const char* ScenarioName(Scenario scenario) {
  switch (scenario) {
    case Scenario::kSteady: return "steady";
    case Scenario::kChaos: return "chaos";
    case Scenario::kFailover: return "failover";
    case Scenario::kFight: return "fight";
  }
  return "unknown";
}

std::optional<Scenario> ParseScenario(const std::string& name) {
  for (Scenario s : AllScenarios()) {
    if (name == ScenarioName(s)) return s;
  }
  return std::nullopt;
}

std::vector<Scenario> AllScenarios() {
  return {Scenario::kSteady, Scenario::kChaos, Scenario::kFailover, Scenario::kFight};
}

std::string ReproCommand(const SimOptions& o, const std::string& binary) {
  std::ostringstream out;
  const SimOptions d;
  out << binary << " --seed=" << o.seed << " --scenario=" << ScenarioName(o.scenario);
  auto ms = [](Duration x) { return std::chrono::duration_cast<milliseconds>(x).count(); };
  if (o.replicas != d.replicas) out << " --replicas=" << o.replicas;
  if (o.routes != d.routes) out << " --routes=" << o.routes;
  if (o.lease_interval != d.lease_interval) out << " --lease-interval-ms=" << ms(o.lease_interval);
  if (o.lease_retry != d.lease_retry) out << " --lease-retry-ms=" << ms(o.lease_retry);
  if (o.election_delay != d.election_delay) out << " --election-delay-ms=" << ms(o.election_delay);
  if (o.single_probe != d.single_probe) out << " --single-probe=" << (o.single_probe ? 1 : 0);
  if (o.election_follows_extend != d.election_follows_extend) {
    out << " --election-follows-extend=" << (o.election_follows_extend ? 1 : 0);
  }
  if (o.follower_min_delay != d.follower_min_delay) {
    out << " --follower-min-delay-ms=" << ms(o.follower_min_delay);
  }
  if (o.leader_follows_foreign_extend != d.leader_follows_foreign_extend) {
    out << " --leader-follows-foreign-extend=" << (o.leader_follows_foreign_extend ? 1 : 0);
  }
  if (o.follower_delay_jitter != d.follower_delay_jitter) {
    out << " --follower-delay-jitter=" << (o.follower_delay_jitter ? 1 : 0);
  }
  if (o.contention_limit != d.contention_limit) out << " --contention-limit=" << o.contention_limit;
  if (o.contention_interval != d.contention_interval) {
    out << " --contention-interval-ms=" << ms(o.contention_interval);
  }
  if (o.drop_event_probability != d.drop_event_probability) {
    out << " --drop-event-probability=" << o.drop_event_probability;
  }
  if (o.max_watch_delay_ms != d.max_watch_delay_ms) {
    out << " --max-watch-delay-ms=" << o.max_watch_delay_ms;
  }
  return out.str();
}

namespace {

constexpr char kRouterName[] = "default";
constexpr char kShardLabel[] = "shard";
constexpr char kExcluded[] = "excluded";
const char* const kTemplates[] = {"${name}-${namespace}.apps.example.com",
                                  "${name}-${namespace}.b.example.com"};

// What a correct fleet of configuration `config` writes for a route: our
// entry present (in shard) with this host, admitted. Hosts in the
// simulation are unique, so no route is ever rejected.
struct Expect {
  bool present = false;
  std::string host;
  bool operator==(const Expect& o) const { return present == o.present && host == o.host; }
};

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
  const auto* entry = r.FindIngress(kRouterName);
  if (!e.present) return entry == nullptr;
  if (entry == nullptr || entry->host != e.host || entry->conditions.size() != 1) return false;
  return entry->conditions[0].type == "Admitted" && entry->conditions[0].status == "True";
}

std::string Ms(Duration d) {
  return std::to_string(std::chrono::duration_cast<milliseconds>(d).count()) + "ms";
}

// One simulated run. Not thread-safe.
class Engine {
 public:
  explicit Engine(const SimOptions& options) : o_(options), rng_(options.seed), api_(clock_) {
    result_.options = options;
  }

  SimResult Run();

 private:
  struct Slot {
    ReplicaSpec spec;
    std::unique_ptr<Replica> live;
    int generation = 0;
    SteadyTime last_delivery{};
    Duration extra_lag = Duration::zero();  // a slow watch
    SteadyTime last_write{};
    int64_t writes = 0;
  };
  struct Probe {
    std::string key;
    Expect expect;
    SteadyTime changed{};
  };

  // Randomness: one generator for the whole run.
  int64_t Uniform(int64_t lo, int64_t hi) {  // inclusive
    return lo + static_cast<int64_t>(rng_() % static_cast<uint64_t>(hi - lo + 1));
  }
  double Unit() { return lease::UniformUnit(rng_); }
  bool Chance(double p) { return Unit() < p; }
  Duration UniformMs(int64_t lo, int64_t hi) { return milliseconds(Uniform(lo, hi)); }
  Duration Exponential(Duration mean) {
    return Duration(static_cast<int64_t>(-std::log(1.0 - Unit()) * mean.count()));
  }

  void At(SteadyTime t, std::function<void()> fn) {
    events_.emplace(std::make_pair(std::max(t, clock_.Now()), seq_++), std::move(fn));
  }
  void After(Duration d, std::function<void()> fn) { At(clock_.Now() + d, std::move(fn)); }
  SteadyTime T(Duration since_start) const { return clock_.start() + since_start; }
  void Trace(const std::string& what) {
    if (o_.trace) std::cout << "[" << Ms(clock_.Elapsed()) << "] " << what << "\n";
  }
  void Fail(const std::string& what) { result_.failures.push_back(what); }

  void Setup();
  void AddSlot(int config);
  void StartReplica(int i);
  void CrashReplica(int i);
  void OnModelEvent(const ModelEvent& event);
  void OnWrite(int writer, const Route& written);
  // Runs events and due lease work up to `end`; with `until_quiet`, stops
  // earlier once nothing is scheduled and no lease has work.
  void RunUntil(SteadyTime end, bool until_quiet);

  // Route owner operations (counting the writes they require).
  void OwnerCreate(bool in_shard, bool templated);
  void OwnerRandomChange();
  void Owner(const std::string& key, const std::function<void()>& op);
  std::string PickRoute(bool in_shard_only);
  std::string NewHost() { return "h" + std::to_string(next_host_++) + ".example.com"; }

  void ScheduleChanges(Duration from, Duration length);
  void ScheduleCrashes(Duration from, Duration length);
  void ScheduleFailovers(Duration from, int rounds);
  void ScheduleResyncs(Duration period, Duration until);
  int LeaderSlot() const;

  void CheckConvergence();
  void CheckCaches();
  void CheckBounds();
  void CheckFight();

  const SimOptions o_;
  std::mt19937_64 rng_;
  SimClock clock_;
  SimApi api_;
  std::vector<Slot> slots_;
  std::map<std::pair<SteadyTime, uint64_t>, std::function<void()>> events_;
  uint64_t seq_ = 0;
  int max_watch_ms_ = 50;
  int next_route_ = 0;
  int next_host_ = 0;
  bool counting_changes_ = false;
  std::optional<Probe> probe_;
  std::optional<SteadyTime> fight_start_;
  std::vector<std::pair<SteadyTime, int>> fight_writes_;  // (time, config)
  SimResult result_;
};

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
  const auto* entry = written.FindIngress(kRouterName);
  Trace("write by replica " + std::to_string(writer) + ": " + written.Key() + " -> " +
        (entry ? entry->host : "(removed)") + " rv " + written.metadata.resource_version);
  if (written.FindIngress("other") == nullptr) {
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

SimResult Engine::Run() {
  max_watch_ms_ = o_.max_watch_delay_ms > 0 ? o_.max_watch_delay_ms : Uniform(2, 150);
  api_.SetListener([this](const ModelEvent& e) { OnModelEvent(e); });
  api_.SetWriteObserver([this](int writer, const Route& r) { OnWrite(writer, r); });
  api_.SetConflictObserver([this](int writer, const std::string& key) {
    ++result_.conflicts_by_state[static_cast<int>(slots_[writer].live->LeaseState())];
    Trace("conflict for replica " + std::to_string(writer) + " on " + key + " (" +
          lease::LeaseStateName(slots_[writer].live->LeaseState()) + ")");
  });
  const bool fight = o_.scenario == Scenario::kFight;
  int first = 0;
  int second = 0;
  if (fight) {
    first = o_.replicas > 0 ? std::max(1, o_.replicas / 2) : static_cast<int>(Uniform(1, 3));
    second = o_.replicas > 0 ? std::max(1, o_.replicas - first) : static_cast<int>(Uniform(1, 3));
  } else {
    first = o_.replicas > 0 ? o_.replicas : static_cast<int>(Uniform(2, 5));
  }
  const int routes = o_.routes > 0 ? o_.routes : static_cast<int>(Uniform(5, 40));
  for (int i = 0; i < first; ++i) AddSlot(0);
  for (int i = 0; i < second; ++i) AddSlot(1);
  result_.replicas = static_cast<int>(slots_.size());
  result_.routes = routes;

  // Routes exist before the fleet starts; their entries are missing.
  for (int i = 0; i < routes; ++i) OwnerCreate(fight || Chance(0.85), fight || Chance(0.3));
  for (int i = 0; i < first; ++i) At(T(UniformMs(0, 300)), [this, i] { StartReplica(i); });

  const Duration phase = seconds(20);  // start-up, before any change
  Duration active = phase;
  switch (o_.scenario) {
    case Scenario::kSteady:
    case Scenario::kChaos: {
      const Duration length = UniformMs(30000, 120000);
      ScheduleChanges(phase, length);
      if (o_.scenario == Scenario::kChaos) {
        ScheduleCrashes(phase, length);
        if (Chance(0.5)) ScheduleResyncs(seconds(30), phase + length);
      }
      active = phase + length;
      break;
    }
    case Scenario::kFailover: {
      const int rounds = 3;
      ScheduleFailovers(phase, rounds);
      active = phase + rounds * (2 * o_.lease_interval + o_.lease_retry + seconds(10));
      break;
    }
    case Scenario::kFight: {
      const Duration join = seconds(30);
      At(T(join), [this, first] {
        fight_start_ = clock_.Now();
        Trace("second configuration joins");
        for (size_t i = first; i < slots_.size(); ++i) StartReplica(static_cast<int>(i));
      });
      active = join + 4 * o_.contention_interval;
      ScheduleResyncs(seconds(30), active);
      break;
    }
  }

  RunUntil(T(phase), false);
  const PutCounts startup = api_.TotalPuts();
  result_.startup_writes = startup.success;
  result_.startup_puts = startup.attempts;
  counting_changes_ = true;
  RunUntil(T(active), false);
  for (size_t i = 0; i < slots_.size(); ++i) {
    if (!slots_[i].live) StartReplica(static_cast<int>(i));
  }
  const SteadyTime settle = clock_.Now() + std::chrono::minutes(30);
  RunUntil(settle, true);
  if (clock_.Now() >= settle) Fail("did not settle within 30 minutes after the last change");
  result_.simulated = clock_.Elapsed();

  const PutCounts total = api_.TotalPuts();
  result_.writes = total.success;
  result_.puts = total.attempts;
  result_.conflicts = total.conflicts;
  CheckCaches();
  if (fight) {
    CheckFight();
  } else {
    CheckConvergence();
    CheckBounds();
  }
  return result_;
}

void Engine::CheckCaches() {
  const auto list = api_.List();
  for (size_t i = 0; i < slots_.size(); ++i) {
    const auto& objects = slots_[i].live->store().objects();
    if (objects.size() != list.size()) {
      Fail("replica " + std::to_string(i) + ": cache holds " + std::to_string(objects.size()) +
           " routes, the server " + std::to_string(list.size()));
    }
    for (const auto& r : list) {
      auto it = objects.find(r->Key());
      if (it == objects.end()) {
        Fail("replica " + std::to_string(i) + ": cache misses " + r->Key());
      } else if (it->second->metadata.resource_version != r->metadata.resource_version) {
        Fail("replica " + std::to_string(i) + ": cache has " + r->Key() + " at rv " +
             it->second->metadata.resource_version + ", the server at " +
             r->metadata.resource_version);
      }
    }
  }
}

void Engine::CheckConvergence() {
  for (const auto& r : api_.List()) {
    const Expect e = Expected(r.get(), 0);
    if (Matches(*r, e)) continue;
    const auto* entry = r->FindIngress(kRouterName);
    Fail("route " + r->Key() + ": expected " + (e.present ? "host " + e.host : "no entry") +
         ", the server has " +
         (entry ? "host " + entry->host + " (" + entry->conditions.at(0).status + ")"
                : "no entry"));
  }
}

void Engine::CheckBounds() {
  const int64_t changes = result_.startup_changes + result_.changes;
  const int64_t n = result_.replicas;
  // Why the crash term: a restarted replica starts in Election and may
  // spend one PUT before it sees a leader's write; a crashed leader leaves
  // up to N-2 followers whose leases run out together. Writes need none.
  const int64_t crash_puts = static_cast<int64_t>(result_.crashes) * (n - 1);
  if (static_cast<double>(result_.writes) > static_cast<double>(changes) * 1.05 + n) {
    Fail("write bound: " + std::to_string(result_.writes) + " successful status writes for " +
         std::to_string(changes) + " changes with " + std::to_string(n) +
         " replicas (bound changes x 1.05 + N)");
  }
  if (static_cast<double>(result_.puts) > static_cast<double>(changes) * 1.1 + n + crash_puts) {
    Fail("PUT bound: " + std::to_string(result_.puts) + " status PUTs (" +
         std::to_string(result_.conflicts) + " conflicts) for " + std::to_string(changes) +
         " changes with " + std::to_string(n) + " replicas and " +
         std::to_string(result_.crashes) + " crashes (bound changes x 1.1 + N + crashes x (N-1))");
  }
}

void Engine::CheckFight() {
  // Every route carries one of the two configurations' entries.
  for (const auto& r : api_.List()) {
    if (!Matches(*r, Expected(r.get(), 0)) && !Matches(*r, Expected(r.get(), 1))) {
      Fail("fight: route " + r->Key() + " has neither configuration's entry");
    }
  }
  if (!fight_start_) return;
  const Duration window = o_.contention_interval;
  std::map<int64_t, int64_t> per_window;
  std::map<int64_t, std::array<int64_t, 2>> per_side;
  for (const auto& [t, config] : fight_writes_) {
    const int64_t k = (t - *fight_start_) / window;
    ++per_window[k];
    ++per_side[k][config];
  }
  // Within a window at most one configuration writes freely; the other
  // stops once its tracker passed the contention limit.
  for (const auto& [k, sides] : per_side) {
    if (std::min(sides[0], sides[1]) > o_.contention_limit + 1) {
      Fail("fight: both configurations kept writing in contention window " + std::to_string(k) +
           " (" + std::to_string(sides[0]) + " and " + std::to_string(sides[1]) +
           " writes; the loser must stop after limit + 1 = " +
           std::to_string(o_.contention_limit + 1) + ")");
    }
  }
  const int64_t windows = 4;
  result_.fight_writes = static_cast<int64_t>(fight_writes_.size());
  result_.fight_bound = 2 * o_.contention_limit + result_.routes;
  for (const auto& [k, count] : per_window) {
    result_.fight_max_window_writes = std::max(result_.fight_max_window_writes, count);
    if (k >= windows - 1) result_.fight_last_window_writes += count;
    if (count > result_.fight_bound) {
      Fail("fight: " + std::to_string(count) + " status writes in contention window " +
           std::to_string(k) + " (bound 2 x limit + M = " + std::to_string(result_.fight_bound) +
           ")");
    }
  }
}

}  // namespace

SimResult RunSimulation(const SimOptions& options) {
  Engine engine(options);
  return engine.Run();
}

}  // namespace routestatus::sim
