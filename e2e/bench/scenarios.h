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
  // (a) controller flags making every replica write (a plain controller);
  // empty = the naive baseline is computed (N PUTs per change), not measured.
  std::vector<std::string> naive_flags = {"--write-lease=false"};
  std::string results_dir;      // SVG and Markdown results go here
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

}  // namespace routestatus::e2e::bench
