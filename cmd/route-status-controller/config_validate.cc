#include "cmd/route-status-controller/config_validate.h"

#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <tuple>

#include "kubeclient/label_selector.h"
#include "lease/takeover.h"

namespace routestatus::cmd {
namespace {

template <typename T>
void CheckRange(const char* flag, T value, T lo, T hi, std::vector<std::string>& errors) {
  if (value < lo || value > hi) {
    errors.push_back(std::string("--") + flag + " must be between " + std::to_string(lo) +
                     " and " + std::to_string(hi) + " (got " + std::to_string(value) + ")");
  }
}

void CheckPositive(const char* flag, Duration d, std::vector<std::string>& errors) {
  if (d.count() <= 0) {
    errors.push_back(std::string("--") + flag + " must be greater than 0 (got " +
                     FormatDuration(d) + ")");
  }
}

// "" when `text` parses as a Kubernetes label selector, else why not.
std::string SelectorError(const std::string& text) {
  auto parsed = kubeclient::LabelSelector::Parse(text);
  return parsed.ok() ? "" : parsed.status().message();
}

// Why "*.", a leading '.' and upper case are let through: openshift-router
// starts with them (matched literally, they match no valid host);
// controller::AdmissionOptionWarnings tells the operator what to write.
void CheckDomains(const char* flag, const std::vector<std::string>& domains,
                  std::vector<std::string>& errors) {
  for (const std::string& d : domains) {
    std::string v = d.rfind("*.", 0) == 0 ? d.substr(2) : d;
    if (!v.empty() && v.front() == '.') v.erase(0, 1);
    for (char& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (!IsDns1123Subdomain(v)) {
      errors.push_back(std::string("--") + flag + ": \"" + d +
                       "\" is not a DNS domain (letters, digits, '-' and '.')");
    }
  }
}

// True for a dotted IPv4 address (four numbers 0-255; leading zeros
// allowed, as Kubernetes' address parser allows them). An IPv6 address is
// never a DNS name, so it needs no check of its own here.
bool IsIpv4Address(std::string_view s) {
  int parts = 0;
  size_t start = 0;
  while (true) {
    const size_t dot = s.find('.', start);
    const std::string_view part = s.substr(start, dot == std::string_view::npos ? s.npos : dot - start);
    if (part.empty() || part.size() > 3 || part.find_first_not_of("0123456789") != part.npos ||
        std::stoi(std::string(part)) > 255) {
      return false;
    }
    ++parts;
    if (dot == std::string_view::npos) return parts == 4;
    start = dot + 1;
  }
}

}  // namespace

bool IsDns1123Label(std::string_view s) {
  if (s.empty() || s.size() > 63) return false;
  for (char c : s) {
    if (!(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) ||
          c == '-')) {
      return false;
    }
  }
  return s.front() != '-' && s.back() != '-';
}

bool IsDns1123Subdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  size_t start = 0;
  while (true) {
    size_t dot = s.find('.', start);
    std::string_view label = s.substr(start, dot == std::string_view::npos ? s.npos : dot - start);
    if (!IsDns1123Label(label)) return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

std::string RedactUrlCredentials(const std::string& s) {
  std::string out = s;
  size_t pos = 0;
  while ((pos = out.find("://", pos)) != std::string::npos) {
    size_t begin = pos + 3;
    size_t end = out.find_first_of("/?# ,", begin);
    size_t at = out.rfind('@', end == std::string::npos ? out.size() : end);
    if (at != std::string::npos && at >= begin && (end == std::string::npos || at < end)) {
      out.replace(begin, at - begin, "<redacted>");
    }
    pos = begin;
  }
  return out;
}

std::string EscapeForTerminal(std::string_view s) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size());
  auto escape = [&](unsigned char c) {
    out += "\\x";
    out += kHex[c >> 4];
    out += kHex[c & 15];
  };
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      if (c < 0x20 || c == 0x7f) {
        escape(c);
      } else {
        out += static_cast<char>(c);
      }
      ++i;
      continue;
    }
    // Length and smallest code point of the sequence c starts (RFC 3629).
    size_t len = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    bool valid = len > 0 && i + len <= s.size();
    uint32_t cp = len == 2 ? (c & 0x1f) : len == 3 ? (c & 0x0f) : (c & 0x07);
    for (size_t k = 1; valid && k < len; ++k) {
      unsigned char cc = static_cast<unsigned char>(s[i + k]);
      valid = (cc & 0xc0) == 0x80;
      cp = (cp << 6) | (cc & 0x3f);
    }
    // Why: overlong forms, surrogates and code points past U+10FFFF are not UTF-8.
    if (valid && ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
                  (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))) {
      valid = false;
    }
    if (!valid) {
      escape(c);
      ++i;
      continue;
    }
    out.append(s.substr(i, len));
    i += len;
  }
  return out;
}

bool SplitHostPort(const std::string& address, std::string* host, int* port) {
  size_t colon = address.rfind(':');
  if (colon == std::string::npos) return false;
  std::string h = address.substr(0, colon);
  std::string p = address.substr(colon + 1);
  if (!h.empty() && h.front() == '[') {
    if (h.back() != ']') return false;
    h = h.substr(1, h.size() - 2);
  } else if (h.find(':') != std::string::npos) {
    return false;  // IPv6 needs brackets
  }
  if (p.empty() || p.size() > 5 || p.find_first_not_of("0123456789") != std::string::npos) {
    return false;
  }
  int n = std::atoi(p.c_str());
  if (n > 65535) return false;
  *host = h;
  *port = n;
  return true;
}

void ValidateOptions(const Options& o, Command command, bool router_name_set,
                     std::vector<std::string>& errors) {
  if (command == Command::kClear && !router_name_set) {
    errors.push_back("clear: --router-name must be given explicitly (it selects the entries to "
                     "remove from every route)");
  }
  if (!IsDns1123Subdomain(o.router_name)) {
    errors.push_back("--router-name: \"" + o.router_name +
                     "\" is not a valid name (lower-case letters, digits, '-' and '.')");
  }
  if (!o.router_canonical_hostname.empty() && !IsDns1123Subdomain(o.router_canonical_hostname)) {
    errors.push_back("--router-canonical-hostname: \"" + o.router_canonical_hostname +
                     "\" is not a DNS hostname");
  } else if (IsIpv4Address(o.router_canonical_hostname)) {
    // Why: openshift-router refuses to start with one as well.
    errors.push_back("--router-canonical-hostname: \"" + o.router_canonical_hostname +
                     "\" is an IP address; give the router's DNS name");
  }
  if (!o.router_domain.empty() && !IsDns1123Subdomain(o.router_domain)) {
    errors.push_back("--router-domain: \"" + o.router_domain + "\" is not a DNS domain");
  }
  // Why no check of --hostname-template: openshift-router accepts any
  // template (an unknown key gives routes no host, a bad expansion an
  // InvalidHost); controller::AdmissionOptionWarnings says so at start-up.
  if (o.override_hostname && o.hostname_template.empty()) {
    errors.push_back("--override-hostname needs --hostname-template (the template it applies)");
  }
  for (const auto& [flag, value] : {std::pair<const char*, const std::string*>{"route-labels", &o.route_labels},
                                     {"namespace-labels", &o.namespace_labels}}) {
    if (std::string why = SelectorError(*value); !why.empty()) {
      errors.push_back(std::string("--") + flag + ": \"" + *value + "\" is not a label selector: " + why);
    }
  }
  for (const std::string& ns : o.namespaces) {
    if (!IsDns1123Label(ns)) errors.push_back("--namespaces: \"" + ns + "\" is not a namespace name");
  }
  CheckDomains("allowed-domains", o.allowed_domains, errors);
  CheckDomains("denied-domains", o.denied_domains, errors);
  CheckPositive("lease-interval", o.lease_interval, errors);
  CheckPositive("lease-retry-interval", o.lease_retry_interval, errors);
  CheckPositive("contention-interval", o.contention_interval, errors);
  // Why: the interval caps a follower's deferral; a retry or an election
  // delay beyond it was accepted and silently outlasted it.
  if (o.lease_retry_interval > o.lease_interval) {
    errors.push_back("--lease-retry-interval (" + FormatDuration(o.lease_retry_interval) +
                     ") must not exceed --lease-interval (" + FormatDuration(o.lease_interval) + ")");
  }
  if (o.lease_election_delay > o.lease_interval) {
    errors.push_back("--lease-election-delay (" + FormatDuration(o.lease_election_delay) +
                     ") must not exceed --lease-interval (" + FormatDuration(o.lease_interval) + ")");
  }
  if (o.watch_timeout_min < std::chrono::seconds(1)) {
    errors.push_back("--watch-timeout-min must be at least 1s (got " +
                     FormatDuration(o.watch_timeout_min) + "); watches time out in whole seconds");
  }
  CheckPositive("shutdown-timeout", o.shutdown_timeout, errors);
  CheckPositive("router-ready-interval", o.router_ready_interval, errors);
  CheckPositive("router-ready-timeout", o.router_ready_timeout, errors);
  if (!o.router_ready_url.empty() && o.router_ready_url.rfind("http://", 0) != 0 &&
      o.router_ready_url.rfind("https://", 0) != 0) {
    errors.push_back("--router-ready-url: \"" + RedactUrlCredentials(o.router_ready_url) +
                     "\" must start with http:// or https://");
  }
  // Why upper bounds: beyond them a setting means "never" anyway, and
  // deadlines computed from it (several intervals, in nanoseconds) stay far
  // from overflowing.
  using std::chrono::hours;
  for (const auto& [flag, value, limit] : {std::tuple<const char*, Duration, Duration>{
                                               "lease-interval", o.lease_interval, hours(1)},
                                           {"lease-retry-interval", o.lease_retry_interval, hours(1)},
                                           {"lease-election-delay", o.lease_election_delay, hours(1)},
                                           {"contention-interval", o.contention_interval, hours(24)},
                                           {"resync-interval", o.resync_interval, hours(168)},
                                           {"watch-timeout-min", o.watch_timeout_min, hours(24)},
                                           {"watch-timeout-max", o.watch_timeout_max, hours(24)},
                                           {"shutdown-timeout", o.shutdown_timeout, hours(1)},
                                           {"router-ready-interval", o.router_ready_interval, hours(1)},
                                           {"router-ready-timeout", o.router_ready_timeout, hours(1)}}) {
    if (value > limit) {
      errors.push_back(std::string("--") + flag + " must be at most " + FormatDuration(limit) +
                       " (got " + FormatDuration(value) + ")");
    }
  }
  if (o.lease_election_delay.count() < 0) errors.push_back("--lease-election-delay must not be negative");
  if (o.lease_preset != "default" && o.lease_preset != "openshift") {
    errors.push_back("--lease-preset: \"" + o.lease_preset + "\" is not one of default, openshift");
  }
  if (!lease::ParseTakeoverMode(o.lease_takeover)) {
    errors.push_back("--lease-takeover: \"" + o.lease_takeover +
                     "\" is not one of progress, off");
  }
  if (!lease::LeaseRulesOff(lease::LeaseRules{}, o.lease_rules_off)) {
    errors.push_back("--lease-rules-off: \"" + o.lease_rules_off + "\" names an unknown rule");
  }
  if (o.resync_interval.count() < 0) errors.push_back("--resync-interval must not be negative");
  if (o.watch_timeout_max < o.watch_timeout_min) {
    errors.push_back("--watch-timeout-max (" + FormatDuration(o.watch_timeout_max) +
                     ") must not be less than --watch-timeout-min (" +
                     FormatDuration(o.watch_timeout_min) + ")");
  }
  CheckRange("contention-limit", o.contention_limit, 0, 1000000, errors);
  CheckRange("list-page-size", o.list_page_size, 1, 100000, errors);
  CheckRange("workers", o.workers, 1, 256, errors);
  CheckRange("burst", o.burst, 1, 100000, errors);
  CheckRange("v", o.verbosity, 0, 10, errors);
  // Why at least 0.1: below one request per 10 s the first list and watch
  // take minutes and a backlog of writes hours (1e-9 never became ready).
  if (!(o.qps >= 0.1) || o.qps > 100000) {
    std::ostringstream got;
    got << o.qps;
    errors.push_back("--qps must be at least 0.1 and at most 100000 (got " + got.str() + ")");
  }
  std::string host;
  int port = 0;
  if (!SplitHostPort(o.metrics_address, &host, &port)) {
    errors.push_back("--metrics-address: \"" + o.metrics_address +
                     "\" is not host:port (e.g. 0.0.0.0:1936, [::]:1936, 127.0.0.1:0)");
  }
  if (o.log_level != "info" && o.log_level != "warning" && o.log_level != "error") {
    errors.push_back("--log-level: \"" + o.log_level + "\" is not one of info, warning, error");
  }
  if (!o.server.empty() && o.server.rfind("https://", 0) != 0 && o.server.rfind("http://", 0) != 0) {
    errors.push_back("--server: \"" + RedactUrlCredentials(o.server) +
                     "\" must start with https:// or http://");
  }
}

}  // namespace routestatus::cmd
