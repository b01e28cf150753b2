#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>

namespace routestatus::kubeclient::rest {

// A test server on 127.0.0.1:0, plain or TLS (OpenSSL), that keeps sending:
// a watch (any GET with "watch=") gets a chunked stream of ADDED events
// written as fast as the client reads until the client goes away; GET
// /version is answered at once; any other GET gets a 1 MiB JSON list body
// written in 16 KiB pieces 1 ms apart. One detached thread per connection;
// the destructor waits for all of them. Thread-safe.
class StreamServer {
 public:
  // TLS when `cert_pem` is not empty.
  StreamServer(const std::string& cert_pem = "", const std::string& key_pem = "");
  ~StreamServer();
  StreamServer(const StreamServer&) = delete;
  StreamServer& operator=(const StreamServer&) = delete;

  std::string url() const;
  // Connections whose thread has not finished (their socket still open).
  int open_connections() const { return open_.load(); }
  int accepted() const { return accepted_.load(); }
  // Waits up to `seconds` for every connection to be closed.
  bool WaitAllClosed(int seconds);

 private:
  void AcceptLoop();
  void Serve(int fd);

  void* ctx_ = nullptr;  // SSL_CTX*, null for plain
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> open_{0};
  std::atomic<int> accepted_{0};
  std::mutex mu_;
  std::condition_variable cv_;  // open_ dropped
  bool acceptor_done_ = false;  // GUARDED_BY(mu_)
};

}  // namespace routestatus::kubeclient::rest
