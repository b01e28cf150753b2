#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kubeclient/route.h"

namespace routestatus::controller {

// Condition type and reasons written into status.ingress[].conditions.
inline constexpr char kAdmittedCondition[] = "Admitted";
inline constexpr char kReasonNoHostValue[] = "NoHostValue";
inline constexpr char kReasonInvalidHost[] = "InvalidHost";
inline constexpr char kReasonRouteNotAdmitted[] = "RouteNotAdmitted";
inline constexpr char kReasonHostAlreadyClaimed[] = "HostAlreadyClaimed";
inline constexpr char kReasonExtendedValidationFailed[] = "ExtendedValidationFailed";
// The pseudo-reason reported for admitted routes (metrics only; the
// condition itself carries no reason when admitted).
inline constexpr char kReasonAdmitted[] = "Admitted";

// The admission configuration of one router name. Value type. Every replica
// of a router name must use the same values, or they fight (see conflict/).
// Each field is the openshift-router setting named beside it, with the
// same meaning (docs/admission.md).
struct AdmissionOptions {
  std::string router_name;          // our status.ingress[].routerName (ROUTER_SERVICE_NAME)
  std::string canonical_hostname;   // routerCanonicalHostname ("" = omitted)
  std::string router_domain;        // ROUTER_DOMAIN: "<subdomain>.<router_domain>" for spec.subdomain
  // ROUTER_SUBDOMAIN, e.g. "${name}-${namespace}.apps.example.com"; "" = none.
  std::string hostname_template;
  bool override_hostname = false;   // ROUTER_OVERRIDE_HOSTNAME: the template for every route
  bool allow_wildcard_routes = false;          // ROUTER_ALLOW_WILDCARD_ROUTES
  // ROUTER_ALLOWED_DOMAINS (empty = every domain) and ROUTER_DENIED_DOMAINS:
  // entries match a host equal to them or a host that ends in "." + entry
  // (HostInDomain); "*.example.com" is matched literally.
  std::vector<std::string> allowed_domains;
  std::vector<std::string> denied_domains;
  // ROUTER_DISABLE_NAMESPACE_OWNERSHIP_CHECK. false (default): the namespace
  // of the oldest route for a host owns it; true: any namespace, one route
  // per host and path.
  bool disable_namespace_ownership_check = false;
  // EXTENDED_VALIDATION (openshift-router's default: on): spec.tls
  // certificates and keys are parsed and checked (extended_validation.h).
  bool extended_validation = true;
};

// The host openshift-router serves for `route` (its RouteUpdate): spec.host;
// else "<spec.subdomain>.<router_domain>" when both are set; then, when the
// host is still empty or override_hostname is set, the hostname template's
// expansion (ExpandHostnameTemplate; a template with an unknown key leaves
// the host as it was). "" when nothing applies. Pure; thread-safe.
std::string EffectiveHost(const kubeclient::Route& route, const AdmissionOptions& options);

// "" when `host` is valid for openshift-router (library-go's ValidateHost:
// a DNS-1123 subdomain of at most 253 characters whose dot-separated labels
// are 1..63 characters of [a-z0-9-] starting and ending with a letter or
// digit; a single label such as "com" is valid; "*." is not), else a message
// saying what is wrong. Pure.
std::string ValidateHost(std::string_view host);

// True when `host` equals `domain` or ends in "." + `domain` (openshift-router's
// hostInDomainList: the host, then the host without its first label, and so
// on). Literal: the entry "*.example.com" matches only hosts that themselves
// contain "*.example.com" (none valid). Pure.
bool HostInDomain(std::string_view host, std::string_view domain);

// The domain of a host's claims (library-go's GetDomainForHost): everything
// after the first '.', "" for a single label. "x.example.com" for both
// "www.x.example.com" and "*.x.example.com". Pure.
std::string ClaimDomain(std::string_view host);

// The index keys of `route` in the informer's "routes by host" index
// (kRoutesByHostIndex): a plain route's effective host (plus, when
// allow_wildcard_routes is on, "hosts-in:<ClaimDomain>" that lets wildcard
// routes find it); a wildcard route's "*.<ClaimDomain>". Empty when the
// route has no host. Pure; thread-safe.
std::vector<std::string> HostClaimKeys(const kubeclient::Route& route,
                                       const AdmissionOptions& options);

// The index keys to look up for the routes whose claims may meet `route`'s
// (the relation is symmetric): a plain route: its host and, with wildcards
// allowed, "*.<domain>"; a wildcard route: "*.<domain>" and, with wildcards
// allowed, "hosts-in:<domain>". Pure; thread-safe.
std::vector<std::string> HostClaimPeerKeys(const kubeclient::Route& route,
                                           const AdmissionOptions& options);

// The rule that decided admission: each rejection message comes from
// exactly one of these (the reason alone is ambiguous: RouteNotAdmitted has
// four causes). `explain` reports it; names are stable (AdmissionRuleName).
// Listed in the order openshift-router applies them (docs/admission.md).
enum class AdmissionRule {
  kAdmitted,               // every check passed
  kDeniedDomain,           // RouteNotAdmitted: host in a denied domain
  kNotInAllowedDomains,    // RouteNotAdmitted: host outside every allowed domain
  kUnknownWildcardPolicy,  // RouteNotAdmitted: wildcardPolicy neither None nor Subdomain
  kWildcardsNotAllowed,    // RouteNotAdmitted: Subdomain while allow_wildcard_routes is off
  // HostAlreadyClaimed. The first two come from the host admitter (wildcards
  // allowed: before host validity, subdomains too) or the unique-host index
  // (after it, exact hosts); the next two from the host admitter only.
  kHostOwnedByNamespace,   // an older route of another namespace holds the host (or subdomain)
  kHostAndPathClaimed,     // an older route has the same host (or subdomain) and path
  kHostInsideWildcard,     // an older wildcard route of another namespace covers the host
  kWildcardOverHost,       // an older plain route of another namespace is inside the subdomain
  kNoHost,                 // NoHostValue: no spec.host, subdomain or template host
  kInvalidHost,            // InvalidHost: ValidateHost failed
  kPassthroughSharesHost,  // HostAlreadyClaimed: a passthrough and another TLS route on one host
  // ExtendedValidationFailed: spec.tls did not pass. Recorded last, over
  // every reason above but HostAlreadyClaimed (openshift-router validates
  // the routes its earlier plugins reject, except those that lost a claim).
  kExtendedValidation,
};

// "admitted", "denied-domain", "not-in-allowed-domains",
// "unknown-wildcard-policy", "wildcards-not-allowed",
// "host-owned-by-other-namespace", "host-and-path-claimed",
// "host-inside-older-wildcard", "wildcard-covers-older-host", "no-host",
// "invalid-host", "passthrough-shares-host", "extended-validation-failed". Stable (explain's JSON output).
const char* AdmissionRuleName(AdmissionRule rule);

// The outcome of admission for one route. Value type.
struct AdmissionDecision {
  bool admitted = false;
  std::string reason;   // one of the kReason* constants ("" when admitted)
  std::string message;  // tells a person what to do ("" when admitted)
  std::string host;     // effective host (also on rejections)
  std::string wildcard_policy;  // "None" when the spec leaves it empty
  // Why the decision was taken (for `explain`; the status path ignores it).
  AdmissionRule rule = AdmissionRule::kAdmitted;
  // The route passed the domain lists and the wildcard policy (openshift-router's
  // admission function), so it takes part in host claims, even with an
  // invalid host (claims are weighed before host validity there).
  bool claims_host = false;
  // kInvalidHost: what ValidateHost found wrong; kExtendedValidation: the
  // field and what is wrong with it.
  std::string host_problem;
  // The index in options.denied_domains that matched (kDeniedDomain), and in
  // options.allowed_domains of the first domain that holds the host (set
  // whenever the domain checks ran and allowed_domains is not empty); -1
  // otherwise.
  int denied_domain_index = -1;
  int allowed_domain_index = -1;
  // HostAlreadyClaimed: the older route whose claim blocks this one (one of
  // the peers passed to Admit); null otherwise.
  std::shared_ptr<const kubeclient::Route> blocker;
};

// The checks of one route that do not depend on other routes, in
// openshift-router's order: denied domains, allowed domains, wildcard
// policy, then no host, invalid host. A route that fails the first three
// with no host or an invalid host is reported NoHostValue or InvalidHost
// (openshift-router records those last). Pure.
AdmissionDecision AdmitAlone(const kubeclient::Route& route, const AdmissionOptions& options);

// True when `a` is older than `b`: smaller creation time, then smaller UID
// (openshift-router's RouteLessThan).
bool IsOlder(const kubeclient::Route& a, const kubeclient::Route& b);

// Full admission, as openshift-router decides at start-up (admission_chain.cc):
// `route` and the routes of `peers` older than it are offered to its
// admission chain oldest first (host admitter claims, host validity, the
// unique-host index, extended validation) and `route`'s outcome is
// returned. A failing spec.tls is reported over every earlier reason but
// HostAlreadyClaimed, as openshift-router records it last. A rejected route
// holds no claim, except one the unique-host index admitted before extended
// validation rejected it. `peers` must hold every older route whose claims
// may meet `route`'s, directly or through other older routes
// (ClaimClosure); younger ones and `route` itself are ignored. Pure;
// thread-safe.
AdmissionDecision Admit(const kubeclient::Route& route,
                        const std::vector<std::shared_ptr<const kubeclient::Route>>& peers,
                        const AdmissionOptions& options);

}  // namespace routestatus::controller
