// route-status-controller: writes this router name's status.ingress entry of
// every route it serves (see docs/design.md). Parses and validates the
// configuration, connects to the API server, runs the controller
// (ControllerApp), serves /metrics, /healthz and /readyz, and stops on
// SIGTERM/SIGINT (exit 0). `clear` removes a router name's entries;
// `explain NAMESPACE/ROUTE` prints what a replica decides for one route.
// Exit codes: 0 done/stopped, 1 runtime failure, 2 configuration error
// (explain: 0 decided, 1 not found, 2 configuration, 3 API server).
#include <malloc.h>
#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <glog/logging.h>
#include <prometheus/registry.h>

#include "cmd/route-status-controller/api_metrics.h"
#include "cmd/route-status-controller/component_options.h"
#include "cmd/route-status-controller/config.h"
#include "cmd/route-status-controller/config_validate.h"
#include "cmd/route-status-controller/controller_app.h"
#include "cmd/route-status-controller/explain_command.h"
#include "cmd/route-status-controller/heap_trimmer.h"
#include "cmd/route-status-controller/http_endpoint.h"
#include "cmd/route-status-controller/metrics_collector.h"
#include "cmd/route-status-controller/router_probe.h"
#include "cmd/route-status-controller/router_readiness.h"
#include "controller/clear.h"
#include "kubeclient/cache/periodic_resync.h"
#include "kubeclient/rest/kube_config.h"
#include "kubeclient/rest/rest_kube_client.h"

namespace routestatus::cmd {
namespace {

constexpr int kExitRuntime = 1;
constexpr int kExitConfig = 2;

void SetUpLogging(const char* argv0, const Options& options, Command command) {
  FLAGS_logtostderr = true;  // containers: stderr only; the root fs is read-only
  FLAGS_v = options.verbosity;
  FLAGS_minloglevel = options.log_level == "error" ? google::GLOG_ERROR
                      : options.log_level == "warning" ? google::GLOG_WARNING
                                                       : google::GLOG_INFO;
  // Why: explain's answer is its output; start-up chatter would bury it
  // (warnings, e.g. a list the server refuses, still show).
  if (command == Command::kExplain && FLAGS_minloglevel < google::GLOG_WARNING) {
    FLAGS_minloglevel = google::GLOG_WARNING;
  }
  google::InitGoogleLogging(argv0);
  google::InstallFailureSignalHandler();  // a crash is logged with a stack trace
}

// Blocks until SIGTERM or SIGINT; returns the signal.
int WaitForStopSignal(const sigset_t& signals) {
  int sig = 0;
  while (sigwait(&signals, &sig) != 0) {
  }
  return sig;
}

// "https://user:pw@host:6443" -> "https://<redacted>@host:6443".
std::string WithoutUserInfo(const std::string& url) {
  size_t scheme = url.find("://");
  size_t start = scheme == std::string::npos ? 0 : scheme + 3;
  size_t at = url.find('@', start);
  size_t slash = url.find('/', start);
  if (at == std::string::npos || (slash != std::string::npos && at > slash)) return url;
  return url.substr(0, start) + "<redacted>" + url.substr(at);
}

// Prints a configuration error the way ParseConfig's errors are printed.
int ConfigError(const std::string& message) {
  // Why not LOG: glog also writes to stderr; one clear line is enough.
  std::cerr << "route-status-controller: " << EscapeForTerminal(message) << "\n";
  return kExitConfig;
}

// Where the API server is: kubeconfig / in-cluster / KUBECONFIG, then
// --server / --token over it. With --server and nothing else to read,
// --server alone is enough. Errors are configuration errors (exit 2).
StatusOr<kubeclient::rest::RestConfig> ResolveRestConfig(const Options& options,
                                                                     const ComponentOptions& c) {
  auto config = kubeclient::rest::ResolveConfig(c.config_sources);
  if (!config.ok()) {
    bool server_only = !options.server.empty() && options.kubeconfig.empty();
    if (!server_only) return config.status();
    kubeclient::rest::RestConfig bare;
    bare.origin = "--server";
    config = bare;
  }
  kubeclient::rest::RestConfig resolved = std::move(config).value();
  ApplyConnectionOverrides(options, resolved);
  return resolved;
}

int RunClear(const Options& options, kubeclient::KubeClient& client,
             const Clock& clock, const controller::ClearOptions& clear_options) {
  std::cout << "clearing the status.ingress entries of router " << clear_options.router_name
            << " from every route" << std::endl;
  controller::ClearProgress last;
  auto describe = [](const controller::ClearProgress& p) {
    return std::to_string(p.scanned) + " routes scanned, " + std::to_string(p.cleared) +
           " cleared, " + std::to_string(p.conflicts) + " conflicts, " +
           std::to_string(p.failed) + " failed";
  };
  auto result = controller::ClearRouterEntries(
      client, clock, clear_options, [&](const controller::ClearProgress& p) {
        if (p.done) {
          last = p;  // printed below, once we know whether it succeeded
        } else {
          std::cout << "progress: " << describe(p) << std::endl;
        }
      });
  std::cout << (result.ok() && result->failed == 0 ? "done: " : "stopped: ") << describe(last)
            << std::endl;
  if (!result.ok()) {
    std::cerr << "route-status-controller: clear of router " << options.router_name
              << " failed: " << result.status().ToString()
              << " (it is safe to run clear again)\n";
    return kExitRuntime;
  }
  if (result->failed > 0) {
    std::cerr << "route-status-controller: clear of router " << options.router_name << ": "
              << result->failed << " route(s) still have our entry (see the log); run clear again\n";
    return kExitRuntime;
  }
  std::cout << "router " << options.router_name << ": no entries left (" << result->cleared
            << " removed)" << std::endl;
  return 0;
}

int Main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  EnvMap env = EnvironmentMap();
  // Why two malloc arenas (unless MALLOC_ARENA_MAX says otherwise): glibc
  // gives each of our ~20 threads (workers, informers, cpprest's pool) an
  // arena of its own, and memory freed in one is not reused by another; at
  // 50,000 routes that left ~15 MB more peak RSS (115 vs 100 MB, `make
  // bench --only=scale`). Allocation is not our bottleneck.
  if (env.find("MALLOC_ARENA_MAX") == env.end()) mallopt(M_ARENA_MAX, 2);
  ParsedConfig parsed = ParseConfig(args, env, &ReadWholeFile);
  if (parsed.command == Command::kHelp) {
    std::cout << HelpText();
    return 0;
  }
  if (!parsed.errors.empty()) {
    for (const std::string& e : parsed.errors) {
      std::cerr << "route-status-controller: " << EscapeForTerminal(e) << "\n";
    }
    std::cerr << "route-status-controller: " << parsed.errors.size()
              << " configuration error(s); see --help\n";
    return kExitConfig;
  }
  const Options& options = parsed.options;

  // Why: block the stop signals before any thread starts, so every thread
  // inherits the mask and only sigwait() below sees them. `clear` keeps the
  // default dispositions (Ctrl-C stops it; a re-run resumes).
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  if (parsed.command == Command::kRun) pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  SetUpLogging(argv[0], options, parsed.command);
  LOG(INFO) << "route-status-controller " << BuildVersion() << " "
            << (parsed.command == Command::kClear     ? "clear"
                : parsed.command == Command::kExplain ? "explain"
                                                      : "run")
            << ": "
            << RenderOptions(options);

  auto components = BuildComponentOptions(options, env);
  if (!components.ok()) return ConfigError(components.status().message());
  auto rest_config = ResolveRestConfig(options, *components);
  if (!rest_config.ok()) {
    return ConfigError("API server configuration: " + rest_config.status().message());
  }
  LOG(INFO) << "API server " << WithoutUserInfo(rest_config->server) << " from "
            << rest_config->origin;

  RealClock clock;  // outlives the clients below
  prometheus::Registry registry;
  ApiReachability reachability(clock, {WithoutUserInfo(rest_config->server)});
  RestClientMetrics rest_metrics(registry, &reachability);
  kubeclient::rest::RestOptions rest = components->rest;
  rest.observer = &rest_metrics;
  rest.version = BuildVersion();
  rest.user_agent = std::string("route-status-controller/") + BuildVersion() + " (router " +
                    options.router_name + ")";
  auto client = kubeclient::rest::NewRestKubeClient(*rest_config, clock, rest);
  if (!client.ok()) {
    if (client.status().code() == StatusCode::kInvalid) {
      // Why: the client's messages mostly name the origin already.
      std::string message = client.status().message();
      bool named = message.rfind(rest_config->origin + ":", 0) == 0;
      return ConfigError(named ? message : rest_config->origin + ": " + message);
    }
    LOG(ERROR) << "cannot build the API client: " << client.status().ToString();
    return parsed.command == Command::kExplain ? kExplainApiError : kExitRuntime;
  }

  if (parsed.command == Command::kExplain) {
    ExplainRequest request;
    const size_t slash = parsed.explain_route.find('/');  // ParseConfig checked the shape
    request.namespace_name = parsed.explain_route.substr(0, slash);
    request.name = parsed.explain_route.substr(slash + 1);
    request.json = parsed.output == "json";
    return RunExplain(request, *components, **client, clock, WithoutUserInfo(rest_config->server),
                      std::cout, std::cerr);
  }

  if (parsed.command == Command::kClear) {
    return RunClear(options, **client, clock, components->clear);
  }

  // Why before the app: the app keeps a pointer to it, and stops using it
  // before it is destroyed (reverse order).
  std::unique_ptr<RouterReadiness> router;
  if (!options.router_ready_url.empty()) {
    auto probe = HttpRouterProbe(options.router_ready_url, clock);
    if (!probe.ok()) return ConfigError("--router-ready-url: " + probe.status().message());
    RouterReadinessOptions ro;
    ro.url = options.router_ready_url;
    ro.interval = options.router_ready_interval;
    ro.timeout = options.router_ready_timeout;
    router = std::make_unique<RouterReadiness>(clock, ro, std::move(probe).value());
    LOG(INFO) << "reporting only while the router is ready: " << ro.url << " probed every "
              << FormatDuration(options.router_ready_interval);
  }
  auto app = std::make_unique<ControllerApp>(
      options, *components,
      std::make_unique<InstrumentedKubeClient>(std::move(client).value(), registry, &reachability),
      registry, &reachability, router.get());
  std::atomic<bool> shutting_down{false};
  HttpEndpoint::Options http_options;
  http_options.address = options.metrics_address;
  auto endpoint = HttpEndpoint::Start(http_options, registry, [&app, &shutting_down] {
    if (shutting_down.load()) return Readiness{false, "shutting down"};
    return app->Ready();
  });
  if (!endpoint.ok()) {
    LOG(ERROR) << endpoint.status().ToString();
    return kExitRuntime;
  }
  // Why: with SIGCHLD ignored (civetweb, which served the endpoint before,
  // set SIG_IGN) the kernel reaps children at once and an exec credential
  // plugin's exit status is lost; keep the default whatever a library did.
  signal(SIGCHLD, SIG_DFL);
  (*endpoint)->AddCollectable(app->collector());
  app->Start();
  if (router) router->Start();
  // Why: a cold start replaces every cached route once its status is
  // written and drains the work queued for every route; glibc keeps what
  // that frees (heap_trimmer.h). Why every 10 s: each check costs up to
  // ~25 ms with malloc's locks held on a fragmented heap.
  HeapTrimmer trimmer(HeapTrimmer::GlibcHeap(), HeapTrimmer::Options());
  kubeclient::cache::PeriodicResync trim_check(clock, std::chrono::seconds(10),
                                               [&trimmer] { trimmer.RunOnce(); });
  trim_check.Start();

  int sig = WaitForStopSignal(stop_signals);
  LOG(INFO) << "received " << (sig == SIGTERM ? "SIGTERM" : "SIGINT") << ", shutting down";
  shutting_down = true;
  if (router) router->Stop();  // Why first: its handler re-queues into the app.
  // Why the margin: the whole exit must fit in shutdown_timeout (5 s by
  // default); stopping the endpoint takes the rest.
  auto budget = std::max(options.shutdown_timeout - std::chrono::milliseconds(700),
                         options.shutdown_timeout / 2);
  if (!app->Stop(budget)) {
    LOG(WARNING) << "exiting with API requests still in flight";
    google::FlushLogFiles(google::GLOG_INFO);
    std::_Exit(0);
  }
  (*endpoint)->Stop();
  app.reset();
  LOG(INFO) << "stopped";
  return 0;
}

}  // namespace
}  // namespace routestatus::cmd

int main(int argc, char** argv) { return routestatus::cmd::Main(argc, argv); }
