#include "e2e/harness/prom_text.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstdlib>

namespace routestatus::e2e {
namespace {

// Parses `{a="b",c="d"}` starting at text[pos] == '{'; advances pos past '}'.
bool ParseLabels(std::string_view text, size_t* pos, std::map<std::string, std::string>* out) {
  size_t i = *pos + 1;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == ',')) ++i;
    if (i < text.size() && text[i] == '}') {
      *pos = i + 1;
      return true;
    }
    size_t eq = text.find('=', i);
    if (eq == std::string_view::npos || eq + 1 >= text.size() || text[eq + 1] != '"') return false;
    std::string key(text.substr(i, eq - i));
    std::string value;
    size_t j = eq + 2;
    for (; j < text.size() && text[j] != '"'; ++j) {
      if (text[j] == '\\' && j + 1 < text.size()) {
        ++j;
        value += text[j] == 'n' ? '\n' : text[j];
      } else {
        value += text[j];
      }
    }
    if (j >= text.size()) return false;
    (*out)[key] = value;
    i = j + 1;
  }
  return false;
}

}  // namespace

std::vector<PromSample> ParsePromText(std::string_view text) {
  std::vector<PromSample> samples;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    if (line.empty() || line[0] == '#') continue;
    PromSample s;
    size_t i = 0;
    while (i < line.size() && line[i] != '{' && line[i] != ' ') ++i;
    s.name = std::string(line.substr(0, i));
    if (i < line.size() && line[i] == '{') {
      if (!ParseLabels(line, &i, &s.labels)) continue;
    }
    while (i < line.size() && line[i] == ' ') ++i;
    std::string value(line.substr(i));
    size_t sp = value.find(' ');
    if (sp != std::string::npos) value.resize(sp);  // drop a timestamp
    char* endp = nullptr;
    s.value = std::strtod(value.c_str(), &endp);
    if (endp == value.c_str()) continue;
    samples.push_back(std::move(s));
  }
  return samples;
}

double SumSamples(const std::vector<PromSample>& samples, const std::string& name,
                  const std::map<std::string, std::string>& match) {
  double sum = 0;
  for (const auto& s : samples) {
    if (s.name != name) continue;
    bool ok = true;
    for (const auto& [k, v] : match) {
      auto it = s.labels.find(k);
      if (it == s.labels.end() || (!v.empty() && it->second != v)) {
        ok = false;
        break;
      }
    }
    if (ok) sum += s.value;
  }
  return sum;
}

int HttpRequestLocal(const std::string& method, int port, const std::string& path,
                     const std::string& request_body, std::string* body) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  timeval tv{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return 0;
  }
  std::string req = method + " " + path +
                    " HTTP/1.0\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                    "Content-Type: application/json\r\nContent-Length: " +
                    std::to_string(request_body.size()) + "\r\n\r\n" + request_body;
  if (send(fd, req.data(), req.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(req.size())) {
    close(fd);
    return 0;
  }
  std::string resp;
  char buf[65536];
  ssize_t n;
  while ((n = recv(fd, buf, sizeof(buf), 0)) > 0) resp.append(buf, static_cast<size_t>(n));
  close(fd);
  size_t header_end = resp.find("\r\n\r\n");
  size_t sp = resp.find(' ');
  if (header_end == std::string::npos || sp == std::string::npos) return 0;
  if (body) *body = resp.substr(header_end + 4);
  return std::atoi(resp.c_str() + sp + 1);
}

std::string HttpGetLocal(int port, const std::string& path, bool* ok, int* http_code) {
  std::string body;
  int code = HttpRequestLocal("GET", port, path, "", &body);
  if (ok) *ok = code != 0;
  if (http_code) *http_code = code;
  return code != 0 ? body : "";
}

}  // namespace routestatus::e2e
