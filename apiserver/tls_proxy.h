#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "base/status.h"

namespace routestatus::apiserver {

// Terminates TLS (OpenSSL) on a listening address and forwards each
// connection's bytes to a plain-HTTP backend port on 127.0.0.1. Used because
// Debian's civetweb 1.15 crashes in its own TLS code with OpenSSL 3. One
// thread per connection. Thread-safe.
class TlsProxy {
 public:
  TlsProxy() = default;
  ~TlsProxy();
  TlsProxy(const TlsProxy&) = delete;
  TlsProxy& operator=(const TlsProxy&) = delete;

  // Listens on host:port (port 0 = pick) with the PEM cert/key and forwards
  // to 127.0.0.1:backend_port.
  Status Start(const std::string& host, int port, const std::string& cert_pem,
                           const std::string& key_pem, int backend_port);
  // Stops accepting and closes every connection; joins all threads.
  void Stop();
  // Closes every open connection; keeps listening.
  void DropConnections();
  int port() const { return port_; }

 private:
  struct Conn;
  void AcceptLoop();
  void Serve(std::shared_ptr<Conn> conn);
  void ReapFinished();

  void* ctx_ = nullptr;  // SSL_CTX*
  int listen_fd_ = -1;
  int port_ = 0;
  int backend_port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread accept_thread_;
  std::mutex mu_;
  uint64_t next_id_ = 0;                                  // guarded by mu_
  std::map<uint64_t, std::shared_ptr<Conn>> conns_;      // guarded by mu_
};

}  // namespace routestatus::apiserver
