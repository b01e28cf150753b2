#include "apiserver/tls_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include <glog/logging.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>

namespace routestatus::apiserver {


struct TlsProxy::Conn {
  int client_fd = -1;
  int backend_fd = -1;
  std::thread thread;
  std::atomic<bool> done{false};
};

namespace {

bool WriteAll(int fd, const char* data, size_t len) {
  while (len > 0) {
    ssize_t n = send(fd, data, len, MSG_NOSIGNAL);
    if (n <= 0) return false;
    data += n;
    len -= static_cast<size_t>(n);
  }
  return true;
}

bool SslWriteAll(SSL* ssl, const char* data, size_t len) {
  while (len > 0) {
    int n = SSL_write(ssl, data, static_cast<int>(len));
    if (n <= 0) return false;
    data += n;
    len -= static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

TlsProxy::~TlsProxy() { Stop(); }

Status TlsProxy::Start(const std::string& host, int port, const std::string& cert_pem,
                       const std::string& key_pem, int backend_port) {
  backend_port_ = backend_port;
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  if (ctx == nullptr) return Status(StatusCode::kInternal, "SSL_CTX_new failed");
  ctx_ = ctx;
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  BIO* cert_bio = BIO_new_mem_buf(cert_pem.data(), static_cast<int>(cert_pem.size()));
  X509* cert = PEM_read_bio_X509(cert_bio, nullptr, nullptr, nullptr);
  BIO_free(cert_bio);
  BIO* key_bio = BIO_new_mem_buf(key_pem.data(), static_cast<int>(key_pem.size()));
  EVP_PKEY* key = PEM_read_bio_PrivateKey(key_bio, nullptr, nullptr, nullptr);
  BIO_free(key_bio);
  bool ok = cert != nullptr && key != nullptr && SSL_CTX_use_certificate(ctx, cert) == 1 &&
            SSL_CTX_use_PrivateKey(ctx, key) == 1;
  X509_free(cert);
  EVP_PKEY_free(key);
  if (!ok) return Status(StatusCode::kInternal, "cannot load the TLS certificate");

  listen_fd_ = socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1) {
    return Status(StatusCode::kInvalid, "bad listen address " + host);
  }
  if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      listen(listen_fd_, 128) != 0) {
    std::string err = strerror(errno);
    close(listen_fd_);
    listen_fd_ = -1;
    return Status(StatusCode::kUnavailable,
                  "cannot listen on " + host + ":" + std::to_string(port) + ": " + err);
  }
  socklen_t len = sizeof(addr);
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  stopping_.store(false);
  accept_thread_ = std::thread([this] { AcceptLoop(); });
  return Status::Ok();
}

void TlsProxy::AcceptLoop() {
  while (!stopping_.load()) {
    pollfd pfd{listen_fd_, POLLIN, 0};
    if (poll(&pfd, 1, 200) <= 0) {
      ReapFinished();
      continue;
    }
    int fd = accept(listen_fd_, nullptr, nullptr);
    if (fd < 0) continue;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    auto conn = std::make_shared<Conn>();
    conn->client_fd = fd;
    std::lock_guard<std::mutex> lock(mu_);
    conns_[next_id_++] = conn;
    conn->thread = std::thread([this, conn] { Serve(conn); });
  }
}

void TlsProxy::ReapFinished() {
  std::vector<std::shared_ptr<Conn>> finished;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = conns_.begin(); it != conns_.end();) {
      if (it->second->done.load()) {
        finished.push_back(it->second);
        it = conns_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& c : finished) c->thread.join();
}

void TlsProxy::Serve(std::shared_ptr<Conn> conn) {
  SSL* ssl = SSL_new(static_cast<SSL_CTX*>(ctx_));
  SSL_set_fd(ssl, conn->client_fd);
  if (SSL_accept(ssl) == 1) {
    int backend = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(backend_port_));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int one = 1;
    setsockopt(backend, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    {
      std::lock_guard<std::mutex> lock(mu_);
      conn->backend_fd = backend;
    }
    if (connect(backend, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
      std::vector<char> buf(64 * 1024);
      while (!stopping_.load()) {
        if (SSL_pending(ssl) == 0) {
          pollfd pfds[2] = {{conn->client_fd, POLLIN, 0}, {backend, POLLIN, 0}};
          int n = poll(pfds, 2, 500);
          if (n < 0) break;
          if (n == 0) continue;
          if (pfds[1].revents & (POLLIN | POLLHUP | POLLERR)) {
            ssize_t got = recv(backend, buf.data(), buf.size(), 0);
            if (got <= 0 || !SslWriteAll(ssl, buf.data(), static_cast<size_t>(got))) break;
          }
          if (!(pfds[0].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        }
        int got = SSL_read(ssl, buf.data(), static_cast<int>(buf.size()));
        if (got <= 0) {
          int err = SSL_get_error(ssl, got);
          if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) continue;
          break;
        }
        if (!WriteAll(backend, buf.data(), static_cast<size_t>(got))) break;
      }
    }
    SSL_shutdown(ssl);
  } else {
    VLOG(1) << "TLS handshake failed";
  }
  SSL_free(ssl);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (conn->backend_fd >= 0) close(conn->backend_fd);
    close(conn->client_fd);
    conn->backend_fd = -1;
    conn->client_fd = -1;
  }
  conn->done.store(true);
}

void TlsProxy::DropConnections() {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [id, c] : conns_) {
    if (c->client_fd >= 0) shutdown(c->client_fd, SHUT_RDWR);
    if (c->backend_fd >= 0) shutdown(c->backend_fd, SHUT_RDWR);
  }
}

void TlsProxy::Stop() {
  if (stopping_.exchange(true)) return;
  if (accept_thread_.joinable()) accept_thread_.join();
  DropConnections();
  std::map<uint64_t, std::shared_ptr<Conn>> conns;
  {
    std::lock_guard<std::mutex> lock(mu_);
    conns.swap(conns_);
  }
  for (auto& [id, c] : conns) c->thread.join();
  if (listen_fd_ >= 0) close(listen_fd_);
  listen_fd_ = -1;
  if (ctx_ != nullptr) SSL_CTX_free(static_cast<SSL_CTX*>(ctx_));
  ctx_ = nullptr;
}

}  // namespace routestatus::apiserver
