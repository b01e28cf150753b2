#include "test/kubeclient/rest/raw_http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>

#include <glog/logging.h>

namespace routestatus::kubeclient::rest {

int ListenOnLoopback(int* port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  CHECK_GE(fd, 0);
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  CHECK_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  CHECK_EQ(::listen(fd, 64), 0);
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  *port = ntohs(addr.sin_port);
  return fd;
}

LoopbackAcceptor::LoopbackAcceptor(std::function<void(int fd)> serve) : serve_(std::move(serve)) {
  fd_ = ListenOnLoopback(&port_);
  acceptor_ = std::thread([this] {
    for (;;) {
      int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      std::lock_guard<std::mutex> l(mu_);
      workers_.emplace_back([this, c] { serve_(c); });
    }
  });
}

LoopbackAcceptor::~LoopbackAcceptor() {
  stop_ = true;
  ::shutdown(fd_, SHUT_RDWR);
  ::close(fd_);
  acceptor_.join();
  std::vector<std::thread> workers;
  {
    std::lock_guard<std::mutex> l(mu_);
    workers.swap(workers_);
  }
  for (auto& t : workers) t.join();
}

RawHttpServer::RawHttpServer(Handler handler) : handler_(std::move(handler)) {
  listen_fd_ = ListenOnLoopback(&port_);
  acceptor_ = std::thread([this] { AcceptLoop(); });
}

RawHttpServer::~RawHttpServer() {
  stop_ = true;
  acceptor_.join();
  std::vector<std::thread> workers;
  {
    std::lock_guard<std::mutex> l(mu_);
    workers.swap(workers_);
  }
  for (auto& t : workers) t.join();
  ::close(listen_fd_);
}

std::vector<std::string> RawHttpServer::requests() const {
  std::lock_guard<std::mutex> l(mu_);
  return requests_;
}

void RawHttpServer::AcceptLoop() {
  while (!stop_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, 20) <= 0) continue;
    int fd = ::accept(listen_fd_, nullptr, nullptr);
    if (fd < 0) continue;
    std::lock_guard<std::mutex> l(mu_);
    workers_.emplace_back([this, fd] { Serve(fd); });
  }
}

void RawHttpServer::Serve(int fd) {
  std::string req;
  char buf[4096];
  size_t header_end = std::string::npos;
  while (header_end == std::string::npos && !stop_) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 20) <= 0) continue;
    ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    req.append(buf, static_cast<size_t>(n));
    header_end = req.find("\r\n\r\n");
  }
  if (header_end == std::string::npos) {
    ::close(fd);
    return;
  }
  std::string lower = req.substr(0, header_end);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  size_t cl = lower.find("\r\ncontent-length:");
  if (cl != std::string::npos) {
    size_t want = std::strtoul(req.c_str() + cl + 17, nullptr, 10);
    while (req.size() < header_end + 4 + want && !stop_) {
      ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
      if (n <= 0) break;
      req.append(buf, static_cast<size_t>(n));
    }
  }
  {
    std::lock_guard<std::mutex> l(mu_);
    requests_.push_back(req);
  }
  handler_(*this, fd, req);
  ::shutdown(fd, SHUT_RDWR);
  ::close(fd);
}

void RawHttpServer::Write(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n <= 0) return;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
}

void RawHttpServer::Chunk(int fd, std::string_view bytes) {
  char head[32];
  std::snprintf(head, sizeof(head), "%zx\r\n", bytes.size());
  Write(fd, std::string(head) + std::string(bytes) + "\r\n");
}

void RawHttpServer::StartChunked(int fd, int code) {
  Write(fd, "HTTP/1.1 " + std::to_string(code) +
                " X\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n");
}

void RawHttpServer::Respond(int fd, int code, const std::string& body,
                            const std::string& extra_headers) {
  Write(fd, "HTTP/1.1 " + std::to_string(code) + " X\r\nContent-Type: application/json\r\n" +
                "Content-Length: " + std::to_string(body.size()) + "\r\n" + extra_headers +
                "Connection: close\r\n\r\n" + body);
}

bool RawHttpServer::WaitForPeerClose(int fd) {
  char buf[256];
  while (!stop_) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 20) <= 0) continue;
    ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) return true;
  }
  return false;
}

}  // namespace routestatus::kubeclient::rest
