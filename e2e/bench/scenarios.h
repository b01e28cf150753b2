#pragma once

#include <string>
#include <vector>

namespace routestatus::e2e::bench {

// Sizes and choices of one `routestatus-bench` run.
struct BenchOptions {
  bool quick = false;
  std::vector<int> replica_counts = {1, 3, 10, 20};
  int initial_routes = 50;      // (a) routes present before the changes
  int changes = 200;            // (a) route changes per N
  double change_rate = 20;      // (a) changes per second
  int latency_seconds = 10;     // (b) seconds of creates at latency_rate
  double latency_rate = 100;    // (b) creates per second
  int idle_routes = 200;        // (c)
  int idle_seconds = 60;        // (c)
  int scale_routes = 100000;    // (d)
  int scale_replicas = 3;       // (d)
  int scale_repeats = 1;        // (d) whole runs; each figure's median is reported
  int fleet_replicas = 10;      // (d) the fleet restart's N
  // Write the measured figures into results/baseline.json as the accepted ones.
  bool accept_baseline = false;
  // (a) controller flags making every replica write (a plain controller);
  // empty = the naive baseline is computed (N PUTs per change), not measured.
  std::vector<std::string> naive_flags = {"--write-lease=false"};
  // (g) lease settings side by side and (h) the slow leader. Configurations:
  // naive, openshift, default, and the alternative expiry.
  std::vector<std::string> lease_configs = {"naive", "openshift", "default"};
  std::vector<int> failover_replicas = {3, 10};
  int failover_routes = 20;      // routes before start-up
  int failover_kills = 20;       // leader kills per configuration and N
  // (g) 0, or the HTTP code with which the API server fails every status
  // PUT of one extra route (in namespace lease-bad) for the whole run: a
  // route the server keeps rejecting (issue 23).
  int failing_route_code = 0;
  int expiry_failover_kills = 5;  // ... for settings that wait for lease expiry (up to 60 s each)
  int changes_between_kills = 8;  // host changes after the killed replica restarted
  int burst_routes = 500;
  int idle_failover_kills = 5;    // (i) leader kills after an idle period
  int idle_failover_seconds = 20;  // (i) idle before each kill
  int slow_latency_ms = 1000;
  int slow_changes = 40;
  double slow_rate = 2;
  std::string results_dir;      // SVG and Markdown results go here
  // Set per benchmark by main: the Markdown paragraph that starts each of its
  // results files (provenance.h).
  std::string provenance;
  unsigned seed = 1;
};

// (a)+(e): writes and PUT attempts per change vs N, CPU per 1,000 changes.
// Prints a Markdown table, writes writes_per_change.svg and .md.
void RunWritesPerChange(const BenchOptions& options);
// (b): create -> Admitted-visible latency at N=3.
void RunLatency(const BenchOptions& options);
// (c): write verbs while idle.
void RunIdle(const BenchOptions& options);
// (d): cold start and restart with many routes.
void RunScale(const BenchOptions& options);
// (g): lease settings side by side (start-up, churn, burst, failover).
// Prints a Markdown table, writes failover.svg and lease.md.
void RunLeaseComparison(const BenchOptions& options);
// (h): each lease setting with a leader slowed by latency on every status
// PUT. Prints a Markdown table, writes slow_leader.md.
void RunSlowLeader(const BenchOptions& options);
// (i): failover after every connection idled past the server's keep-alive
// timeout (N=3, default flags). Prints a Markdown table, writes
// idle_failover.md.
void RunIdleFailover(const BenchOptions& options);

}  // namespace routestatus::e2e::bench
