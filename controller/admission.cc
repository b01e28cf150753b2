#include "controller/admission.h"

#include <tuple>

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

// "example.com" for "www.example.com" or "*.example.com"; "" when the host
// has a single label. Like OpenShift's GetDomainForHost: drops one label.
std::string ParentDomain(const std::string& host) {
  if (host.rfind("*.", 0) == 0) return host.substr(2);  // already wildcard syntax
  size_t dot = host.find('.');
  if (dot == std::string::npos || dot + 1 >= host.size()) return "";
  return host.substr(dot + 1);
}

// "*.example.com" for "www.example.com" or "*.example.com"; "" when the host
// has a single label.
std::string WildcardKey(const std::string& host) {
  std::string parent = ParentDomain(host);
  return parent.empty() ? "" : "*." + parent;
}

// True when `route` claims a subdomain (wildcardPolicy Subdomain and a host
// with a parent domain); its claim key is then WildcardKey(host).
bool ClaimsSubdomain(const Route& route, const std::string& host) {
  return IsSubdomainPolicy(route) && !WildcardKey(host).empty();
}

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

std::string HostAndPath(const std::string& host, const std::string& path) {
  return path.empty() ? host : host + path;
}

}  // namespace

std::string ExpandHostnameTemplate(std::string_view tmpl, const kubeclient::ObjectMeta& meta) {
  std::string out;
  out.reserve(tmpl.size() + meta.name.size() + meta.namespace_name.size());
  for (size_t i = 0; i < tmpl.size();) {
    if (tmpl.compare(i, 7, "${name}") == 0) {
      out += meta.name;
      i += 7;
    } else if (tmpl.compare(i, 12, "${namespace}") == 0) {
      out += meta.namespace_name;
      i += 12;
    } else {
      out += tmpl[i++];
    }
  }
  return out;
}

std::string EffectiveHost(const Route& route, const AdmissionOptions& options) {
  if (options.override_hostname && !options.hostname_template.empty()) {
    return ExpandHostnameTemplate(options.hostname_template, route.metadata);
  }
  if (!route.spec.host.empty()) return route.spec.host;
  if (!route.spec.subdomain.empty() && !options.router_domain.empty()) {
    return route.spec.subdomain + "." + options.router_domain;
  }
  if (!options.hostname_template.empty()) {
    return ExpandHostnameTemplate(options.hostname_template, route.metadata);
  }
  return "";
}

std::string ValidateDns1123Subdomain(std::string_view host, bool allow_wildcard_prefix) {
  if (host.empty()) return "host is empty";
  if (host.size() > 253) {
    return "host is " + std::to_string(host.size()) + " characters long; at most 253 are allowed";
  }
  std::string_view rest = host;
  if (allow_wildcard_prefix && rest.substr(0, 2) == "*.") rest.remove_prefix(2);
  size_t start = 0;
  while (true) {
    size_t dot = rest.find('.', start);
    std::string_view label =
        rest.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
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
  bool subdomains_only = false;
  if (domain.substr(0, 2) == "*.") {
    domain.remove_prefix(2);
    subdomains_only = true;
  }
  if (domain.empty()) return false;
  if (host.substr(0, 2) == "*.") host.remove_prefix(2);  // a wildcard host is in its domain
  if (!subdomains_only && host == domain) return true;
  return host.size() > domain.size() + 1 && host.substr(host.size() - domain.size()) == domain &&
         host[host.size() - domain.size() - 1] == '.';
}

std::vector<std::string> HostClaimKeys(const Route& route, const AdmissionOptions& options) {
  std::string host = EffectiveHost(route, options);
  if (host.empty()) return {};
  if (ClaimsSubdomain(route, host)) return {WildcardKey(host)};
  std::vector<std::string> keys{host};
  // Why only with wildcards allowed: without them no wildcard route is
  // admitted, and the extra key would cost an index entry per route.
  std::string parent = ParentDomain(host);
  if (options.allow_wildcard_routes && !parent.empty()) keys.push_back(kHostsInPrefix + parent);
  return keys;
}

std::vector<std::string> HostClaimPeerKeys(const Route& route, const AdmissionOptions& options) {
  std::string host = EffectiveHost(route, options);
  if (host.empty()) return {};
  std::string parent = ParentDomain(host);
  if (ClaimsSubdomain(route, host)) {
    std::vector<std::string> keys{"*." + parent};
    if (options.allow_wildcard_routes) keys.push_back(kHostsInPrefix + parent);
    return keys;
  }
  std::vector<std::string> keys{host};
  if (options.allow_wildcard_routes && !parent.empty()) keys.push_back("*." + parent);
  return keys;
}

namespace {

// Where EffectiveHost's answer came from, for messages: "" for spec.host,
// else " (spec.subdomain ...)" or " (from --hostname-template ...)".
std::string HostOrigin(const Route& route, const AdmissionOptions& options) {
  bool from_template = (options.override_hostname || route.spec.host.empty()) &&
                       !options.hostname_template.empty() &&
                       (options.override_hostname || route.spec.subdomain.empty() ||
                        options.router_domain.empty());
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

}  // namespace

AdmissionDecision AdmitAlone(const Route& route, const AdmissionOptions& options) {
  AdmissionDecision d;
  d.host = EffectiveHost(route, options);
  d.wildcard_policy = NormalizedPolicy(route);
  const std::string who = "route " + route.Key();
  if (d.host.empty()) {
    if (!route.spec.subdomain.empty()) {
      return Reject(std::move(d), AdmissionRule::kNoHost, kReasonNoHostValue,
                    who + " has spec.subdomain '" + route.spec.subdomain + "' but router " +
                        options.router_name + " has no domain for it: set --router-domain on router " +
                        options.router_name + ", or set spec.host");
    }
    return Reject(std::move(d), AdmissionRule::kNoHost, kReasonNoHostValue,
                  who + " has no host: set spec.host or spec.subdomain, or configure a "
                        "hostname template (--hostname-template) for router " + options.router_name);
  }
  bool wildcard = IsSubdomainPolicy(route);
  std::string bad = ValidateDns1123Subdomain(d.host, wildcard);
  if (!bad.empty()) {
    d.host_problem = bad;
    return Reject(std::move(d), AdmissionRule::kInvalidHost, kReasonInvalidHost,
                  who + " has host '" + d.host + "'" + HostOrigin(route, options) +
                      " that is not a valid DNS-1123 subdomain: " + bad + "; " +
                      HostFix(route, options));
  }
  if (d.wildcard_policy != kWildcardNone && d.wildcard_policy != kWildcardSubdomain) {
    return Reject(std::move(d), AdmissionRule::kUnknownWildcardPolicy, kReasonRouteNotAdmitted,
                  who + " has unknown wildcardPolicy '" + d.wildcard_policy +
                      "'; use None or Subdomain");
  }
  if (wildcard && !options.allow_wildcard_routes) {
    return Reject(std::move(d), AdmissionRule::kWildcardsNotAllowed, kReasonRouteNotAdmitted,
                  who + " asks for wildcardPolicy Subdomain but router " + options.router_name +
                      " does not allow wildcard routes; use wildcardPolicy None or a router "
                      "that allows wildcards");
  }
  if (wildcard && WildcardKey(d.host).empty()) {
    d.host_problem = "a wildcard host needs a parent domain (at least two labels)";
    return Reject(std::move(d), AdmissionRule::kWildcardWithoutParent, kReasonInvalidHost,
                  who + " has wildcard host '" + d.host +
                      "' without a parent domain; use a host with at least two labels");
  }
  for (size_t i = 0; i < options.denied_domains.size(); ++i) {
    const std::string& denied = options.denied_domains[i];
    if (HostInDomain(d.host, denied)) {
      d.denied_domain_index = static_cast<int>(i);
      return Reject(std::move(d), AdmissionRule::kDeniedDomain, kReasonRouteNotAdmitted,
                    who + " has host " + d.host + " in domain " + denied +
                        " that router " + options.router_name + " denies; use another host");
    }
  }
  if (!options.allowed_domains.empty()) {
    for (size_t i = 0; i < options.allowed_domains.size() && d.allowed_domain_index < 0; ++i) {
      if (HostInDomain(d.host, options.allowed_domains[i])) d.allowed_domain_index = static_cast<int>(i);
    }
    if (d.allowed_domain_index < 0) {
      std::string list;
      for (const auto& domain : options.allowed_domains) list += (list.empty() ? "" : ", ") + domain;
      return Reject(std::move(d), AdmissionRule::kNotInAllowedDomains, kReasonRouteNotAdmitted,
                    who + " has host " + d.host + " outside the domains router " +
                        options.router_name + " allows (" + list + "); use a host in one of them");
    }
  }
  d.admitted = true;
  return d;
}

bool IsOlder(const Route& a, const Route& b) {
  return std::tie(a.metadata.creation_unix, a.metadata.uid) <
         std::tie(b.metadata.creation_unix, b.metadata.uid);
}

AdmissionDecision Admit(const Route& route,
                        const std::vector<std::shared_ptr<const Route>>& peers,
                        const AdmissionOptions& options) {
  AdmissionDecision d = AdmitAlone(route, options);
  if (!d.admitted) return d;
  const bool ownership = !options.disable_namespace_ownership_check;
  const bool wildcard = ClaimsSubdomain(route, d.host);
  const std::string parent = ParentDomain(d.host);
  const std::string claimed = wildcard ? "*." + parent : d.host;
  // Why pointers to the peers' shared_ptrs: the blocker is handed out in
  // the decision (explain) without copying a shared_ptr per peer.
  using PeerRef = const std::shared_ptr<const Route>*;
  PeerRef owner = nullptr;      // oldest older same-kind claimant, any path
  PeerRef same_path = nullptr;  // oldest older same-kind claimant with our path
  PeerRef cross = nullptr;      // oldest older other-kind claimant in another namespace
  for (const auto& peer : peers) {
    if (!peer || peer->metadata.uid == route.metadata.uid) continue;
    if (!IsOlder(*peer, route)) continue;
    AdmissionDecision pd = AdmitAlone(*peer, options);
    if (!pd.admitted) continue;
    const bool peer_wildcard = ClaimsSubdomain(*peer, pd.host);
    if (peer_wildcard == wildcard) {
      if ((wildcard ? ParentDomain(pd.host) : pd.host) != (wildcard ? parent : d.host)) continue;
      if (!owner || IsOlder(*peer, **owner)) owner = &peer;
      if (peer->spec.path == route.spec.path && (!same_path || IsOlder(*peer, **same_path))) {
        same_path = &peer;
      }
    } else {
      // One plain, one wildcard: they overlap when the plain host is one
      // label below the wildcard's domain; only namespaces matter, not paths.
      if (ParentDomain(pd.host) != parent) continue;
      if (!ownership || peer->metadata.namespace_name == route.metadata.namespace_name) continue;
      if (!cross || IsOlder(*peer, **cross)) cross = &peer;
    }
  }
  const PeerRef by_owner =
      ownership && owner && (*owner)->metadata.namespace_name != route.metadata.namespace_name
          ? owner
          : nullptr;
  // Why the oldest blocker: it is the claim that stays when the others go.
  PeerRef blocker = by_owner;
  for (PeerRef r : {same_path, cross}) {
    if (r && (!blocker || IsOlder(**r, **blocker))) blocker = r;
  }
  if (blocker == nullptr) return d;
  d.blocker = *blocker;
  const std::string& ns = (*blocker)->metadata.namespace_name;
  const std::string blocker_key = (*blocker)->Key();
  if (blocker == by_owner) {
    return Reject(std::move(d), AdmissionRule::kHostOwnedByNamespace, kReasonHostAlreadyClaimed,
                  std::string(wildcard ? "wildcard " : "") + "route " + blocker_key +
                      " already exposes " + claimed + " and is older; namespace " + ns +
                      " owns this host, so use another host or move route " + route.Key() +
                      " into that namespace");
  }
  if (blocker == same_path) {
    return Reject(std::move(d), AdmissionRule::kHostAndPathClaimed, kReasonHostAlreadyClaimed,
                  std::string(wildcard ? "wildcard " : "") + "route " + blocker_key +
                      " already exposes " + HostAndPath(claimed, route.spec.path) +
                      " and is older; use another host or path for route " + route.Key());
  }
  if (wildcard) {
    return Reject(std::move(d), AdmissionRule::kWildcardOverHost, kReasonHostAlreadyClaimed,
                  "route " + blocker_key + " already exposes " +
                      EffectiveHost(**blocker, options) + ", which is inside " + claimed +
                      ", and is older; namespace " + ns +
                      " owns that host, so wildcard route " + route.Key() + " cannot claim " +
                      claimed + ": use a host in another domain, wildcardPolicy None, or move " +
                      "route " + route.Key() + " into namespace " + ns);
  }
  return Reject(std::move(d), AdmissionRule::kHostInsideWildcard, kReasonHostAlreadyClaimed,
                "wildcard route " + blocker_key + " already claims *." + parent +
                    ", which covers " + d.host + ", and is older; namespace " + ns +
                    " owns that subdomain, so use a host outside *." + parent +
                    " or move route " + route.Key() + " into namespace " + ns);
}

const char* AdmissionRuleName(AdmissionRule rule) {
  switch (rule) {
    case AdmissionRule::kAdmitted: return "admitted";
    case AdmissionRule::kNoHost: return "no-host";
    case AdmissionRule::kInvalidHost: return "invalid-host";
    case AdmissionRule::kUnknownWildcardPolicy: return "unknown-wildcard-policy";
    case AdmissionRule::kWildcardsNotAllowed: return "wildcards-not-allowed";
    case AdmissionRule::kWildcardWithoutParent: return "wildcard-without-parent-domain";
    case AdmissionRule::kDeniedDomain: return "denied-domain";
    case AdmissionRule::kNotInAllowedDomains: return "not-in-allowed-domains";
    case AdmissionRule::kHostOwnedByNamespace: return "host-owned-by-other-namespace";
    case AdmissionRule::kHostAndPathClaimed: return "host-and-path-claimed";
    case AdmissionRule::kHostInsideWildcard: return "host-inside-older-wildcard";
    case AdmissionRule::kWildcardOverHost: return "wildcard-covers-older-host";
  }
  return "unknown";
}

}  // namespace routestatus::controller
