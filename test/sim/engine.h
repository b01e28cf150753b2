#pragma once

// Internals of the simulator (test/sim/simulation.h): the engine that runs
// one seeded simulation. Not a public interface.

#include <array>
#include <chrono>
#include <cmath>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kubeclient/route.h"
#include "lease/backoff.h"
#include "test/sim/scheduler.h"
#include "test/sim/sim_api.h"
#include "test/sim/sim_clock.h"
#include "test/sim/sim_replica.h"
#include "test/sim/simulation.h"

namespace routestatus::sim::internal {

using kubeclient::Route;

inline constexpr char kRouterName[] = "default";
inline constexpr char kShardLabel[] = "shard";
inline constexpr char kExcluded[] = "excluded";
inline constexpr int kNamespaces = 4;
// A dead leader's next change is written within this, with the takeover
// (docs/design.md section 9).
inline constexpr Duration kFailoverBound = std::chrono::seconds(3);
// The slow leader's (every status write takes 1 s): issue 59's max target.
inline constexpr Duration kSlowLeaderFailoverBound = std::chrono::seconds(6);
// A probe's change that no live, synced replica received within this is
// no failover sample (issue 59 rule 2): counted apart.
inline constexpr Duration kReceiveWindow = std::chrono::seconds(30);
// Hostname templates of configuration 0 and 1 (fights use both).
inline constexpr const char* kTemplates[] = {"${name}-${namespace}.apps.example.com",
                                             "${name}-${namespace}.b.example.com"};

// What a correct fleet of configuration `config` writes for a route: our
// entry present (in shard: route and namespace labels) with this host,
// admitted, or rejected (HostAlreadyClaimed) naming the holder: the oldest
// in-shard route with the same host (creation time, then UID as text).
// Written independently of the controller's admission, which it checks.
struct Expect {
  bool present = false;
  std::string host;
  bool admitted = false;
  std::string holder;  // rejected: the key of the route that holds the host
  bool operator==(const Expect& o) const {
    return present == o.present && host == o.host && admitted == o.admitted &&
           holder == o.holder;
  }
  bool operator!=(const Expect& o) const { return !(*this == o); }
  std::string ToString() const;
};

// `tmpl` with ${name} and ${namespace} of `r`.
std::string Expand(std::string tmpl, const Route& r);
// The entries configuration `config` must end with, by route key.
std::map<std::string, Expect> ExpectAll(
    const std::vector<std::shared_ptr<const Route>>& routes,
    const std::map<std::string, std::map<std::string, std::string>>& namespaces, int config);
// True when `r` carries exactly the expected entry of ours.
bool Matches(const Route& r, const Expect& e);
// "123ms".
std::string Ms(Duration d);

// One simulated run. Not thread-safe.
class Engine {
 public:
  explicit Engine(const SimOptions& options);
  ~Engine();

  SimResult Run();

 private:
  struct Slot {
    ReplicaSpec spec;
    std::unique_ptr<Replica> live;
    int generation = 0;
    SteadyTime last_write{};
    int64_t writes = 0;
    // Totals of the generations that crashed.
    int64_t contentions = 0;
    int64_t relists = 0;
    int64_t watch_restarts = 0;
    int64_t reconciles_before_sync = 0;
  };
  // A failover probe: an owner's change made while no live leader writes
  // (after a leader crash or 100 ms into a partition), which some replica
  // must write. Its clock starts at the latest of the change, its delivery
  // and the last writer's death before its write (issue 59, ClockOf;
  // test/sim/README.md, "What the checker measures").
  struct Probe {
    int64_t id = 0;
    std::string key;
    Expect expect;
    SteadyTime changed{};  // committed on the API server
    // FailoverBound(): fixed per scenario, never derived from a
    // replica's state.
    Duration bound{};
    // The change's version, and when a watch event or a list page (a
    // relist after a 410) first handed it (or a later version of the
    // route) to a live replica whose caches had synced (or when they
    // synced, if later; SeenBy): its delivery.
    int64_t seq = 0;
    std::optional<SteadyTime> seen;
    // A live replica received it before its caches had synced; `seen` is
    // set when they do (SeenBy).
    bool awaiting_sync = false;
    // Lost races injected before the change (the message of a failing
    // probe says how many came while it waited).
    int64_t races_before = 0;
  };
  // Where a probe's clock starts, and why (ClockOf).
  struct ProbeClock {
    SteadyTime start{};
    ClockStart cause = ClockStart::kChange;
    int64_t deaths = 0;  // writers that died between the change and `until`
  };

  // The failover probes (engine_probes.cc).
  // A probe of `key`'s change just made by an owner.
  void AddProbe(const std::string& key);
  // The probe's clock as of `until` (its write, or now): the latest of its
  // change, its delivery and the last death of a writer after the change
  // and not after `until`.
  ProbeClock ClockOf(const Probe& p, SteadyTime until) const;
  // A writer died now: a crashed or partitioned leader, or a lost race's
  // winner (right after its write).
  void RecordDeath(const std::string& what);
  // The probe (of id `id`) reached `replica`: seen now if that replica's
  // caches have synced, else once they have (polled every 10 ms), unless
  // another replica saw it first. Why: a replica whose caches have not
  // synced reconciles nothing (Controller::RunWorker waits for them); its
  // watch's delivery is no chance to write (issue 23: partitioned outage
  // seed 88127759785449, whose only other replica could not list
  // namespaces until 59 s: RBAC 403 at start, then the relist backoff).
  void SeenBy(int replica, int64_t id);
  // A watch event or list page handed `key` at version `seq` to `receiver`.
  void ProbeDelivered(const std::string& key, int64_t seq, int receiver);
  // After each status write: ends the probes it writes (measured, checked).
  void ProbeWritten(const Route& written);
  // After each owner's change: ends the probes whose expected entry it
  // replaced (failed if their bound had passed).
  void ProbesReplaced();
  // Scheduled per probe: drops one no live, synced replica received within
  // kReceiveWindow (counted, no sample), fails one still unwritten when
  // its bound (and the longest delay the simulator injects into a write
  // request) has passed since its clock's start, else looks again later.
  void ProbeVerdict(int64_t id);
  // After the run: the verdict of every probe still open.
  void FinishProbes();
  // What a failing probe met, for its message: the lost races injected
  // while it waited, its delivery and the writers' deaths. Says why,
  // changes nothing that is checked.
  std::string ProbeCircumstances(const Probe& p) const;

  // Randomness: one generator for the whole run.
  int64_t Uniform(int64_t lo, int64_t hi) {  // inclusive
    return lo + static_cast<int64_t>(rng_() % static_cast<uint64_t>(hi - lo + 1));
  }
  double Unit() { return lease::UniformUnit(rng_); }
  bool Chance(double p) { return Unit() < p; }
  Duration UniformMs(int64_t lo, int64_t hi) {
    return std::chrono::milliseconds(Uniform(lo, hi));
  }
  Duration Exponential(Duration mean) {
    return Duration(static_cast<int64_t>(-std::log(1.0 - Unit()) * mean.count()));
  }

  void At(SteadyTime t, std::function<void()> fn) { scheduler_.At(t, std::move(fn)); }
  void After(Duration d, std::function<void()> fn) { scheduler_.After(d, std::move(fn)); }
  SteadyTime T(Duration since_start) const { return clock_.start() + since_start; }
  void Trace(const std::string& what) {
    if (o_.trace) std::cout << "[" << Ms(clock_.Elapsed()) << "] " << what << "\n";
  }
  void Fail(const std::string& what) { result_.failures.push_back(what); }

  void DrawDelays();
  void AddSlot(int config);
  void StartReplica(int i);
  void CrashReplica(int i);
  void Retire(Slot& slot);
  void OnWrite(int writer, const StoredObject& before, const StoredObject& written);
  // Runs events and fibers up to `end`; with `until_quiet`, stops earlier
  // once every replica is quiet and its caches equal the server.
  void RunUntil(SteadyTime end, bool until_quiet);
  void RunReadyFibers();
  bool AllQuiet();

  // Route and namespace owners' operations, counting the writes they
  // require (the routes whose expected entry changes).
  void OwnerCreate(bool in_shard, bool templated);
  // OwnerCreate with in_shard and templated drawn at random (both true in a
  // fight, where every route is in the shard and templated).
  void OwnerCreateDrawn(bool fight);
  void OwnerRandomChange();
  void Owner(const std::string& what, const std::function<void()>& op);
  std::string PickRoute(bool in_shard_only);
  std::string Host();
  std::map<std::string, Expect> Expectations(int config) const;

  void ScheduleChanges(Duration from, Duration length);
  void ScheduleCrashes(Duration from, Duration length);
  void ScheduleFailovers(Duration from, int rounds);
  void ScheduleResyncs(Duration period, Duration until);
  void ScheduleFaults(Duration until);
  int LeaderSlot() const;
  // The failover bound (see Probe::bound).
  Duration FailoverBound() const;
  // Routes whose entry on the server is not the one the oracle expects
  // (writes still to be made), the broken and failing routes left out.
  int64_t UnwrittenChanges() const;
  // SimApi::RaceHook: with the lost-races perturbation, some takeover
  // writes (a follower's) are beaten by a racing peer's identical write.
  bool RaceTakeover(int writer, const std::string& key);

  void CheckConvergence();
  void CheckCaches();
  // Per write: the entry's lastTransitionTime (engine_run.cc says why).
  void CheckTransitionTime(int writer, const StoredObject& before, const StoredObject& written);
  // Sampled during the run (`settled` false) and after settling: what each
  // live replica remembers per route stays bounded.
  void CheckRecords(bool settled);
  void CheckAdmissionGauge();
  // The write and PUT bounds with allowances only for what the simulator
  // injected and counted (crashes, partitions, lost races, stalled status
  // writes): issue 46's checker.
  void CheckBounds();
  // Per route whose PUTs are rejected: its per-key backoff bound.
  void CheckBackoffBounds();
  void CheckFight();
  void CheckOneConfiguration();

  // Perturbations (SimOptions::perturb), all drawn from perturb_rng_.
  int64_t PerturbUniform(int64_t lo, int64_t hi) {  // inclusive
    return lo + static_cast<int64_t>(perturb_rng_() % static_cast<uint64_t>(hi - lo + 1));
  }
  bool PerturbChance(double p) { return lease::UniformUnit(perturb_rng_) < p; }
  // Draws which perturbations this run gets (before the replicas exist).
  void DrawPerturbations();
  // A route whose status PUTs fail (403 or 422) from now until `heal`.
  void BreakRoute(Duration heal);
  // Perturbation: between `from` and `to`, the leader is partitioned (alive,
  // unanswered) for 5-20 s, and a change made just after must be written
  // by another replica within kFailoverBound (without `probe`, the
  // partition alone: the fight, whose writes the tracker may hold).
  void SchedulePartition(Duration from, Duration to, bool probe = true);
  // After our write of `key`: an update that leaves our entry alone, within
  // the same wall-clock second, so the work queue may coalesce it with our
  // echo.
  void MaybeCoalesce(const std::string& key);

  const SimOptions o_;
  std::mt19937_64 rng_;
  // Draws added after the seeds in test/sim/simulation_test.cc were picked
  // come from here, so those runs stay what they were.
  std::mt19937_64 extra_rng_;
  SimClock clock_;
  Scheduler scheduler_;
  SimApi api_;
  std::vector<Slot> slots_;
  std::vector<Fiber*> ready_;  // reused by RunReadyFibers
  int max_watch_ms_ = 50;
  int put_latency_ms_ = 10;
  int list_page_ms_ = 10;
  double drops_per_minute_ = 0;
  double compactions_per_minute_ = 0;
  double host_reuse_ = 0.1;  // chance that a new host is one already in use
  int next_route_ = 0;
  int next_host_ = 0;
  bool counting_changes_ = false;
  std::vector<Probe> probes_;
  int64_t next_probe_id_ = 0;
  // When writers died (RecordDeath), in order.
  std::vector<SteadyTime> deaths_;
  // RaceTakeover fired: the next write is the racing winner's, which dies
  // right after it (OnWrite).
  bool race_write_pending_ = false;
  std::optional<SteadyTime> fight_start_;
  struct FightWrite {
    SteadyTime at{};
    int config = 0;
    std::string key;
  };
  std::vector<FightWrite> fight_writes_;
  bool fight_relist_ = false;
  // Contentions each replica had counted by the end of the first window.
  std::map<int, int64_t> first_window_contentions_;
  std::string failing_route_;  // outage: the route whose PUTs are rejected
  std::mt19937_64 perturb_rng_;
  bool skew_clocks_ = false;
  bool coalesce_ = false;
  bool break_route_ = false;
  // Drawn from its own generator, so the other perturbations of a seed
  // stay what they were before it was added.
  std::mt19937_64 partition_rng_;
  bool partition_ = false;
  // Lost takeover races (SimApi::RaceHook): drawn from their own generator.
  std::mt19937_64 race_rng_;
  bool races_ = false;
  int64_t races_injected_ = 0;
  int partitions_ = 0;  // leaders partitioned so far
  // Perturbation: the route whose status PUTs always fail until the last
  // change; its changes, PUTs and writes are outside the bounds (its own
  // backoff bound applies).
  std::string broken_route_;
  int64_t broken_writes_ = 0;
  // When each route whose PUTs are rejected (failing_route_, broken_route_)
  // began failing, and how many times an owner gave it another expected
  // entry since (each restarts its per-key backoff).
  std::map<std::string, SteadyTime> failing_since_;
  std::map<std::string, int64_t> failing_entry_changes_;
  // Per owner's operation, by the version it committed last: how many
  // routes' expected entries it changed (a namespace's label change: the
  // routes it moves into or out of the shard, and their hosts' other
  // claimants).
  std::map<int64_t, int64_t> routes_changed_at_;
  int64_t coalesce_count_ = 0;
  SteadyTime last_quiet_check_{};
  SteadyTime last_records_check_{};
  bool tombstones_failed_ = false;  // reported once per run
  int64_t resumes_ = 0;
  SimResult result_;
};

}  // namespace routestatus::sim::internal
