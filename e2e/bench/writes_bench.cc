// (a) writes and write requests per change vs N, and (e) CPU per 1,000
// changes per replica.
#include <chrono>
#include <iostream>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <glog/logging.h>

#include "e2e/bench/baseline.h"
#include "e2e/bench/bench_cluster.h"
#include "e2e/bench/churn.h"
#include "e2e/bench/provenance.h"
#include "e2e/bench/scenarios.h"
#include "e2e/bench/svg_plot.h"
#include "e2e/bench/table.h"

namespace routestatus::e2e::bench {
namespace {

using SteadyClock = std::chrono::steady_clock;
constexpr const char* kNamespaces[] = {"bench-a", "bench-b", "bench-c", "bench-d"};

struct WritesResult {
  int n = 0;
  bool naive = false;
  int changes = 0;
  int write_changes = 0;  // changes that need a status write
  double startup_ok = 0, startup_attempts = 0;
  double ok = 0, conflicts = 0, attempts = 0;
  double cpu_per_replica_per_1k = 0;
  double converge_s = -1;
};

WritesResult MeasureOne(const BenchOptions& options, int n, bool naive) {
  WritesResult result;
  result.n = n;
  result.naive = naive;
  BenchCluster cluster("writes-n" + std::to_string(n));
  std::vector<std::string> namespaces(std::begin(kNamespaces), std::end(kNamespaces));
  cluster.SeedNamespaces(namespaces);
  // Why: one seed for every N, so each N sees the same sequence of changes.
  RouteModel model(cluster, namespaces, options.seed);
  for (int i = 0; i < options.initial_routes; ++i) model.Create();

  ControllerFlags flags = DefaultRateLimits(ControllerFlags{});
  if (naive) flags.extra = options.naive_flags;
  cluster.StartReplicas(n, flags);
  if (!cluster.WaitReady(std::chrono::seconds(60))) {
    LOG(ERROR) << "N=" << n << ": replicas not ready";
    return result;
  }
  if (model.WaitConverged(std::chrono::seconds(90), std::chrono::seconds(2)) < 0) {
    LOG(ERROR) << "N=" << n << ": start-up did not converge";
    return result;
  }
  ServerWrites before = cluster.Writes();
  result.startup_ok = before.status_ok;
  result.startup_attempts = before.status_attempts();
  double cpu_before = cluster.ReplicaStats().cpu_seconds;

  // The changes: create 40%, host change 25%, leave the shard 15%, delete 20%.
  result.write_changes = model.RandomChanges(options.changes, options.change_rate);
  result.changes = options.changes;
  result.converge_s = model.WaitConverged(std::chrono::seconds(120), std::chrono::seconds(3));
  if (result.converge_s < 0) LOG(ERROR) << "N=" << n << ": changes did not converge";
  ServerWrites after = cluster.Writes();
  result.ok = after.status_ok - before.status_ok;
  result.conflicts = after.status_conflict - before.status_conflict;
  result.attempts = after.status_attempts() - before.status_attempts();
  double cpu = cluster.ReplicaStats().cpu_seconds - cpu_before;
  result.cpu_per_replica_per_1k = cpu / n / result.changes * 1000;
  return result;
}

}  // namespace

void RunWritesPerChange(const BenchOptions& options) {
  std::cout << "\n## (a) Status writes per change vs replicas (N)\n\n" << std::flush;
  const bool naive_measured = !options.naive_flags.empty();
  std::vector<WritesResult> results, naive_results;
  for (int n : options.replica_counts) {
    std::cerr << "  measuring N=" << n << " ..." << std::endl;
    results.push_back(MeasureOne(options, n, false));
    if (naive_measured) naive_results.push_back(MeasureOne(options, n, true));
  }
  Table table({"N", "changes (need a write)", "successful writes", "409s", "requests",
               "writes/change", "requests/change", "naive writes/change", "naive 409s",
               "naive requests/change", "start-up requests (routes)", "naive start-up requests",
               "converged after last change (s)"});
  for (size_t i = 0; i < results.size(); ++i) {
    const WritesResult& r = results[i];
    if (r.changes == 0) {
      table.AddRow({std::to_string(r.n), "failed: replicas not ready or not converged (see log)"});
      continue;
    }
    double w = r.write_changes > 0 ? r.write_changes : 1;
    std::vector<std::string> naive = {"-", "-", Fmt("%d (computed)", r.n), "-"};
    if (naive_measured && naive_results[i].changes == 0) {
      naive = {"failed", "failed", "failed", "failed"};
    } else if (naive_measured) {
      const WritesResult& v = naive_results[i];
      double vw = std::max(1, v.write_changes);
      naive = {Fmt("%.3f", v.ok / vw), Fmt("%.0f", v.conflicts), Fmt("%.3f", v.attempts / vw),
               Fmt("%.0f", v.startup_attempts)};
    }
    table.AddRow({std::to_string(r.n), Fmt("%d (%d)", r.changes, r.write_changes),
                  Fmt("%.0f", r.ok), Fmt("%.0f", r.conflicts), Fmt("%.0f", r.attempts),
                  Fmt("%.3f", r.ok / w), Fmt("%.3f", r.attempts / w), naive[0], naive[1],
                  naive[2], Fmt("%.0f (%d)", r.startup_attempts, options.initial_routes),
                  naive[3], Fmt("%.1f", r.converge_s)});
  }
  std::string md = table.Render();
  std::cout << md << "\n";
  std::cout << "Changes: " << options.changes << " at " << options.change_rate
            << "/s after start-up convergence on " << options.initial_routes
            << " routes; mix 40% create, 25% host change, 15% leave the shard (label), 20% "
               "delete. Per-change figures divide by the changes that need a status write "
               "(deletes need none). Writes are counted by the API server.\n";
  if (naive_measured) {
    std::cout << "Naive baseline: measured on the same changes with the replicas started with";
    for (const std::string& f : options.naive_flags) std::cout << " " << f;
    std::cout << " (no write lease, no contention tracker: every replica writes whenever its "
                 "own cache differs, and retries a 409).\n";
  } else {
    std::cout << "Naive baseline: computed as N PUTs per change (every replica writes, N-1 "
                 "get 409), not measured (--naive-flags= was empty).\n";
  }

  std::cout << "\n## (e) CPU seconds per 1,000 changes per replica\n\n";
  Table cpu({"N", "CPU s / 1,000 changes / replica", "CPU s / 1,000 changes, all replicas"});
  for (const WritesResult& r : results) {
    if (r.changes == 0) continue;
    cpu.AddRow({std::to_string(r.n), Fmt("%.2f", r.cpu_per_replica_per_1k),
                Fmt("%.2f", r.cpu_per_replica_per_1k * r.n)});
  }
  std::string cpu_md = cpu.Render();
  std::cout << cpu_md << "\n";

  // The plot.
  std::vector<double> xs;
  PlotSeries writes{"successful writes", "#1f77b4", false, {}};
  PlotSeries puts{"write requests", "#2ca02c", false, {}};
  PlotSeries naive{naive_measured ? "naive requests (measured)" : "naive requests (N x changes)",
                   "#d62728", true, {}};
  for (size_t i = 0; i < results.size(); ++i) {
    const WritesResult& r = results[i];
    if (r.changes == 0) continue;
    double w = std::max(1, r.write_changes);
    xs.push_back(r.n);
    writes.points.push_back({static_cast<double>(r.n), r.ok / w});
    puts.points.push_back({static_cast<double>(r.n), r.attempts / w});
    if (naive_measured && naive_results[i].changes == 0) continue;  // failed: no point
    naive.points.push_back(
        {static_cast<double>(r.n),
         naive_measured ? naive_results[i].attempts / std::max(1, naive_results[i].write_changes)
                        : static_cast<double>(r.n)});
  }
  std::string svg = RenderLinePlot("Status write requests per route change", "replicas (N)",
                                   "per change", xs, {naive, puts, writes});
  std::string path = options.results_dir + "/writes_per_change.svg";
  if (WriteTextFile(path, svg)) {
    std::cout << "plot: " << path << "\n";
  } else {
    std::cout << "could not write " << path << "\n";
  }
  // Why 5 %: requests per change is the product's headline (1.00); a few
  // extra conflicts in a run are noise, a twentieth more is not.
  std::vector<Figure> figures;
  for (const WritesResult& r : results) {
    const std::string n = std::to_string(r.n);
    figures.push_back({"writes.n" + n + ".requests_per_change", "requests per change, N=" + n,
                       {r.changes == 0 ? -1 : r.attempts / std::max(1, r.write_changes)}, 0.05});
  }
  std::string verdict =
      CheckAgainstBaseline(options.results_dir, options.accept_baseline, figures);
  std::cout << "\n" << verdict;
  WriteResultMarkdown(options, "writes_per_change.md", md + "\n" + cpu_md + "\n" + verdict);
}

}  // namespace routestatus::e2e::bench
