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
// The pseudo-reason reported for admitted routes (metrics only; the
// condition itself carries no reason when admitted).
inline constexpr char kReasonAdmitted[] = "Admitted";

// The admission configuration of one router name. Value type. Every replica
// of a router name must use the same values, or they fight (see conflict/).
struct AdmissionOptions {
  std::string router_name;          // our status.ingress[].routerName
  std::string canonical_hostname;   // routerCanonicalHostname ("" = omitted)
  std::string router_domain;        // "<subdomain>.<router_domain>" for spec.subdomain
  // e.g. "${name}-${namespace}.apps.example.com"; "" = none.
  std::string hostname_template;
  bool override_hostname = false;   // apply the template to every route
  bool allow_wildcard_routes = false;
  std::vector<std::string> allowed_domains;  // empty = every domain allowed
  std::vector<std::string> denied_domains;
  // false (default): the namespace of the oldest route for a host owns it;
  // true: any namespace, the oldest route per host+path wins.
  bool disable_namespace_ownership_check = false;
};

// The host this router serves for `route`: spec.host; else
// "<spec.subdomain>.<router_domain>"; else the hostname template; with
// override_hostname the template always wins. "" when nothing applies.
// Pure; thread-safe.
std::string EffectiveHost(const kubeclient::Route& route, const AdmissionOptions& options);

// Expands ${name} and ${namespace} in `tmpl`.
std::string ExpandHostnameTemplate(std::string_view tmpl, const kubeclient::ObjectMeta& meta);

// "" when `host` is a DNS-1123 subdomain (<= 253 chars, dot-separated labels
// of 1..63 chars of [a-z0-9-] not starting or ending with '-'), else a
// message saying what is wrong. With `allow_wildcard_prefix`, a leading
// "*." is accepted as wildcard syntax.
std::string ValidateDns1123Subdomain(std::string_view host, bool allow_wildcard_prefix);

// True when `host` equals `domain` or is a subdomain of it. A domain written
// "*.example.com" matches only the subdomains of example.com.
bool HostInDomain(std::string_view host, std::string_view domain);

// Host claims (follows the OpenShift router's host admitter):
// - A plain route (wildcardPolicy None) claims its host. A wildcard route
//   (wildcardPolicy Subdomain, host www.example.com or *.example.com) claims
//   the subdomain *.example.com: every host exactly one label below
//   example.com (foo.example.com, and www.example.com itself), not
//   example.com and not a.b.example.com (OpenShift's GetDomainForHost drops
//   only the first label).
// - Two claims overlap when both are plain on the same host, both are
//   wildcards of the same subdomain, or one is plain with a host one label
//   below the other's wildcard domain.
// - Overlapping routes in different namespaces: the older (IsOlder) wins,
//   whatever their paths: its namespace owns the host or subdomain. With
//   disable_namespace_ownership_check, a plain and a wildcard route never
//   conflict (OpenShift skips that check too) and same-kind routes conflict
//   only on the same path.
// - Overlapping routes in the same namespace: a plain and a wildcard route
//   coexist; same-kind routes conflict only on the same path.
// - A route that fails AdmitAlone (e.g. a wildcard route while
//   allow_wildcard_routes is off) claims nothing.
// - Unlike OpenShift (which remembers who displaced whom in event order),
//   an older route holds its claim even when it is itself rejected for an
//   overlapping claim (A plain foo.example.com in ns1, then wildcard B in ns2,
//   then plain C bar.example.com in ns3: C is rejected naming B). Why: the
//   decision stays a pure function of the cache, identical on every replica,
//   and one route's change never cascades along a chain of routes.

// The index keys of `route` in the informer's "routes by host" index
// (kRoutesByHostIndex): a plain route's effective host (plus, when
// allow_wildcard_routes is on, a "hosts-in:<parent domain>" key that lets
// wildcard routes find it); a wildcard route's "*.<parent domain>". Empty
// when the route has no host. Pure; thread-safe.
std::vector<std::string> HostClaimKeys(const kubeclient::Route& route,
                                       const AdmissionOptions& options);

// The index keys to look up for the routes whose claims may overlap
// `route`'s: the peers to pass to Admit, and the routes to re-evaluate when
// `route` is added, changed or deleted (the relation is symmetric).
// A plain route: its host and, with wildcards allowed, "*.<parent>"; a
// wildcard route: "*.<parent>" and, with wildcards allowed,
// "hosts-in:<parent>". Pure; thread-safe.
std::vector<std::string> HostClaimPeerKeys(const kubeclient::Route& route,
                                           const AdmissionOptions& options);

// The rule that decided admission: each rejection message comes from
// exactly one of these (the reason alone is ambiguous: RouteNotAdmitted has
// four causes). `explain` reports it; names are stable (AdmissionRuleName).
enum class AdmissionRule {
  kAdmitted,               // every check passed
  kNoHost,                 // NoHostValue: no spec.host, subdomain or template
  kInvalidHost,            // InvalidHost: not a DNS-1123 subdomain
  kUnknownWildcardPolicy,  // RouteNotAdmitted: wildcardPolicy neither None nor Subdomain
  kWildcardsNotAllowed,    // RouteNotAdmitted: Subdomain while allow_wildcard_routes is off
  kWildcardWithoutParent,  // InvalidHost: a wildcard host with a single label
  kDeniedDomain,           // RouteNotAdmitted: host in a denied domain
  kNotInAllowedDomains,    // RouteNotAdmitted: host outside every allowed domain
  kHostOwnedByNamespace,   // HostAlreadyClaimed: an older route of another namespace owns the host
  kHostAndPathClaimed,     // HostAlreadyClaimed: an older route has the same host (or subdomain) and path
  kHostInsideWildcard,     // HostAlreadyClaimed: an older wildcard route of another namespace covers the host
  kWildcardOverHost,       // HostAlreadyClaimed: an older plain route of another namespace is inside the subdomain
};

// "admitted", "no-host", "invalid-host", "unknown-wildcard-policy",
// "wildcards-not-allowed", "wildcard-without-parent-domain", "denied-domain",
// "not-in-allowed-domains", "host-owned-by-other-namespace",
// "host-and-path-claimed", "host-inside-older-wildcard",
// "wildcard-covers-older-host". Stable (explain's JSON output).
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
  // kInvalidHost: what ValidateDns1123Subdomain found wrong.
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

// Decides admission for `route` without looking at other routes: host
// derivation, DNS-1123, wildcard policy, allowed/denied domains. Pure.
AdmissionDecision AdmitAlone(const kubeclient::Route& route, const AdmissionOptions& options);

// True when `a` is older than `b`: smaller creation time, then smaller UID.
bool IsOlder(const kubeclient::Route& a, const kubeclient::Route& b);

// Full admission: AdmitAlone, then host claims (see above) against `peers`
// (the routes found under HostClaimPeerKeys(route) in the "routes by host" index,
// already restricted to this router's shard; `route` itself and peers that
// fail AdmitAlone are ignored). Pure; thread-safe.
AdmissionDecision Admit(const kubeclient::Route& route,
                        const std::vector<std::shared_ptr<const kubeclient::Route>>& peers,
                        const AdmissionOptions& options);

}  // namespace routestatus::controller
