#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/clock.h"
#include "base/status.h"

namespace routestatus::cmd {

// A request the server read completely (request line and headers).
struct HttpRequest {
  std::string method;  // "GET"
  std::string path;    // "/metrics" (the query string removed)
};

// What a handler answers. The server adds Content-Length, Cache-Control:
// no-store and Connection: close, and leaves the body out for HEAD.
struct HttpResponse {
  int code = 200;
  std::string reason = "OK";
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

// A small HTTP/1.1 server for the operational endpoint: one event-loop
// thread (epoll) reads every connection without blocking and hands only
// complete requests to `workers` handler threads; answers are written by the
// loop, again without blocking. So idle or slow clients (slow loris) hold a
// descriptor and a few KiB, never a worker: a connection whose request is
// not read in full within `request_timeout` (counted from accept, not per
// byte), or whose answer is not taken within it, is closed. At
// `max_connections` a new connection closes the oldest one still sending
// its request. One request per connection (Connection: close).
// Thread-safe; Stop() (or the destructor) joins every thread.
class HttpServer {
 public:
  struct Options {
    std::string address;  // host:port as SplitHostPort reads it; "" host = all interfaces
    int workers = 2;
    std::chrono::milliseconds request_timeout{3000};
    int max_connections = 2048;
    size_t max_request_bytes = 8192;  // request line + headers
  };
  using Handler = std::function<HttpResponse(const HttpRequest&)>;
  // Told why a connection was closed without an answer: "timeout",
  // "too_many_connections", "too_large", "bad_request". Called on the loop
  // thread; must not block.
  using DropObserver = std::function<void(const char* reason)>;

  // Binds, listens and starts the threads. `clock` and `handler` must
  // outlive the server. Errors: kInvalid (address), kUnavailable (bind).
  static StatusOr<std::unique_ptr<HttpServer>> Start(const Options& options, const Clock& clock,
                                                     Handler handler, DropObserver on_drop);
  ~HttpServer();  // Stop()s
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  int port() const { return port_; }
  // Stops accepting, closes every connection, joins the threads. Idempotent.
  void Stop();

 private:
  struct Connection;
  struct Done {  // a worker's answer for connection `id`
    uint64_t id;
    std::string bytes;
  };

  HttpServer(const Options& options, const Clock& clock, Handler handler, DropObserver on_drop);
  void Loop();
  void Work();
  void Accept();
  void OnReadable(Connection& c);
  void OnWritable(Connection& c);
  void TakeAnswers();
  void ExpireDeadlines();
  void Close(uint64_t id, const char* drop_reason);
  void Reject(Connection& c, int code, const char* reason, const char* drop_reason);
  void Wake();

  const Options options_;
  const Clock& clock_;
  const Handler handler_;
  const DropObserver on_drop_;
  int listen_fd_ = -1;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;  // eventfd: workers' answers and Stop()
  int port_ = 0;

  // Loop thread only.
  std::unordered_map<uint64_t, std::unique_ptr<Connection>> connections_;
  uint64_t next_id_ = 1;

  std::mutex mu_;
  std::condition_variable work_cv_;
  std::deque<std::pair<uint64_t, HttpRequest>> queue_;  // GUARDED_BY(mu_)
  std::vector<Done> done_;                               // GUARDED_BY(mu_)
  bool stopping_ = false;                                // GUARDED_BY(mu_)

  std::mutex stop_mu_;  // serialises Stop()
  std::thread loop_;
  std::vector<std::thread> workers_;
};

}  // namespace routestatus::cmd
