// route-sim: runs the seeded router-fleet simulation (test/sim) for many
// seeds and prints a summary per scenario, or one seed with a trace.
//
//   route-sim --seeds=10000                 seeds 1..10000 of every scenario
//   route-sim --seed=1234 --scenario=fight  one run (add --trace for events)
//   route-sim --seeds=5000 --random-seeds   5000 seeds per scenario drawn at
//                                           run time (make soak)
#include <algorithm>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <glog/logging.h>

#include "base/clock.h"
#include "test/sim/simulation.h"

namespace {

using routestatus::sim::Scenario;
using routestatus::sim::SimOptions;
using routestatus::sim::SimResult;

struct Summary {
  int seeds = 0;
  int failed = 0;
  int64_t changes = 0;
  int64_t writes = 0;
  int64_t puts = 0;
  int64_t conflicts = 0;
  int64_t by_state[3] = {0, 0, 0};
  int64_t startup_changes = 0;
  int64_t startup_puts = 0;
  int64_t crashes = 0;
  int64_t failovers = 0;
  int64_t max_gap_ms = 0;
  // Every failover probe written (raw, measured, where its clock started),
  // and the probes no live, synced replica received within 30 s.
  std::vector<routestatus::sim::ProbeFigure> probes;
  int64_t not_received = 0;
  int64_t fight_max_window = 0;
  int64_t fight_bound_min = 0;
  int64_t fight_last_window = 0;
  double fight_worst_ratio = 0;  // max over seeds of max window writes / bound
  double worst_write_ratio = 0;
  uint64_t worst_write_seed = 0;
};

void Usage() {
  std::cerr << "usage: route-sim [--seeds=N | --seed=N] [--first-seed=N] [--scenario=NAME|all]\n"
               "  [--replicas=N] [--workers=N (default 4; 0 draws 1..3)] [--routes=N] [--lease-interval-ms=N] [--lease-retry-ms=N]\n"
               "  [--election-delay-ms=N] [--single-probe=0|1] [--election-follows-extend=0|1]\n"
               "  [--follower-min-delay-ms=N] [--leader-follows-foreign-extend=0|1]\n"
               "  [--follower-delay-jitter=0|1] [--takeover=progress|off]\n"
               "  [--lease-rules-off=all|NAME,NAME (lease/lease_rules.h)] [--deadline-factor=X]\n"
               "   [--contention-limit=N]\n"
               "  [--contention-interval-ms=N] [--max-watch-delay-ms=N] [--trace]\n"
               "  [--put-latency-ms=N] [--list-page-delay-ms=N] [--opaque-versions=0|1]\n"
               "  [--watch-drops-per-minute=X] [--compactions-per-minute=X]\n"
               "  [--drop-event-probability=P] [--max-failures=N] [--all-failures] [--vlog=N]\n"
               "  [--random-seeds] [--perturb=0|1] [--partition=0|1]\n"
               "  [--mutant=none|slow-takeover|double-write|no-takeover] [--probe-lines]\n"
               "scenarios: steady chaos failover fight claims outage slow-leader\n";
}

bool Flag(const std::string& arg, const std::string& name, std::string* value) {
  const std::string prefix = "--" + name + "=";
  if (arg.rfind(prefix, 0) != 0) return false;
  *value = arg.substr(prefix.size());
  return true;
}

int64_t ToMs(routestatus::Duration d) { return std::chrono::duration_cast<std::chrono::milliseconds>(d).count(); }

// The failover table: per scenario, raw and measured p50 / p99 / max, how
// many probes' clocks a delivery or a death moved and by how much (p50 /
// p99 / max over those moved), and the probes not received within 30 s.
void PrintFailover(const std::map<Scenario, Summary>& summaries) {
  using routestatus::sim::ClockStart;
  using routestatus::sim::Summarize;
  std::cout << "\nfailover (ms; every probe written: crash or partition)\n"
            << std::left << std::setw(12) << "scenario" << std::right << std::setw(8) << "probes"
            << std::setw(9) << "raw-p50" << std::setw(9) << "raw-p99" << std::setw(9) << "raw-max"
            << std::setw(9) << "p50" << std::setw(9) << "p99" << std::setw(9) << "max"
            << std::setw(10) << "delivery" << std::setw(7) << "death" << std::setw(9)
            << "moved50" << std::setw(9) << "moved99" << std::setw(10) << "moved-max"
            << std::setw(10) << "unreceived" << "\n";
  for (const auto& [scenario, s] : summaries) {
    if (s.probes.empty() && s.not_received == 0) continue;
    std::vector<routestatus::Duration> moved;
    int64_t by[3] = {0, 0, 0};
    for (const auto& p : s.probes) {
      ++by[static_cast<int>(p.start)];
      if (p.start != ClockStart::kChange) moved.push_back(p.moved);
    }
    const auto raw = Summarize(routestatus::sim::Raw(s.probes));
    const auto measured = Summarize(routestatus::sim::Measured(s.probes));
    const auto m = Summarize(moved);
    std::cout << std::left << std::setw(12) << routestatus::sim::ScenarioName(scenario)
              << std::right << std::setw(8) << raw.probes << std::setw(9) << ToMs(raw.p50)
              << std::setw(9) << ToMs(raw.p99) << std::setw(9) << ToMs(raw.max) << std::setw(9)
              << ToMs(measured.p50) << std::setw(9) << ToMs(measured.p99) << std::setw(9)
              << ToMs(measured.max) << std::setw(10) << by[static_cast<int>(ClockStart::kDelivery)]
              << std::setw(7) << by[static_cast<int>(ClockStart::kDeath)] << std::setw(9)
              << ToMs(m.p50) << std::setw(9) << ToMs(m.p99) << std::setw(10) << ToMs(m.max)
              << std::setw(10) << s.not_received << "\n";
  }
}

}  // namespace

int main(int argc, char** argv) {
  google::InitGoogleLogging(argv[0]);
  FLAGS_minloglevel = 2;  // the tracker's warnings are expected in fights
  SimOptions base;
  uint64_t seeds = 100;
  uint64_t first_seed = 1;
  bool single = false;
  int max_failures = 20;
  bool all_failures = false;
  bool probe_lines = false;
  // Why random: fixed ranges only ever test the seeds someone already looked
  // at; the soak draws fresh ones on each run and prints each failing one.
  bool random_seeds = false;
  // route-sim perturbs by default (test/sim/README.md "Perturbations");
  // the gtest's fixed ranges do not (SimOptions' default).
  base.perturb = true;
  std::vector<Scenario> scenarios = routestatus::sim::AllScenarios();
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    std::string v;
    auto ms = [&](const std::string& s) { return std::chrono::milliseconds(std::stoll(s)); };
    try {
      if (Flag(arg, "vlog", &v)) {
        // Why: the lease's and status path's VLOGs (e.g. each takeover
        // sample and deadline at 3) beside --trace, on stderr.
        FLAGS_v = std::stoi(v);
        FLAGS_minloglevel = 0;
        FLAGS_logtostderr = true;
      } else if (Flag(arg, "seeds", &v)) {
        seeds = std::stoull(v);
      } else if (Flag(arg, "seed", &v)) {
        first_seed = std::stoull(v);
        seeds = 1;
        single = true;
      } else if (Flag(arg, "first-seed", &v)) {
        first_seed = std::stoull(v);
      } else if (Flag(arg, "scenario", &v)) {
        if (v != "all") {
          auto s = routestatus::sim::ParseScenario(v);
          if (!s) {
            std::cerr << "unknown scenario " << v << "\n";
            Usage();
            return 2;
          }
          scenarios = {*s};
        }
      } else if (Flag(arg, "replicas", &v)) {
        base.replicas = std::stoi(v);
      } else if (Flag(arg, "workers", &v)) {
        base.workers = std::stoi(v);
      } else if (Flag(arg, "routes", &v)) {
        base.routes = std::stoi(v);
      } else if (Flag(arg, "lease-interval-ms", &v)) {
        base.lease_interval = ms(v);
      } else if (Flag(arg, "lease-retry-ms", &v)) {
        base.lease_retry = ms(v);
      } else if (Flag(arg, "election-delay-ms", &v)) {
        base.election_delay = ms(v);
      } else if (Flag(arg, "single-probe", &v)) {
        base.single_probe = v != "0";
      } else if (Flag(arg, "follower-min-delay-ms", &v)) {
        base.follower_min_delay = ms(v);
      } else if (Flag(arg, "follower-delay-jitter", &v)) {
        base.follower_delay_jitter = v != "0";
      } else if (Flag(arg, "leader-follows-foreign-extend", &v)) {
        base.leader_follows_foreign_extend = v != "0";
      } else if (Flag(arg, "takeover", &v)) {
        auto mode = routestatus::lease::ParseTakeoverMode(v);
        if (!mode) {
          Usage();
          return 2;
        }
        base.takeover = *mode;
      } else if (Flag(arg, "lease-rules-off", &v)) {
        auto rules = routestatus::lease::LeaseRulesOff(base.lease_rules, v);
        if (!rules) {
          std::cerr << "unknown lease rule in " << v << "; rules:";
          for (const auto& name : routestatus::lease::LeaseRuleNames()) std::cerr << " " << name;
          std::cerr << "\n";
          return 2;
        }
        base.lease_rules = *rules;
      } else if (Flag(arg, "deadline-factor", &v)) {
        base.deadline_factor = std::stod(v);
        if (!(base.deadline_factor > 0.0)) {
          std::cerr << "--deadline-factor must be > 0\n";
          return 2;
        }
      } else if (Flag(arg, "election-follows-extend", &v)) {
        base.election_follows_extend = v != "0";
      } else if (Flag(arg, "contention-limit", &v)) {
        base.contention_limit = std::stoi(v);
      } else if (Flag(arg, "contention-interval-ms", &v)) {
        base.contention_interval = ms(v);
      } else if (Flag(arg, "max-watch-delay-ms", &v)) {
        base.max_watch_delay_ms = std::stoi(v);
      } else if (Flag(arg, "put-latency-ms", &v)) {
        base.put_latency_ms = std::stoi(v);
      } else if (Flag(arg, "list-page-delay-ms", &v)) {
        base.list_page_delay_ms = std::stoi(v);
      } else if (Flag(arg, "watch-drops-per-minute", &v)) {
        base.watch_drops_per_minute = std::stod(v);
      } else if (Flag(arg, "compactions-per-minute", &v)) {
        base.compactions_per_minute = std::stod(v);
      } else if (Flag(arg, "opaque-versions", &v)) {
        base.opaque_versions = v != "0";
      } else if (Flag(arg, "drop-event-probability", &v)) {
        base.drop_event_probability = std::stod(v);
      } else if (Flag(arg, "max-failures", &v)) {
        max_failures = std::stoi(v);
      } else if (arg == "--random-seeds") {
        random_seeds = true;
      } else if (Flag(arg, "perturb", &v)) {
        base.perturb = v != "0";
      } else if (Flag(arg, "partition", &v)) {
        base.partition = v != "0";
      } else if (Flag(arg, "mutant", &v)) {
        bool found = false;
        for (auto m : {routestatus::sim::Mutant::kNone, routestatus::sim::Mutant::kSlowTakeover,
                       routestatus::sim::Mutant::kDoubleWrite,
                       routestatus::sim::Mutant::kNoTakeover}) {
          if (v == routestatus::sim::MutantName(m)) {
            base.mutant = m;
            found = true;
          }
        }
        if (!found) {
          std::cerr << "unknown mutant " << v << "\n";
          return 2;
        }
      } else if (arg == "--probe-lines") {
        probe_lines = true;
      } else if (arg == "--all-failures") {
        all_failures = true;
      } else if (arg == "--trace") {
        base.trace = true;
      } else {
        Usage();
        return arg == "--help" || arg == "-h" ? 0 : 2;
      }
    } catch (const std::exception&) {
      std::cerr << "bad value in " << arg << "\n";
      return 2;
    }
  }
  if (single) FLAGS_minloglevel = base.trace ? 0 : 1;

  routestatus::RealClock real;
  const auto began = real.Now();
  const std::string binary = argv[0];
  std::map<Scenario, Summary> summaries;
  int printed = 0;
  std::random_device entropy;  // /dev/urandom on Linux
  if (random_seeds && !single) {
    std::cout << "seeds drawn at random (std::random_device), " << seeds << " per scenario\n";
  }
  for (Scenario scenario : scenarios) {
    Summary& s = summaries[scenario];
    for (uint64_t n = 0; n < seeds; ++n) {
      uint64_t seed = first_seed + n;
      if (random_seeds && !single) {
        // 48 bits: short enough to copy, far too many to repeat by chance.
        seed = ((static_cast<uint64_t>(entropy()) << 32) | entropy()) & ((1ULL << 48) - 1);
      }
      SimOptions o = base;
      o.scenario = scenario;
      o.seed = seed;
      const SimResult r = routestatus::sim::RunSimulation(o);
      ++s.seeds;
      const int64_t changes = r.startup_changes + r.changes;
      s.changes += changes;
      s.startup_changes += r.startup_changes;
      s.startup_puts += r.startup_puts;
      s.writes += r.writes;
      s.puts += r.puts;
      s.conflicts += r.conflicts;
      for (int k = 0; k < 3; ++k) s.by_state[k] += r.conflicts_by_state[k];
      s.crashes += r.crashes;
      s.failovers += r.failovers;
      s.not_received += r.probes_not_received;
      for (const routestatus::sim::ProbeFigure& p : r.failover) {
        s.probes.push_back(p);
        // One line per probe for test/sim/soak.sh's percentiles over
        // processes: raw, measured and moved in ms, the clock's start, the seed.
        if (probe_lines) {
          std::cout << "PROBE " << routestatus::sim::ScenarioName(scenario) << " " << ToMs(p.raw)
                    << " " << ToMs(p.measured) << " " << ToMs(p.moved) << " "
                    << routestatus::sim::ClockStartName(p.start) << " " << seed << "\n";
        }
      }
      s.max_gap_ms = std::max<int64_t>(
          s.max_gap_ms,
          std::chrono::duration_cast<std::chrono::milliseconds>(r.max_failover_gap).count());
      s.fight_max_window = std::max(s.fight_max_window, r.fight_max_window_writes);
      s.fight_last_window = std::max(s.fight_last_window, r.fight_last_window_writes);
      if (r.fight_bound > 0) {
        s.fight_worst_ratio = std::max(
            s.fight_worst_ratio, static_cast<double>(r.fight_max_window_writes) / r.fight_bound);
      }
      if (r.fight_bound > 0 && (s.fight_bound_min == 0 || r.fight_bound < s.fight_bound_min)) {
        s.fight_bound_min = r.fight_bound;
      }
      if (changes > 0 && scenario != Scenario::kFight) {
        const double ratio = static_cast<double>(r.writes - r.replicas) / changes;
        if (ratio > s.worst_write_ratio) {
          s.worst_write_ratio = ratio;
          s.worst_write_seed = seed;
        }
      }
      if (single) {
        std::cout << "scenario=" << routestatus::sim::ScenarioName(scenario) << " seed=" << seed
                  << " replicas=" << r.replicas << " routes=" << r.routes
                  << " startup_changes=" << r.startup_changes << " changes=" << r.changes
                  << " writes=" << r.writes << " puts=" << r.puts << " conflicts=" << r.conflicts
                  << " startup_writes=" << r.startup_writes << " startup_puts=" << r.startup_puts
                  << " crashes=" << r.crashes << " failovers=" << r.failovers
                  << " probes_not_received=" << r.probes_not_received << " max_gap_ms="
                  << std::chrono::duration_cast<std::chrono::milliseconds>(r.max_failover_gap)
                         .count()
                  << " fight_writes=" << r.fight_writes
                  << " fight_max_window=" << r.fight_max_window_writes
                  << " fight_bound=" << r.fight_bound
                  << " stalled_requests=" << r.stalled_requests
                  << " stalled_answers=" << r.stalled_answers
                  << " stalled_events=" << r.stalled_events
                  << " stalled_write_events=" << r.stalled_write_events
                  << " stale_view_routes=" << r.stale_view_routes
                  << " lost_races=" << r.lost_races
                  << " owner_conflicts=" << r.owner_conflicts << " simulated_s="
                  << std::chrono::duration_cast<std::chrono::seconds>(r.simulated).count()
                  << " perturbations=\"" << r.perturbations << "\"\n";
      }
      if (!r.ok()) {
        ++s.failed;
        if (printed < max_failures) {
          ++printed;
          std::cout << "FAIL " << routestatus::sim::ScenarioName(scenario) << " seed " << seed
                    << ": " << r.failures.front()
                    << (r.failures.size() > 1
                            ? " (+" + std::to_string(r.failures.size() - 1) + " more)"
                            : "")
                    << "\n  perturbations: " << r.perturbations << "\n  reproduce: " << routestatus::sim::ReproCommand(o, binary)
                    << " --trace\n";
          if (all_failures) {
            for (size_t k = 1; k < r.failures.size(); ++k) std::cout << "  also: " << r.failures[k] << "\n";
          }
        }
      }
    }
  }

  std::cout << "\n"
            << std::left << std::setw(9) << "scenario" << std::right << std::setw(7) << "seeds"
            << std::setw(7) << "failed" << std::setw(9) << "changes" << std::setw(8) << "wr/chg"
            << std::setw(9) << "PUT/chg" << std::setw(10) << "conflicts" << std::setw(14)
            << "start-PUT/chg" << std::setw(8) << "crashes" << std::setw(11) << "max-gap-ms"
            << std::setw(13) << "fight-max/w" << std::setw(11) << "fight/bnd" << std::setw(11)
            << "fight-last" << std::setw(17) << "conflicts E/L/F" << "\n";
  int failed = 0;
  int fleet_failed = 0;
  for (const auto& [scenario, s] : summaries) {
    failed += s.failed;
    const double c = s.changes > 0 ? static_cast<double>(s.changes) : 1.0;
    std::cout << std::left << std::setw(9) << routestatus::sim::ScenarioName(scenario)
              << std::right << std::setw(7) << s.seeds << std::setw(7) << s.failed
              << std::setw(9) << s.changes << std::setw(8) << std::fixed << std::setprecision(3)
              << s.writes / c << std::setw(9) << s.puts / c << std::setw(10) << s.conflicts
              << std::setw(14)
              << (s.startup_changes > 0
                      ? std::to_string(s.startup_puts) + "/" + std::to_string(s.startup_changes)
                      : "-")
              << std::setw(8) << s.crashes << std::setw(11)
              << (s.failovers > 0 ? std::to_string(s.max_gap_ms) : "-") << std::setw(13)
              << (s.fight_bound_min > 0 ? std::to_string(s.fight_max_window) + "/" +
                                              std::to_string(s.fight_bound_min)
                                        : "-")
              << std::setw(11);
    if (s.fight_bound_min > 0) {
      std::cout << std::setprecision(2) << s.fight_worst_ratio << std::setprecision(3);
    } else {
      std::cout << "-";
    }
    std::cout << std::setw(11)
              << (s.fight_bound_min > 0 ? std::to_string(s.fight_last_window) : "-")
              << std::setw(17)
              << (std::to_string(s.by_state[0]) + "/" + std::to_string(s.by_state[1]) + "/" +
                  std::to_string(s.by_state[2]))
              << "\n";
  }
  PrintFailover(summaries);
  // The fleet's targets over this process's runs (soak.sh checks them
  // again over all processes): only with the takeover, whose promise they are.
  if (base.takeover != routestatus::lease::TakeoverMode::kOff) {
    for (const auto& [scenario, s] : summaries) {
      const std::string missed = routestatus::sim::CheckFleetFailover(
          scenario, routestatus::sim::Measured(s.probes), s.not_received);
      if (!missed.empty()) {
        ++fleet_failed;
        std::cout << "FLEET FAIL " << routestatus::sim::ScenarioName(scenario) << ": " << missed
                  << "\n";
      }
    }
  }
  for (const auto& [scenario, s] : summaries) {
    // One line per scenario for test/sim/soak.sh, which adds up processes.
    std::cout << "SOAK " << routestatus::sim::ScenarioName(scenario) << " " << s.seeds << " "
              << s.failed << " " << s.not_received << " " << s.puts << " " << s.changes << "\n";
  }
  std::cout << "(wr/chg, PUT/chg: all status writes / PUTs over all required changes,\n"
               " incl. start-up; start-PUT/chg: PUTs / required writes in the 20 s start-up;\n"
               " max-gap-ms: the largest checked failover figure (measured max below);\n"
               " raw: a probe's change committed -> its write committed; measured: from\n"
               " the latest of the change, its delivery to a live, synced replica and the\n"
               " last writer's death before the write, less the delay the simulator\n"
               " injected into that write's request (test/sim/README.md);\n"
               " fight-max/w: most writes in one contention window / smallest 2 x limit + M;\n"
               " fight/bnd: worst seed's most writes in one window / its own bound;\n"
               " fight-last: most writes in the last window;\n"
               " conflicts E/L/F: by the loser's lease state Election/Leader/Follower)\n";
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(real.Now() - began);
  std::cout << "ran in " << took.count() << " ms; " << failed << " failing run(s)\n";
  return failed > 0 || fleet_failed > 0 ? 1 : 0;
}
