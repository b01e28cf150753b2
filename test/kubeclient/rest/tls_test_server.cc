#include "test/kubeclient/rest/tls_test_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <glog/logging.h>

namespace routestatus::kubeclient::rest {
namespace {

X509* ReadCert(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  return cert;
}

}  // namespace

TlsTestServer::TlsTestServer(const std::string& cert_pem, const std::string& key_pem,
                             const std::string& client_ca_pem) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  X509* cert = ReadCert(cert_pem);
  CHECK(cert != nullptr && SSL_CTX_use_certificate(ctx, cert) == 1);
  X509_free(cert);
  BIO* bio = BIO_new_mem_buf(key_pem.data(), static_cast<int>(key_pem.size()));
  EVP_PKEY* key = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  CHECK(key != nullptr && SSL_CTX_use_PrivateKey(ctx, key) == 1);
  EVP_PKEY_free(key);
  if (!client_ca_pem.empty()) {
    X509* ca = ReadCert(client_ca_pem);
    CHECK(ca != nullptr);
    X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx), ca);
    X509_free(ca);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
    // Why: the test certificates are for servers (extendedKeyUsage
    // serverAuth); accept one as a client certificate all the same.
    X509_VERIFY_PARAM_set_purpose(SSL_CTX_get0_param(ctx), X509_PURPOSE_ANY);
  }
  ctx_ = ctx;
  listen_fd_ = socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  CHECK(bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  CHECK(listen(listen_fd_, 16) == 0);
  socklen_t len = sizeof(addr);
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  thread_ = std::thread([this] { Serve(); });
}

TlsTestServer::~TlsTestServer() {
  stop_ = true;
  thread_.join();
  close(listen_fd_);
  SSL_CTX_free(static_cast<SSL_CTX*>(ctx_));
}

std::vector<std::string> TlsTestServer::requests() const {
  std::lock_guard<std::mutex> l(mu_);
  return requests_;
}

void TlsTestServer::Serve() {
  while (!stop_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (poll(&p, 1, 50) <= 0) continue;
    int fd = accept(listen_fd_, nullptr, nullptr);
    if (fd < 0) continue;
    timeval tv{2, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    SSL* ssl = SSL_new(static_cast<SSL_CTX*>(ctx_));
    SSL_set_fd(ssl, fd);
    if (SSL_accept(ssl) != 1) {
      ++handshakes_failed_;
      ERR_clear_error();
    } else {
      if (X509* peer = SSL_get1_peer_certificate(ssl)) {
        ++client_certificates_;
        X509_free(peer);
      }
      std::string request;
      char buf[4096];
      while (request.find("\r\n\r\n") == std::string::npos) {
        int n = SSL_read(ssl, buf, sizeof(buf));
        if (n <= 0) break;
        request.append(buf, static_cast<size_t>(n));
      }
      if (!request.empty()) {
        {
          std::lock_guard<std::mutex> l(mu_);
          requests_.push_back(request);
        }
        const char kResponse[] =
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n"
            "Connection: close\r\n\r\n{}";
        SSL_write(ssl, kResponse, sizeof(kResponse) - 1);
      }
      SSL_shutdown(ssl);
    }
    SSL_free(ssl);
    close(fd);
  }
}

}  // namespace routestatus::kubeclient::rest
