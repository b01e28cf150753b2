// routestatus-bench (`make bench`): figures, not pass/fail. Runs the
// embedded API server in-process and route-status-controller replicas as
// child processes; counts writes on the server. Prints Markdown tables and
// writes an SVG plot and the tables into --results (default e2e/bench/results).
//
//   routestatus-bench [--quick] [--only=writes,latency,idle,scale,lease,slow,
//                     idle-failover]
//                     [--results=DIR] [--naive-flags=--flag=v,--flag2=v]
//                     [--lease-configs=naive,openshift,default] [--failover-replicas=3,10]
//                     [--failover-kills=20] [--expiry-failover-kills=5]
//                     [--idle-failover-kills=5] [--failing-route=CODE]
//
// The naive baseline of (a) is measured with --naive-flags (default
// --write-lease=false: every replica writes); --naive-flags= (empty)
// computes it as N PUTs per change instead.
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <set>
#include <sstream>
#include <string>

#include <glog/logging.h>

#include "e2e/bench/provenance.h"
#include "e2e/bench/scenarios.h"
#include "e2e/bench/table.h"

namespace {

std::vector<std::string> Split(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

void Usage() {
  std::cerr << "usage: routestatus-bench [--quick] [--only=writes,latency,idle,scale,lease,\n"
               "                         slow,idle-failover]\n"
               "                         [--results=DIR] [--naive-flags=F1,F2] [--seed=N]\n"
               "                         [--replicas=1,3,10,20] [--failover-replicas=3,10]\n"
               "                         [--lease-configs=naive,openshift,default,expiry,router-ready,\n"
               "                                          rules-off:NAME+NAME]\n"
               "                         [--failover-kills=20] [--expiry-failover-kills=5]\n"
               "                         [--idle-failover-kills=5] [--failing-route=CODE]\n"
               "                         [--repeat=N] [--accept]\n"
               "                         [--fleet-replicas=10] [--scale-routes=N]\n"
               "  writes   (a) writes and write requests per change vs N=1,3,10,20 (+ (e) CPU per change)\n"
               "  latency  (b) create -> Admitted-visible latency, N=3, 100 creates/s\n"
               "  idle     (c) write verbs while idle (60 s)\n"
               "  scale    (d) 100,000 routes: cold start, restart, fleet restart (N=10,\n"
               "           streamed and paged); figures beside results/baseline.json\n"
               "  --repeat=N  (d) whole runs; medians are compared (default 1)\n"
               "  --fleet-replicas=N  (d) the fleet restart's N (default 10)\n"
               "  --scale-routes=N  (d) routes (default 100,000; --quick 10,000)\n"
               "  --accept  (d) write the measured medians into results/baseline.json\n"
               "  lease    (g) lease settings side by side (start-up, churn, 500-route burst,\n"
               "           failover after SIGKILLing the leader), N=3,10; settings: naive,\n"
               "           openshift, default, and the alternative expiry\n"
               "           (--lease-takeover=off)\n"
               "  slow     (h) each of those settings with 1 s of latency on every status write, N=3\n"
               "  idle-failover  (i) failover after 20 s idle (stale keep-alive connections),\n"
               "           N=3, default flags\n"
               "  --quick  smaller sizes (N=1,3,10; 60 changes; 3 s; 15 s; 10,000 routes;\n"
               "           lease: N=3, 5 kills (2 by expiry), 100-route burst, 10 slow changes;\n"
               "           idle-failover: 2 kills)\n"
               "  --failing-route=CODE  lease (g): one more route whose status write requests the\n"
               "           server always fails with CODE (e.g. 422, 500), present all along\n"
               "  --naive-flags  controller flags of the measured naive baseline of (a)\n"
               "           (default --write-lease=false; empty: computed as N x changes)\n";
}

}  // namespace

int main(int argc, char** argv) {
  google::InitGoogleLogging(argv[0]);
  FLAGS_logtostderr = true;
  FLAGS_minloglevel = google::GLOG_WARNING;
  signal(SIGPIPE, SIG_IGN);
  routestatus::e2e::bench::BenchOptions options;
  options.results_dir = ROUTESTATUS_BENCH_RESULTS_DIR;
  std::set<std::string> only;
  std::vector<int> replicas_override;
  std::vector<int> failover_override;
  int kills_override = -1;
  int expiry_kills_override = -1;
  int idle_kills_override = -1;
  int scale_routes_override = -1;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&a](const std::string& name) -> std::string {
      return a.rfind(name + "=", 0) == 0 ? a.substr(name.size() + 1) : std::string("\x01");
    };
    if (a == "--quick") {
      options.quick = true;
    } else if (std::string v = value("--only"); v != "\x01") {
      for (const auto& s : Split(v)) only.insert(s);
    } else if (std::string v = value("--results"); v != "\x01") {
      options.results_dir = v;
    } else if (std::string v = value("--naive-flags"); v != "\x01") {
      options.naive_flags = Split(v);
    } else if (std::string v = value("--replicas"); v != "\x01") {
      replicas_override.clear();
      for (const auto& s : Split(v)) replicas_override.push_back(std::atoi(s.c_str()));
    } else if (std::string v = value("--lease-configs"); v != "\x01") {
      options.lease_configs = Split(v);
    } else if (std::string v = value("--failover-replicas"); v != "\x01") {
      failover_override.clear();
      for (const auto& s : Split(v)) failover_override.push_back(std::atoi(s.c_str()));
    } else if (std::string v = value("--failing-route"); v != "\x01") {
      options.failing_route_code = std::atoi(v.c_str());
    } else if (std::string v = value("--failover-kills"); v != "\x01") {
      kills_override = std::atoi(v.c_str());
    } else if (std::string v = value("--expiry-failover-kills"); v != "\x01") {
      expiry_kills_override = std::atoi(v.c_str());
    } else if (std::string v = value("--idle-failover-kills"); v != "\x01") {
      idle_kills_override = std::atoi(v.c_str());
    } else if (std::string v = value("--repeat"); v != "\x01") {
      options.scale_repeats = std::max(1, std::atoi(v.c_str()));
    } else if (std::string v = value("--fleet-replicas"); v != "\x01") {
      options.fleet_replicas = std::max(1, std::atoi(v.c_str()));
    } else if (std::string v = value("--scale-routes"); v != "\x01") {
      scale_routes_override = std::max(1, std::atoi(v.c_str()));
    } else if (a == "--accept") {
      options.accept_baseline = true;
    } else if (std::string v = value("--seed"); v != "\x01") {
      options.seed = static_cast<unsigned>(std::strtoul(v.c_str(), nullptr, 10));
    } else {
      Usage();
      return a == "--help" || a == "-h" ? 0 : 2;
    }
  }
  for (const auto& s : only) {
    if (s != "writes" && s != "latency" && s != "idle" && s != "scale" && s != "lease" &&
        s != "slow" && s != "idle-failover") {
      std::cerr << "routestatus-bench: unknown benchmark " << s << "\n";
      Usage();
      return 2;
    }
  }
  if (options.quick) {
    options.replica_counts = {1, 3, 10};
    options.initial_routes = 20;
    options.changes = 60;
    options.latency_seconds = 3;
    options.idle_routes = 100;
    options.idle_seconds = 15;
    options.scale_routes = 10000;
    options.failover_replicas = {3};
    options.failover_kills = 5;
    options.expiry_failover_kills = 2;
    options.burst_routes = 100;
    options.slow_changes = 10;
    options.idle_failover_kills = 2;
  }
  if (!replicas_override.empty()) options.replica_counts = replicas_override;
  if (!failover_override.empty()) options.failover_replicas = failover_override;
  if (kills_override >= 0) options.failover_kills = kills_override;
  if (expiry_kills_override >= 0) options.expiry_failover_kills = expiry_kills_override;
  if (idle_kills_override >= 0) options.idle_failover_kills = idle_kills_override;
  if (scale_routes_override > 0) options.scale_routes = scale_routes_override;
  mkdir(options.results_dir.c_str(), 0755);
  auto want = [&only](const char* name) { return only.empty() || only.count(name) > 0; };
  std::cout << "# routestatus benchmarks" << (options.quick ? " (--quick)" : "") << "\n";
  namespace bench = routestatus::e2e::bench;
  // Why the load: the machine is shared; a figure is read with the load it
  // was measured under.
  const std::vector<std::string> command_line(argv, argv + argc);
  auto run = [&](const char* name, void (*fn)(const bench::BenchOptions&)) {
    if (!want(name)) return;
    const std::string load_before = bench::LoadAverage();
    std::cout << "\n(" << name << ": load average before " << load_before << ")\n";
    bench::BenchOptions run_options = options;
    run_options.provenance = bench::Provenance(command_line, name, load_before);
    fn(run_options);
    std::cout << "(" << name << ": load average after " << bench::LoadAverage() << ")\n"
              << std::flush;
  };
  run("writes", bench::RunWritesPerChange);
  run("latency", bench::RunLatency);
  run("idle", bench::RunIdle);
  run("scale", bench::RunScale);
  run("lease", bench::RunLeaseComparison);
  run("slow", bench::RunSlowLeader);
  run("idle-failover", bench::RunIdleFailover);
  std::cout << "\nresults: " << options.results_dir << "\n";
  return 0;
}
