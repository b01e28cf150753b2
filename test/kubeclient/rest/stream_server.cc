#include "test/kubeclient/rest/stream_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string_view>
#include <thread>

#include <glog/logging.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>

namespace routestatus::kubeclient::rest {
namespace {

// One accepted connection's I/O, plain or TLS. Blocking, with timeouts.
class Conn {
 public:
  Conn(int fd, SSL_CTX* ctx) : fd_(fd) {
    timeval tv{10, 0};
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    if (ctx != nullptr) {
      ssl_ = SSL_new(ctx);
      SSL_set_fd(ssl_, fd);
      ok_ = SSL_accept(ssl_) == 1;
    }
  }
  ~Conn() {
    if (ssl_ != nullptr) SSL_free(ssl_);
    ::close(fd_);
  }
  bool ok() const { return ok_; }
  bool Write(std::string_view data) {
    while (!data.empty()) {
      int n = ssl_ != nullptr ? SSL_write(ssl_, data.data(), static_cast<int>(data.size()))
                              : static_cast<int>(::send(fd_, data.data(), data.size(), MSG_NOSIGNAL));
      if (n <= 0) return false;
      data.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }
  // The request head, or "" when the client went away first.
  std::string ReadHead() {
    std::string head;
    char buf[4096];
    while (head.find("\r\n\r\n") == std::string::npos && head.size() < 16384) {
      int n = ssl_ != nullptr ? SSL_read(ssl_, buf, sizeof(buf))
                              : static_cast<int>(::recv(fd_, buf, sizeof(buf), 0));
      if (n <= 0) return "";
      head.append(buf, static_cast<size_t>(n));
    }
    return head;
  }

 private:
  int fd_;
  SSL* ssl_ = nullptr;
  bool ok_ = true;
};

std::string Chunk(const std::string& data) {
  char size[32];
  std::snprintf(size, sizeof(size), "%zx\r\n", data.size());
  return size + data + "\r\n";
}

}  // namespace

StreamServer::StreamServer(const std::string& cert_pem, const std::string& key_pem) {
  if (!cert_pem.empty()) {
    SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
    BIO* cb = BIO_new_mem_buf(cert_pem.data(), static_cast<int>(cert_pem.size()));
    X509* cert = PEM_read_bio_X509(cb, nullptr, nullptr, nullptr);
    BIO_free(cb);
    BIO* kb = BIO_new_mem_buf(key_pem.data(), static_cast<int>(key_pem.size()));
    EVP_PKEY* key = PEM_read_bio_PrivateKey(kb, nullptr, nullptr, nullptr);
    BIO_free(kb);
    CHECK(cert != nullptr && key != nullptr);
    CHECK(SSL_CTX_use_certificate(ctx, cert) == 1 && SSL_CTX_use_PrivateKey(ctx, key) == 1);
    X509_free(cert);
    EVP_PKEY_free(key);
    ctx_ = ctx;
  }
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  CHECK(::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  CHECK(::listen(listen_fd_, 512) == 0);
  socklen_t len = sizeof(addr);
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  std::thread([this] { AcceptLoop(); }).detach();
}

StreamServer::~StreamServer() {
  stop_ = true;
  std::unique_lock<std::mutex> l(mu_);
  cv_.wait(l, [this] { return acceptor_done_ && open_.load() == 0; });
  l.unlock();
  ::close(listen_fd_);
  if (ctx_ != nullptr) SSL_CTX_free(static_cast<SSL_CTX*>(ctx_));
}

std::string StreamServer::url() const {
  return std::string(ctx_ != nullptr ? "https" : "http") + "://127.0.0.1:" + std::to_string(port_);
}

bool StreamServer::WaitAllClosed(int seconds) {
  std::unique_lock<std::mutex> l(mu_);
  return cv_.wait_for(l, std::chrono::seconds(seconds), [this] { return open_.load() == 0; });
}

void StreamServer::AcceptLoop() {
  while (!stop_.load()) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    ++open_;
    ++accepted_;
    std::thread([this, fd] { Serve(fd); }).detach();
  }
  std::lock_guard<std::mutex> l(mu_);
  acceptor_done_ = true;
  cv_.notify_all();
}

void StreamServer::Serve(int fd) {
  {
    Conn c(fd, static_cast<SSL_CTX*>(ctx_));
    std::string head = c.ok() ? c.ReadHead() : "";
    if (head.rfind("GET /version", 0) == 0) {
      c.Write("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}");
    } else if (head.find("watch=") != std::string::npos) {
      bool alive = c.Write(
          "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n");
      // Why a trickle, one or two events every ~0.2 ms, rather than a flood:
      // a reader faster than the server always has a read pending, which
      // completes (on the client library's I/O thread) at random moments:
      // that is when closing the socket from another thread is unsafe.
      for (uint64_t rv = 1; alive && !stop_.load(); rv += 2) {
        std::this_thread::sleep_for(std::chrono::microseconds(100 + rv % 200));
        std::string events;
        for (uint64_t i = rv; i < rv + 2; ++i) {
          events += R"({"type":"ADDED","object":{"metadata":{"namespace":"ns","name":"r)" +
                    std::to_string(i) + R"(","resourceVersion":")" + std::to_string(i) +
                    R"("},"spec":{"host":"www.example.com"}}})" + "\n";
        }
        alive = c.Write(Chunk(events));
      }
    } else if (!head.empty()) {
      constexpr size_t kBody = 1 << 20;
      bool alive = c.Write("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
                           std::to_string(kBody + 20) + "\r\n\r\n{\"items\":[{\"d\":\"");
      const std::string piece(16 * 1024, 'x');
      for (size_t sent = 0; alive && sent < kBody && !stop_.load(); sent += piece.size()) {
        alive = c.Write(piece);
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      if (alive) c.Write("\"}]}");
    }
  }
  std::lock_guard<std::mutex> l(mu_);
  --open_;
  cv_.notify_all();
}

}  // namespace routestatus::kubeclient::rest
