#pragma once

#include <atomic>
#include <mutex>
#include <string>
#include <thread>

#include "base/status.h"

namespace routestatus::e2e {

// A stand-in for the router a sidecar replica reports for: an HTTP server on
// 127.0.0.1 whose every GET answers 200 "ok" while ready and 503 while not.
// Stop() closes the listener (connections are refused, as when the router's
// container is down); Start() listens again on the same port. Thread-safe.
class StandInRouter {
 public:
  StandInRouter() = default;
  ~StandInRouter();
  StandInRouter(const StandInRouter&) = delete;
  StandInRouter& operator=(const StandInRouter&) = delete;

  // Listens (a free port the first time, the same port after), ready.
  Status Start();
  void Stop();
  void SetReady(bool ready) { ready_.store(ready); }
  int port() const { return port_; }
  // What a replica's --router-ready-url names.
  std::string ReadyUrl() const;
  // GET requests answered so far.
  int requests() const { return requests_.load(); }

 private:
  void Serve(int listen_fd);

  std::mutex mu_;
  int port_ = 0;
  int listen_fd_ = -1;  // GUARDED_BY(mu_)
  int wake_fd_ = -1;    // GUARDED_BY(mu_): an eventfd that ends Serve()
  std::thread thread_;
  std::atomic<bool> ready_{true};
  std::atomic<int> requests_{0};
};

}  // namespace routestatus::e2e
