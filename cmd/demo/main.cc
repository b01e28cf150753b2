// routestatus-demo (`make run`): starts local-apiserver on a free loopback
// port, creates a realistic set of namespaces and routes, starts 3 replicas
// of route-status-controller with one router name, waits until they have
// converged, starts Prometheus beside them when it is installed, changes
// some hosts and prints a report. Then it runs until Ctrl-C (SIGINT/SIGTERM)
// and stops everything it started; with --once it exits after the report.
// Exit codes: 0 converged, 1 failed or timed out, 2 bad flags.
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <glog/logging.h>

#include "base/clock.h"
#include "cmd/demo/demo_prometheus.h"
#include "cmd/demo/demo_report.h"
#include "e2e/bench/fleet.h"
#include "e2e/harness/route_factory.h"
#include "kubeclient/kube_client.h"
#include "kubeclient/rest/kube_config.h"
#include "kubeclient/rest/rest_kube_client.h"

namespace routestatus::demo {
namespace {

namespace bench = routestatus::e2e::bench;
using Clock = std::chrono::steady_clock;

struct Flags {
  bool once = false;
  int routes = 200;
  int replicas = 3;
  uint64_t seed = 42;
  int timeout_s = 90;
  bool naive = true;  // measure the --write-lease=false baseline first
  int changes = 30;   // host changes after convergence
};

// Stop requests from SIGINT/SIGTERM, taken synchronously on a helper thread.
// Thread-safe.
class StopSignal {
 public:
  StopSignal() {
    sigemptyset(&signals_);
    sigaddset(&signals_, SIGINT);
    sigaddset(&signals_, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &signals_, nullptr);
    thread_ = std::thread([this] {
      int sig = 0;
      sigwait(&signals_, &sig);
      std::lock_guard<std::mutex> lock(mu_);
      stopped_ = true;
      cv_.notify_all();
    });
  }
  ~StopSignal() {
    bool done;
    {
      std::lock_guard<std::mutex> lock(mu_);
      done = stopped_;
    }
    // Why: wakes the sigwait (SIGINT is blocked, so it stays pending for it).
    if (!done) pthread_kill(thread_.native_handle(), SIGINT);
    thread_.join();
  }
  bool stopped() {
    std::lock_guard<std::mutex> lock(mu_);
    return stopped_;
  }
  // Waits up to `d`; true if a stop was requested.
  bool WaitFor(std::chrono::milliseconds d) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, d, [this] { return stopped_; });
  }
  void WaitForever() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return stopped_; });
  }

 private:
  sigset_t signals_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopped_ = false;
  std::thread thread_;
};

bool ParseFlags(int argc, char** argv, Flags* flags) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&a](const char* name) -> const char* {
      std::string prefix = std::string(name) + "=";
      return a.rfind(prefix, 0) == 0 ? a.c_str() + prefix.size() : nullptr;
    };
    if (a == "--once") {
      flags->once = true;
    } else if (const char* v = value("--routes")) {
      flags->routes = std::atoi(v);
    } else if (const char* v = value("--replicas")) {
      flags->replicas = std::atoi(v);
    } else if (const char* v = value("--seed")) {
      flags->seed = std::strtoull(v, nullptr, 10);
    } else if (const char* v = value("--timeout")) {
      flags->timeout_s = std::atoi(v);
    } else if (const char* v = value("--changes")) {
      flags->changes = std::atoi(v);
    } else if (a == "--no-naive") {
      flags->naive = false;
    } else {
      std::cerr << "usage: routestatus-demo [--once] [--routes=200] [--replicas=3] [--seed=42]"
                   " [--timeout=90 (seconds)] [--changes=30] [--no-naive]\n";
      return false;
    }
  }
  return flags->routes > 0 && flags->replicas > 0 && flags->timeout_s > 0 && flags->changes >= 0;
}

// One fleet: local-apiserver with the demo's world, and replicas of
// route-status-controller started with `controller_flags`, run until
// converged. Not thread-safe: one owner; stops everything when destroyed.
struct Fleet {
  std::unique_ptr<bench::ApiServerProcess> server;
  std::vector<std::unique_ptr<bench::Replica>> replicas;
  std::vector<std::string> internal_namespaces;
  size_t namespaces = 0;
  RealClock clock;  // the client's (it must outlive the client)
  std::unique_ptr<kubeclient::KubeClient> client;
  std::vector<nlohmann::json> routes;  // the last listing
  bool converged = false;
  double converged_after = 0;  // replicas started -> every entry in place (s)
  double startup_puts = 0;     // status PUTs until converged

  void Stop() {
    for (auto& r : replicas) r->Stop();
    if (server) server->Stop();
  }
  ~Fleet() { Stop(); }
};

// Polls until `fleet` has converged (see StartAndConverge; every route in
// `want_hosts`, "ns/name" -> host, also shows that host in our entry) or
// the timeout passed since `started`. 0, 1 (a replica exited) or 130 (stop).
int WaitConverged(const Flags& flags, const bench::ControllerFlags& controller_flags,
                  Clock::time_point started, StopSignal& stop, Fleet* fleet,
                  const std::map<std::string, std::string>& want_hosts) {
  kubeclient::KubeClient& client = *fleet->client;
  const auto deadline = started + std::chrono::seconds(flags.timeout_s);
  double last_writes = -1;
  auto last_change = Clock::now();
  while (!fleet->converged) {
    if (stop.WaitFor(std::chrono::milliseconds(250))) return 130;
    if (Clock::now() > deadline) break;
    for (auto& r : fleet->replicas) {
      if (!r->Running() && r->RestartIfPortTaken()) continue;
      if (!r->Running()) {
        std::cerr << "routestatus-demo: replica " << r->index() << " exited; see "
                  << r->log_path() << "\n";
        return 1;
      }
    }
    auto page = client.List(kubeclient::RoutesResource(), "", {});
    if (!page.ok()) continue;
    fleet->routes = page->items;
    bool entries_ok = true;
    for (const auto& route : fleet->routes) {
      bool ours = !bench::IsInternalShard(route, fleet->internal_namespaces);
      bench::EntryView entry = bench::FindEntry(route, controller_flags.router_name);
      if (entry.present != ours) entries_ok = false;
      auto want = want_hosts.find(route["metadata"].value("namespace", "") + "/" +
                                  route["metadata"].value("name", ""));
      if (want != want_hosts.end() && entry.host != want->second) entries_ok = false;
    }
    double writes = fleet->server->Writes().status_attempts();
    if (writes != last_writes) {
      last_writes = writes;
      last_change = Clock::now();
    }
    bool all_ready = true;
    for (auto& r : fleet->replicas) all_ready = all_ready && r->Ready();
    if (entries_ok && all_ready && fleet->converged_after == 0) {
      fleet->converged_after = std::chrono::duration<double>(Clock::now() - started).count();
    }
    if (!entries_ok) fleet->converged_after = 0;
    fleet->converged =
        entries_ok && all_ready && Clock::now() - last_change >= std::chrono::seconds(2);
  }
  return 0;
}

// Starts `fleet` in `dir` and waits until it has converged: every in-shard
// route has our entry, no out-of-shard route has one, every replica is
// ready, and the server saw no status write for 2 s. Returns 0 (converged
// or timed out: see fleet->converged), 1 when something failed to start
// (the reason on stderr), 130 when a stop was requested.
int StartAndConverge(const Flags& flags, const std::string& dir,
                     const bench::ControllerFlags& controller_flags, StopSignal& stop,
                     Fleet* fleet) {
  fleet->server = std::make_unique<bench::ApiServerProcess>(dir);
  std::string error;
  if (!fleet->server->WaitStarted(std::chrono::seconds(20), &error)) {
    std::cerr << "routestatus-demo: " << error << "\n";
    return 1;
  }
  auto config = kubeclient::rest::LoadKubeconfigFile(fleet->server->kubeconfig());
  if (!config.ok()) {
    std::cerr << "routestatus-demo: " << config.status().ToString() << "\n";
    return 1;
  }
  auto client_or = kubeclient::rest::NewRestKubeClient(*config, fleet->clock);
  if (!client_or.ok()) {
    std::cerr << "routestatus-demo: " << client_or.status().ToString() << "\n";
    return 1;
  }
  fleet->client = std::move(*client_or);
  kubeclient::KubeClient& client = *fleet->client;

  // The world: namespaces, then routes in creation order (older routes win
  // host claims).
  e2e::DemoWorld world = e2e::MakeDemoWorld(flags.routes, flags.seed);
  for (const auto& ns : world.namespaces) {
    auto created = client.Create(kubeclient::NamespacesResource(), "", ns);
    if (!created.ok()) {
      std::cerr << "routestatus-demo: create namespace: " << created.status().ToString() << "\n";
      return 1;
    }
    const auto& labels = ns["metadata"].value("labels", nlohmann::json::object());
    if (labels.value("router", "") == "internal") {
      fleet->internal_namespaces.push_back(ns["metadata"]["name"].get<std::string>());
    }
  }
  fleet->namespaces = world.namespaces.size();
  for (const auto& route : world.routes) {
    auto created = client.Create(kubeclient::RoutesResource(),
                                 route["metadata"]["namespace"].get<std::string>(), route);
    if (!created.ok()) {
      std::cerr << "routestatus-demo: create route: " << created.status().ToString() << "\n";
      return 1;
    }
  }

  const auto started = Clock::now();
  for (int i = 0; i < flags.replicas; ++i) {
    fleet->replicas.push_back(std::make_unique<bench::Replica>(
        i + 1, fleet->server->kubeconfig(), controller_flags, dir));
  }
  int rc = WaitConverged(flags, controller_flags, started, stop, fleet, {});
  fleet->startup_puts = fleet->server->Writes().status_attempts();
  return rc;
}

// Changes the host of up to `count` in-shard routes that carry our entry
// (each to a new, unique host), waits until our entries show the new hosts,
// and returns the status PUTs the server counted meanwhile (-1 when it did
// not converge or a stop was requested) and, in *entries_changed, how many
// of our entries changed (a freed host can admit a route that waited for it).
double ChangeHosts(const Flags& flags, const bench::ControllerFlags& controller_flags,
                   int count, StopSignal& stop, Fleet* fleet, int* entries_changed) {
  const double before = fleet->server->Writes().status_attempts();
  auto entries = [&] {
    std::map<std::string, std::string> out;  // "ns/name" -> host|admitted|reason
    for (const auto& route : fleet->routes) {
      bench::EntryView e = bench::FindEntry(route, controller_flags.router_name);
      out[route["metadata"].value("namespace", "") + "/" + route["metadata"].value("name", "")] =
          e.present ? e.host + "|" + e.admitted + "|" + e.reason : "";
    }
    return out;
  };
  const std::map<std::string, std::string> entries_before = entries();
  std::map<std::string, std::string> want;  // "ns/name" -> new host
  for (nlohmann::json route : fleet->routes) {
    if (static_cast<int>(want.size()) >= count) break;
    if (bench::IsInternalShard(route, fleet->internal_namespaces)) continue;
    bench::EntryView entry = bench::FindEntry(route, controller_flags.router_name);
    if (!entry.present || entry.admitted != "True") continue;
    const std::string host = "v2-" + entry.host;
    route["spec"]["host"] = host;
    if (!fleet->client->Update(kubeclient::RoutesResource(), route).ok()) continue;
    want[route["metadata"]["namespace"].get<std::string>() + "/" +
         route["metadata"]["name"].get<std::string>()] = host;
  }
  fleet->converged = false;
  fleet->converged_after = 0;
  if (WaitConverged(flags, controller_flags, Clock::now(), stop, fleet, want) != 0 ||
      !fleet->converged) {
    return -1;
  }
  *entries_changed = 0;
  for (const auto& [key, entry] : entries()) {
    auto it = entries_before.find(key);
    if (it == entries_before.end() || it->second != entry) ++*entries_changed;
  }
  return fleet->server->Writes().status_attempts() - before;
}

int Run(const Flags& flags, StopSignal& stop) {
  const std::string dir = bench::MakeTempDir("routestatus-demo");
  std::cout << "routestatus demo: working folder " << dir << "\n" << std::flush;
  const e2e::DemoWorld world = e2e::MakeDemoWorld(flags.routes, flags.seed);

  // First the naive baseline, measured: the same world on its own API
  // server, every replica started with --write-lease=false (a plain
  // controller: each writes whenever its own cache differs).
  NaiveFacts naive;
  if (flags.naive) {
    const std::string naive_dir = dir + "/naive";
    if (mkdir(naive_dir.c_str(), 0700) != 0) {
      std::cerr << "routestatus-demo: mkdir " << naive_dir << ": " << std::strerror(errno) << "\n";
      return 1;
    }
    std::cout << "naive baseline: " << world.routes.size() << " routes, " << flags.replicas
              << " replicas with --write-lease=false on their own API server\n"
              << std::flush;
    bench::ControllerFlags naive_flags;
    naive_flags.extra.push_back("--write-lease=false");
    Fleet fleet;
    int rc = StartAndConverge(flags, naive_dir, naive_flags, stop, &fleet);
    if (rc != 0) return rc;
    naive.flags = "--write-lease=false";
    naive.startup_puts = fleet.startup_puts;
    if (fleet.converged) {
      naive.change_puts =
          ChangeHosts(flags, naive_flags, flags.changes, stop, &fleet, &naive.entries_changed);
    }
    naive.measured = fleet.converged && naive.change_puts >= 0;
    fleet.Stop();
    if (!fleet.converged) {
      std::cerr << "routestatus-demo: the naive baseline did not converge within "
                << flags.timeout_s << " s; logs in " << naive_dir << "\n";
    }
  }

  std::cout << "created " << world.namespaces.size() << " namespaces and " << world.routes.size()
            << " routes; starting " << flags.replicas << " controller replicas\n"
            << std::flush;
  bench::ControllerFlags controller_flags;
  Fleet fleet;
  int rc = StartAndConverge(flags, dir, controller_flags, stop, &fleet);
  if (rc != 0) return rc;

  DemoFacts facts;
  facts.startup_puts = fleet.startup_puts;
  facts.converge_seconds = fleet.converged_after;
  // Prometheus beside the fleet (when installed), started before the host
  // changes so that its rates show them.
  std::unique_ptr<e2e::PrometheusServer> prometheus;
  if (fleet.converged) {
    std::vector<int> ports;
    for (auto& r : fleet.replicas) ports.push_back(r->metrics_port());
    std::string error;
    prometheus = StartDemoPrometheus(dir, ports, fleet.server->port(), &facts.prometheus, &error);
    if (!prometheus && !error.empty()) {
      std::cerr << "routestatus-demo: " << error << "\n";
      return 1;
    }
    std::cout << (prometheus ? "Prometheus " + prometheus->url() + " scrapes the fleet"
                             : "Prometheus not started: " + facts.prometheus.not_started)
              << "\n" << std::flush;
  }
  if (fleet.converged) {
    std::cout << "converged; changing the host of " << flags.changes << " routes\n" << std::flush;
    facts.changes = flags.changes;
    facts.change_puts =
        ChangeHosts(flags, controller_flags, flags.changes, stop, &fleet, &facts.entries_changed);
    facts.changes_converge_seconds = fleet.converged_after;
  }
  facts.converged = fleet.converged;
  facts.router_name = controller_flags.router_name;
  facts.controller_flags = bench::DescribeFlags(controller_flags);
  facts.server_url = fleet.server->url();
  facts.server_pid = fleet.server->pid();
  facts.kubeconfig = fleet.server->kubeconfig();
  facts.dir = dir;
  facts.namespaces = static_cast<int>(fleet.namespaces);
  facts.routes = fleet.routes;
  facts.internal_namespaces = fleet.internal_namespaces;
  facts.server_writes = fleet.server->Writes();
  facts.naive = naive;
  if (prometheus) {
    std::string error;
    if (!RunDemoQueries(*prometheus, &facts.prometheus, &error)) {
      std::cerr << "routestatus-demo: Prometheus query failed: " << error << "\n";
      return 1;
    }
  }
  for (auto& r : fleet.replicas) {
    facts.replicas.push_back(
        ReplicaFacts{r->index(), r->pid(), r->LeaseState(), r->Writes(), r->MetricsUrl()});
  }
  PrintReport(facts, std::cout);
  if (!fleet.converged) {
    std::cerr << "routestatus-demo: not converged within " << flags.timeout_s
              << " s; replica logs are in " << dir << "\n";
  }

  if (!flags.once && fleet.converged) {
    std::cout << "\nRunning until Ctrl-C (then stops the API server and the "
              << fleet.replicas.size() << " replicas).\n"
              << std::flush;
    stop.WaitForever();
    std::cout << "\nstopping...\n";
  }
  if (prometheus) prometheus->Stop();
  fleet.Stop();
  std::cout << "stopped " << fleet.replicas.size() << " replicas, local-apiserver"
            << (prometheus ? " and Prometheus" : "") << "; logs kept in " << dir << "\n";
  return fleet.converged && (!flags.naive || naive.measured) ? 0 : 1;
}

}  // namespace
}  // namespace routestatus::demo

int main(int argc, char** argv) {
  google::InitGoogleLogging(argv[0]);
  FLAGS_logtostderr = true;
  FLAGS_minloglevel = google::GLOG_WARNING;
  routestatus::demo::Flags flags;
  if (!routestatus::demo::ParseFlags(argc, argv, &flags)) return 2;
  signal(SIGPIPE, SIG_IGN);
  routestatus::demo::StopSignal stop;
  return routestatus::demo::Run(flags, stop);
}
