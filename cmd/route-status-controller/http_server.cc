#include "cmd/route-status-controller/http_server.h"

#include <netdb.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>

#include <glog/logging.h>

#include "cmd/route-status-controller/config_validate.h"

namespace routestatus::cmd {
namespace {

constexpr uint64_t kListenId = 0;
constexpr uint64_t kWakeId = 1;
constexpr uint64_t kFirstConnectionId = 2;
// How often deadlines are checked: the precision of request_timeout.
constexpr auto kScanInterval = std::chrono::milliseconds(50);

std::string Serialize(const HttpResponse& r, bool head) {
  std::string out = "HTTP/1.1 " + std::to_string(r.code) + " " + r.reason +
                    "\r\nContent-Type: " + r.content_type +
                    "\r\nContent-Length: " + std::to_string(r.body.size()) +
                    "\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n";
  if (!head) out += r.body;
  return out;
}

// Parses the request line of a complete request head; false when it is not
// "METHOD SP target SP HTTP/1.x".
bool ParseRequestLine(const std::string& head, HttpRequest* req) {
  size_t eol = head.find('\n');
  std::string line = head.substr(0, eol);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  size_t sp1 = line.find(' ');
  if (sp1 == std::string::npos || sp1 == 0) return false;
  size_t sp2 = line.find(' ', sp1 + 1);
  if (sp2 == std::string::npos || sp2 == sp1 + 1) return false;
  if (line.compare(sp2 + 1, std::string::npos, "HTTP/1.0") != 0 &&
      line.compare(sp2 + 1, std::string::npos, "HTTP/1.1") != 0) {
    return false;
  }
  std::string target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  if (target.front() != '/') return false;
  req->method = line.substr(0, sp1);
  req->path = target.substr(0, target.find_first_of("?#"));
  return true;
}

}  // namespace

struct HttpServer::Connection {
  enum class State { kReading, kHandling, kWriting };
  uint64_t id = 0;
  int fd = -1;
  State state = State::kReading;
  std::string in;
  std::string out;
  size_t out_sent = 0;
  SteadyTime accepted;
  SteadyTime deadline;  // reading or writing must be done by then
};

HttpServer::HttpServer(const Options& options, const Clock& clock, Handler handler,
                       DropObserver on_drop)
    : options_(options), clock_(clock), handler_(std::move(handler)), on_drop_(std::move(on_drop)),
      next_id_(kFirstConnectionId) {}

HttpServer::~HttpServer() { Stop(); }

StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(const Options& options, const Clock& clock,
                                                        Handler handler, DropObserver on_drop) {
  std::string host;
  int port = 0;
  if (!SplitHostPort(options.address, &host, &port)) {
    return Status(StatusCode::kInvalid, "address \"" + options.address + "\" is not host:port");
  }
  addrinfo hints{};
  // Why AF_INET for an empty host: ":1936" meant 0.0.0.0 (IPv4) before.
  hints.ai_family = host.empty() ? AF_INET : AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  std::string port_text = std::to_string(port);
  if (int rc = ::getaddrinfo(host.empty() ? nullptr : host.c_str(), port_text.c_str(), &hints, &found);
      rc != 0) {
    return Status(StatusCode::kInvalid,
                  "address \"" + options.address + "\": " + std::string(::gai_strerror(rc)));
  }
  std::unique_ptr<HttpServer> self(new HttpServer(options, clock, std::move(handler), std::move(on_drop)));
  std::string bind_error = "no address";
  for (addrinfo* a = found; a != nullptr && self->listen_fd_ < 0; a = a->ai_next) {
    int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd, SOMAXCONN) != 0) {
      bind_error = std::strerror(errno);
      ::close(fd);
      continue;
    }
    self->listen_fd_ = fd;
  }
  ::freeaddrinfo(found);
  if (self->listen_fd_ < 0) {
    return Status(StatusCode::kUnavailable, "cannot serve on " + options.address + ": " + bind_error);
  }
  sockaddr_storage bound{};
  socklen_t len = sizeof(bound);
  ::getsockname(self->listen_fd_, reinterpret_cast<sockaddr*>(&bound), &len);
  self->port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                                  : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  self->epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  self->wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (self->epoll_fd_ < 0 || self->wake_fd_ < 0) {
    return Status(StatusCode::kUnavailable, std::string("epoll/eventfd: ") + std::strerror(errno));
  }
  for (auto [fd, id] : {std::pair<int, uint64_t>{self->listen_fd_, kListenId}, {self->wake_fd_, kWakeId}}) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = id;
    ::epoll_ctl(self->epoll_fd_, EPOLL_CTL_ADD, fd, &ev);
  }
  HttpServer* raw = self.get();
  self->loop_ = std::thread([raw] { raw->Loop(); });
  for (int i = 0; i < std::max(1, options.workers); ++i) {
    self->workers_.emplace_back([raw] { raw->Work(); });
  }
  return self;
}

void HttpServer::Stop() {
  std::lock_guard<std::mutex> stop_lock(stop_mu_);
  if (!loop_.joinable()) return;
  {
    std::lock_guard<std::mutex> l(mu_);
    stopping_ = true;
  }
  work_cv_.notify_all();
  Wake();
  loop_.join();
  for (std::thread& t : workers_) t.join();
  workers_.clear();
  for (int fd : {listen_fd_, epoll_fd_, wake_fd_}) {
    if (fd >= 0) ::close(fd);
  }
  listen_fd_ = epoll_fd_ = wake_fd_ = -1;
}

void HttpServer::Wake() {
  uint64_t one = 1;
  (void)::write(wake_fd_, &one, sizeof(one));
}

void HttpServer::Loop() {
  epoll_event events[64];
  SteadyTime next_scan = clock_.Now() + kScanInterval;
  while (true) {
    int n = ::epoll_wait(epoll_fd_, events, 64, static_cast<int>(kScanInterval.count()));
    {
      std::lock_guard<std::mutex> l(mu_);
      if (stopping_) break;
    }
    for (int i = 0; i < n; ++i) {
      uint64_t id = events[i].data.u64;
      if (id == kListenId) {
        Accept();
        continue;
      }
      if (id == kWakeId) {
        uint64_t count;
        (void)::read(wake_fd_, &count, sizeof(count));
        TakeAnswers();
        continue;
      }
      auto it = connections_.find(id);
      if (it == connections_.end()) continue;
      Connection& c = *it->second;
      if (events[i].events & (EPOLLERR | EPOLLHUP)) {
        Close(id, nullptr);
      } else if (c.state == Connection::State::kReading && (events[i].events & EPOLLIN)) {
        OnReadable(c);
      } else if (c.state == Connection::State::kWriting && (events[i].events & EPOLLOUT)) {
        OnWritable(c);
      }
    }
    if (clock_.Now() >= next_scan) {
      ExpireDeadlines();
      next_scan = clock_.Now() + kScanInterval;
    }
  }
  std::vector<uint64_t> ids;
  for (const auto& [id, c] : connections_) ids.push_back(id);
  for (uint64_t id : ids) Close(id, nullptr);
}

void HttpServer::Accept() {
  while (true) {
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno == EMFILE || errno == ENFILE) {
        // Why: the listener stays readable; free a descriptor or this spins.
        LOG_EVERY_N(WARNING, 100) << "metrics endpoint: out of file descriptors with "
                                  << connections_.size() << " connections open";
      } else {
        return;  // EAGAIN: accepted everything
      }
    }
    if (fd < 0 || static_cast<int>(connections_.size()) >= options_.max_connections) {
      // Why the oldest still sending its request: a new client (a probe)
      // always gets in, and whoever holds connections open the longest pays.
      Connection* oldest = nullptr;
      for (auto& [cid, c] : connections_) {
        if (c->state == Connection::State::kReading && (oldest == nullptr || c->accepted < oldest->accepted)) {
          oldest = c.get();
        }
      }
      if (oldest != nullptr) {
        Close(oldest->id, "too_many_connections");
      } else if (fd >= 0) {
        ::close(fd);
        if (on_drop_) on_drop_("too_many_connections");
        continue;
      }
      if (fd < 0) return;
    }
    auto c = std::make_unique<Connection>();
    c->id = next_id_++;
    c->fd = fd;
    c->accepted = clock_.Now();
    c->deadline = c->accepted + options_.request_timeout;
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLRDHUP;
    ev.data.u64 = c->id;
    if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) {
      ::close(fd);
      continue;
    }
    connections_.emplace(c->id, std::move(c));
  }
}

void HttpServer::OnReadable(Connection& c) {
  char buf[4096];
  while (true) {
    ssize_t n = ::recv(c.fd, buf, sizeof(buf), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n <= 0) {  // closed before a whole request, or an error
      Close(c.id, nullptr);
      return;
    }
    size_t scan_from = c.in.size() < 3 ? 0 : c.in.size() - 3;
    c.in.append(buf, static_cast<size_t>(n));
    size_t end = c.in.find("\r\n\r\n", scan_from);
    if (end == std::string::npos) end = c.in.find("\n\n", scan_from);
    if (end == std::string::npos) {
      if (c.in.size() > options_.max_request_bytes) {
        Reject(c, 431, "Request Header Fields Too Large", "too_large");
        return;
      }
      continue;
    }
    HttpRequest req;
    if (!ParseRequestLine(c.in, &req)) {
      Reject(c, 400, "Bad Request", "bad_request");
      return;
    }
    c.state = Connection::State::kHandling;
    c.in.clear();
    // Why no events: a client that half-closes now would make a
    // level-triggered EPOLLIN fire until the answer is ready.
    epoll_event ev{};
    ev.events = 0;
    ev.data.u64 = c.id;
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, c.fd, &ev);
    {
      std::lock_guard<std::mutex> l(mu_);
      queue_.emplace_back(c.id, std::move(req));
    }
    work_cv_.notify_one();
    return;
  }
}

void HttpServer::Reject(Connection& c, int code, const char* reason, const char* drop_reason) {
  if (on_drop_) on_drop_(drop_reason);
  HttpResponse r{code, reason, "text/plain; charset=utf-8", std::string(reason) + "\n"};
  c.out = Serialize(r, false);
  c.state = Connection::State::kWriting;
  c.deadline = clock_.Now() + options_.request_timeout;
  OnWritable(c);
}

void HttpServer::OnWritable(Connection& c) {
  while (c.out_sent < c.out.size()) {
    ssize_t n = ::send(c.fd, c.out.data() + c.out_sent, c.out.size() - c.out_sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      epoll_event ev{};
      ev.events = EPOLLOUT;
      ev.data.u64 = c.id;
      ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, c.fd, &ev);
      return;
    }
    if (n <= 0) {
      Close(c.id, nullptr);
      return;
    }
    c.out_sent += static_cast<size_t>(n);
  }
  ::shutdown(c.fd, SHUT_WR);
  Close(c.id, nullptr);
}

void HttpServer::TakeAnswers() {
  std::vector<Done> done;
  {
    std::lock_guard<std::mutex> l(mu_);
    done.swap(done_);
  }
  for (Done& d : done) {
    auto it = connections_.find(d.id);
    if (it == connections_.end()) continue;  // closed meanwhile (Stop)
    Connection& c = *it->second;
    c.out = std::move(d.bytes);
    c.state = Connection::State::kWriting;
    c.deadline = clock_.Now() + options_.request_timeout;
    OnWritable(c);
  }
}

void HttpServer::ExpireDeadlines() {
  SteadyTime now = clock_.Now();
  std::vector<uint64_t> expired;
  for (const auto& [id, c] : connections_) {
    // Why not kHandling: the handler is ours and bounded; its answer gets
    // a fresh deadline for the write.
    if (c->state != Connection::State::kHandling && c->deadline <= now) expired.push_back(id);
  }
  for (uint64_t id : expired) Close(id, "timeout");
}

void HttpServer::Close(uint64_t id, const char* drop_reason) {
  auto it = connections_.find(id);
  if (it == connections_.end()) return;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, it->second->fd, nullptr);
  ::close(it->second->fd);
  connections_.erase(it);
  if (drop_reason != nullptr && on_drop_) on_drop_(drop_reason);
}

void HttpServer::Work() {
  while (true) {
    std::pair<uint64_t, HttpRequest> job;
    {
      std::unique_lock<std::mutex> l(mu_);
      work_cv_.wait(l, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    HttpResponse response;
    try {
      response = handler_(job.second);
    } catch (const std::exception& e) {
      LOG(ERROR) << "metrics endpoint: handler for " << job.second.path << " failed: " << e.what();
      response = HttpResponse{500, "Internal Server Error", "text/plain; charset=utf-8", "internal error\n"};
    }
    std::string bytes = Serialize(response, job.second.method == "HEAD");
    {
      std::lock_guard<std::mutex> l(mu_);
      done_.push_back(Done{job.first, std::move(bytes)});
    }
    Wake();
  }
}

}  // namespace routestatus::cmd
