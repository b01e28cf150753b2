#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"

namespace routestatus::e2e {

// A TCP forwarder on 127.0.0.1 (port picked at start) to 127.0.0.1:target,
// that can be cut off as a failed switch or a partitioned node is: while
// blackholed it moves no byte in either direction and accepts no new
// connection, but closes nothing (no FIN, no RST), so the peers' sockets
// stay open and their writes fill the kernel's buffers. Healed, it forwards
// again whatever was written meanwhile (as TCP retransmission would), and
// accepts the connections that queued up. One thread per direction of each
// connection. Thread-safe.
class BlackholeProxy {
 public:
  explicit BlackholeProxy(int target_port);
  ~BlackholeProxy();
  BlackholeProxy(const BlackholeProxy&) = delete;
  BlackholeProxy& operator=(const BlackholeProxy&) = delete;

  // Listens; kUnavailable naming the failed call.
  Status Start();
  int port() const { return port_; }
  void SetBlackholed(bool blackholed);
  bool blackholed() const { return blackholed_.load(); }
  // Connections accepted so far.
  uint64_t connections() const { return connections_.load(); }
  // Closes every socket and joins every thread. Idempotent.
  void Stop();

 private:
  struct Pipe;
  void AcceptLoop();
  void Forward(std::shared_ptr<Pipe> pipe, int from, int to);
  // Blocks while blackholed; false once stopping.
  bool WaitOpen();

  const int target_port_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> blackholed_{false};
  std::atomic<uint64_t> connections_{0};
  std::mutex mu_;
  std::condition_variable cv_;               // blackholed_ changed or stopping
  std::vector<std::shared_ptr<Pipe>> pipes_;  // GUARDED_BY(mu_)
  std::vector<std::thread> threads_;          // GUARDED_BY(mu_)
  std::thread acceptor_;
};

}  // namespace routestatus::e2e
