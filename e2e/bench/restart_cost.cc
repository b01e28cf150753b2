// routestatus-restart-cost (`make test`, ctest restart_cost): what one
// replica's restart costs per route, in instructions, against the accepted
// value (issue 61).
//
//   routestatus-restart-cost [--accept] [--sizes=2000,8000] [--keep]
//
// The restart with every status already correct (0 writes) is what every
// rollout costs. `make bench` measures it at 100,000 routes in CPU seconds,
// which move by 10-40 % with the machine's load, and only when someone runs
// it. This check counts instructions instead: `valgrind --tool=callgrind`
// counts the same for the same binary and inputs whatever else the machine
// does. For each size, ascending: routes seeded into the embedded API server
// (in this process), one cold start of the real controller (not counted)
// writes their statuses, then one restart of the controller under callgrind
// is counted from exec to the end of its start-up report, the moment every
// listed route has been decided (all found correct: nothing written, nothing
// queued; checked). The slope between the sizes is the cost per route, which
// the fixed start-up cost does not blur; it fails when that exceeds the
// accepted value (results/baseline.json, key restart_cost.instructions_per_route)
// by more than the tolerance. The larger restart is stopped early once its
// count alone puts the slope far beyond that (kGiveUpFactor). --accept
// makes the measured slope the accepted value and writes
// results/restart_cost.md with the provenance and figures. --keep keeps the
// temp folder (profiles, logs) also when the check passes.
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <glog/logging.h>

#include "base/bounded_file.h"
#include "e2e/bench/baseline.h"
#include "e2e/bench/bench_cluster.h"
#include "e2e/bench/fleet.h"
#include "e2e/bench/provenance.h"
#include "e2e/bench/svg_plot.h"
#include "e2e/bench/table.h"
#include "e2e/harness/callgrind_profile.h"
#include "e2e/harness/prom_text.h"
#include "e2e/harness/replica.h"
#include "e2e/harness/subprocess.h"

namespace routestatus::e2e::bench {
namespace {

using SteadyClock = std::chrono::steady_clock;

constexpr char kAcceptedKey[] = "restart_cost.instructions_per_route";
// Why +25 %: the slope repeats to about 0.2 % (thread interleaving moves up
// to half a million instructions of a run), so the tolerance is there for
// deliberate changes, not noise: a feature may add a little per route, and
// whoever adds more than a quarter accepts it knowingly (--accept).
constexpr double kTolerance = 0.25;
const std::vector<int> kDefaultSizes = {2000, 8000};
// Where the restart's work ends: the start-up report returns when every
// cached route has been decided once (on a restart every one is found
// correct and settled). callgrind dumps its counts there (--dump-after);
// a rename of this function makes the check fail saying so.
constexpr char kEndOfRestart[] = "routestatus::controller::Controller::ReportListedEntries()";
// The larger restart is stopped once its count shows a cost per route this
// many times the accepted one: the verdict is certain by then, and a cost
// that grows with the square of the routes would otherwise run for minutes.
constexpr double kGiveUpFactor = 3;

struct Options {
  std::vector<int> sizes = kDefaultSizes;
  bool accept = false;
  bool keep = false;
};

// One restart counted under callgrind.
struct Restart {
  int routes = 0;
  CallgrindProfile profile;
  double settled = 0;  // routes the start-up report found correct (no_change)
  double queued = 0;   // keys queued (routestatus_workqueue_adds_total)
  double writes = 0;   // status write requests the server counted meanwhile
  double wall_s = 0;   // exec to the dump, under callgrind
  // Dumped and stopped before the end of the restart (over its budget):
  // the count is a lower bound.
  bool stopped = false;
};

// A callgrind profile of one restart is a few MB; read no more than this.
constexpr size_t kMaxProfileBytes = size_t{256} << 20;

// "1,234,567".
std::string Grouped(double value) {
  std::string digits = Fmt("%.0f", value);
  std::string out;
  const size_t lead = digits[0] == '-' ? 1 : 0;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > lead && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// A function name as a person reads it: the standard library's long spellings
// shortened, at most 110 characters.
std::string ShortName(std::string name) {
  for (const auto& [from, to] :
       {std::pair<std::string, std::string>{
            "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >",
            "std::string"},
        {"std::basic_string_view<char, std::char_traits<char> >", "std::string_view"},
        {"std::__cxx11::", "std::"}}) {
    for (size_t at = name.find(from); at != std::string::npos; at = name.find(from, at)) {
      name.replace(at, from.size(), to);
      at += to.size();
    }
  }
  if (name.size() > 110) name = name.substr(0, 107) + "...";
  return name;
}

std::string Tail(const std::string& text, size_t bytes) {
  return text.size() <= bytes ? text : text.substr(text.size() - bytes);
}

// The controller flags of `make bench`'s scale row (the product's defaults,
// the bench's shard and host flags, rate limits out of the way).
ControllerFlags RestartFlags() {
  ControllerFlags flags;
  flags.qps = 100000;
  flags.burst = 100000;
  return flags;
}

// Has one controller (not counted) write the status of every route that has
// none yet; returns when every route carries our entry and no write came for
// a second. False (with *error) on timeout.
bool WriteStatuses(BenchCluster& cluster, std::string* error) {
  const ControllerFlags flags = RestartFlags();
  cluster.StartReplicas(1, flags);
  const size_t routes = cluster.RouteCount();
  const auto start = SteadyClock::now();
  auto last_change = start;
  double last_writes = -1;
  bool done = false;
  while (!done && SteadyClock::now() - start < std::chrono::seconds(180)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const double writes = cluster.Writes().status_attempts();
    if (writes != last_writes) {
      last_writes = writes;
      last_change = SteadyClock::now();
    }
    done = cluster.CountRoutesWithEntry(flags.router_name) >= routes &&
           SteadyClock::now() - last_change >= std::chrono::seconds(1);
  }
  if (!done) {
    *error = Fmt("the cold start wrote %zu of %zu statuses in 180 s; its log:\n",
                 cluster.CountRoutesWithEntry(flags.router_name), routes) +
             Tail(cluster.replicas().at(0).Log(), 3000);
  }
  cluster.StopReplicas();
  return done;
}

// The instructions counted so far in callgrind's process `pid`
// (`callgrind_control -e`: a line "Th <id> <count>" per thread); 0 when
// unknown. Callgrind answers in its own code, which it does not count.
uint64_t CountedSoFar(const std::string& callgrind_control, pid_t pid) {
  std::string out;
  const std::string command = callgrind_control + " -e " + std::to_string(pid) + " 2>/dev/null";
  if (FILE* pipe = popen(command.c_str(), "r")) {
    char buf[512];
    while (fgets(buf, sizeof buf, pipe) != nullptr) out += buf;
    pclose(pipe);
  }
  uint64_t total = 0;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string th, id, count;
    if (words >> th >> id >> count && th == "Th") {
      count.erase(std::remove(count.begin(), count.end(), ','), count.end());
      total += std::strtoull(count.c_str(), nullptr, 10);
    }
  }
  return total;
}

// One restart of the controller under callgrind against the cluster's
// routes (every status correct), counted up to kEndOfRestart. With a
// `budget` (0: none) and callgrind_control, a run whose count passes it is
// dumped and stopped there (Restart::stopped). False (with *error) when the
// controller exited or no dump came within 5 minutes.
bool CountRestart(BenchCluster& cluster, const std::string& valgrind,
                  const std::string& callgrind_control, uint64_t budget, Restart* restart,
                  std::string* error) {
  restart->routes = static_cast<int>(cluster.RouteCount());
  const std::string id = "restart-" + std::to_string(restart->routes);
  const std::string out = cluster.dir() + "/callgrind." + id;
  ReplicaOptions options = ToReplicaOptions(RestartFlags());
  options.launch_prefix = {valgrind, "--tool=callgrind", "--callgrind-out-file=" + out + ".%p",
                           std::string("--dump-after=") + kEndOfRestart};
  const double writes_before = cluster.Writes().status_attempts();
  const auto start = SteadyClock::now();
  e2e::Replica replica(ReplicaTarget{"", cluster.kubeconfig(), cluster.dir(), {}}, id, options);
  replica.Start();
  bool dumped = false, dump_asked = false;
  for (int poll = 1; SteadyClock::now() - start < std::chrono::minutes(5); ++poll) {
    // Why part 1: a dump before the program ends is written to out.PID.1;
    // it is complete once it parses (its totals: line comes last).
    const auto text =
        ReadBoundedFile(out + "." + std::to_string(replica.pid()) + ".1", kMaxProfileBytes);
    auto profile = ParseCallgrindProfile(text.ok() ? *text : std::string());
    if (profile.ok()) {
      restart->profile = std::move(*profile);
      restart->stopped = restart->profile.trigger.find("--dump-after") == std::string::npos;
      dumped = true;
      break;
    }
    if (!replica.Running() && !replica.RestartIfPortTaken()) break;
    if (budget > 0 && !callgrind_control.empty() && !dump_asked && poll % 20 == 0 &&
        CountedSoFar(callgrind_control, replica.pid()) > budget) {
      const std::string dump =
          callgrind_control + " -d " + std::to_string(replica.pid()) + " >/dev/null 2>&1";
      dump_asked = std::system(dump.c_str()) == 0;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  restart->wall_s = Since(start);
  if (!dumped) {
    *error = Fmt("no callgrind dump at the end of %s after %.0f s (%s); was it renamed or "
                 "inlined? The controller's log (%s):\n",
                 kEndOfRestart, restart->wall_s,
                 replica.Running() ? "the controller still runs" : "the controller exited",
                 replica.log_path().c_str()) +
             Tail(replica.Log(), 3000);
    return false;
  }
  // Why scraped after the dump: a scrape's own instructions then count in
  // no figure.
  auto samples = replica.Scrape();
  if (samples.ok()) {
    restart->settled = SumSamples(*samples, "routestatus_status_writes_skipped_total",
                                  {{"reason", "no_change"}});
    restart->queued = SumSamples(*samples, "routestatus_workqueue_adds_total");
  }
  replica.Stop();
  restart->writes = cluster.Writes().status_attempts() - writes_before;
  if (restart->stopped) return true;  // the report had not ended: nothing to check
  if (!samples.ok() || restart->settled != restart->routes || restart->queued != 0 ||
      restart->writes != 0) {
    *error = Fmt("the restart of %d routes was not one with every status correct: the start-up "
                 "report settled %.0f, %.0f keys were queued, %.0f status write requests were "
                 "sent%s",
                 restart->routes, restart->settled, restart->queued, restart->writes,
                 samples.ok() ? "" : " (its /metrics did not answer)");
    return false;
  }
  return true;
}

bool ParseArgs(int argc, char** argv, Options* options) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--accept") {
      options->accept = true;
    } else if (a == "--keep") {
      options->keep = true;
    } else if (a.rfind("--sizes=", 0) == 0) {
      options->sizes.clear();
      std::stringstream list(a.substr(8));
      for (std::string item; std::getline(list, item, ',');) {
        options->sizes.push_back(std::atoi(item.c_str()));
      }
    } else {
      return false;
    }
  }
  const std::vector<int>& s = options->sizes;
  return s.size() == 2 && s[0] > 0 && s[1] > s[0];
}

int Run(const Options& options, const std::vector<std::string>& command_line) {
  const auto start = SteadyClock::now();
  const std::string load_before = LoadAverage();
  // Why now: before --accept changes the tree (its commit is named).
  const std::string provenance = Provenance(command_line, "restart-cost", load_before);
  const std::string valgrind = FindExecutable("valgrind", "ROUTESTATUS_VALGRIND");
  if (valgrind.empty()) {
    std::cout << "FAIL: valgrind not found: install the Debian package valgrind (make deps)\n";
    return 1;
  }
  std::string valgrind_version;
  if (FILE* pipe = popen((valgrind + " --version 2>/dev/null").c_str(), "r")) {
    char buf[64] = "";
    if (fgets(buf, sizeof buf, pipe) != nullptr) valgrind_version = buf;
    pclose(pipe);
  }
  valgrind_version.erase(valgrind_version.find_last_not_of("\n") + 1);
  const std::string heading =
      "One replica restarted with every status correct, counted by " + valgrind_version +
      " --tool=callgrind from exec to the end of " + std::string(kEndOfRestart) + ", with " +
      DescribeFlags(RestartFlags()) + " --qps=100000 --burst=100000; the controller " +
      (std::getenv("E2E_CONTROLLER_BINARY") != nullptr
           ? std::string("of E2E_CONTROLLER_BINARY=") + std::getenv("E2E_CONTROLLER_BINARY")
           : std::string("built by ") + ROUTESTATUS_CXX_COMPILER) +
      ".\n\n";
  std::cout << "restart cost: " << heading;
  const std::string results_dir = ROUTESTATUS_BENCH_RESULTS_DIR;
  Baseline baseline = Baseline::Load(results_dir + "/baseline.json");
  const std::optional<double> accepted = baseline.Get(kAcceptedKey);
  const std::string callgrind_control =
      FindExecutable("callgrind_control", "ROUTESTATUS_CALLGRIND_CONTROL");
  std::vector<Restart> restarts;
  std::string error, dir;
  {
    BenchCluster cluster("restart-cost");
    dir = cluster.dir();
    for (int size : options.sizes) {
      cluster.SeedPlainRoutes(static_cast<int>(cluster.RouteCount()), size);
      const auto cold = SteadyClock::now();
      if (!WriteStatuses(cluster, &error)) break;
      std::cout << Fmt("  %d routes: statuses written in %.1f s; counting a restart", size,
                       Since(cold))
                << std::endl;
      uint64_t budget = 0;
      if (!restarts.empty() && accepted && !options.accept) {
        budget = restarts[0].profile.instructions +
                 static_cast<uint64_t>(kGiveUpFactor * *accepted * (size - restarts[0].routes));
      }
      Restart restart;
      if (!CountRestart(cluster, valgrind, callgrind_control, budget, &restart, &error)) break;
      std::cout << Fmt("  %d routes: %s instructions (%.1f s under callgrind)%s", size,
                       Grouped(static_cast<double>(restart.profile.instructions)).c_str(),
                       restart.wall_s,
                       restart.stopped ? Fmt("; stopped there, past %.0f times the accepted "
                                             "cost per route",
                                             kGiveUpFactor)
                                             .c_str()
                                       : "")
                << std::endl;
      restarts.push_back(std::move(restart));
    }
  }
  if (!error.empty()) {
    std::cout << "FAIL: " << error << "\n(profiles and logs kept in " << dir << ")\n";
    return 1;
  }

  Table runs({"routes", "instructions", "start-up report: found correct", "keys queued",
              "status write requests", "wall time under callgrind (s)"});
  for (const Restart& r : restarts) {
    const std::string counted = Grouped(static_cast<double>(r.profile.instructions));
    runs.AddRow({std::to_string(r.routes), r.stopped ? "> " + counted + " (stopped)" : counted,
                 r.stopped ? "-" : Fmt("%.0f", r.settled), r.stopped ? "-" : Fmt("%.0f", r.queued),
                 Fmt("%.0f", r.writes), Fmt("%.1f", r.wall_s)});
  }
  const Restart& small = restarts[0];
  const Restart& large = restarts[1];
  const double added = large.routes - small.routes;
  const double per_route = (static_cast<double>(large.profile.instructions) -
                            static_cast<double>(small.profile.instructions)) /
                           added;
  const double fixed = static_cast<double>(small.profile.instructions) - per_route * small.routes;
  const char* at_least = large.stopped ? "more than " : "";
  std::string md = heading + runs.Render() +
                   Fmt("\nPer route (the slope between the two sizes): %s%s instructions",
                       at_least, Grouped(per_route).c_str()) +
                   (large.stopped ? std::string(".\n\n")
                                  : Fmt("; fixed (the intercept): %.1f M.\n\n", fixed / 1e6));

  Table where({"function", "own instructions per route added", "share"});
  for (const auto& [name, growth] : LargestGrowth(small.profile, large.profile, added, 10)) {
    where.AddRow({ShortName(name), Grouped(growth), Fmt("%.0f %%", 100 * growth / per_route)});
  }
  md += "Where the per-route instructions go (each function's own, largest 10):\n\n" +
        where.Render() + "\n";

  Figure figure{kAcceptedKey, "restart: instructions per route", {per_route}, kTolerance};
  int regressions = 0;
  md += "Against the accepted value (baseline.json; fails above it by more than " +
        Fmt("%.0f %%", kTolerance * 100) + "):\n\n" + baseline.Compare({figure}, &regressions);
  std::cout << "\n" << md.substr(heading.size());

  int status = 0;
  if (options.accept) {
    if (options.sizes != kDefaultSizes) {
      std::cout << "\nFAIL: --accept takes the default --sizes only (the accepted value is "
                   "their slope)\n";
      return 1;
    }
    baseline.Set(kAcceptedKey, per_route);
    const bool saved =
        baseline.Save(results_dir + "/baseline.json") &&
        WriteTextFile(results_dir + "/restart_cost.md",
                      "<!-- Written by routestatus-restart-cost --accept: edits are "
                      "overwritten. -->\n\n" +
                          provenance + "Load average at the end: " + LoadAverage() + ".\n\n" +
                          md);
    std::cout << (saved ? "\nAccepted: " + Grouped(per_route) +
                              " instructions per route (baseline.json, restart_cost.md); commit "
                              "both and say why in the commit.\n"
                        : "\nFAIL: could not write " + results_dir + "\n");
    status = saved ? 0 : 1;
  } else if (!accepted) {
    std::cout << "\nFAIL: no accepted value (" << kAcceptedKey << " in " << results_dir
              << "/baseline.json); measure it with --accept\n";
    status = 1;
  } else if (regressions > 0) {
    std::cout << Fmt("\nFAIL: the restart costs %s%s instructions per route, %.0f %% above the "
                     "accepted %s (tolerance %.0f %%). Where they go is above; "
                     "results/restart_cost.md has the same table for the accepted value, and "
                     "callgrind_annotate --inclusive=yes reads the profiles (below). If the "
                     "extra work is deliberate, "
                     "accept it: %s --accept, and commit results/baseline.json and "
                     "results/restart_cost.md saying why.\n",
                     at_least, Grouped(per_route).c_str(), 100 * (per_route / *accepted - 1),
                     Grouped(*accepted).c_str(), kTolerance * 100, command_line[0].c_str());
    status = 1;
  } else {
    std::cout << Fmt("\nPASS: %s instructions per route, %.0f %% of the accepted %s",
                     Grouped(per_route).c_str(), 100 * per_route / *accepted,
                     Grouped(*accepted).c_str());
    if (per_route < *accepted / (1 + kTolerance)) {
      std::cout << "; well below it: accept the new value (--accept) so that the check "
                   "guards it";
    }
    std::cout << ".\n";
  }
  std::cout << Fmt("(%.0f s in all; load average before %s, after %s)\n", Since(start),
                   load_before.c_str(), LoadAverage().c_str());
  if (status == 0 && !options.keep) {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  } else {
    std::cout << "(profiles and logs kept in " << dir << ")\n";
  }
  return status;
}

}  // namespace
}  // namespace routestatus::e2e::bench

int main(int argc, char** argv) {
  google::InitGoogleLogging(argv[0]);
  FLAGS_logtostderr = true;
  FLAGS_minloglevel = google::GLOG_WARNING;
  signal(SIGPIPE, SIG_IGN);
  routestatus::e2e::bench::Options options;
  if (!routestatus::e2e::bench::ParseArgs(argc, argv, &options)) {
    std::cerr << "usage: routestatus-restart-cost [--accept] [--sizes=SMALL,LARGE] [--keep]\n"
                 "  counts one replica's restart (every status correct) under callgrind at\n"
                 "  two sizes (default 2000,8000 routes) and fails when the instructions per\n"
                 "  route exceed the accepted value (results/baseline.json) by more than 25 %\n"
                 "  --accept  make the measured value the accepted one (default sizes only)\n"
                 "  --keep    keep the temp folder (callgrind profiles, logs)\n";
    return 2;
  }
  return routestatus::e2e::bench::Run(options,
                                      std::vector<std::string>(argv, argv + argc));
}
