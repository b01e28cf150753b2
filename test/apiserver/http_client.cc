#include "test/apiserver/http_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>

namespace routestatus::apiserver::testing {

namespace {

int Connect(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

bool SendAll(int fd, const std::string& data) {
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(tolower(static_cast<unsigned char>(c)));
  return s;
}

// Parses the status line and headers from `raw`; returns the header length
// (0 if incomplete).
size_t ParseHead(const std::string& raw, int* code, std::map<std::string, std::string>* headers) {
  size_t end = raw.find("\r\n\r\n");
  if (end == std::string::npos) return 0;
  size_t sp = raw.find(' ');
  *code = std::atoi(raw.c_str() + sp + 1);
  size_t pos = raw.find("\r\n") + 2;
  while (pos < end) {
    size_t eol = raw.find("\r\n", pos);
    std::string line = raw.substr(pos, eol - pos);
    size_t colon = line.find(':');
    if (colon != std::string::npos) {
      std::string v = line.substr(colon + 1);
      while (!v.empty() && v[0] == ' ') v.erase(0, 1);
      (*headers)[Lower(line.substr(0, colon))] = v;
    }
    pos = eol + 2;
  }
  return end + 4;
}

// Decodes as many complete chunks of `in` as possible into `out`; sets
// *done at the final chunk. Returns false on malformed framing.
bool DecodeChunked(std::string* in, std::string* out, bool* done) {
  while (true) {
    size_t eol = in->find("\r\n");
    if (eol == std::string::npos) return true;
    size_t len = std::strtoul(in->substr(0, eol).c_str(), nullptr, 16);
    if (len == 0) {
      if (in->size() < eol + 4) return true;
      *done = true;
      in->erase(0, eol + 4);
      return true;
    }
    if (in->size() < eol + 2 + len + 2) return true;
    out->append(*in, eol + 2, len);
    in->erase(0, eol + 2 + len + 2);
  }
}

}  // namespace

TinyHttpClient::~TinyHttpClient() {
  if (fd_ >= 0) close(fd_);
}

HttpResponse TinyHttpClient::Request(const std::string& method, const std::string& path,
                                     const std::string& body, const std::string& content_type,
                                     const std::map<std::string, std::string>& headers) const {
  std::string req = method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  if (!keep_alive_) req += "Connection: close\r\n";
  if (!token_.empty()) req += "Authorization: Bearer " + token_ + "\r\n";
  for (const auto& [k, v] : headers) req += k + ": " + v + "\r\n";
  if (!body.empty() || method == "POST" || method == "PUT" || method == "PATCH") {
    req += "Content-Type: " + content_type + "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
  }
  req += "\r\n" + body;
  bool reusable = false;
  bool reused = fd_ >= 0;
  HttpResponse resp = RequestOnce(req, &reusable);
  if (resp.code == 0 && reused) resp = RequestOnce(req, &reusable);  // stale keep-alive
  if (!reusable && fd_ >= 0) {
    close(fd_);
    fd_ = -1;
  }
  return resp;
}

HttpResponse TinyHttpClient::RequestOnce(const std::string& req, bool* reusable) const {
  HttpResponse resp;
  *reusable = false;
  if (fd_ < 0) fd_ = Connect(port_);
  if (fd_ < 0) return resp;
  if (!SendAll(fd_, req)) {
    close(fd_);
    fd_ = -1;
    return resp;
  }
  std::string raw;
  char buf[65536];
  size_t head = 0;
  bool complete = false;
  while (!complete) {
    ssize_t n = recv(fd_, buf, sizeof(buf), 0);
    if (n <= 0) break;
    raw.append(buf, static_cast<size_t>(n));
    if (head == 0) {
      resp.headers.clear();
      head = ParseHead(raw, &resp.code, &resp.headers);
      if (head == 0) continue;
    }
    if (resp.headers.count("content-length")) {
      complete = raw.size() >= head + std::strtoul(resp.headers["content-length"].c_str(), nullptr, 10);
    } else if (resp.headers["transfer-encoding"] == "chunked") {
      complete = raw.size() >= 5 && raw.compare(raw.size() - 5, 5, "0\r\n\r\n") == 0;
    }
  }
  if (head == 0) {
    resp.code = 0;
    return resp;
  }
  std::string rest = raw.substr(head);
  if (resp.headers["transfer-encoding"] == "chunked") {
    bool done = false;
    DecodeChunked(&rest, &resp.body, &done);
  } else {
    resp.body = rest;
  }
  *reusable = complete && keep_alive_ && resp.headers["connection"] != "close";
  return resp;
}

LineStream::LineStream(int port, const std::string& path, const std::string& token,
                       const std::map<std::string, std::string>& headers) {
  fd_ = Connect(port);
  if (fd_ < 0) {
    ended_ = true;
    return;
  }
  std::string req = "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  if (!token.empty()) req += "Authorization: Bearer " + token + "\r\n";
  for (const auto& [name, value] : headers) req += name + ": " + value + "\r\n";
  req += "\r\n";
  SendAll(fd_, req);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (code_ == 0 && Fill(deadline)) {
    size_t head = ParseHead(raw_, &code_, &headers_);
    if (head > 0) {
      raw_.erase(0, head);
      if (headers_["transfer-encoding"] != "chunked") {
        decoded_ = raw_;
        raw_.clear();
      }
      DecodeChunks();
      break;
    }
  }
}

LineStream::~LineStream() {
  if (fd_ >= 0) close(fd_);
}

bool LineStream::Fill(std::chrono::steady_clock::time_point deadline) {
  if (fd_ < 0) return false;
  auto now = std::chrono::steady_clock::now();
  if (now >= deadline) return false;
  pollfd pfd{fd_, POLLIN, 0};
  int ms = static_cast<int>(
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count());
  if (poll(&pfd, 1, ms) <= 0) return false;
  char buf[65536];
  ssize_t n = recv(fd_, buf, sizeof(buf), 0);
  if (n <= 0) {
    ended_ = true;
    close(fd_);
    fd_ = -1;
    return false;
  }
  raw_.append(buf, static_cast<size_t>(n));
  return true;
}

bool LineStream::DecodeChunks() {
  bool done = false;
  bool ok = DecodeChunked(&raw_, &decoded_, &done);
  if (done) ended_ = true;
  return ok;
}

std::optional<std::string> LineStream::NextLine(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    size_t eol = decoded_.find('\n');
    if (eol != std::string::npos) {
      std::string line = decoded_.substr(0, eol);
      decoded_.erase(0, eol + 1);
      return line;
    }
    if (ended_ || !Fill(deadline)) return std::nullopt;
    DecodeChunks();
  }
}

}  // namespace routestatus::apiserver::testing
