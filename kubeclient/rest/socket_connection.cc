#include "kubeclient/rest/socket_connection.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

namespace routestatus::kubeclient::rest {
namespace {

Status Unavailable(std::string m) { return Status(StatusCode::kUnavailable, std::move(m)); }

std::string Errno(int e) { return std::strerror(e); }

// The latest OpenSSL error of this thread, or "" (and clears the queue).
std::string OpenSslError() {
  unsigned long e = ERR_get_error();
  std::string text;
  if (e != 0) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof(buf));
    text = buf;
  }
  ERR_clear_error();
  return text;
}

void SetKeepAlive(int fd, const KeepAlive& k) {
  int on = 1;
  int idle = static_cast<int>(k.idle.count());
  int interval = static_cast<int>(k.interval.count());
  int count = k.count;
  unsigned int user_timeout =
      static_cast<unsigned int>((k.idle + k.interval * k.count) / std::chrono::milliseconds(1));
  setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof(interval));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof(count));
  setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout, sizeof(user_timeout));
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
}

}  // namespace

Wake::Wake() : fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

Wake::~Wake() {
  if (fd_ >= 0) ::close(fd_);
}

void Wake::Fire() {
  if (fired_.exchange(true, std::memory_order_acq_rel)) return;
  uint64_t one = 1;
  // Never drained: once fired, every poll() on it returns at once.
  [[maybe_unused]] ssize_t n = ::write(fd_, &one, sizeof(one));
}

struct SocketConnection::Tls {
  SSL_CTX* ctx = nullptr;
  SSL* ssl = nullptr;
  ~Tls() {
    if (ssl != nullptr) SSL_free(ssl);
    if (ctx != nullptr) SSL_CTX_free(ctx);
  }
};

SocketConnection::SocketConnection(Key, const Clock& clock, std::shared_ptr<Wake> wake)
    : clock_(clock), wake_(std::move(wake)) {}

SocketConnection::~SocketConnection() {
  tls_.reset();
  if (fd_ >= 0) ::close(fd_);
}

Status SocketConnection::WaitReady(short events, SteadyTime deadline) {
  for (;;) {
    if (wake_->fired()) return Status(StatusCode::kCancelled, "cancelled");
    int timeout_ms = -1;
    if (deadline != SteadyTime::max()) {
      const SteadyTime now = clock_.Now();
      if (now >= deadline) return Status(StatusCode::kTimeout, "deadline passed");
      // Why at most 1 s: the deadline is on the injected clock, which need
      // not run at the pace of poll()'s.
      auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - now).count();
      timeout_ms = static_cast<int>(std::min<int64_t>(left, 1000));
    }
    pollfd fds[2] = {{fd_, events, 0}, {wake_->fd(), POLLIN, 0}};
    int n = ::poll(fds, 2, timeout_ms);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Unavailable("poll: " + Errno(errno));
    }
    if (fds[1].revents != 0) return Status(StatusCode::kCancelled, "cancelled");
    // Errors and hang-ups are reported by the read or write that follows.
    if (fds[0].revents != 0) return Status::Ok();
  }
}

Status SocketConnection::ConnectSocket(const std::string& host, int port, SteadyTime deadline) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0) {
    return Unavailable("resolving " + host + ": " + gai_strerror(rc));
  }
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> addresses(found, &freeaddrinfo);
  Status last = Unavailable("no address for " + host);
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      last = Unavailable("socket: " + Errno(errno));
      continue;
    }
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
    if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) return Status::Ok();
    if (errno != EINPROGRESS) {
      last = Unavailable("connect to " + host + ":" + service + ": " + Errno(errno));
      continue;
    }
    if (Status s = WaitReady(POLLOUT, deadline); !s.ok()) return s;
    int err = 0;
    socklen_t len = sizeof(err);
    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err == 0) return Status::Ok();
    last = Unavailable("connect to " + host + ":" + service + ": " + Errno(err));
  }
  return last;
}

StatusOr<std::unique_ptr<SocketConnection>> SocketConnection::Open(const SocketTarget& target,
                                                                   const Clock& clock,
                                                                   SteadyTime deadline,
                                                                   std::shared_ptr<Wake> wake) {
  auto c = std::make_unique<SocketConnection>(Key(), clock, std::move(wake));
  const bool proxied = !target.proxy.url.empty();
  const ServerUrl& first = proxied ? target.proxy_url : target.server;
  if (Status s = c->ConnectSocket(first.host, first.port, deadline); !s.ok()) {
    if (proxied && s.code() == StatusCode::kUnavailable) {
      return Unavailable("proxy " + target.proxy.url + ": " + s.message());
    }
    return s;
  }
  SetKeepAlive(c->fd_, target.keepalive);
  if (proxied && !target.server.tls) {
    c->absolute_form_ = true;
    return c;
  }
  if (proxied) {
    if (Status s = c->ProxyConnect(target, deadline); !s.ok()) return s;
  }
  if (target.server.tls) {
    if (Status s = c->StartTls(target, deadline); !s.ok()) return s;
  }
  return c;
}

Status SocketConnection::ProxyConnect(const SocketTarget& target, SteadyTime deadline) {
  const std::string authority = target.server.Authority(/*with_port=*/true);
  std::string req = "CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n";
  if (!target.proxy.user.empty()) {
    req += "Proxy-Authorization: Basic " +
           Base64Encode(target.proxy.user + ":" + target.proxy.password) + "\r\n";
  }
  req += "\r\n";
  if (Status s = WriteAll(req, deadline); !s.ok()) return s;
  // Why byte by byte: nothing past the proxy's head may be consumed here
  // (the TLS handshake that follows reads the socket itself).
  std::string head;
  ResponseHead parsed;
  size_t consumed = 0;
  std::string error;
  for (;;) {
    char ch;
    auto got = ReadSome(&ch, 1, deadline);
    if (!got.ok()) return got.status();
    if (*got == 0) return Unavailable("proxy " + target.proxy.url + " closed the CONNECT");
    head.push_back(ch);
    HeadParse r = ParseResponseHead(head, &parsed, &consumed, &error);
    if (r == HeadParse::kInvalid) return Unavailable("proxy " + target.proxy.url + ": " + error);
    if (r == HeadParse::kDone) break;
  }
  if (parsed.status != 200) {
    return Unavailable("proxy " + target.proxy.url + " answered CONNECT " + authority + " with " +
                       std::to_string(parsed.status));
  }
  return Status::Ok();
}

Status SocketConnection::AfterTlsCall(int result, const char* what, SteadyTime deadline,
                                      bool* retry) {
  *retry = false;
  if (result > 0) return Status::Ok();
  const int err = SSL_get_error(tls_->ssl, result);
  if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
    *retry = true;
    return WaitReady(err == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline);
  }
  const int saved_errno = errno;
  std::string detail = OpenSslError();
  if (detail.empty()) detail = err == SSL_ERROR_SYSCALL && saved_errno != 0 ? Errno(saved_errno)
                                                                            : "connection closed";
  return Unavailable(std::string(what) + ": " + detail);
}

Status SocketConnection::StartTls(const SocketTarget& target, SteadyTime deadline) {
  tls_ = std::make_unique<Tls>();
  tls_->ctx = SSL_CTX_new(TLS_client_method());
  if (tls_->ctx == nullptr) return Unavailable("TLS: " + OpenSslError());
  SSL_CTX_set_min_proto_version(tls_->ctx, TLS1_2_VERSION);
  // Why: a server that closes without close_notify ends the stream; the
  // body's framing tells whether it was complete.
  SSL_CTX_set_options(tls_->ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
  if (target.tls.ca.empty()) SSL_CTX_set_default_verify_paths(tls_->ctx);
  if (Status s = ApplyTlsMaterial(target.tls, tls_->ctx); !s.ok()) return s;
  SSL_CTX_set_verify(tls_->ctx, target.verify ? SSL_VERIFY_PEER : SSL_VERIFY_NONE, nullptr);
  tls_->ssl = SSL_new(tls_->ctx);
  if (tls_->ssl == nullptr) return Unavailable("TLS: " + OpenSslError());
  SSL_set_fd(tls_->ssl, fd_);
  SSL_set_mode(tls_->ssl, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  const std::string& name =
      target.tls_server_name.empty() ? target.server.host : target.tls_server_name;
  const bool ip = IsIpLiteral(name);
  if (!ip) SSL_set_tlsext_host_name(tls_->ssl, name.c_str());
  if (target.verify) {
    X509_VERIFY_PARAM* param = SSL_get0_param(tls_->ssl);
    if (ip) {
      X509_VERIFY_PARAM_set1_ip_asc(param, name.c_str());
    } else {
      X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
      X509_VERIFY_PARAM_set1_host(param, name.c_str(), name.size());
    }
  }
  SSL_set_connect_state(tls_->ssl);
  for (;;) {
    ERR_clear_error();
    int r = SSL_do_handshake(tls_->ssl);
    bool retry = false;
    Status s = AfterTlsCall(r, "TLS handshake", deadline, &retry);
    if (!s.ok()) {
      long verify = SSL_get_verify_result(tls_->ssl);
      if (s.code() == StatusCode::kUnavailable && verify != X509_V_OK) {
        return Unavailable("TLS handshake: certificate verify failed: " +
                           std::string(X509_verify_cert_error_string(verify)) + " (for " + name +
                           ")");
      }
      return s;
    }
    if (!retry) return Status::Ok();
  }
}

Status SocketConnection::WriteAll(std::string_view data, SteadyTime deadline) {
  while (!data.empty()) {
    if (tls_) {
      ERR_clear_error();
      int r = SSL_write(tls_->ssl, data.data(), static_cast<int>(data.size()));
      bool retry = false;
      if (Status s = AfterTlsCall(r, "TLS write", deadline, &retry); !s.ok()) return s;
      if (!retry) data.remove_prefix(static_cast<size_t>(r));
      continue;
    }
    ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (Status s = WaitReady(POLLOUT, deadline); !s.ok()) return s;
    } else if (n < 0 && errno != EINTR) {
      return Unavailable("write: " + Errno(errno));
    }
  }
  return Status::Ok();
}

StatusOr<size_t> SocketConnection::ReadSome(char* buf, size_t n, SteadyTime deadline) {
  for (;;) {
    if (wake_->fired()) return Status(StatusCode::kCancelled, "cancelled");
    if (tls_) {
      ERR_clear_error();
      int r = SSL_read(tls_->ssl, buf, static_cast<int>(std::min<size_t>(n, 1 << 30)));
      if (r > 0) return static_cast<size_t>(r);
      const int err = SSL_get_error(tls_->ssl, r);
      if (err == SSL_ERROR_ZERO_RETURN) return size_t{0};
      bool retry = false;
      if (Status s = AfterTlsCall(r, "TLS read", deadline, &retry); !s.ok()) return s;
      continue;
    }
    ssize_t got = ::recv(fd_, buf, n, 0);
    if (got >= 0) return static_cast<size_t>(got);
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (Status s = WaitReady(POLLIN, deadline); !s.ok()) return s;
    } else if (errno == ETIMEDOUT) {
      return Unavailable("read: " + Errno(errno) +
                         " (TCP keepalive: the server stopped answering on this connection)");
    } else if (errno != EINTR) {
      return Unavailable("read: " + Errno(errno));
    }
  }
}

}  // namespace routestatus::kubeclient::rest
