#include "e2e/harness/raw_get.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "kubeclient/kube_client.h"

namespace routestatus::e2e {


namespace {

Status Fail(const std::string& what) {
  unsigned long e = ERR_get_error();
  std::string detail;
  if (e != 0) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof(buf));
    detail = std::string(": ") + buf;
  }
  ERR_clear_error();
  return Status(StatusCode::kUnavailable, "raw GET: " + what + detail);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Adds every certificate of a PEM bundle to the context's trust store.
bool AddCaPem(SSL_CTX* ctx, const std::string& pem) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())),
                                                &BIO_free);
  X509_STORE* store = SSL_CTX_get_cert_store(ctx);
  int added = 0;
  while (X509* cert = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    if (X509_STORE_add_cert(store, cert) == 1) ++added;
    X509_free(cert);
  }
  ERR_clear_error();  // the end of the bundle reads as an error
  return added > 0;
}

int Connect(const std::string& host, const std::string& port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (getaddrinfo(host.c_str(), port.c_str(), &hints, &res) != 0) return -1;
  int fd = -1;
  for (addrinfo* a = res; a != nullptr; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    timeval tv{20, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    if (connect(fd, a->ai_addr, a->ai_addrlen) == 0) break;
    close(fd);
    fd = -1;
  }
  freeaddrinfo(res);
  return fd;
}

}  // namespace

StatusOr<std::string> RawGet(const kubeclient::rest::RestConfig& config, const std::string& path) {
  // scheme://host[:port][/prefix]
  std::string url = config.server;
  size_t scheme_end = url.find("://");
  if (scheme_end == std::string::npos) return Status(StatusCode::kInvalid, "bad server URL " + url);
  const bool tls = url.substr(0, scheme_end) == "https";
  std::string rest = url.substr(scheme_end + 3);
  std::string prefix;
  if (size_t slash = rest.find('/'); slash != std::string::npos) {
    prefix = rest.substr(slash);
    rest = rest.substr(0, slash);
    while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  }
  std::string host = rest, port = tls ? "443" : "80";
  if (!rest.empty() && rest[0] == '[') {  // [v6]:port
    size_t close_bracket = rest.find(']');
    host = rest.substr(1, close_bracket - 1);
    if (close_bracket + 1 < rest.size() && rest[close_bracket + 1] == ':') port = rest.substr(close_bracket + 2);
  } else if (size_t colon = rest.rfind(':'); colon != std::string::npos) {
    host = rest.substr(0, colon);
    port = rest.substr(colon + 1);
  }
  std::string token = config.token;
  if (token.empty() && !config.token_file.empty()) {
    token = ReadFile(config.token_file);
    while (!token.empty() && (token.back() == '\n' || token.back() == '\r')) token.pop_back();
  }
  std::string request = "GET " + prefix + path + " HTTP/1.0\r\nHost: " + rest +
                        "\r\nAccept: text/plain\r\nUser-Agent: routestatus-e2e\r\n";
  if (!token.empty()) request += "Authorization: Bearer " + token + "\r\n";
  request += "\r\n";

  int fd = Connect(host, port);
  if (fd < 0) return Status(StatusCode::kUnavailable, "raw GET: cannot connect to " + rest);
  std::string response;
  if (!tls) {
    send(fd, request.data(), request.size(), MSG_NOSIGNAL);
    char buf[65536];
    ssize_t n;
    while ((n = recv(fd, buf, sizeof(buf), 0)) > 0) response.append(buf, static_cast<size_t>(n));
    close(fd);
  } else {
    std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx(SSL_CTX_new(TLS_client_method()), &SSL_CTX_free);
    if (!ctx) {
      close(fd);
      return Fail("SSL_CTX_new");
    }
    if (config.insecure_skip_tls_verify) {
      SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_NONE, nullptr);
    } else {
      SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr);
      bool ca_ok = true;
      if (!config.ca_data.empty()) {
        ca_ok = AddCaPem(ctx.get(), config.ca_data);
      } else if (!config.ca_file.empty()) {
        ca_ok = SSL_CTX_load_verify_locations(ctx.get(), config.ca_file.c_str(), nullptr) == 1;
      } else {
        SSL_CTX_set_default_verify_paths(ctx.get());
      }
      if (!ca_ok) {
        close(fd);
        return Fail("cannot load the CA");
      }
    }
    std::string cert = config.client_cert_data.empty() && !config.client_cert_file.empty()
                           ? ReadFile(config.client_cert_file)
                           : config.client_cert_data;
    std::string key = config.client_key_data.empty() && !config.client_key_file.empty()
                          ? ReadFile(config.client_key_file)
                          : config.client_key_data;
    if (!cert.empty() && !key.empty()) {
      std::unique_ptr<BIO, decltype(&BIO_free)> cb(BIO_new_mem_buf(cert.data(), static_cast<int>(cert.size())),
                                                   &BIO_free);
      std::unique_ptr<BIO, decltype(&BIO_free)> kb(BIO_new_mem_buf(key.data(), static_cast<int>(key.size())),
                                                   &BIO_free);
      X509* x = PEM_read_bio_X509(cb.get(), nullptr, nullptr, nullptr);
      EVP_PKEY* k = PEM_read_bio_PrivateKey(kb.get(), nullptr, nullptr, nullptr);
      bool ok = x != nullptr && k != nullptr && SSL_CTX_use_certificate(ctx.get(), x) == 1 &&
                SSL_CTX_use_PrivateKey(ctx.get(), k) == 1;
      if (x) X509_free(x);
      if (k) EVP_PKEY_free(k);
      if (!ok) {
        close(fd);
        return Fail("cannot use the client certificate/key");
      }
    }
    std::unique_ptr<SSL, decltype(&SSL_free)> ssl(SSL_new(ctx.get()), &SSL_free);
    SSL_set_fd(ssl.get(), fd);
    in6_addr ip6;
    in_addr ip4;
    bool is_ip = inet_pton(AF_INET, host.c_str(), &ip4) == 1 || inet_pton(AF_INET6, host.c_str(), &ip6) == 1;
    if (!is_ip) SSL_set_tlsext_host_name(ssl.get(), host.c_str());
    if (!config.insecure_skip_tls_verify) {
      X509_VERIFY_PARAM* param = SSL_get0_param(ssl.get());
      if (is_ip) {
        X509_VERIFY_PARAM_set1_ip_asc(param, host.c_str());
      } else {
        X509_VERIFY_PARAM_set1_host(param, host.c_str(), 0);
      }
    }
    if (SSL_connect(ssl.get()) != 1) {
      close(fd);
      return Fail("TLS handshake with " + rest);
    }
    SSL_write(ssl.get(), request.data(), static_cast<int>(request.size()));
    char buf[65536];
    int n;
    while ((n = SSL_read(ssl.get(), buf, sizeof(buf))) > 0) response.append(buf, static_cast<size_t>(n));
    SSL_shutdown(ssl.get());
    close(fd);
  }
  size_t header_end = response.find("\r\n\r\n");
  size_t sp = response.find(' ');
  if (header_end == std::string::npos || sp == std::string::npos) {
    return Status(StatusCode::kUnavailable, "raw GET " + path + ": no HTTP response");
  }
  int code = std::atoi(response.c_str() + sp + 1);
  std::string body = response.substr(header_end + 4);
  if (code != 200) return kubeclient::StatusFromResponse(code, body);
  return body;
}

}  // namespace routestatus::e2e
