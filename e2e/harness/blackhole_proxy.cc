#include "e2e/harness/blackhole_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <glog/logging.h>

namespace routestatus::e2e {

// Both sockets of one forwarded connection; closed once, by Stop() or when
// either direction ends.
struct BlackholeProxy::Pipe {
  int client = -1;
  int upstream = -1;
  std::atomic<bool> closed{false};
  void Close() {
    if (closed.exchange(true)) return;
    ::shutdown(client, SHUT_RDWR);
    ::shutdown(upstream, SHUT_RDWR);
  }
};

BlackholeProxy::BlackholeProxy(int target_port) : target_port_(target_port) {}

BlackholeProxy::~BlackholeProxy() { Stop(); }

Status BlackholeProxy::Start() {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  if (listen_fd_ < 0) return Status(StatusCode::kUnavailable, "socket: " + std::string(strerror(errno)));
  int one = 1;
  setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::listen(listen_fd_, 128) != 0) {
    return Status(StatusCode::kUnavailable, "bind/listen: " + std::string(strerror(errno)));
  }
  socklen_t len = sizeof(addr);
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  acceptor_ = std::thread([this] { AcceptLoop(); });
  return Status::Ok();
}

void BlackholeProxy::SetBlackholed(bool blackholed) {
  {
    std::lock_guard<std::mutex> l(mu_);
    blackholed_.store(blackholed);
  }
  cv_.notify_all();
}

bool BlackholeProxy::WaitOpen() {
  std::unique_lock<std::mutex> l(mu_);
  cv_.wait(l, [&] { return stopping_.load() || !blackholed_.load(); });
  return !stopping_.load();
}

void BlackholeProxy::AcceptLoop() {
  while (WaitOpen()) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    // Why re-check: a connection that arrived while blackholed stays in the
    // backlog (the client sees it connected) until the path heals.
    if (blackholed_.load()) continue;
    int fd = ::accept(listen_fd_, nullptr, nullptr);
    if (fd < 0) continue;
    int up = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(target_port_));
    if (up < 0 || ::connect(up, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      LOG(WARNING) << "blackhole proxy: connect to " << target_port_ << ": " << strerror(errno);
      if (up >= 0) ::close(up);
      ::close(fd);
      continue;
    }
    ++connections_;
    auto pipe = std::make_shared<Pipe>();
    pipe->client = fd;
    pipe->upstream = up;
    std::lock_guard<std::mutex> l(mu_);
    if (stopping_.load()) {
      ::close(fd);
      ::close(up);
      return;
    }
    pipes_.push_back(pipe);
    threads_.emplace_back([this, pipe] { Forward(pipe, pipe->client, pipe->upstream); });
    threads_.emplace_back([this, pipe] { Forward(pipe, pipe->upstream, pipe->client); });
  }
}

void BlackholeProxy::Forward(std::shared_ptr<Pipe> pipe, int from, int to) {
  char buf[64 * 1024];
  while (!pipe->closed.load() && WaitOpen()) {
    pollfd p{from, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    // Why re-check: bytes that arrive as the path breaks stay unread.
    if (blackholed_.load()) continue;
    ssize_t n = ::read(from, buf, sizeof(buf));
    if (n <= 0) {
      // Why half-close: an HTTP peer may still be answering.
      if (n == 0) ::shutdown(to, SHUT_WR);
      if (n < 0) pipe->Close();
      return;
    }
    for (ssize_t off = 0; off < n;) {
      // Why send: a peer that closed must not SIGPIPE the test process.
      ssize_t w = ::send(to, buf + off, static_cast<size_t>(n - off), MSG_NOSIGNAL);
      if (w <= 0) {
        pipe->Close();
        return;
      }
      off += w;
    }
  }
}

void BlackholeProxy::Stop() {
  std::vector<std::thread> threads;
  std::vector<std::shared_ptr<Pipe>> pipes;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (stopping_.exchange(true)) return;
    threads.swap(threads_);
    pipes.swap(pipes_);
  }
  cv_.notify_all();
  if (acceptor_.joinable()) acceptor_.join();
  for (auto& p : pipes) p->Close();
  for (auto& t : threads) t.join();
  for (auto& p : pipes) {
    ::close(p->client);
    ::close(p->upstream);
  }
  if (listen_fd_ >= 0) ::close(listen_fd_);
}

}  // namespace routestatus::e2e
