#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>

namespace routestatus::apiserver::testing {

// A response from TinyHttpClient.
struct HttpResponse {
  int code = 0;  // 0 = transport failure
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
};

// A minimal blocking HTTP/1.1 client for tests (plain HTTP, one connection
// per request, Content-Length and chunked bodies). Thread-compatible.
class TinyHttpClient {
 public:
  // `keep_alive`: reuse one connection across requests (benchmarks).
  TinyHttpClient(int port, std::string token = "", bool keep_alive = false)
      : port_(port), token_(std::move(token)), keep_alive_(keep_alive) {}
  ~TinyHttpClient();
  TinyHttpClient(const TinyHttpClient&) = delete;
  TinyHttpClient& operator=(const TinyHttpClient&) = delete;
  HttpResponse Request(const std::string& method, const std::string& path,
                       const std::string& body = "",
                       const std::string& content_type = "application/json",
                       const std::map<std::string, std::string>& headers = {}) const;
  HttpResponse Get(const std::string& path) const { return Request("GET", path); }

 private:
  HttpResponse RequestOnce(const std::string& request, bool* reusable) const;

  int port_;
  std::string token_;
  bool keep_alive_ = false;
  mutable int fd_ = -1;  // the kept-alive connection
};

// A streaming GET (a watch): reads the chunked body line by line. Closes the
// connection on destruction. Thread-compatible.
class LineStream {
 public:
  LineStream(int port, const std::string& path, const std::string& token = "",
             const std::map<std::string, std::string>& headers = {});
  ~LineStream();
  LineStream(const LineStream&) = delete;
  LineStream& operator=(const LineStream&) = delete;

  int code() const { return code_; }
  // The response headers (lower-case names).
  const std::map<std::string, std::string>& headers() const { return headers_; }
  // The next line (without '\n'); nullopt at end of stream or after
  // `timeout` without a full line.
  std::optional<std::string> NextLine(std::chrono::milliseconds timeout);
  // True once the server ended the stream (final chunk or close).
  bool ended() const { return ended_; }

 private:
  bool Fill(std::chrono::steady_clock::time_point deadline);
  bool DecodeChunks();

  int fd_ = -1;
  int code_ = 0;
  std::map<std::string, std::string> headers_;
  std::string raw_;      // undecoded bytes
  std::string decoded_;  // body bytes
  bool ended_ = false;
};

}  // namespace routestatus::apiserver::testing
