#include "e2e/harness/stand_in_router.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace routestatus::e2e {

StandInRouter::~StandInRouter() { Stop(); }

Status StandInRouter::Start() {
  std::lock_guard<std::mutex> l(mu_);
  if (listen_fd_ >= 0) return Status::Ok();
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status(StatusCode::kInternal, std::string("socket: ") + strerror(errno));
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port_));
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || listen(fd, 64) != 0) {
    Status s(StatusCode::kUnavailable, "bind/listen 127.0.0.1:" + std::to_string(port_) + ": " +
                                           strerror(errno));
    close(fd);
    return s;
  }
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  listen_fd_ = fd;
  wake_fd_ = eventfd(0, EFD_CLOEXEC);
  thread_ = std::thread([this, fd] { Serve(fd); });
  return Status::Ok();
}

void StandInRouter::Stop() {
  std::thread t;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (listen_fd_ < 0) return;
    uint64_t one = 1;
    (void)!write(wake_fd_, &one, sizeof(one));
    t = std::move(thread_);
  }
  if (t.joinable()) t.join();
  std::lock_guard<std::mutex> l(mu_);
  close(listen_fd_);
  close(wake_fd_);
  listen_fd_ = -1;
  wake_fd_ = -1;
}

std::string StandInRouter::ReadyUrl() const {
  return "http://127.0.0.1:" + std::to_string(port_) + "/healthz/ready";
}

void StandInRouter::Serve(int listen_fd) {
  int wake;
  {
    std::lock_guard<std::mutex> l(mu_);
    wake = wake_fd_;
  }
  for (;;) {
    pollfd fds[2] = {{listen_fd, POLLIN, 0}, {wake, POLLIN, 0}};
    if (poll(fds, 2, -1) < 0 && errno != EINTR) return;
    if (fds[1].revents != 0) return;
    if ((fds[0].revents & POLLIN) == 0) continue;
    int conn = accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (conn < 0) continue;
    // Why one request a connection, read with a short timeout: the probe
    // sends one small GET and closes.
    timeval tv{1, 0};
    setsockopt(conn, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    std::string request;
    char buf[1024];
    while (request.find("\r\n\r\n") == std::string::npos && request.size() < 8192) {
      ssize_t n = read(conn, buf, sizeof(buf));
      if (n <= 0) break;
      request.append(buf, static_cast<size_t>(n));
    }
    ++requests_;
    const bool ready = ready_.load();
    const std::string body = ready ? "ok\n" : "not ready\n";
    const std::string response = std::string("HTTP/1.1 ") +
                                 (ready ? "200 OK" : "503 Service Unavailable") +
                                 "\r\nContent-Type: text/plain\r\nContent-Length: " +
                                 std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" +
                                 body;
    (void)!write(conn, response.data(), response.size());
    close(conn);
  }
}

}  // namespace routestatus::e2e
