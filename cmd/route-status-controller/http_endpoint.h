#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <prometheus/collectable.h>
#include <prometheus/counter.h>
#include <prometheus/registry.h>

#include "base/clock.h"
#include "base/status.h"
#include "cmd/route-status-controller/http_server.h"

namespace routestatus::cmd {

// Answer of a readiness check: ready, or not with a reason for people.
struct Readiness {
  bool ready = false;
  std::string reason;  // shown in the 503 body when !ready
};

// The operational HTTP endpoint (on HttpServer: idle and slow clients never
// hold a handler thread, see http_server.h):
//   GET /metrics  Prometheus text format 0.0.4 of `registry`
//   GET /healthz  200 "ok" while the process serves requests
//   GET /readyz   200 "ok" when `readiness()` says ready, else 503 + reason
// Connections closed without an answer are counted in
// routestatus_metrics_endpoint_connections_dropped_total{reason} of `registry`.
// Thread-safe: handlers run on the server's threads; `registry` and
// `readiness` must be thread-safe and outlive the endpoint (or Stop()).
class HttpEndpoint {
 public:
  struct Options {
    std::string address = "0.0.0.0:1936";  // host:port, [v6]:port; port 0 = any free port
    int threads = 2;  // handler threads
    // A client must send its whole request (and take the answer) within
    // this, counted from connecting: a probe or scrape takes milliseconds.
    std::chrono::milliseconds request_timeout{3000};
    int max_connections = 2048;  // then a new one closes the oldest unfinished one
  };
  using ReadinessCheck = std::function<Readiness()>;

  // Binds and starts serving. Errors: kInvalid (bad address), kUnavailable
  // (cannot bind, e.g. port in use).
  static StatusOr<std::unique_ptr<HttpEndpoint>> Start(
      const Options& options, prometheus::Registry& registry, ReadinessCheck readiness);

  ~HttpEndpoint();  // Stop()s
  HttpEndpoint(const HttpEndpoint&) = delete;
  HttpEndpoint& operator=(const HttpEndpoint&) = delete;

  // The port actually bound (useful with port 0).
  int port() const { return port_; }
  // "host:port" actually bound, e.g. "127.0.0.1:41234".
  std::string address() const;

  // Stops serving and waits for in-flight requests. Idempotent.
  void Stop();

  // Also serves `collectable`'s metrics on /metrics (after the registry's)
  // for as long as it lives. Thread-safe; may be called while serving.
  void AddCollectable(std::weak_ptr<prometheus::Collectable> collectable);

 private:
  HttpEndpoint(prometheus::Registry& registry, ReadinessCheck readiness);
  HttpResponse Handle(const HttpRequest& request);
  HttpResponse Metrics();
  HttpResponse Ready();

  prometheus::Registry& registry_;
  ReadinessCheck readiness_;
  std::string host_;
  int port_ = 0;
  std::mutex collectables_mu_;
  std::vector<std::weak_ptr<prometheus::Collectable>> collectables_;  // GUARDED_BY(collectables_mu_)
  prometheus::Family<prometheus::Counter>* dropped_ = nullptr;
  RealClock clock_;
  std::unique_ptr<HttpServer> server_;  // set once by Start()
};

}  // namespace routestatus::cmd
