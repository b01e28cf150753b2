#include "apiserver/http_io.h"

#include <cstdio>

#include <civetweb.h>

namespace routestatus::apiserver {

namespace {

std::string Decode(const std::string& in) {
  std::string out(in.size() + 1, '\0');
  int n = mg_url_decode(in.data(), static_cast<int>(in.size()), out.data(),
                        static_cast<int>(out.size()), 1);
  if (n < 0) return in;
  out.resize(static_cast<size_t>(n));
  return out;
}

// Calls f(key, value) for each '&'-separated pair of `qs`, decoded ("" value
// when there is no '=').
template <typename F>
void ForEachQueryPair(const std::string& qs, F f) {
  size_t start = 0;
  while (start < qs.size()) {
    size_t amp = qs.find('&', start);
    if (amp == std::string::npos) amp = qs.size();
    std::string part = qs.substr(start, amp - start);
    size_t eq = part.find('=');
    if (!part.empty()) {
      if (eq == std::string::npos) {
        f(Decode(part), std::string());
      } else {
        f(Decode(part.substr(0, eq)), Decode(part.substr(eq + 1)));
      }
    }
    start = amp + 1;
  }
}

}  // namespace

std::vector<std::string> HttpRequest::QueryValues(const std::string& key) const {
  std::vector<std::string> out;
  ForEachQueryPair(raw_query, [&](const std::string& k, std::string v) {
    if (k == key) out.push_back(std::move(v));
  });
  return out;
}

std::string HttpRequest::Header(const char* name) const {
  const char* v = conn == nullptr ? nullptr : mg_get_header(conn, name);
  return v == nullptr ? "" : v;
}

HttpRequest ReadRequest(mg_connection* conn, size_t max_body) {
  HttpRequest req;
  req.conn = conn;
  const mg_request_info* ri = mg_get_request_info(conn);
  req.method = ri->request_method ? ri->request_method : "";
  req.path = ri->local_uri ? ri->local_uri : "/";
  size_t start = 0;
  while (start < req.path.size()) {
    size_t slash = req.path.find('/', start);
    if (slash == std::string::npos) slash = req.path.size();
    if (slash > start) req.segments.push_back(req.path.substr(start, slash - start));
    start = slash + 1;
  }
  req.raw_query = ri->query_string ? ri->query_string : "";
  ForEachQueryPair(req.raw_query, [&req](std::string key, std::string value) {
    req.query[std::move(key)] = std::move(value);
  });
  char buf[16384];
  while (true) {
    int n = mg_read(conn, buf, sizeof(buf));
    if (n <= 0) break;
    if (req.body.size() + static_cast<size_t>(n) > max_body) {
      req.body_too_large = true;
      continue;  // drain
    }
    req.body.append(buf, static_cast<size_t>(n));
  }
  return req;
}

const char* ReasonPhrase(int code) {
  switch (code) {
    case 200: return "OK";
    case 201: return "Created";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 406: return "Not Acceptable";
    case 409: return "Conflict";
    case 410: return "Gone";
    case 413: return "Request Entity Too Large";
    case 415: return "Unsupported Media Type";
    case 422: return "Unprocessable Entity";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    default: return "Status";
  }
}

void WriteResponse(mg_connection* conn, int code, const std::string& body,
                   const std::string& content_type,
                   const std::vector<std::pair<std::string, std::string>>& headers) {
  std::string head = "HTTP/1.1 " + std::to_string(code) + " " + ReasonPhrase(code) +
                     "\r\nContent-Type: " + content_type +
                     "\r\nCache-Control: no-cache, private\r\nContent-Length: " +
                     std::to_string(body.size()) + "\r\n";
  for (const auto& [k, v] : headers) head += k + ": " + v + "\r\n";
  head += "\r\n";
  if (body.size() < 65536) {
    head += body;
    mg_write(conn, head.data(), head.size());
  } else {
    mg_write(conn, head.data(), head.size());
    mg_write(conn, body.data(), body.size());
  }
}

bool StartChunked(mg_connection* conn, int code, const std::string& content_type,
                  const std::vector<std::pair<std::string, std::string>>& headers) {
  std::string head = "HTTP/1.1 " + std::to_string(code) + " " + ReasonPhrase(code) +
                     "\r\nContent-Type: " + content_type +
                     "\r\nCache-Control: no-cache, private\r\nTransfer-Encoding: chunked\r\n";
  for (const auto& [k, v] : headers) head += k + ": " + v + "\r\n";
  head += "\r\n";
  return mg_write(conn, head.data(), head.size()) > 0;
}

bool WriteChunk(mg_connection* conn, const std::string& data) {
  if (data.empty()) return true;
  // Why: one write per chunk (mg_send_chunk issues three) keeps watch
  // fan-out cheap in system calls.
  char size[32];
  int n = std::snprintf(size, sizeof(size), "%zx\r\n", data.size());
  std::string frame;
  frame.reserve(data.size() + static_cast<size_t>(n) + 2);
  frame.append(size, static_cast<size_t>(n));
  frame += data;
  frame += "\r\n";
  return mg_write(conn, frame.data(), frame.size()) == static_cast<int>(frame.size());
}

void EndChunks(mg_connection* conn) { mg_write(conn, "0\r\n\r\n", 5); }

}  // namespace routestatus::apiserver
