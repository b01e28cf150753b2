#include "controller/admission.h"

#include <tuple>

#include "controller/hostname_template.h"

namespace routestatus::controller {
namespace {

using kubeclient::Route;

constexpr char kWildcardNone[] = "None";
constexpr char kWildcardSubdomain[] = "Subdomain";

std::string NormalizedPolicy(const Route& route) {
  return route.spec.wildcard_policy.empty() ? kWildcardNone : route.spec.wildcard_policy;
}

bool IsSubdomainPolicy(const Route& route) { return route.spec.wildcard_policy == kWildcardSubdomain; }

constexpr char kHostsInPrefix[] = "hosts-in:";

// Why d by rvalue reference, not by value: callers build the message from
// d's own fields in the same call (`Reject(std::move(d), ..., d.host)`), and
// the order in which arguments are evaluated is unspecified. A by-value d is
// moved from before the message reads it with clang (GCC happens to build the
// message first); binding a reference moves nothing until d is returned.
AdmissionDecision Reject(AdmissionDecision&& d, AdmissionRule rule, const char* reason,
                         std::string message) {
  d.admitted = false;
  d.rule = rule;
  d.reason = reason;
  d.message = std::move(message);
  return std::move(d);
}

}  // namespace

std::string EffectiveHost(const Route& route, const AdmissionOptions& options) {
  std::string host(route.spec.host);
  if (host.empty() && !route.spec.subdomain.empty() && !options.router_domain.empty()) {
    host = std::string(route.spec.subdomain) + "." + options.router_domain;
  }
  if (!options.hostname_template.empty() && (options.override_hostname || host.empty())) {
    if (auto expanded = ExpandHostnameTemplate(options.hostname_template, route.metadata)) {
      host = std::move(*expanded);
    }
  }
  return host;
}

std::string ValidateHost(std::string_view host) {
  if (host.empty()) return "host is empty";
  if (host.size() > 253) {
    return "host is " + std::to_string(host.size()) + " characters long; at most 253 are allowed";
  }
  size_t start = 0;
  while (true) {
    size_t dot = host.find('.', start);
    std::string_view label =
        host.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (label.empty()) return "host has an empty label (a leading, trailing or double dot)";
    if (label.size() > 63) {
      return "label '" + std::string(label) + "' is " + std::to_string(label.size()) +
             " characters long; at most 63 are allowed";
    }
    for (char c : label) {
      bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
      if (!ok) {
        return "label '" + std::string(label) +
               "' may contain only lower-case letters, digits and '-'";
      }
    }
    if (label.front() == '-' || label.back() == '-') {
      return "label '" + std::string(label) + "' must start and end with a letter or digit";
    }
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return "";
}

bool HostInDomain(std::string_view host, std::string_view domain) {
  while (true) {
    if (host == domain) return true;
    size_t dot = host.find('.');
    // Why not a leading dot: openshift-router stops there (".example.com"
    // does not reach "example.com").
    if (dot == std::string_view::npos || dot == 0) return false;
    host.remove_prefix(dot + 1);
  }
}

std::string ClaimDomain(std::string_view host) {
  size_t dot = host.find('.');
  return dot == std::string_view::npos ? "" : std::string(host.substr(dot + 1));
}

std::vector<std::string> HostClaimKeys(const Route& route, const AdmissionOptions& options) {
  std::string host = EffectiveHost(route, options);
  if (host.empty()) return {};
  if (IsSubdomainPolicy(route)) return {"*." + ClaimDomain(host)};
  std::vector<std::string> keys{host};
  // Why only with wildcards allowed: without them no wildcard route takes
  // part in claims, and the extra key would cost an index entry per route.
  if (options.allow_wildcard_routes) keys.push_back(kHostsInPrefix + ClaimDomain(host));
  return keys;
}

std::vector<std::string> HostClaimPeerKeys(const Route& route, const AdmissionOptions& options) {
  std::string host = EffectiveHost(route, options);
  if (host.empty()) return {};
  const std::string domain = ClaimDomain(host);
  if (IsSubdomainPolicy(route)) {
    std::vector<std::string> keys{"*." + domain};
    if (options.allow_wildcard_routes) keys.push_back(kHostsInPrefix + domain);
    return keys;
  }
  std::vector<std::string> keys{host};
  if (options.allow_wildcard_routes) keys.push_back("*." + domain);
  return keys;
}

namespace {

// Where EffectiveHost's answer came from, for messages: "" for spec.host,
// else " (spec.subdomain ...)" or " (from --hostname-template ...)".
std::string HostOrigin(const Route& route, const AdmissionOptions& options) {
  const bool subdomain_host =
      route.spec.host.empty() && !route.spec.subdomain.empty() && !options.router_domain.empty();
  bool from_template = !options.hostname_template.empty() &&
                       (options.override_hostname || (route.spec.host.empty() && !subdomain_host)) &&
                       ExpandHostnameTemplate(options.hostname_template, route.metadata);
  if (from_template) {
    return " (from --hostname-template '" + options.hostname_template + "' of router " +
           options.router_name +
           (options.override_hostname ? "; --override-hostname applies it to every route)" : ")");
  }
  if (route.spec.host.empty()) {
    return " (spec.subdomain '" + route.spec.subdomain + "' + router domain '" +
           options.router_domain + "')";
  }
  return "";
}

// What to change when the effective host is not valid, by where it came from.
std::string HostFix(const Route& route, const AdmissionOptions& options) {
  std::string origin = HostOrigin(route, options);
  if (origin.empty()) return "fix spec.host";
  if (origin.find("--hostname-template") == std::string::npos) return "fix spec.subdomain";
  if (options.override_hostname) {
    return "change the template or rename the route (spec.host is not used with "
           "--override-hostname)";
  }
  return "set spec.host, or shorten the route's name or namespace, or change the template";
}

// When the template has keys openshift-router does not know, it gives no
// host at all: say so in the NoHostValue message.
std::string TemplateNote(const AdmissionOptions& options) {
  std::vector<std::string> unknown = UnknownTemplateKeys(options.hostname_template);
  if (unknown.empty()) return "";
  return " (its --hostname-template '" + options.hostname_template + "' names unknown key '" +
         unknown.front() + "', so it gives no host; use ${name} and ${namespace} only)";
}

// openshift-router's admission function: the domain lists (when there is a
// host), then the wildcard policy. Leaves `d` admitted when they pass.
AdmissionDecision RouterAdmissionFunction(const Route& route, AdmissionDecision&& d,
                                          const AdmissionOptions& options) {
  const std::string who = "route " + route.Key();
  if (!d.host.empty()) {
    for (size_t i = 0; i < options.denied_domains.size(); ++i) {
      const std::string& denied = options.denied_domains[i];
      if (HostInDomain(d.host, denied)) {
        d.denied_domain_index = static_cast<int>(i);
        return Reject(std::move(d), AdmissionRule::kDeniedDomain, kReasonRouteNotAdmitted,
                      who + " has host " + d.host + " in domain " + denied + " that router " +
                          options.router_name + " denies; use another host");
      }
    }
    for (size_t i = 0; i < options.allowed_domains.size() && d.allowed_domain_index < 0; ++i) {
      if (HostInDomain(d.host, options.allowed_domains[i])) {
        d.allowed_domain_index = static_cast<int>(i);
      }
    }
    if (!options.allowed_domains.empty() && d.allowed_domain_index < 0) {
      std::string list;
      for (const auto& domain : options.allowed_domains) list += (list.empty() ? "" : ", ") + domain;
      return Reject(std::move(d), AdmissionRule::kNotInAllowedDomains, kReasonRouteNotAdmitted,
                    who + " has host " + d.host + " outside the domains router " +
                        options.router_name + " allows (" + list + "); use a host in one of them");
    }
  }
  if (d.wildcard_policy != kWildcardNone && d.wildcard_policy != kWildcardSubdomain) {
    return Reject(std::move(d), AdmissionRule::kUnknownWildcardPolicy, kReasonRouteNotAdmitted,
                  who + " has unknown wildcardPolicy '" + d.wildcard_policy +
                      "'; use None or Subdomain");
  }
  if (IsSubdomainPolicy(route) && !options.allow_wildcard_routes) {
    return Reject(std::move(d), AdmissionRule::kWildcardsNotAllowed, kReasonRouteNotAdmitted,
                  who + " asks for wildcardPolicy Subdomain but router " + options.router_name +
                      " does not allow wildcard routes; use wildcardPolicy None or a router "
                      "that allows wildcards");
  }
  d.admitted = true;
  return std::move(d);
}

}  // namespace

AdmissionDecision AdmitAlone(const Route& route, const AdmissionOptions& options) {
  AdmissionDecision d;
  d.host = EffectiveHost(route, options);
  d.wildcard_policy = NormalizedPolicy(route);
  d = RouterAdmissionFunction(route, std::move(d), options);
  d.claims_host = d.admitted;
  const std::string who = "route " + route.Key();
  // Why these two after the admission function and over its rejection: in
  // openshift-router a route it rejects is still handed on as deleted to
  // the unique-host plugin, which records NoHostValue or InvalidHost last.
  if (d.host.empty()) {
    if (!route.spec.subdomain.empty() && options.router_domain.empty()) {
      return Reject(std::move(d), AdmissionRule::kNoHost, kReasonNoHostValue,
                    who + " has spec.subdomain '" + std::string(route.spec.subdomain) +
                        "' but router " + options.router_name +
                        " has no domain for it: set --router-domain on router " +
                        options.router_name + ", or set spec.host");
    }
    return Reject(std::move(d), AdmissionRule::kNoHost, kReasonNoHostValue,
                  who + " has no host: set spec.host or spec.subdomain, or configure a "
                        "hostname template (--hostname-template) for router " +
                      options.router_name + TemplateNote(options));
  }
  if (std::string bad = ValidateHost(d.host); !bad.empty()) {
    d.host_problem = bad;
    return Reject(std::move(d), AdmissionRule::kInvalidHost, kReasonInvalidHost,
                  who + " has host '" + d.host + "'" + HostOrigin(route, options) +
                      " that is not a valid DNS-1123 hostname: " + bad + "; " +
                      HostFix(route, options));
  }
  return d;
}

bool IsOlder(const Route& a, const Route& b) {
  return std::tie(a.metadata.creation_unix, a.metadata.uid) <
         std::tie(b.metadata.creation_unix, b.metadata.uid);
}

const char* AdmissionRuleName(AdmissionRule rule) {
  switch (rule) {
    case AdmissionRule::kAdmitted: return "admitted";
    case AdmissionRule::kNoHost: return "no-host";
    case AdmissionRule::kInvalidHost: return "invalid-host";
    case AdmissionRule::kUnknownWildcardPolicy: return "unknown-wildcard-policy";
    case AdmissionRule::kWildcardsNotAllowed: return "wildcards-not-allowed";
    case AdmissionRule::kDeniedDomain: return "denied-domain";
    case AdmissionRule::kNotInAllowedDomains: return "not-in-allowed-domains";
    case AdmissionRule::kHostOwnedByNamespace: return "host-owned-by-other-namespace";
    case AdmissionRule::kHostAndPathClaimed: return "host-and-path-claimed";
    case AdmissionRule::kHostInsideWildcard: return "host-inside-older-wildcard";
    case AdmissionRule::kWildcardOverHost: return "wildcard-covers-older-host";
    case AdmissionRule::kPassthroughSharesHost: return "passthrough-shares-host";
    case AdmissionRule::kExtendedValidation: return "extended-validation-failed";
  }
  return "unknown";
}

}  // namespace routestatus::controller
