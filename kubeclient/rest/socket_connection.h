#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "base/status.h"
#include "kubeclient/rest/http_wire.h"
#include "kubeclient/rest/proxy.h"
#include "kubeclient/rest/tls_material.h"

namespace routestatus::kubeclient::rest {

// Ends every wait of the SocketConnections that share it, from any thread,
// for good: Fire() makes an eventfd readable that their poll() watches. Why
// not close the socket instead: another thread may be inside a read of it
// (closing under a TLS read is the crash this transport exists to avoid).
// Thread-safe.
class Wake {
 public:
  Wake();
  ~Wake();
  Wake(const Wake&) = delete;
  Wake& operator=(const Wake&) = delete;
  // Idempotent.
  void Fire();
  bool fired() const { return fired_.load(std::memory_order_acquire); }
  int fd() const { return fd_; }

 private:
  int fd_ = -1;
  std::atomic<bool> fired_{false};
};

// TCP keepalive of an owned socket: the kernel probes an idle connection
// and fails it (ETIMEDOUT) when `count` probes `interval` apart go
// unanswered after `idle` of silence; unacknowledged writes fail after
// idle + interval * count too (TCP_USER_TIMEOUT). A quiet but healthy
// connection answers the probes, so it is never failed by them.
struct KeepAlive {
  std::chrono::seconds idle{30};
  std::chrono::seconds interval{10};
  int count = 3;
};

// Where an owned socket connects, and how it proves whom it reached.
struct SocketTarget {
  ServerUrl server;
  std::string tls_server_name;  // SNI and the name verified; "" = server.host
  bool verify = true;           // false: insecure-skip-tls-verify
  TlsMaterial tls;              // CA, client certificate and key
  ProxyChoice proxy;            // url "" = direct
  ServerUrl proxy_url;          // parsed proxy.url, when set
  KeepAlive keepalive;
};

// One HTTP client connection that this process owns end to end: TCP,
// TLS (OpenSSL) and an HTTP proxy's CONNECT. Every wait ends at its
// deadline (kTimeout, on `clock`) or when the Wake fires (kCancelled);
// nothing else ever closes the socket under a read. One thread uses a
// connection at a time (not thread-safe); the Wake may fire from any.
class SocketConnection {
 public:
  // Resolves, connects (each address in turn), goes through the proxy and
  // completes the TLS handshake, all by `deadline`. kUnavailable names the
  // step that failed (a refused connection, a failed certificate check).
  // `clock` must outlive the connection.
  static StatusOr<std::unique_ptr<SocketConnection>> Open(const SocketTarget& target,
                                                          const Clock& clock, SteadyTime deadline,
                                                          std::shared_ptr<Wake> wake);
  ~SocketConnection();
  // Only Open() has a Key.
  class Key {
    friend class SocketConnection;
    Key() = default;
  };
  SocketConnection(Key, const Clock& clock, std::shared_ptr<Wake> wake);
  SocketConnection(const SocketConnection&) = delete;
  SocketConnection& operator=(const SocketConnection&) = delete;

  // Writes all of `data` by `deadline`.
  Status WriteAll(std::string_view data, SteadyTime deadline);
  // Reads at least one byte and at most `n` into `buf` by `deadline`; 0 is
  // the end of the stream (the server closed the connection).
  StatusOr<size_t> ReadSome(char* buf, size_t n, SteadyTime deadline);
  // Whether requests go to an HTTP proxy in absolute form (an http server
  // through a proxy; an https one is tunnelled with CONNECT instead).
  bool absolute_form() const { return absolute_form_; }

 private:
  struct Tls;
  // Waits until `fd_` is ready for `events` (POLLIN/POLLOUT), the deadline
  // passes (kTimeout) or the Wake fires (kCancelled).
  Status WaitReady(short events, SteadyTime deadline);
  Status ConnectSocket(const std::string& host, int port, SteadyTime deadline);
  Status ProxyConnect(const SocketTarget& target, SteadyTime deadline);
  Status StartTls(const SocketTarget& target, SteadyTime deadline);
  // A TLS call's result: Ok when done, else waits for what it wants.
  Status AfterTlsCall(int result, const char* what, SteadyTime deadline, bool* retry);

  const Clock& clock_;
  std::shared_ptr<Wake> wake_;
  int fd_ = -1;
  std::unique_ptr<Tls> tls_;
  bool absolute_form_ = false;
};

}  // namespace routestatus::kubeclient::rest
