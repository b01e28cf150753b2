// routestatus-demo (`make run`): starts local-apiserver on a free loopback
// port, creates a realistic set of namespaces and routes, starts 3 replicas
// of route-status-controller with one router name, waits until they have
// converged and prints a report. Then it runs until Ctrl-C (SIGINT/SIGTERM)
// and stops everything it started; with --once it exits after the report.
// Exit codes: 0 converged, 1 failed or timed out, 2 bad flags.
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <glog/logging.h>

#include "base/clock.h"
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
    } else {
      std::cerr << "usage: routestatus-demo [--once] [--routes=200] [--replicas=3] [--seed=42]"
                   " [--timeout=90 (seconds)]\n";
      return false;
    }
  }
  return flags->routes > 0 && flags->replicas > 0 && flags->timeout_s > 0;
}

int Run(const Flags& flags, StopSignal& stop) {
  const std::string dir = bench::MakeTempDir("routestatus-demo");
  std::cout << "routestatus demo: working folder " << dir << "\n" << std::flush;

  bench::ApiServerProcess server(dir);
  std::string error;
  if (!server.WaitStarted(std::chrono::seconds(20), &error)) {
    std::cerr << "routestatus-demo: " << error << "\n";
    return 1;
  }
  RealClock clock;
  auto config = kubeclient::rest::LoadKubeconfigFile(server.kubeconfig());
  if (!config.ok()) {
    std::cerr << "routestatus-demo: " << config.status().ToString() << "\n";
    return 1;
  }
  auto client_or = kubeclient::rest::NewRestKubeClient(*config, clock);
  if (!client_or.ok()) {
    std::cerr << "routestatus-demo: " << client_or.status().ToString() << "\n";
    return 1;
  }
  kubeclient::KubeClient& client = **client_or;

  // The world: namespaces, then routes in creation order (older routes win
  // host claims).
  e2e::DemoWorld world = e2e::MakeDemoWorld(flags.routes, flags.seed);
  std::vector<std::string> internal_namespaces;
  for (const auto& ns : world.namespaces) {
    auto created = client.Create(kubeclient::NamespacesResource(), "", ns);
    if (!created.ok()) {
      std::cerr << "routestatus-demo: create namespace: " << created.status().ToString() << "\n";
      return 1;
    }
    const auto& labels = ns["metadata"].value("labels", nlohmann::json::object());
    if (labels.value("router", "") == "internal") {
      internal_namespaces.push_back(ns["metadata"]["name"].get<std::string>());
    }
  }
  for (const auto& route : world.routes) {
    auto created = client.Create(kubeclient::RoutesResource(),
                                 route["metadata"]["namespace"].get<std::string>(), route);
    if (!created.ok()) {
      std::cerr << "routestatus-demo: create route: " << created.status().ToString() << "\n";
      return 1;
    }
  }
  std::cout << "created " << world.namespaces.size() << " namespaces and " << world.routes.size()
            << " routes; starting " << flags.replicas << " controller replicas\n"
            << std::flush;

  bench::ControllerFlags controller_flags;
  std::vector<std::unique_ptr<bench::Replica>> replicas;
  const auto started = Clock::now();
  for (int i = 0; i < flags.replicas; ++i) {
    replicas.push_back(
        std::make_unique<bench::Replica>(i + 1, server.kubeconfig(), controller_flags, dir));
  }

  // Converged: every in-shard route has our entry, no out-of-shard route has
  // one, every replica is ready, and the server saw no status write for 2 s.
  const auto deadline = started + std::chrono::seconds(flags.timeout_s);
  double last_writes = -1;
  auto last_change = Clock::now();
  std::vector<nlohmann::json> routes;
  bool converged = false;
  double converged_after = 0;
  while (!converged) {
    if (stop.WaitFor(std::chrono::milliseconds(250))) return 130;
    if (Clock::now() > deadline) break;
    for (auto& r : replicas) {
      if (!r->Running() && r->RestartIfPortTaken()) continue;
      if (!r->Running()) {
        std::cerr << "routestatus-demo: replica " << r->index() << " exited; see "
                  << r->log_path() << "\n";
        return 1;
      }
    }
    auto page = client.List(kubeclient::RoutesResource(), "", {});
    if (!page.ok()) continue;
    routes = page->items;
    bool entries_ok = true;
    for (const auto& route : routes) {
      bool ours = !bench::IsInternalShard(route, internal_namespaces);
      if (bench::FindEntry(route, controller_flags.router_name).present != ours) entries_ok = false;
    }
    double writes = server.Writes().status_attempts();
    if (writes != last_writes) {
      last_writes = writes;
      last_change = Clock::now();
    }
    bool all_ready = true;
    for (auto& r : replicas) all_ready = all_ready && r->Ready();
    if (entries_ok && all_ready && converged_after == 0) {
      converged_after = std::chrono::duration<double>(Clock::now() - started).count();
    }
    if (!entries_ok) converged_after = 0;
    converged = entries_ok && all_ready && Clock::now() - last_change >= std::chrono::seconds(2);
  }

  DemoFacts facts;
  facts.converged = converged;
  facts.converge_seconds = converged_after;
  facts.router_name = controller_flags.router_name;
  facts.controller_flags = bench::DescribeFlags(controller_flags);
  facts.server_url = server.url();
  facts.server_pid = server.pid();
  facts.kubeconfig = server.kubeconfig();
  facts.dir = dir;
  facts.namespaces = static_cast<int>(world.namespaces.size());
  facts.routes = routes;
  facts.internal_namespaces = internal_namespaces;
  facts.server_writes = server.Writes();
  for (auto& r : replicas) {
    facts.replicas.push_back(
        ReplicaFacts{r->index(), r->pid(), r->LeaseState(), r->Writes(), r->MetricsUrl()});
  }
  PrintReport(facts, std::cout);
  if (!converged) {
    std::cerr << "routestatus-demo: not converged within " << flags.timeout_s
              << " s; replica logs are in " << dir << "\n";
  }

  if (!flags.once && converged) {
    std::cout << "\nRunning until Ctrl-C (then stops the API server and the " << replicas.size()
              << " replicas).\n"
              << std::flush;
    stop.WaitForever();
    std::cout << "\nstopping...\n";
  }
  for (auto& r : replicas) r->Stop();
  server.Stop();
  std::cout << "stopped " << replicas.size() << " replicas and local-apiserver; logs kept in "
            << dir << "\n";
  return converged ? 0 : 1;
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
