#include "apiserver/server.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <vector>

#include <civetweb.h>
#include <glog/logging.h>

#include "apiserver/connection_sockets.h"
#include "apiserver/continue_token.h"
#include "apiserver/port_reservation.h"
#include "apiserver/self_signed_cert.h"
#include "apiserver/server_handler.h"

namespace routestatus::apiserver {

namespace {


int LogMessage(const mg_connection*, const char* message) {
  VLOG(1) << "civetweb: " << message;
  return 1;
}

// Why: civetweb 1.15 leaves a connection it accepted just as mg_stop began
// open and unanswered (a worker takes it off the queue and exits), so its
// client waits for a timeout. Once civetweb is gone, every connected socket
// of this process still bound to `port` is such a leftover: close it.
int CloseLeftoverConnections(int port) {
  int closed = 0;
  ForEachConnection(port, [&](int fd, int) {
    shutdown(fd, SHUT_RDWR);
    close(fd);
    ++closed;
  });
  return closed;
}

}  // namespace

Server::Server(ServerOptions options)
    : options_(std::move(options)),
      owned_clock_(options_.clock ? nullptr : std::make_unique<RealClock>()),
      clock_(options_.clock ? *options_.clock : *owned_clock_),
      store_(std::make_unique<ObjectStore>(
          clock_, ObjectStore::Options{options_.watch_history, options_.watcher_buffer,
                                       options_.progress_notify_interval})),
      watch_cache_(options_.watch_cache) {
  size_t colon = options_.listen.rfind(':');
  if (colon != std::string::npos && colon > 0) host_ = options_.listen.substr(0, colon);
  if (options_.create_default_namespace) CreateNamespace("default");
}

Server::~Server() { Stop(); }

int Server::HandleRequest(mg_connection* conn, void* self) {
  Server* server = static_cast<Server*>(self);
  // Why: CloseIdleConnections must leave connections inside a request alone.
  const mg_request_info* info = mg_get_request_info(conn);
  const int peer = info != nullptr ? info->remote_port : -1;
  std::multiset<int>::iterator busy;
  {
    std::lock_guard<std::mutex> lock(server->conn_mu_);
    busy = server->busy_ports_.insert(peer);
  }
  Handler handler(*server);
  int code = handler.Serve(conn);
  std::lock_guard<std::mutex> lock(server->conn_mu_);
  server->busy_ports_.erase(busy);
  return code;
}

int Server::InitConnection(const mg_connection* conn, void**) {
  Server* server = static_cast<Server*>(mg_get_user_data(mg_get_context(conn)));
  std::chrono::milliseconds hold = server->faults_.TakeNeverRead();
  if (hold.count() <= 0) return 0;
  VLOG(1) << "fault: holding a new connection unread for " << hold.count() << " ms";
  server->FaultDelay(hold);
  return 0;
}

void Server::FaultDelay(std::chrono::milliseconds d) {
  SteadyTime until = clock_.Now() + d;
  std::unique_lock<std::mutex> lock(conn_mu_);
  while (!stopping_.load() && clock_.Now() < until) clock_.WaitUntil(conn_cv_, lock, until);
}

size_t Server::CloseIdleConnections() {
  std::multiset<int> busy;
  {
    std::lock_guard<std::mutex> lock(conn_mu_);
    busy = busy_ports_;
  }
  size_t closed = 0;
  ForEachConnection(backend_port_, [&](int fd, int peer) {
    if (busy.count(peer) > 0) return;
    // Why shutdown, not close: civetweb owns the descriptor; its worker
    // sees end-of-stream and closes the connection itself.
    if (shutdown(fd, SHUT_RDWR) == 0) ++closed;
  });
  VLOG(1) << "fault: closed " << closed << " idle connection(s)";
  return closed;
}

Status Server::UseEtcd(const std::string& endpoint) {
  std::lock_guard<std::mutex> lock(etcd_mu_);
  if (etcd_owner_) {
    return Status(StatusCode::kInvalid, "storage is already etcd at " + etcd_owner_->endpoint());
  }
  auto client = EtcdClient::Create(endpoint, EtcdClient::Options{});
  if (!client.ok()) return client.status();
  auto storage = std::make_unique<EtcdStorage>(std::move(*client));
  if (std::optional<ApiError> error = store_->SetMirror(storage.get())) {
    return Status(StatusCode::kUnavailable, error->message);
  }
  LOG(INFO) << "storage: etcd at " << endpoint << " (" << store_->Count(RoutesInfo())
            << " routes loaded)";
  etcd_.store(storage.get());
  etcd_owner_ = std::move(storage);
  return Status::Ok();
}

Status Server::Start() {
  if (!options_.etcd_endpoint.empty() && etcd_.load() == nullptr) {
    Status s = UseEtcd(options_.etcd_endpoint);
    if (!s.ok()) return Status(s.code(), "--etcd-endpoint: " + s.message());
  }
  mg_init_library(0);
  {
    std::lock_guard<std::mutex> lock(admin_mu_);
    shut_down_ = false;
  }
  if (!options_.tls) {
    Status s = StartListener(options_.listen);
    port_ = backend_port_;
    return s;
  }
  // Why: Debian's civetweb crashes in its TLS code with OpenSSL 3, so TLS is
  // terminated by TlsProxy and civetweb serves plain HTTP on loopback.
  auto cert = GenerateSelfSignedCert(options_.tls_hosts);
  if (!cert.ok()) return cert.status();
  ca_pem_ = cert.value().cert_pem;
  key_pem_ = cert.value().key_pem;
  Status s = StartListener("127.0.0.1:0");
  if (!s.ok()) return s;
  size_t colon = options_.listen.rfind(':');
  int port = std::atoi(options_.listen.substr(colon + 1).c_str());
  s = tls_proxy_.Start(host_, port, cert.value().cert_pem, cert.value().key_pem, backend_port_);
  if (!s.ok()) {
    StopListener();
    return s;
  }
  port_ = tls_proxy_.port();
  LOG(INFO) << "local-apiserver serving " << base_url();
  return Status::Ok();
}

Status Server::StartListener(const std::string& listen) {
  std::lock_guard<std::mutex> lock(lifecycle_mu_);
  std::string ports = listen;
  std::string threads = std::to_string(options_.threads);
  std::vector<const char*> opts = {"listening_ports", ports.c_str(),
                                   "num_threads", threads.c_str(),
                                   "enable_keep_alive", "yes",
                                   "keep_alive_timeout_ms", "15000",
                                   "request_timeout_ms", "60000",
                                   "tcp_nodelay", "1"};
  opts.push_back(nullptr);
  mg_callbacks callbacks{};
  callbacks.log_message = LogMessage;
  callbacks.init_connection = &Server::InitConnection;
  // Why begin_request, not mg_set_request_handler after mg_start2: the
  // listener accepts as soon as it starts, and a request that came before
  // the handler was set got civetweb's own answer (a restart's first
  // DELETE was a 405 "DELETE method not allowed"). Every request is ours.
  callbacks.begin_request = [](mg_connection* conn) -> int {
    const mg_request_info* info = mg_get_request_info(conn);
    return Server::HandleRequest(conn, info != nullptr ? info->user_data : nullptr) != 0 ? 1 : 0;
  };
  char error[256] = "";
  mg_init_data init{};
  init.callbacks = &callbacks;
  init.user_data = this;
  init.configuration_options = opts.data();
  mg_error_data err{};
  err.text = error;
  err.text_buffer_size = sizeof(error);
  ctx_ = mg_start2(&init, &err);
  if (ctx_ == nullptr) {
    return Status(StatusCode::kUnavailable,
                  "cannot listen on " + listen + ": " + std::string(error));
  }
  mg_server_port sp[4];
  int n = mg_get_server_ports(ctx_, 4, sp);
  if (n < 1) return Status(StatusCode::kInternal, "civetweb reports no listening port");
  backend_port_ = sp[0].port;
  stopping_.store(false);
  LOG(INFO) << "local-apiserver HTTP listener on port " << backend_port_;
  return Status::Ok();
}

void Server::StopListener() {
  std::lock_guard<std::mutex> lock(lifecycle_mu_);
  if (ctx_ == nullptr) return;
  {
    std::lock_guard<std::mutex> hold_lock(conn_mu_);
    stopping_.store(true);
  }
  conn_cv_.notify_all();  // FaultDelay: injected latency, never-read connections
  store_->CloseAllWatches();
  // Why: civetweb's accept loop polls with a 2 s timeout before it notices
  // mg_stop; a connection to the listener wakes it at once.
  std::atomic<bool> stopped{false};
  int port = backend_port_;
  std::thread poker([&stopped, port] {
    while (!stopped.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      int fd = socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      addr.sin_port = htons(static_cast<uint16_t>(port));
      addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
      close(fd);
    }
  });
  mg_stop(ctx_);
  stopped.store(true);
  poker.join();
  ctx_ = nullptr;
  if (int n = CloseLeftoverConnections(port); n > 0) {
    VLOG(1) << "closed " << n << " connection(s) civetweb left open at stop";
  }
}

void Server::Stop() {
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> lock(admin_mu_);
    shut_down_ = true;
    threads.swap(admin_threads_);
  }
  admin_cv_.notify_all();
  for (auto& t : threads) t.join();
  tls_proxy_.Stop();
  StopListener();
}

Status Server::DropConnections() {
  tls_proxy_.DropConnections();
  StopListener();
  std::string host = options_.tls ? "127.0.0.1" : host_;
  return StartListener(host + ":" + std::to_string(backend_port_));
}

Status Server::Restart(std::chrono::milliseconds down, std::chrono::milliseconds startup) {
  LOG(INFO) << "local-apiserver: restarting: every connection closed, new ones refused for "
            << down.count() << " ms";
  // Why: from here on nothing accepts connections; closing the open ones
  // (civetweb drains its workers) takes part of `down`, not more.
  const SteadyTime until = clock_.Now() + down;
  if (options_.tls) tls_proxy_.Stop();
  StopListener();
  // Why: while down, the ports stay ours (refusing connections), so that no
  // other process's bind(0) is handed them and our clients never reach a
  // stranger's listener when they retry (an e2e test once got a 405 from a
  // replica's metrics endpoint that had taken the port of a restarting
  // server beside it).
  std::vector<PortReservation> held;
  for (int port : {backend_port_, options_.tls ? port_ : 0}) {
    if (port == 0) continue;
    std::string error;
    held.push_back(PortReservation::Hold(port, &error));
    if (!held.back().held()) {
      LOG(WARNING) << "local-apiserver: cannot hold port " << port << " while down: " << error;
    }
  }
  {
    std::unique_lock<std::mutex> lock(admin_mu_);
    while (!shut_down_ && clock_.Now() < until) clock_.WaitUntil(admin_cv_, lock, until);
    if (shut_down_) return Status(StatusCode::kCancelled, "server stopped while restarting");
  }
  uint64_t rv = store_->RestartWatchCache();
  starting_until_ns_.store(
      std::chrono::duration_cast<std::chrono::nanoseconds>((clock_.Now() + startup).time_since_epoch())
          .count());
  held.clear();
  std::string host = options_.tls ? "127.0.0.1" : host_;
  Status s = StartListener(host + ":" + std::to_string(backend_port_));
  if (s.ok() && options_.tls) s = tls_proxy_.Start(host_, port_, ca_pem_, key_pem_, backend_port_);
  if (!s.ok()) return s;
  LOG(INFO) << "local-apiserver: restarted, serving " << base_url()
            << " again; watches from resourceVersions before " << rv << " get 410"
            << (startup.count() > 0 ? "; starting for " + std::to_string(startup.count()) +
                                          " ms (custom resources 503, /readyz 500)"
                                    : std::string());
  return Status::Ok();
}

bool Server::Starting() const {
  const int64_t until = starting_until_ns_.load();
  return until != 0 &&
         std::chrono::duration_cast<std::chrono::nanoseconds>(clock_.Now().time_since_epoch())
                 .count() < until;
}

void Server::RunAdminThread(std::function<void()> body) {
  std::lock_guard<std::mutex> lock(admin_mu_);
  admin_threads_.emplace_back(std::move(body));
}

void Server::DropConnectionsAsync() {
  RunAdminThread([this] {
    Status s = DropConnections();
    if (!s.ok()) LOG(ERROR) << "drop-connections: " << s.ToString();
  });
}

void Server::RestartAsync(std::chrono::milliseconds down, std::chrono::milliseconds startup) {
  RunAdminThread([this, down, startup] {
    Status s = Restart(down, startup);
    if (!s.ok()) LOG(ERROR) << "restart: " << s.ToString();
  });
}

std::string Server::base_url() const {
  std::string host = host_ == "0.0.0.0" || host_.empty() ? "127.0.0.1" : host_;
  return std::string(options_.tls ? "https://" : "http://") + host + ":" + std::to_string(port_);
}

Status Server::WriteKubeconfig(const std::string& path) const {
  std::string cluster = "    server: " + base_url() + "\n";
  if (options_.tls) cluster += "    certificate-authority-data: " + Base64Encode(ca_pem_) + "\n";
  std::string user = options_.token.empty() ? "  user: {}\n"
                                            : "  user:\n    token: " + options_.token + "\n";
  std::string text = "apiVersion: v1\nkind: Config\nclusters:\n- name: local\n  cluster:\n" +
                     cluster +
                     "contexts:\n- name: local\n  context:\n    cluster: local\n"
                     "    user: local\n    namespace: default\n"
                     "current-context: local\npreferences: {}\nusers:\n- name: local\n" + user;
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) return Status(StatusCode::kInternal, "cannot write kubeconfig " + tmp);
    out << text;
    if (!out.flush()) return Status(StatusCode::kInternal, "cannot write kubeconfig " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return Status(StatusCode::kInternal, "cannot rename kubeconfig to " + path);
  }
  return Status::Ok();
}

ApiResult<ObjectPtr> Server::CreateNamespace(const std::string& name,
                                             const std::map<std::string, std::string>& labels) {
  nlohmann::json ns = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", name}}}};
  if (!labels.empty()) ns["metadata"]["labels"] = labels;
  return store_->Create(NamespacesInfo(), "", std::move(ns));
}

ApiResult<ObjectPtr> Server::CreateRoute(const nlohmann::json& route) {
  std::string ns = route.value("/metadata/namespace"_json_pointer, "");
  return store_->Create(RoutesInfo(), ns, route, /*keep_status=*/true);
}

}  // namespace routestatus::apiserver
