// (b) create -> Admitted latency, (c) idle writes, (d) scale.
#include <algorithm>
#include <cmath>
#include <atomic>
#include <chrono>
#include <iostream>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <glog/logging.h>

#include "e2e/bench/bench_cluster.h"
#include "e2e/bench/provenance.h"
#include "e2e/bench/scenarios.h"
#include "e2e/bench/svg_plot.h"
#include "e2e/bench/table.h"

namespace routestatus::e2e::bench {
namespace {

using SteadyClock = std::chrono::steady_clock;

// Seeds `count` routes without status (through the store) in 10 namespaces.
void SeedPlainRoutes(BenchCluster& cluster, int count) {
  std::vector<std::string> namespaces;
  for (int i = 0; i < 10; ++i) namespaces.push_back("scale-" + std::to_string(i));
  cluster.SeedNamespaces(namespaces);
  for (int i = 0; i < count; ++i) {
    const std::string& ns = namespaces[static_cast<size_t>(i) % namespaces.size()];
    std::string name = "r-" + std::to_string(i);
    cluster.SeedRoute(BenchRoute(ns, name, name + "." + ns + ".bench.example.com"));
  }
}

// Waits until `count` routes carry our entry and no status PUT happened for
// `quiet`. Returns the time the last entry appeared (seconds since `start`),
// or -1 on timeout.
double WaitAllEntries(BenchCluster& cluster, size_t count, SteadyClock::time_point start,
                      std::chrono::seconds timeout, std::chrono::milliseconds quiet,
                      std::chrono::milliseconds poll) {
  double done_at = -1;
  double last = -1;
  auto last_change = SteadyClock::now();
  while (SteadyClock::now() - start < timeout) {
    double attempts = cluster.Writes().status_attempts();
    if (attempts != last) {
      last = attempts;
      last_change = SteadyClock::now();
    }
    if (done_at < 0 && cluster.CountRoutesWithEntry("default") >= count) done_at = Since(start);
    if (done_at >= 0 && SteadyClock::now() - last_change >= quiet) return done_at;
    std::this_thread::sleep_for(poll);
  }
  return done_at;
}

}  // namespace

void RunLatency(const BenchOptions& options) {
  std::cout << "\n## (b) Create -> Admitted-visible latency (N=3)\n\n" << std::flush;
  BenchCluster cluster("latency");
  cluster.SeedNamespaces({"lat"});
  // Warm-up routes so a leader exists (start-up election excluded).
  for (int i = 0; i < 5; ++i) {
    std::string name = "warm-" + std::to_string(i);
    CHECK(cluster.client()
              .Create(kubeclient::RoutesResource(), "lat",
                      BenchRoute("lat", name, name + ".lat.bench.example.com"))
              .ok());
  }
  cluster.StartReplicas(3, ControllerFlags{});
  CHECK(cluster.WaitReady(std::chrono::seconds(60))) << "replicas not ready";
  WaitAllEntries(cluster, 5, SteadyClock::now(), std::chrono::seconds(60),
                 std::chrono::seconds(2), std::chrono::milliseconds(100));

  kubeclient::ListOptions list_options;
  list_options.limit = 1;
  auto page = cluster.client().List(kubeclient::RoutesResource(), "", list_options);
  CHECK(page.ok());
  kubeclient::WatchOptions watch_options;
  watch_options.resource_version = page->resource_version;
  watch_options.timeout = std::chrono::seconds(600);
  auto watch = cluster.client().Watch(kubeclient::RoutesResource(), "", watch_options);
  CHECK(watch.ok()) << watch.status().ToString();

  std::mutex mu;
  std::map<std::string, SteadyClock::time_point> sent;  // GUARDED_BY(mu)
  std::map<std::string, double> seen;                   // GUARDED_BY(mu)
  std::thread watcher([&] {
    while (true) {
      auto event = (*watch)->Next();
      if (!event.ok()) return;
      if (event->type != kubeclient::WatchEventType::kAdded &&
          event->type != kubeclient::WatchEventType::kModified) {
        continue;
      }
      EntryView entry = FindEntry(event->object, "default");
      if (!entry.present || entry.admitted != "True") continue;
      std::string name = event->object["metadata"].value("name", "");
      auto now = SteadyClock::now();
      std::lock_guard<std::mutex> lock(mu);
      auto it = sent.find(name);
      if (it != sent.end() && seen.count(name) == 0) {
        seen[name] = std::chrono::duration<double, std::milli>(now - it->second).count();
      }
    }
  });

  const int total = static_cast<int>(options.latency_rate * options.latency_seconds);
  auto period = std::chrono::duration<double>(1.0 / options.latency_rate);
  auto start = SteadyClock::now();
  int failed = 0;
  for (int i = 0; i < total; ++i) {
    std::this_thread::sleep_until(
        start + std::chrono::duration_cast<SteadyClock::duration>(period * i));
    std::string name = "c-" + std::to_string(i);
    {
      std::lock_guard<std::mutex> lock(mu);
      sent[name] = SteadyClock::now();
    }
    if (!cluster.client()
             .Create(kubeclient::RoutesResource(), "lat",
                     BenchRoute("lat", name, name + ".lat.bench.example.com"))
             .ok()) {
      ++failed;
    }
  }
  double create_seconds = Since(start);
  auto wait_start = SteadyClock::now();
  while (Since(wait_start) < 30) {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (static_cast<int>(seen.size()) >= total - failed) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  (*watch)->Cancel();
  watcher.join();

  std::vector<double> latencies;
  {
    std::lock_guard<std::mutex> lock(mu);
    for (const auto& [name, ms] : seen) latencies.push_back(ms);
  }
  ServerWrites writes = cluster.Writes();
  Table table({"creates", "rate achieved (/s)", "admitted seen", "p50 (ms)", "p90 (ms)",
               "p99 (ms)", "max (ms)"});
  table.AddRow({std::to_string(total), Fmt("%.1f", total / create_seconds),
                std::to_string(latencies.size()), Fmt("%.1f", Percentile(latencies, 0.5)),
                Fmt("%.1f", Percentile(latencies, 0.9)), Fmt("%.1f", Percentile(latencies, 0.99)),
                Fmt("%.1f", Percentile(latencies, 1.0))});
  std::string md = table.Render();
  std::cout << md << "\n";
  std::cout << Fmt("Latency: from just before the POST to the watch event (our own watch) that "
                   "shows routerName=default Admitted=True. Status PUTs during the run: %.0f ok, "
                   "%.0f conflicts for %d creates.\n",
                   writes.status_ok, writes.status_conflict, total + 5);
  WriteResultMarkdown(options, "latency.md", md);
}

void RunIdle(const BenchOptions& options) {
  std::cout << "\n## (c) Idle write verbs (N=3, " << options.idle_routes << " routes, "
            << options.idle_seconds << " s)\n\n"
            << std::flush;
  BenchCluster cluster("idle");
  SeedPlainRoutes(cluster, options.idle_routes);
  cluster.StartReplicas(3, DefaultRateLimits(ControllerFlags{}));
  CHECK(cluster.WaitReady(std::chrono::seconds(60))) << "replicas not ready";
  WaitAllEntries(cluster, static_cast<size_t>(options.idle_routes), SteadyClock::now(),
                 std::chrono::seconds(120), std::chrono::seconds(3),
                 std::chrono::milliseconds(200));
  ServerWrites before = cluster.Writes();
  double cpu_before = cluster.ReplicaStats().cpu_seconds;
  std::this_thread::sleep_for(std::chrono::seconds(options.idle_seconds));
  ServerWrites after = cluster.Writes();
  double cpu = cluster.ReplicaStats().cpu_seconds - cpu_before;
  Table table({"window (s)", "status PUTs", "other write verbs", "total writes (goal 0)",
               "CPU s per replica"});
  double status = after.status_attempts() - before.status_attempts();
  double other = after.other_writes - before.other_writes;
  table.AddRow({std::to_string(options.idle_seconds), Fmt("%.0f", status), Fmt("%.0f", other),
                Fmt("%.0f", status + other), Fmt("%.2f", cpu / 3)});
  std::string md = table.Render();
  std::cout << md << "\n";
  std::cout << "Counted by the API server: POST/PUT/PATCH/DELETE/APPLY of any resource after "
               "convergence (a client-go leader election would renew a Lease about 30 times "
               "a minute).\n";
  WriteResultMarkdown(options, "idle.md", md);
}

void RunScale(const BenchOptions& options) {
  const int count = options.scale_routes;
  const int n = options.scale_replicas;
  std::cout << "\n## (d) " << count << " routes, N=" << n << "\n\n" << std::flush;
  BenchCluster cluster("scale");
  auto seed_start = SteadyClock::now();
  SeedPlainRoutes(cluster, count);
  std::cerr << "  seeded " << count << " routes in " << Fmt("%.1f", Since(seed_start)) << " s"
            << std::endl;
  ControllerFlags flags;
  flags.qps = 100000;
  flags.burst = 100000;

  // Cold start: no statuses yet.
  auto cold_start = SteadyClock::now();
  cluster.StartReplicas(n, flags);
  bool cold_ready = cluster.WaitReady(std::chrono::seconds(600));
  double cold_ready_s = Since(cold_start);
  double ready_writes = cluster.Writes().status_ok;
  double cold_done_s = WaitAllEntries(cluster, static_cast<size_t>(count), cold_start,
                                      std::chrono::seconds(options.quick ? 300 : 1200),
                                      std::chrono::seconds(3), std::chrono::seconds(1));
  ServerWrites cold = cluster.Writes();
  ProcStats cold_stats = cluster.ReplicaStats();
  long cold_hwm = cold_stats.vm_hwm_kb;
  double cold_cpu = cold_stats.cpu_seconds;
  size_t with_entry = cluster.CountRoutesWithEntry("default");
  cluster.StopReplicas();
  std::cerr << "  cold start done; restarting" << std::endl;

  // Restart: every status already correct.
  auto restart = SteadyClock::now();
  cluster.StartReplicas(n, flags);
  std::vector<double> ready_at(static_cast<size_t>(n), -1);
  while (Since(restart) < 600) {
    bool all = true;
    for (int i = 0; i < cluster.replicas().size(); ++i) {
      e2e::Replica& r = cluster.replicas().at(i);
      double& at = ready_at[static_cast<size_t>(i)];
      r.RestartIfPortTaken();
      if (at < 0 && r.Ready()) at = Since(restart);
      all = all && at >= 0;
    }
    if (all) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::this_thread::sleep_for(std::chrono::seconds(options.quick ? 5 : 15));
  ServerWrites warm = cluster.Writes();
  ProcStats warm_stats = cluster.ReplicaStats();
  long warm_hwm = warm_stats.vm_hwm_kb;
  double warm_cpu = warm_stats.cpu_seconds;
  double max_ready = *std::max_element(ready_at.begin(), ready_at.end());

  Table table({"phase", "time to ready (s)", "all entries in place (s)", "status PUTs (409s)",
               "writes/s", "peak RSS per replica (MB)", "CPU s per replica"});
  double cold_writes_window = cold_done_s > cold_ready_s ? cold_done_s - cold_ready_s : 0;
  table.AddRow({"cold start (no statuses)", cold_ready ? Fmt("%.1f", cold_ready_s) : "timeout",
                cold_done_s >= 0 ? Fmt("%.1f", cold_done_s) : "timeout",
                Fmt("%.0f (%.0f)", cold.status_attempts(), cold.status_conflict),
                cold_writes_window > 0 ? Fmt("%.0f", (cold.status_ok - ready_writes) /
                                                         cold_writes_window)
                                       : "-",
                Fmt("%.0f", cold_hwm / 1024.0), Fmt("%.1f", cold_cpu / n)});
  double restart_puts = warm.status_attempts() - cold.status_attempts();
  table.AddRow({"restart (statuses correct)", max_ready >= 0 ? Fmt("%.1f", max_ready) : "timeout",
                "-", Fmt("%.0f (%.0f)", restart_puts, warm.status_conflict - cold.status_conflict),
                "-", Fmt("%.0f", warm_hwm / 1024.0), Fmt("%.1f", warm_cpu / n)});
  std::string md = table.Render();
  std::cout << md << "\n";
  std::cout << Fmt("%zu of %d routes had our entry after the cold start. writes/s = successful "
                   "status PUTs after the replicas were ready / time until the last entry "
                   "appeared. Restart: PUTs counted from the restart to %d s after the last "
                   "replica was ready (goal 0). Peak RSS = max VmHWM over replicas (goal <= 400 "
                   "MB). Controllers ran with --qps=100000 --burst=100000.\n",
                   with_entry, count, options.quick ? 5 : 15);
  WriteResultMarkdown(options, "scale.md", md);
}

}  // namespace routestatus::e2e::bench
