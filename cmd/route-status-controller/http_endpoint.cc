#include "cmd/route-status-controller/http_endpoint.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <future>
#include <thread>
#include <iterator>
#include <vector>

#include <civetweb.h>
#include <glog/logging.h>
#include <prometheus/text_serializer.h>

#include "cmd/route-status-controller/config_validate.h"

namespace routestatus::cmd {
namespace {


void Reply(mg_connection* conn, int code, const char* reason, const char* content_type,
           const std::string& body) {
  mg_printf(conn,
            "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
            "Cache-Control: no-store\r\nConnection: close\r\n\r\n",
            code, reason, content_type, body.size());
  if (std::strcmp(mg_get_request_info(conn)->request_method, "HEAD") != 0) {
    mg_write(conn, body.data(), body.size());
  }
}

// Only GET and HEAD are served; returns false after answering 405.
bool CheckMethod(mg_connection* conn) {
  const char* m = mg_get_request_info(conn)->request_method;
  if (std::strcmp(m, "GET") == 0 || std::strcmp(m, "HEAD") == 0) return true;
  Reply(conn, 405, "Method Not Allowed", "text/plain; charset=utf-8", "method not allowed\n");
  return false;
}

// Opens and closes one TCP connection to host:port (best effort).
void Poke(const std::string& host, int port) {
  bool v6 = host.find(':') != std::string::npos;
  std::string target = host;
  if (target.empty() || target == "0.0.0.0") target = "127.0.0.1";
  if (target == "::") target = "::1";
  int fd = ::socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return;
  if (v6) {
    sockaddr_in6 a{};
    a.sin6_family = AF_INET6;
    a.sin6_port = htons(static_cast<uint16_t>(port));
    if (inet_pton(AF_INET6, target.c_str(), &a.sin6_addr) == 1) {
      (void)::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
    }
  } else {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    if (inet_pton(AF_INET, target.c_str(), &a.sin_addr) == 1) {
      (void)::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
    }
  }
  ::close(fd);
}

int LogMessage(const mg_connection*, const char* message) {
  LOG(WARNING) << "http endpoint: " << message;
  return 1;
}

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
  // civetweb spells "all interfaces" as a bare port and IPv6 as [addr]:port.
  std::string listen = std::to_string(port);
  if (!host.empty()) {
    listen = (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + listen;
  }
  // Why: initialise civetweb once per process and never exit it, so starting
  // and stopping endpoints (or other civetweb servers in the same process)
  // never races mg_start's implicit init/exit. A thread-safe static init.
  static const unsigned civetweb_init = mg_init_library(0);
  (void)civetweb_init;
  std::string threads = std::to_string(options.threads < 1 ? 1 : options.threads);
  const char* config[] = {"listening_ports", listen.c_str(),  "num_threads", threads.c_str(),
                          "request_timeout_ms", "10000", "enable_keep_alive", "no",
                          nullptr};
  mg_callbacks callbacks;
  std::memset(&callbacks, 0, sizeof(callbacks));
  callbacks.log_message = &LogMessage;
  mg_init_data init;
  std::memset(&init, 0, sizeof(init));
  init.callbacks = &callbacks;
  init.configuration_options = config;
  char error_text[256] = {0};
  unsigned error_code = 0;
  mg_error_data error;
  error.code = &error_code;
  error.text = error_text;
  error.text_buffer_size = sizeof(error_text);

  std::unique_ptr<HttpEndpoint> self(new HttpEndpoint(registry, std::move(readiness)));
  mg_context* ctx = mg_start2(&init, &error);
  if (ctx == nullptr) {
    return Status(StatusCode::kUnavailable,
                  "cannot serve on " + options.address + ": " + std::string(error_text));
  }
  self->ctx_ = ctx;
  self->host_ = host.empty() ? "0.0.0.0" : host;
  std::vector<mg_server_port> ports(4);
  int n = mg_get_server_ports(ctx, static_cast<int>(ports.size()), ports.data());
  if (n < 1) {
    self->Stop();
    return Status(StatusCode::kInternal, "civetweb reported no listening port");
  }
  self->port_ = ports[0].port;
  mg_set_request_handler(ctx, "/metrics$", &HttpEndpoint::HandleMetrics, self.get());
  mg_set_request_handler(ctx, "/healthz$", &HttpEndpoint::HandleHealthz, self.get());
  mg_set_request_handler(ctx, "/readyz$", &HttpEndpoint::HandleReadyz, self.get());
  LOG(INFO) << "serving /metrics, /healthz, /readyz on " << self->address();
  return self;
}

std::string HttpEndpoint::address() const {
  bool v6 = host_.find(':') != std::string::npos;
  return (v6 ? "[" + host_ + "]" : host_) + ":" + std::to_string(port_);
}

void HttpEndpoint::Stop() {
  std::lock_guard<std::mutex> lock(stop_mu_);
  if (ctx_ == nullptr) return;
  // Why: civetweb's accept loop polls in 2 s quanta and only then sees the
  // stop flag; a connection after mg_stop() set it wakes the loop at once.
  mg_context* ctx = ctx_;
  auto done = std::async(std::launch::async, [ctx] { mg_stop(ctx); });
  for (int i = 0; i < 50; ++i) {
    if (done.wait_for(std::chrono::milliseconds(i == 0 ? 1 : 20)) == std::future_status::ready) break;
    Poke(host_, port_);
  }
  done.wait();
  ctx_ = nullptr;
}

void HttpEndpoint::AddCollectable(std::weak_ptr<prometheus::Collectable> collectable) {
  std::lock_guard<std::mutex> lock(collectables_mu_);
  collectables_.push_back(std::move(collectable));
}

int HttpEndpoint::HandleMetrics(mg_connection* conn, void* self_ptr) {
  if (!CheckMethod(conn)) return 405;
  auto* self = static_cast<HttpEndpoint*>(self_ptr);
  prometheus::TextSerializer serializer;
  std::vector<prometheus::MetricFamily> families = self->registry_.Collect();
  std::vector<std::shared_ptr<prometheus::Collectable>> extra;
  {
    std::lock_guard<std::mutex> lock(self->collectables_mu_);
    for (const auto& weak : self->collectables_) {
      if (auto c = weak.lock()) extra.push_back(std::move(c));
    }
  }
  for (const auto& c : extra) {
    auto more = c->Collect();
    families.insert(families.end(), std::make_move_iterator(more.begin()),
                    std::make_move_iterator(more.end()));
  }
  std::string body = serializer.Serialize(families);
  Reply(conn, 200, "OK", "text/plain; version=0.0.4; charset=utf-8", body);
  return 200;
}

int HttpEndpoint::HandleHealthz(mg_connection* conn, void*) {
  if (!CheckMethod(conn)) return 405;
  Reply(conn, 200, "OK", "text/plain; charset=utf-8", "ok\n");
  return 200;
}

int HttpEndpoint::HandleReadyz(mg_connection* conn, void* self_ptr) {
  if (!CheckMethod(conn)) return 405;
  auto* self = static_cast<HttpEndpoint*>(self_ptr);
  Readiness r = self->readiness_ ? self->readiness_() : Readiness{false, "no readiness check"};
  if (r.ready) {
    Reply(conn, 200, "OK", "text/plain; charset=utf-8", "ok\n");
    return 200;
  }
  Reply(conn, 503, "Service Unavailable", "text/plain; charset=utf-8",
        "not ready: " + (r.reason.empty() ? std::string("unknown") : r.reason) + "\n");
  return 503;
}

}  // namespace routestatus::cmd
