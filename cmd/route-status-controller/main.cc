// route-status-controller: parses and validates the configuration, sets up
// logging, serves /metrics, /healthz and /readyz, and stops on SIGTERM/SIGINT.
// The controller itself (informers, write lease, status writer, `clear`) is
// plugged in at the marked places once the controller library lands.
#include <pthread.h>
#include <signal.h>

#include <cstdio>
#include <iostream>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <glog/logging.h>
#include <prometheus/registry.h>

#include "cmd/route-status-controller/config.h"
#include "cmd/route-status-controller/http_endpoint.h"

namespace routestatus::cmd {
namespace {

constexpr int kExitConfig = 2;

// Readiness shared between the controller (writer) and /readyz (reader).
// Thread-safe.
class ReadinessState {
 public:
  void Set(bool ready, std::string reason) {
    std::lock_guard<std::mutex> lock(mu_);
    state_ = Readiness{ready, std::move(reason)};
  }
  Readiness Get() const {
    std::lock_guard<std::mutex> lock(mu_);
    return state_;
  }

 private:
  mutable std::mutex mu_;
  Readiness state_{false, "starting"};
};

void SetUpLogging(const char* argv0, const Options& options) {
  FLAGS_logtostderr = true;  // containers: stderr only; the root fs is read-only
  FLAGS_v = options.verbosity;
  FLAGS_minloglevel = options.log_level == "error" ? google::GLOG_ERROR
                      : options.log_level == "warning" ? google::GLOG_WARNING
                                                       : google::GLOG_INFO;
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

int Main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  ParsedConfig parsed = ParseConfig(args, EnvironmentMap(), &ReadWholeFile);
  if (parsed.command == Command::kHelp) {
    std::cout << HelpText();
    return 0;
  }
  if (!parsed.errors.empty()) {
    for (const std::string& e : parsed.errors) std::cerr << "route-status-controller: " << e << "\n";
    std::cerr << "route-status-controller: " << parsed.errors.size()
              << " configuration error(s); see --help\n";
    return kExitConfig;
  }
  const Options& options = parsed.options;

  // Why: block the stop signals before any thread starts, so every thread
  // inherits the mask and only sigwait() below sees them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  SetUpLogging(argv[0], options);
  LOG(INFO) << "route-status-controller "
            << (parsed.command == Command::kClear ? "clear" : "run") << ": "
            << RenderOptions(options);

  if (parsed.command == Command::kClear) {
    // Controller wiring: run the one-shot clear of options.router_name here.
    LOG(ERROR) << "clear: not available in this build (the controller library is not wired yet)";
    return 1;
  }

  prometheus::Registry registry;
  ReadinessState readiness;
  HttpEndpoint::Options http_options;
  http_options.address = options.metrics_address;
  auto endpoint = HttpEndpoint::Start(http_options, registry, [&readiness] { return readiness.Get(); });
  if (!endpoint.ok()) {
    LOG(ERROR) << endpoint.status().ToString();
    return 1;
  }

  // Controller wiring: build the REST client, informers, lease, tracker and
  // status writer here with `registry`; call readiness.Set(true, "") once the
  // caches are synced.
  readiness.Set(false, "controller not wired in this build");

  int sig = WaitForStopSignal(stop_signals);
  LOG(INFO) << "received " << (sig == SIGTERM ? "SIGTERM" : "SIGINT") << ", shutting down";
  readiness.Set(false, "shutting down");
  // Controller wiring: stop taking work, drain in-flight writes within
  // options.shutdown_timeout.
  (*endpoint)->Stop();
  LOG(INFO) << "stopped";
  return 0;
}

}  // namespace
}  // namespace routestatus::cmd

int main(int argc, char** argv) { return routestatus::cmd::Main(argc, argv); }
