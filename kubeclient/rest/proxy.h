#pragma once

#include <functional>
#include <string>

#include "base/status.h"

namespace routestatus::kubeclient::rest {

// An HTTP proxy to reach the API server through. Value type.
struct ProxyChoice {
  std::string url;      // "http://host:port" ("" = connect directly)
  std::string user;     // basic credentials from the URL's userinfo, or ""
  std::string password;
  std::string source;   // "proxy-url", "HTTPS_PROXY", ... for logs
};

// Reads one environment variable ("" when unset).
using GetEnvFunc = std::function<std::string(const char* name)>;

// The proxy for `server` as client-go chooses it: the kubeconfig's
// `proxy_url` when set (always used); else Go's http.ProxyFromEnvironment:
// HTTPS_PROXY (or https_proxy) for an https server, HTTP_PROXY (or
// http_proxy) for an http one, unless NO_PROXY (or no_proxy) matches the
// server's host ("*", an IP, a CIDR, "example.com" for it and its
// subdomains, ".example.com" for subdomains only, each with an optional
// :port), and never for localhost or a loopback IP. A proxy URL without a
// scheme is http. Only http:// proxies are supported (HTTP CONNECT for
// https servers); https:// and socks5:// proxies are kInvalid, naming the
// source. Pure.
StatusOr<ProxyChoice> ChooseProxy(const std::string& server, const std::string& proxy_url,
                                  const GetEnvFunc& getenv);

}  // namespace routestatus::kubeclient::rest
