#include "cmd/route-status-controller/http_endpoint.h"

#include <iterator>
#include <vector>

#include <glog/logging.h>
#include <prometheus/text_serializer.h>

#include "cmd/route-status-controller/config_validate.h"

namespace routestatus::cmd {
namespace {

constexpr const char* kTextPlain = "text/plain; charset=utf-8";

}  // namespace

HttpEndpoint::HttpEndpoint(prometheus::Registry& registry, ReadinessCheck readiness)
    : registry_(registry), readiness_(std::move(readiness)) {}

HttpEndpoint::~HttpEndpoint() { Stop(); }

StatusOr<std::unique_ptr<HttpEndpoint>> HttpEndpoint::Start(
    const Options& options, prometheus::Registry& registry, ReadinessCheck readiness) {
  std::string host;
  int port = 0;
  if (!SplitHostPort(options.address, &host, &port)) {
    return Status(StatusCode::kInvalid, "metrics address \"" + options.address + "\" is not host:port");
  }
  std::unique_ptr<HttpEndpoint> self(new HttpEndpoint(registry, std::move(readiness)));
  self->dropped_ = &prometheus::BuildCounter()
                        .Name("routestatus_metrics_endpoint_connections_dropped_total")
                        .Help("Connections to /metrics, /healthz and /readyz closed without an "
                              "answer, by reason: timeout (request not sent or answer not read "
                              "within the request timeout), too_many_connections (the oldest "
                              "unfinished one, to let a new one in), too_large (request head over "
                              "8 KiB), bad_request.")
                        .Register(registry);
  for (const char* reason : {"timeout", "too_many_connections", "too_large", "bad_request"}) {
    self->dropped_->Add({{"reason", reason}});
  }
  HttpServer::Options server_options;
  server_options.address = options.address;
  server_options.workers = options.threads < 1 ? 1 : options.threads;
  server_options.request_timeout = options.request_timeout;
  server_options.max_connections = options.max_connections;
  HttpEndpoint* raw = self.get();
  auto server = HttpServer::Start(
      server_options, self->clock_, [raw](const HttpRequest& r) { return raw->Handle(r); },
      [raw](const char* reason) { raw->dropped_->Add({{"reason", reason}}).Increment(); });
  if (!server.ok()) {
    std::string message = server.status().message();
    if (server.status().code() == StatusCode::kInvalid) message = "metrics " + message;
    return Status(server.status().code(), message);
  }
  self->server_ = std::move(server).value();
  self->host_ = host.empty() ? "0.0.0.0" : host;
  self->port_ = self->server_->port();
  LOG(INFO) << "serving /metrics, /healthz, /readyz on " << self->address();
  return self;
}

std::string HttpEndpoint::address() const {
  bool v6 = host_.find(':') != std::string::npos;
  return (v6 ? "[" + host_ + "]" : host_) + ":" + std::to_string(port_);
}

void HttpEndpoint::Stop() {
  if (server_) server_->Stop();
}

void HttpEndpoint::AddCollectable(std::weak_ptr<prometheus::Collectable> collectable) {
  std::lock_guard<std::mutex> lock(collectables_mu_);
  collectables_.push_back(std::move(collectable));
}

HttpResponse HttpEndpoint::Handle(const HttpRequest& request) {
  bool known = request.path == "/metrics" || request.path == "/healthz" || request.path == "/readyz";
  if (!known) return HttpResponse{404, "Not Found", kTextPlain, "not found\n"};
  if (request.method != "GET" && request.method != "HEAD") {
    return HttpResponse{405, "Method Not Allowed", kTextPlain, "method not allowed\n"};
  }
  if (request.path == "/metrics") return Metrics();
  if (request.path == "/readyz") return Ready();
  return HttpResponse{200, "OK", kTextPlain, "ok\n"};
}

HttpResponse HttpEndpoint::Metrics() {
  prometheus::TextSerializer serializer;
  std::vector<prometheus::MetricFamily> families = registry_.Collect();
  std::vector<std::shared_ptr<prometheus::Collectable>> extra;
  {
    std::lock_guard<std::mutex> lock(collectables_mu_);
    for (const auto& weak : collectables_) {
      if (auto c = weak.lock()) extra.push_back(std::move(c));
    }
  }
  for (const auto& c : extra) {
    auto more = c->Collect();
    families.insert(families.end(), std::make_move_iterator(more.begin()),
                    std::make_move_iterator(more.end()));
  }
  return HttpResponse{200, "OK", "text/plain; version=0.0.4; charset=utf-8",
                      serializer.Serialize(families)};
}

HttpResponse HttpEndpoint::Ready() {
  Readiness r = readiness_ ? readiness_() : Readiness{false, "no readiness check"};
  if (r.ready) return HttpResponse{200, "OK", kTextPlain, "ok\n"};
  return HttpResponse{503, "Service Unavailable", kTextPlain,
                      "not ready: " + (r.reason.empty() ? std::string("unknown") : r.reason) + "\n"};
}

}  // namespace routestatus::cmd
