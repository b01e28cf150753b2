#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace routestatus::kubeclient::rest {

// A TCP socket listening on 127.0.0.1 on a port picked now (*port);
// CHECK-fails when it cannot. The caller owns (closes) it.
int ListenOnLoopback(int* port);

// Accepts connections on 127.0.0.1 (a port picked now) and runs `serve(fd)`
// on a thread of its own for each; `serve` closes fd. The destructor stops
// accepting and joins every thread: `serve` must return once its peer
// closes or stopping() is true. Thread-safe.
class LoopbackAcceptor {
 public:
  explicit LoopbackAcceptor(std::function<void(int fd)> serve);
  ~LoopbackAcceptor();
  int port() const { return port_; }
  bool stopping() const { return stop_.load(); }

 private:
  std::function<void(int fd)> serve_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::vector<std::thread> workers_;  // GUARDED_BY(mu_)
  std::thread acceptor_;
};

// A tiny HTTP/1.1 server on 127.0.0.1:0 for client tests that need exact
// control of the bytes on the wire (truncated streams, garbage, stalls).
// Each connection serves one request: the handler writes the raw response
// and returns; the connection is then closed. Thread-safe.
class RawHttpServer {
 public:
  // `request` is the request line, headers and body as received.
  using Handler = std::function<void(RawHttpServer& server, int fd, const std::string& request)>;

  explicit RawHttpServer(Handler handler);
  ~RawHttpServer();

  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::vector<std::string> requests() const;

  // Helpers for handlers.
  static void Write(int fd, std::string_view bytes);
  // Writes one chunk of a chunked body ("" writes the terminating chunk).
  static void Chunk(int fd, std::string_view bytes);
  // Status line + headers of a chunked streaming response.
  static void StartChunked(int fd, int code = 200);
  // A complete response with a Content-Length body.
  static void Respond(int fd, int code, const std::string& body,
                      const std::string& extra_headers = "");
  // Blocks until the peer closes the connection (true) or the server stops.
  bool WaitForPeerClose(int fd);

 private:
  void AcceptLoop();
  void Serve(int fd);

  Handler handler_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  mutable std::mutex mu_;
  std::vector<std::string> requests_;  // GUARDED_BY(mu_)
  std::vector<std::thread> workers_;   // GUARDED_BY(mu_)
  std::thread acceptor_;
};

}  // namespace routestatus::kubeclient::rest
