#include "kubeclient/rest/proxy.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <sstream>
#include <vector>

namespace routestatus::kubeclient::rest {
namespace {

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// scheme, host (without brackets) and port ("" when absent) of a URL.
struct UrlParts {
  std::string scheme, userinfo, host, port;
};

bool SplitUrl(const std::string& url, UrlParts* out) {
  size_t sep = url.find("://");
  if (sep == std::string::npos) return false;
  out->scheme = Lower(url.substr(0, sep));
  std::string rest = url.substr(sep + 3);
  rest = rest.substr(0, rest.find_first_of("/?#"));
  size_t at = rest.rfind('@');
  if (at != std::string::npos) {
    out->userinfo = rest.substr(0, at);
    rest = rest.substr(at + 1);
  }
  if (!rest.empty() && rest[0] == '[') {
    size_t close = rest.find(']');
    if (close == std::string::npos) return false;
    out->host = rest.substr(1, close - 1);
    if (close + 1 < rest.size() && rest[close + 1] == ':') out->port = rest.substr(close + 2);
  } else {
    size_t colon = rest.rfind(':');
    out->host = rest.substr(0, colon);
    if (colon != std::string::npos) out->port = rest.substr(colon + 1);
  }
  out->host = Lower(out->host);
  return !out->host.empty();
}

// Parses an IPv4 or IPv6 address into 16 bytes (IPv4 mapped); false if not one.
bool ParseIp(const std::string& text, unsigned char out[16], bool* v4) {
  in_addr a4{};
  if (inet_pton(AF_INET, text.c_str(), &a4) == 1) {
    std::memset(out, 0, 10);
    out[10] = out[11] = 0xff;
    std::memcpy(out + 12, &a4, 4);
    *v4 = true;
    return true;
  }
  in6_addr a6{};
  if (inet_pton(AF_INET6, text.c_str(), &a6) == 1) {
    std::memcpy(out, &a6, 16);
    *v4 = false;
    return true;
  }
  return false;
}

bool IsLoopback(const std::string& host) {
  if (host == "localhost") return true;
  unsigned char ip[16];
  bool v4 = false;
  if (!ParseIp(host, ip, &v4)) return false;
  if (v4) return ip[12] == 127;
  static const unsigned char kOne[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  return std::memcmp(ip, kOne, 16) == 0;
}

// Go's httpproxy.Config.useProxy for NO_PROXY `no_proxy`.
bool Excluded(const std::string& no_proxy, const std::string& host, const std::string& port) {
  unsigned char host_ip[16];
  bool host_v4 = false;
  const bool host_is_ip = ParseIp(host, host_ip, &host_v4);
  std::stringstream list(no_proxy);
  std::string entry;
  while (std::getline(list, entry, ',')) {
    entry.erase(0, entry.find_first_not_of(" \t"));
    entry.erase(entry.find_last_not_of(" \t") + 1);
    entry = Lower(entry);
    if (entry.empty()) continue;
    if (entry == "*") return true;
    size_t slash = entry.find('/');
    if (slash != std::string::npos) {  // CIDR
      unsigned char net[16];
      bool net_v4 = false;
      if (!host_is_ip || !ParseIp(entry.substr(0, slash), net, &net_v4)) continue;
      int bits = std::atoi(entry.c_str() + slash + 1) + (net_v4 ? 96 : 0);
      bool in = true;
      for (int b = 0; b < bits && b < 128 && in; ++b) {
        int mask = 0x80 >> (b % 8);
        in = (net[b / 8] & mask) == (host_ip[b / 8] & mask);
      }
      if (in && net_v4 == host_v4) return true;
      continue;
    }
    std::string ehost = entry, eport;
    unsigned char eip[16];
    bool ev4 = false;
    if (!ParseIp(entry, eip, &ev4)) {
      size_t colon = entry.rfind(':');
      if (colon != std::string::npos && entry.find(':') == colon) {
        ehost = entry.substr(0, colon);
        eport = entry.substr(colon + 1);
      }
    }
    if (!eport.empty() && eport != port) continue;
    if (ParseIp(ehost, eip, &ev4)) {
      if (host_is_ip && std::memcmp(eip, host_ip, 16) == 0) return true;
      continue;
    }
    if (ehost.rfind("*.", 0) == 0) ehost = ehost.substr(1);
    if (ehost[0] == '.') {
      if (host.size() > ehost.size() &&
          host.compare(host.size() - ehost.size(), ehost.size(), ehost) == 0) {
        return true;
      }
    } else if (host == ehost ||
               (host.size() > ehost.size() + 1 &&
                host.compare(host.size() - ehost.size() - 1, ehost.size() + 1, "." + ehost) == 0)) {
      return true;
    }
  }
  return false;
}

std::string FirstSet(const GetEnvFunc& getenv, const char* upper, const char* lower,
                     std::string* source) {
  std::string v = getenv(upper);
  *source = upper;
  if (v.empty()) {
    v = getenv(lower);
    *source = lower;
  }
  return v;
}

}  // namespace

StatusOr<ProxyChoice> ChooseProxy(const std::string& server, const std::string& proxy_url,
                                  const GetEnvFunc& getenv) {
  ProxyChoice choice;
  std::string url = proxy_url;
  choice.source = "proxy-url";
  if (url.empty()) {
    UrlParts target;
    if (!SplitUrl(server, &target)) return choice;
    if (IsLoopback(target.host)) return choice;  // Why: Go never proxies them from the env.
    url = target.scheme == "https" ? FirstSet(getenv, "HTTPS_PROXY", "https_proxy", &choice.source)
                                   : FirstSet(getenv, "HTTP_PROXY", "http_proxy", &choice.source);
    if (url.empty()) return ProxyChoice{};
    std::string no_source;
    std::string no_proxy = FirstSet(getenv, "NO_PROXY", "no_proxy", &no_source);
    std::string port = target.port.empty() ? (target.scheme == "https" ? "443" : "80") : target.port;
    if (Excluded(no_proxy, target.host, port)) return ProxyChoice{};
  }
  if (url.find("://") == std::string::npos) url = "http://" + url;
  UrlParts p;
  if (!SplitUrl(url, &p)) {
    return Status(StatusCode::kInvalid, choice.source + ": \"" + url + "\" is not a proxy URL");
  }
  if (p.scheme != "http") {
    return Status(StatusCode::kInvalid,
                  choice.source + ": " + p.scheme +
                      ":// proxies are not supported (only http:// proxies, with HTTP CONNECT "
                      "for https servers)");
  }
  if (!p.userinfo.empty()) {
    size_t colon = p.userinfo.find(':');
    choice.user = p.userinfo.substr(0, colon);
    if (colon != std::string::npos) choice.password = p.userinfo.substr(colon + 1);
  }
  choice.url = "http://" + (p.host.find(':') != std::string::npos ? "[" + p.host + "]" : p.host) +
               (p.port.empty() ? "" : ":" + p.port);
  return choice;
}

}  // namespace routestatus::kubeclient::rest
