#pragma once

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace routestatus::kubeclient::rest {

// A tiny HTTPS server on 127.0.0.1:0 (OpenSSL) for trust and client
// certificate tests: it answers every request 200 "{}" and records, per
// completed handshake, the request bytes and whether the client presented
// a certificate. With `client_ca_pem` it requires a client certificate
// signed by (or equal to) it. Thread-safe.
class TlsTestServer {
 public:
  TlsTestServer(const std::string& cert_pem, const std::string& key_pem,
                const std::string& client_ca_pem = "");
  ~TlsTestServer();

  int port() const { return port_; }
  std::string url() const { return "https://127.0.0.1:" + std::to_string(port_); }
  // Requests received after a completed handshake (raw text).
  std::vector<std::string> requests() const;
  int handshakes_failed() const { return handshakes_failed_.load(); }
  int client_certificates() const { return client_certificates_.load(); }

 private:
  void Serve();

  void* ctx_ = nullptr;  // SSL_CTX*
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> handshakes_failed_{0};
  std::atomic<int> client_certificates_{0};
  mutable std::mutex mu_;
  std::vector<std::string> requests_;  // GUARDED_BY(mu_)
  std::thread thread_;
};

}  // namespace routestatus::kubeclient::rest
