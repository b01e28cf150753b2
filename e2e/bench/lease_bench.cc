// (g) Lease settings side by side (naive, openshift-like, our defaults, and
// alternatives), each on the same changes: start-up, steady churn, a burst,
// and failover after SIGKILLing the leader; (h) a leader slowed by 1 s of
// latency on every status write.
#include <algorithm>
#include <chrono>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include <glog/logging.h>

#include "apiserver/fault_injector.h"
#include "e2e/bench/baseline.h"
#include "e2e/bench/bench_cluster.h"
#include "e2e/harness/stand_in_router.h"
#include "e2e/bench/churn.h"
#include "e2e/bench/provenance.h"
#include "e2e/bench/scenarios.h"
#include "e2e/harness/route_factory.h"
#include "e2e/bench/svg_plot.h"
#include "e2e/bench/table.h"

namespace routestatus::e2e::bench {
namespace {

using SteadyClock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

// One lease configuration of the comparison.
struct LeaseConfig {
  std::string name;                // as in --lease-configs
  std::string flags;               // for the table
  std::vector<std::string> extra;  // controller flags
  int kills = 0;                   // failover measurements per N
};

// `router_ready_url`: what the "router-ready" configuration's replicas
// probe (a stand-in router that is always ready).
std::vector<LeaseConfig> Configs(const BenchOptions& o, const std::string& router_ready_url = "") {
  std::vector<LeaseConfig> out;
  for (const std::string& name : o.lease_configs) {
    if (name == "naive") {
      out.push_back({name, "--write-lease=false", {"--write-lease=false"}, o.failover_kills});
    } else if (name == "openshift") {
      out.push_back({name, "--lease-preset=openshift", {"--lease-preset=openshift"},
                     o.expiry_failover_kills});
    } else if (name == "default") {
      out.push_back({name, "(defaults)", {}, o.failover_kills});
    } else if (name == "router-ready" && !router_ready_url.empty()) {
      // Issue 60: the defaults beside a router that is always ready; the
      // figures must equal the defaults'.
      const std::string flag = "--router-ready-url=" + router_ready_url;
      out.push_back({name, "--router-ready-url (always ready)", {flag}, o.failover_kills});
    } else if (name == "expiry") {
      out.push_back({name, "--lease-takeover=off", {"--lease-takeover=off"},
                     o.expiry_failover_kills});
    } else if (name.rfind("rules-off:", 0) == 0) {
      // The ablation (docs/lease.md): defaults with lease rules switched off
      // ('+' between names: --lease-configs is split at commas).
      std::string rules = name.substr(10);
      std::replace(rules.begin(), rules.end(), '+', ',');
      const std::string flag = "--lease-rules-off=" + rules;
      out.push_back({name, flag, {flag}, o.failover_kills});
    } else {
      LOG(ERROR) << "unknown lease configuration " << name << " (skipped)";
    }
  }
  return out;
}

// Status write requests between two server counts.
struct Puts {
  double ok = 0, conflicts = 0, attempts = 0;
};
Puts Between(const ServerWrites& before, const ServerWrites& after) {
  return {after.status_ok - before.status_ok, after.status_conflict - before.status_conflict,
          after.status_attempts() - before.status_attempts()};
}

struct LeaseRow {
  std::string config;
  std::string flags;
  int n = 0;
  std::string failed;  // why the row stopped, "" if complete
  Puts startup;
  int churn_changes = 0;  // that need a write
  Puts churn;
  int burst_changes = 0;
  Puts burst;
  double burst_seconds = -1;
  std::vector<double> failover_s;
  int failovers_with_write_errors = 0;
  Puts failover;
  // At the end, over the running replicas: the largest takeover deadline
  // and 0.95 quantile of the waits for the leader, and takeovers lost.
  double deadline_s = 0;
  double wait_q95_s = 0;
  double takeovers_lost = 0;
  std::string load;  // load averages when the row ended
};

// The largest value of gauge `name` over the running replicas.
double MaxGauge(ReplicaSet& set, const std::string& name) {
  double max = 0;
  for (int i = 0; i < set.size(); ++i) {
    if (!set.at(i).Running()) continue;
    auto samples = set.at(i).Scrape();
    if (samples.ok()) max = std::max(max, SumSamples(*samples, name, {}));
  }
  return max;
}

// What StatusSyncer logs when a status PUT fails other than with 409/404.
constexpr char kWriteFailed[] = "status write failed";

// Waits until some replica reports itself leader; its index or -1.
int WaitForLeader(ReplicaSet& set, std::chrono::milliseconds timeout) {
  auto start = SteadyClock::now();
  while (SteadyClock::now() - start < timeout) {
    int leader = set.FindLeader();
    if (leader >= 0) return leader;
    std::this_thread::sleep_for(milliseconds(50));
  }
  return -1;
}

// Creates one route and sets *seconds to the time from just before the POST
// until the server stores our Admitted=True entry on it (-1 after 150 s);
// returns its key.
std::string CreateTimed(BenchCluster& cluster, RouteModel& model, double* seconds) {
  *seconds = -1;
  const auto t0 = SteadyClock::now();
  const std::string key = model.Create();
  while (Since(t0) < 150) {
    auto route = cluster.GetRoute(key);
    if (route && FindEntry(*route, "default").admitted == "True") {
      *seconds = Since(t0);
      break;
    }
    std::this_thread::sleep_for(milliseconds(2));
  }
  return key;
}

// The measurement: SIGKILL the leader, create one route at once,
// time until the server stores our Admitted=True entry on it. Then restart
// the killed replica and make `changes_between_kills` host changes, so that
// one replica leads and the followers have seen enough of its writes for
// their leases to run to the cap (as after any busy period).
// Returns the seconds, or -1 (with *why) on failure. *write_failed: a
// replica logged a failed status write meanwhile (e.g. a stale pooled
// connection), which delays the takeover by the retry interval.
// `idle`: wait this long first (longer than the server's 15 s keep-alive
// timeout: every pooled connection has gone stale). *victim and *new_leader
// (if given): the replica killed and the one leading once the route was
// written (-1 if none within 2 s).
double FailoverOnce(const BenchOptions& options, BenchCluster& cluster, RouteModel& model,
                    const LeaseConfig& config, int kill, std::chrono::seconds idle,
                    bool* write_failed, std::string* why, int* victim_out = nullptr,
                    int* new_leader = nullptr) {
  double latency = -1;
  ReplicaSet& set = cluster.replicas();
  std::this_thread::sleep_for(idle);
  int victim = kill % set.size();
  if (config.name != "naive") {
    victim = WaitForLeader(set, seconds(10));
    if (victim < 0) {
      *why = "no replica reports routestatus_lease_state{state=\"leader\"} 1";
      return -1;
    }
  }
  const size_t failed_before = set.GrepLogs(kWriteFailed).size();
  set.at(victim).Kill();
  const std::string key = CreateTimed(cluster, model, &latency);
  if (latency < 0) {
    *why = key + " not written within 150 s of the kill";
    return -1;
  }
  *write_failed = set.GrepLogs(kWriteFailed).size() > failed_before;
  if (victim_out != nullptr) *victim_out = victim;
  if (new_leader != nullptr) *new_leader = WaitForLeader(set, seconds(2));
  set.at(victim).Start();
  if (!set.WaitReady(seconds(60))) {
    *why = "restarted replica not ready";
    return -1;
  }
  for (int i = 0; i < options.changes_between_kills; ++i) {
    model.ChangeHost(100000 + kill * 100 + i);
    std::this_thread::sleep_for(milliseconds(100));
  }
  if (model.WaitConverged(seconds(120), seconds(1)) < 0) {
    *why = "not converged after the changes following kill " + std::to_string(kill);
    return -1;
  }
  return latency;
}

// Creates the initial routes, starts `n` replicas with `config` and waits
// until they converged; "" or why not.
std::string StartFleet(const BenchOptions& options, const LeaseConfig& config, int n,
                       BenchCluster& cluster, RouteModel& model) {
  for (int i = 0; i < options.failover_routes; ++i) model.Create();
  ControllerFlags flags = DefaultRateLimits(ControllerFlags{});
  flags.extra = config.extra;
  cluster.StartReplicas(n, flags);
  if (!cluster.WaitReady(seconds(60))) return "replicas not ready";
  if (model.WaitConverged(seconds(120), seconds(2)) < 0) return "start-up did not converge";
  return "";
}

LeaseRow MeasureLease(const BenchOptions& options, const LeaseConfig& config, int n) {
  LeaseRow row;
  row.config = config.name;
  row.flags = config.flags;
  row.n = n;
  BenchCluster cluster("lease-" + config.name + "-n" + std::to_string(n));
  std::vector<std::string> namespaces = {"lease-a", "lease-b"};
  cluster.SeedNamespaces(namespaces);
  // Why one seed: every configuration and N sees the same changes.
  RouteModel model(cluster, namespaces, options.seed);
  if (options.failing_route_code != 0) {
    // Why its own namespace: the fault rules select by namespace, and the
    // route model (whose convergence the bench waits for) never sees it.
    cluster.SeedNamespaces({"lease-bad"});
    apiserver::FaultRule bad;
    bad.resource = "routes";
    bad.subresource = "status";
    bad.ns = "lease-bad";
    bad.code = options.failing_route_code;
    cluster.server().faults().Add(bad);
    routestatus::e2e::RouteShape shape;
    shape.ns = "lease-bad";
    shape.name = "bad";
    shape.host = "bad.lease.example.com";
    cluster.SeedRoute(routestatus::e2e::MakeRoute(shape));
    row.flags += Fmt(" (+1 route failing %d)", options.failing_route_code);
  }
  row.failed = StartFleet(options, config, n, cluster, model);
  if (!row.failed.empty()) return row;
  row.startup = Between(ServerWrites{}, cluster.Writes());

  // Steady churn: the change mix of (a).
  ServerWrites before = cluster.Writes();
  row.churn_changes = model.RandomChanges(options.changes, options.change_rate);
  if (model.WaitConverged(seconds(180), seconds(3)) < 0) {
    row.failed = "churn did not converge";
    return row;
  }
  row.churn = Between(before, cluster.Writes());

  // A burst: route creates as fast as one client makes them.
  before = cluster.Writes();
  auto start = SteadyClock::now();
  for (int i = 0; i < options.burst_routes; ++i) model.Create();
  row.burst_changes = options.burst_routes;
  if (model.WaitConverged(seconds(300), seconds(3)) < 0) {
    row.failed = "burst did not converge";
    return row;
  }
  row.burst_seconds = Since(start);
  row.burst = Between(before, cluster.Writes());

  // Failover.
  before = cluster.Writes();
  for (int k = 0; k < config.kills; ++k) {
    std::string why;
    bool write_failed = false;
    double s = FailoverOnce(options, cluster, model, config, k, seconds(0), &write_failed, &why);
    if (s < 0) {
      row.failed = "failover " + std::to_string(k + 1) + ": " + why;
      LOG(ERROR) << config.name << " N=" << n << ": " << row.failed;
      break;
    }
    row.failover_s.push_back(s);
    if (write_failed) ++row.failovers_with_write_errors;
    std::cerr << "    " << config.name << " N=" << n << " kill " << (k + 1) << ": "
              << Fmt("%.2f", s) << " s" << (write_failed ? " (a status write failed)" : "")
              << std::endl;
  }
  row.failover = Between(before, cluster.Writes());
  row.deadline_s = MaxGauge(cluster.replicas(), "routestatus_lease_takeover_deadline_seconds");
  row.wait_q95_s = MaxGauge(cluster.replicas(), "routestatus_lease_progress_wait_seconds");
  row.takeovers_lost =
      cluster.replicas().SumMetric("routestatus_lease_takeovers_total", {{"outcome", "lost"}});
  row.load = LoadAverage();
  return row;
}

std::string PerChange(double v, int changes) {
  return changes > 0 ? Fmt("%.3f", v / changes) : "-";
}

// (h): a leader that is alive but slow.
struct SlowRow {
  std::string config;
  std::string flags;
  std::string failed;
  int changes = 0;  // that need a write
  Puts puts;
  double takeovers_lost = 0;
  double converge_s = -1;
  // Failover with every status write still slow: seconds per kill.
  std::vector<double> failover_s;
  int failovers_with_write_errors = 0;
  // Routes created because no replica led when a kill was due: each one's
  // time to its Admitted=True entry (a takeover, no crash).
  std::vector<double> leaderless_s;
  // The failovers whose new leader was not the replica restarted after the
  // previous kill (that one has mostly not learnt the slow pace yet: its D
  // is usually still the 500 ms floor).
  std::vector<double> failover_by_veteran_s;
  // The replica restarted after the previous kill, just before each kill:
  // its D (routestatus_lease_takeover_deadline_seconds), and how many
  // failovers it took over.
  std::vector<double> restarted_deadline_s;
  int failover_by_restarted = 0;
  // Status write requests and 409s on the server from the first kill to
  // the end (a 409 is a contested write; the replicas' own counters restart
  // with them).
  Puts kills_puts;
  double deadline_s = 0;  // as in LeaseRow, at the end
  double wait_q95_s = 0;
  std::string load;  // load averages when the row ended
};

// Until some replica leads (a follower's write on a slow server may be
// contested, and then nobody leads until a takeover wins alone), creates a
// route and times it, at most `tries` times; "" or why not.
std::string NudgeUntilLeader(BenchCluster& cluster, RouteModel& model, int tries,
                             std::vector<double>* leaderless_s) {
  for (int i = 0; WaitForLeader(cluster.replicas(), seconds(10)) < 0; ++i) {
    if (i == tries) return "no replica leads after " + std::to_string(tries) + " creates";
    double s = -1;
    const std::string key = CreateTimed(cluster, model, &s);
    if (s < 0) return key + " not written within 150 s with no leader";
    leaderless_s->push_back(s);
    if (model.WaitConverged(seconds(60), seconds(1)) < 0) return "not converged";
  }
  return "";
}

SlowRow MeasureSlow(const BenchOptions& options, const LeaseConfig& config) {
  SlowRow row;
  row.config = config.name;
  row.flags = config.flags;
  BenchCluster cluster("slow-" + config.name);
  std::vector<std::string> namespaces = {"slow-a", "slow-b"};
  cluster.SeedNamespaces(namespaces);
  RouteModel model(cluster, namespaces, options.seed);
  row.failed = StartFleet(options, config, 3, cluster, model);
  if (!row.failed.empty()) return row;
  // Why no verb: the controllers' only requests on routes/status are status
  // writes, whatever the server calls the verb.
  apiserver::FaultRule slow;
  slow.resource = "routes";
  slow.subresource = "status";
  slow.code = 0;
  slow.latency = milliseconds(options.slow_latency_ms);
  cluster.server().faults().Add(slow);
  ServerWrites before = cluster.Writes();
  row.changes = model.RandomChanges(options.slow_changes, options.slow_rate);
  row.converge_s = model.WaitConverged(seconds(300), seconds(5));
  if (row.converge_s < 0) row.failed = "did not converge";
  row.puts = Between(before, cluster.Writes());
  row.takeovers_lost =
      cluster.replicas().SumMetric("routestatus_lease_takeovers_total", {{"outcome", "lost"}});
  // Why with the server still slow: how long a dead leader's change waits
  // when the followers have learnt 1 s writes (the simulator's slow-leader
  // scenario predicts it; this is the real fleet's figure).
  int restarted = -1;  // the replica restarted after the previous kill
  const ServerWrites kills_before = cluster.Writes();
  for (int k = 0; row.failed.empty() && k < config.kills; ++k) {
    if (config.name != "naive") {
      row.failed = NudgeUntilLeader(cluster, model, 3, &row.leaderless_s);
      if (!row.failed.empty()) break;
    }
    if (restarted >= 0 && config.name != "naive") {
      auto samples = cluster.replicas().at(restarted).Scrape();
      if (samples.ok()) {
        row.restarted_deadline_s.push_back(
            SumSamples(*samples, "routestatus_lease_takeover_deadline_seconds", {}));
      }
    }
    std::string why;
    bool write_failed = false;
    int victim = -1, new_leader = -1;
    const double s = FailoverOnce(options, cluster, model, config, k, seconds(0), &write_failed,
                                  &why, &victim, &new_leader);
    if (s < 0) {
      row.failed = "failover " + std::to_string(k + 1) + ": " + why;
      break;
    }
    row.failover_s.push_back(s);
    const bool by_restarted = new_leader >= 0 && new_leader == restarted;
    if (config.name != "naive" && !by_restarted) row.failover_by_veteran_s.push_back(s);
    if (config.name != "naive" && by_restarted) ++row.failover_by_restarted;
    restarted = victim;
    if (write_failed) ++row.failovers_with_write_errors;
    std::cerr << "    slow " << config.name << " kill " << (k + 1) << ": " << Fmt("%.2f", s)
              << " s" << (by_restarted ? " (the replica restarted last took over)" : "")
              << std::endl;
  }
  row.kills_puts = Between(kills_before, cluster.Writes());
  row.deadline_s = MaxGauge(cluster.replicas(), "routestatus_lease_takeover_deadline_seconds");
  row.wait_q95_s = MaxGauge(cluster.replicas(), "routestatus_lease_progress_wait_seconds");
  cluster.server().faults().Clear();
  row.load = LoadAverage();
  return row;
}

}  // namespace

void RunLeaseComparison(const BenchOptions& options) {
  std::cout << "\n## (g) Lease settings side by side: start-up, churn, burst, failover\n\n"
            << std::flush;
  StandInRouter router;  // for the "router-ready" configuration
  Status listening = router.Start();
  if (!listening.ok()) LOG(ERROR) << "stand-in router: " << listening.ToString();
  std::vector<LeaseConfig> configs = Configs(options, listening.ok() ? router.ReadyUrl() : "");
  std::vector<LeaseRow> rows;
  for (int n : options.failover_replicas) {
    for (const LeaseConfig& config : configs) {
      std::cerr << "  measuring " << config.name << " N=" << n << " ..." << std::endl;
      rows.push_back(MeasureLease(options, config, n));
    }
  }
  Table table({"settings", "N", "start-up requests (409s)", "churn writes/change",
               "churn requests/change", "burst requests/change (s)", "kills", "failover p50 (s)",
               "failover p99 (s)", "failover max (s)", "requests per kill (409s)",
               "kills with a failed write", "D / wait q95 (s)", "takeovers lost",
               "load at end (1/5/15 min)"});
  for (const LeaseRow& r : rows) {
    const double kills = std::max<size_t>(1, r.failover_s.size());
    table.AddRow({r.config + " " + r.flags, std::to_string(r.n),
                  Fmt("%.0f (%.0f)", r.startup.attempts, r.startup.conflicts),
                  PerChange(r.churn.ok, r.churn_changes),
                  PerChange(r.churn.attempts, r.churn_changes),
                  r.burst_seconds < 0
                      ? "-"
                      : PerChange(r.burst.attempts, r.burst_changes) +
                            Fmt(" (%.1f)", r.burst_seconds),
                  std::to_string(r.failover_s.size()) + (r.failed.empty() ? "" : " (failed)"),
                  Fmt("%.2f", Percentile(r.failover_s, 0.5)),
                  Fmt("%.2f", Percentile(r.failover_s, 0.99)),
                  Fmt("%.2f", Percentile(r.failover_s, 1.0)),
                  Fmt("%.2f (%.2f)", r.failover.attempts / kills, r.failover.conflicts / kills),
                  std::to_string(r.failovers_with_write_errors),
                  r.deadline_s > 0 ? Fmt("%.2f / %.3f", r.deadline_s, r.wait_q95_s) : "-",
                  Fmt("%.0f", r.takeovers_lost), r.load});
  }
  std::string md = table.Render();
  std::cout << md << "\n";
  for (const LeaseRow& r : rows) {
    if (!r.failed.empty()) std::cout << "FAILED " << r.config << " N=" << r.n << ": " << r.failed << "\n";
  }
  std::cout << Fmt(
      "Every replica ran with the product's defaults (--lease-interval=15s "
      "--lease-retry-interval=3s --lease-election-delay=1s --qps=50 --burst=100) plus the "
      "settings' flags. Start-up: %d routes without status. Churn: %d changes at %.0f/s (the "
      "mix of (a)); per change = over the changes that need a write. Burst: %d route creates "
      "as fast as one client makes them; (s) = until converged. Failover: the leader (the "
      "replica whose routestatus_lease_state says leader; naive: any) is SIGKILLed, one route "
      "is created at once; time from just before the POST until the server stores our "
      "Admitted=True entry; then the replica is restarted and %d host changes are made "
      "(10/s; the followers' leases then run to the cap, as after any busy period). p99 "
      "is nearest-rank (with 20 kills: the largest). Kills with a failed write: a replica "
      "logged \"status write failed\" (not a 409) between the kill and the write, e.g. a "
      "stale pooled connection. D / wait q95: the largest routestatus_lease_takeover_deadline_"
      "seconds and routestatus_lease_progress_wait_seconds of the replicas at the end; "
      "takeovers lost: routestatus_lease_takeovers_total{outcome=\"lost\"} summed over the "
      "replicas running at the end (restarted ones count from their restart). Writes "
      "counted by the API server.\n",
      options.failover_routes, options.changes, options.change_rate, options.burst_routes,
      options.changes_between_kills);

  // The plot: failover p50/p99 vs N per configuration (log scale).
  std::vector<double> xs(options.failover_replicas.begin(), options.failover_replicas.end());
  const char* colors[] = {"#d62728", "#ff7f0e", "#1f77b4", "#2ca02c", "#9467bd"};
  std::vector<PlotSeries> series;
  for (size_t c = 0; c < configs.size(); ++c) {
    PlotSeries p50{configs[c].name + " p50", colors[c % 5], false, {}};
    PlotSeries p99{configs[c].name + " p99", colors[c % 5], true, {}};
    for (const LeaseRow& r : rows) {
      if (r.config != configs[c].name || r.failover_s.empty()) continue;
      p50.points.push_back({static_cast<double>(r.n), Percentile(r.failover_s, 0.5)});
      p99.points.push_back({static_cast<double>(r.n), Percentile(r.failover_s, 0.99)});
    }
    series.push_back(p50);
    series.push_back(p99);
  }
  std::string svg = RenderLinePlot("Failover: leader SIGKILLed -> next change written",
                                   "replicas (N)", "seconds (log scale)", xs, series, true);
  // Why by variant: a --failing-route run must not overwrite the full
  // comparison's plot.
  const std::string plot = options.failing_route_code != 0
                               ? Fmt("/failover_failing%d.svg", options.failing_route_code)
                               : std::string("/failover.svg");
  WriteTextFile(options.results_dir + plot, svg);
  std::cout << "plot: " << options.results_dir << plot << "\n";
  // Why only our defaults: they are the README's figures; the other
  // settings are there to compare against, not to keep.
  std::vector<Figure> figures;
  const std::string variant = options.failing_route_code != 0
                                  ? Fmt("failing%d.", options.failing_route_code)
                                  : std::string();
  for (const LeaseRow& r : rows) {
    if (r.config != "default") continue;
    const std::string key = "lease." + variant + "n" + std::to_string(r.n) + ".";
    const std::string label = " (defaults, N=" + std::to_string(r.n) + ")";
    const bool measured = r.failed.empty() && !r.failover_s.empty();
    figures.push_back({key + "failover_p50_s", "failover p50 (s)" + label,
                       {measured ? Percentile(r.failover_s, 0.5) : -1}});
    figures.push_back({key + "failover_p99_s", "failover p99 (s)" + label,
                       {measured ? Percentile(r.failover_s, 0.99) : -1}, 1.0});
    figures.push_back({key + "churn_requests_per_change", "churn requests per change" + label,
                       {r.churn_changes > 0 ? r.churn.attempts / r.churn_changes : -1}, 0.05});
  }
  std::string verdict =
      CheckAgainstBaseline(options.results_dir, options.accept_baseline, figures);
  std::cout << "\n" << verdict;
  WriteResultMarkdown(options, options.failing_route_code != 0 ? "lease_failing_route.md" : "lease.md",
                      md + "\n" + verdict);
}

void RunSlowLeader(const BenchOptions& options) {
  std::vector<LeaseConfig> configs = Configs(options);
  std::cout << "\n## (h) A slow leader: " << options.slow_latency_ms
            << " ms on every status write, N=3\n\n"
            << std::flush;
  Table slow({"settings", "changes (need a write)", "requests", "409s", "requests/change",
              "takeovers lost", "converged after last change (s)", "kills",
              "failover p50 / p99 / max (s)", "of which not by the replica restarted last: n, p50 / max (s)",
              "by the replica restarted last", "its D before the next kill: p50 / max (s)",
              "kills: requests (409s)", "kills with a failed write",
              "creates with no leader (max s)", "D / wait q95 (s)", "load at end (1/5/15 min)"});
  for (const LeaseConfig& config : configs) {
    std::cerr << "  measuring slow leader, " << config.name << " ..." << std::endl;
    SlowRow r = MeasureSlow(options, config);
    slow.AddRow({r.config + " " + r.flags, std::to_string(r.changes),
                 Fmt("%.0f", r.puts.attempts), Fmt("%.0f", r.puts.conflicts),
                 PerChange(r.puts.attempts, r.changes), Fmt("%.0f", r.takeovers_lost),
                 r.converge_s < 0 ? r.failed : Fmt("%.1f", r.converge_s),
                 std::to_string(r.failover_s.size()) + (r.failed.empty() ? "" : " (failed)"),
                 r.failover_s.empty() ? "-"
                                      : Fmt("%.2f / %.2f / %.2f", Percentile(r.failover_s, 0.5),
                                            Percentile(r.failover_s, 0.99),
                                            Percentile(r.failover_s, 1.0)),
                 r.failover_by_veteran_s.empty()
                     ? "-"
                     : Fmt("%zu, %.2f / %.2f", r.failover_by_veteran_s.size(),
                           Percentile(r.failover_by_veteran_s, 0.5),
                           Percentile(r.failover_by_veteran_s, 1.0)),
                 config.name == "naive" ? "-" : std::to_string(r.failover_by_restarted),
                 r.restarted_deadline_s.empty()
                     ? "-"
                     : Fmt("%.2f / %.2f", Percentile(r.restarted_deadline_s, 0.5),
                           Percentile(r.restarted_deadline_s, 1.0)),
                 Fmt("%.0f (%.0f)", r.kills_puts.attempts, r.kills_puts.conflicts),
                 std::to_string(r.failovers_with_write_errors),
                 r.leaderless_s.empty() ? "0"
                                        : Fmt("%zu (%.2f)", r.leaderless_s.size(),
                                              Percentile(r.leaderless_s, 1.0)),
                 r.deadline_s > 0 ? Fmt("%.2f / %.3f", r.deadline_s, r.wait_q95_s) : "-",
                 r.load});
    if (!r.failed.empty()) std::cout << "FAILED slow " << r.config << ": " << r.failed << "\n";
  }
  const std::string table_md = slow.Render();
  // Why the legend goes into the results file too: its columns mean little
  // without it.
  const std::string legend = Fmt("After start-up on %d routes, every status write is delayed %d ms by the API "
                   "server (fault injection, before the write applies); %d changes of the mix "
                   "of (a) at %.1f/s; requests and 409s are those of the changes. Then, the "
                   "server still slow, the failover of (g): the leader SIGKILLed, one route "
                   "created at once, time until the server stores its Admitted=True entry "
                   "(including that write's own %d ms), the replica restarted and %d host "
                   "changes made before the next kill. When no replica leads 10 s after "
                   "those changes (a contested takeover leaves every replica following), "
                   "a route is created and timed the same way, at most 3 times: creates "
                   "with no leader. Not by the replica restarted last: the failovers whose "
                   "new leader (the replica reporting itself leader once the route was "
                   "written) is not the one restarted after the previous kill; that one has "
                   "seen a few slow writes only. Its D before the next kill: that replica's "
                   "routestatus_lease_takeover_deadline_seconds scraped just before the "
                   "kill. D / wait q95: as in (g), at the end. Takeovers lost: "
                   "routestatus_lease_takeovers_total{outcome=\"lost\"} summed over the "
                   "replicas after the changes, before the kills; kills: the server's "
                   "status write requests and 409s from the first kill to the end.\n",
                   options.failover_routes, options.slow_latency_ms, options.slow_changes,
                   options.slow_rate, options.slow_latency_ms, options.changes_between_kills);
  std::cout << table_md << "\n" << legend;
  WriteResultMarkdown(options, "slow_leader.md", table_md + "\n" + legend);
}

void RunIdleFailover(const BenchOptions& options) {
  const LeaseConfig config{"default", "(defaults)", {}, options.idle_failover_kills};
  std::cout << "\n## (i) Failover after an idle period: N=3, default flags, "
            << options.idle_failover_seconds << " s idle before each kill\n\n"
            << std::flush;
  BenchCluster cluster("idle-failover");
  std::vector<std::string> namespaces = {"idle-failover"};
  cluster.SeedNamespaces(namespaces);
  RouteModel model(cluster, namespaces, options.seed);
  std::string failed = StartFleet(options, config, 3, cluster, model);
  // Why these two: a pooled connection the server closed while idle fails
  // the next request ("Failed to write request") unless the client replaces
  // it first (reason="stale_connection").
  constexpr char kStaleWrite[] = "Failed to write request";
  Table table({"kill", "failover (s)", "\"Failed to write request\" lines",
               "stale connections replaced", "a status write failed", "load (1/5/15 min)"});
  std::vector<double> seconds_per_kill;
  for (int k = 0; failed.empty() && k < config.kills; ++k) {
    ReplicaSet& set = cluster.replicas();
    const size_t lines_before = set.GrepLogs(kStaleWrite).size();
    const double stale_before =
        set.SumMetric("routestatus_api_connection_retries_total", {{"reason", "stale_connection"}});
    bool write_failed = false;
    std::string why;
    // Why the restart counts: FailoverOnce restarts the victim (its counter
    // starts at 0 again), so the survivors' increase is a lower bound.
    const double s = FailoverOnce(options, cluster, model, config, k,
                                  seconds(options.idle_failover_seconds), &write_failed, &why);
    if (s < 0) {
      failed = "kill " + std::to_string(k + 1) + ": " + why;
      break;
    }
    seconds_per_kill.push_back(s);
    const double stale_after =
        set.SumMetric("routestatus_api_connection_retries_total", {{"reason", "stale_connection"}});
    table.AddRow({std::to_string(k + 1), Fmt("%.2f", s),
                  std::to_string(set.GrepLogs(kStaleWrite).size() - lines_before),
                  Fmt("%.0f", std::max(0.0, stale_after - stale_before)),
                  write_failed ? "yes" : "no", LoadAverage()});
    std::cerr << "    idle failover kill " << (k + 1) << ": " << Fmt("%.2f", s) << " s" << std::endl;
  }
  std::string md = table.Render();
  std::cout << md << "\n";
  if (!failed.empty()) std::cout << "FAILED: " << failed << "\n";
  std::cout << Fmt("p50 %.2f s, max %.2f s over %zu kills. As in (g) (%d routes, the leader "
                   "SIGKILLed, one route created at once, time to our Admitted=True entry), but "
                   "every replica and the benchmark's client first idle for %d s, longer than "
                   "the server's 15 s keep-alive timeout. Default flags (--qps=50 --burst=100 "
                   "and the lease defaults).\n",
                   Percentile(seconds_per_kill, 0.5), Percentile(seconds_per_kill, 1.0),
                   seconds_per_kill.size(), options.failover_routes, options.idle_failover_seconds);
  WriteResultMarkdown(options, "idle_failover.md", md);
}

}  // namespace routestatus::e2e::bench
