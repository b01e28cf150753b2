// Admit: openshift-router's admission chain replayed oldest first over a
// route and the older routes whose claims may meet its own (admission.h).
#include <algorithm>
#include <unordered_map>

#include "controller/admission.h"
#include "controller/extended_validation.h"

namespace routestatus::controller {
namespace {

using kubeclient::Route;
using RoutePtr = std::shared_ptr<const Route>;

bool IsWildcard(const Route& route) { return route.spec.wildcard_policy == "Subdomain"; }
bool SameNamespace(const Route& a, const Route& b) {
  return a.metadata.namespace_name == b.metadata.namespace_name;
}

AdmissionDecision Claimed(AdmissionDecision&& d, AdmissionRule rule, const RoutePtr& blocker,
                          std::string message) {
  d.admitted = false;
  d.rule = rule;
  d.reason = kReasonHostAlreadyClaimed;
  d.message = std::move(message);
  d.blocker = blocker;
  return std::move(d);
}

// HostAlreadyClaimed: `other`, older, holds `claimed` (a host or "*.domain")
// on the same path as `route`.
AdmissionDecision PathTaken(AdmissionDecision&& d, const RoutePtr& other, const Route& route,
                            const std::string& claimed) {
  return Claimed(std::move(d), AdmissionRule::kHostAndPathClaimed, other,
                 std::string(claimed[0] == '*' ? "wildcard " : "") + "route " + other->Key() +
                     " already exposes " + claimed + std::string(route.spec.path) +
                     " and is older; use another host or path for route " + route.Key());
}

// HostAlreadyClaimed: `other`, older and of another namespace, holds
// `claimed` (a host or "*.domain"), so its namespace owns it.
AdmissionDecision NamespaceOwns(AdmissionDecision&& d, const RoutePtr& other, const Route& route,
                                const std::string& claimed) {
  return Claimed(std::move(d), AdmissionRule::kHostOwnedByNamespace, other,
                 std::string(claimed[0] == '*' ? "wildcard " : "") + "route " + other->Key() +
                     " already exposes " + claimed + " and is older; namespace " +
                     std::string(other->metadata.namespace_name) + " owns this host, so use "
                     "another host or move route " + route.Key() + " into that namespace");
}

// The state openshift-router builds as routes arrive: the host admitter's
// three claim maps (used only with wildcard routes allowed) and the
// unique-host index's admitted routes per host. Every map holds routes in
// the order they were offered, which is oldest first. Not thread-safe; one
// per Admit call.
class ClaimReplay {
 public:
  explicit ClaimReplay(const AdmissionOptions& options)
      : options_(options), ownership_(!options.disable_namespace_ownership_check) {}

  // Offers `route`, younger than every route offered before, and returns
  // its decision without extended validation (it comes last, and a route it
  // rejects keeps its claims, so the older routes need not run it).
  AdmissionDecision Offer(const RoutePtr& route) {
    AdmissionDecision d = AdmitAlone(*route, options_);
    if (!d.claims_host) return d;
    if (options_.allow_wildcard_routes && !d.host.empty()) {
      d = HostAdmitter(route, std::move(d));
      if (d.reason == kReasonHostAlreadyClaimed) return d;
    }
    if (!d.admitted) return d;  // NoHostValue or InvalidHost
    return UniqueHost(route, std::move(d));
  }

 private:
  // openshift-router's host admitter: the first older claim that blocks
  // `route` (host claims, then subdomain claims, then for a wildcard route
  // the plain hosts inside its subdomain), else records its claims.
  AdmissionDecision HostAdmitter(const RoutePtr& route, AdmissionDecision&& d) {
    const bool wildcard = IsWildcard(*route);
    const std::string domain = ClaimDomain(d.host);
    const std::string key = route->Key();
    for (const RoutePtr& other : claimed_hosts_[d.host]) {
      if (!ownership_ || SameNamespace(*other, *route)) {
        if (wildcard || other->spec.path != route->spec.path) continue;
        return PathTaken(std::move(d), other, *route, d.host);
      }
      return NamespaceOwns(std::move(d), other, *route, d.host);
    }
    for (const RoutePtr& other : claimed_wildcards_[domain]) {
      if (!ownership_ || SameNamespace(*other, *route)) {
        if (!wildcard || other->spec.path != route->spec.path) continue;
        return PathTaken(std::move(d), other, *route, "*." + domain);
      }
      if (wildcard) return NamespaceOwns(std::move(d), other, *route, "*." + domain);
      const std::string ns(other->metadata.namespace_name);
      return Claimed(std::move(d), AdmissionRule::kHostInsideWildcard, other,
                     "wildcard route " + other->Key() + " already claims *." + domain +
                         ", which covers " + d.host + ", and is older; namespace " + ns +
                         " owns that subdomain, so use a host outside *." + domain +
                         " or move route " + key + " into namespace " + ns);
    }
    if (wildcard) {
      for (const RoutePtr& other : blocked_wildcards_[domain]) {
        if (!ownership_ || SameNamespace(*other, *route)) continue;
        const std::string ns(other->metadata.namespace_name);
        return Claimed(std::move(d), AdmissionRule::kWildcardOverHost, other,
                       "route " + other->Key() + " already exposes " +
                           EffectiveHost(*other, options_) + ", which is inside *." + domain +
                           ", and is older; namespace " + ns + " owns that host, so wildcard "
                           "route " + key + " cannot claim *." + domain + ": use a host in "
                           "another domain, wildcardPolicy None, or move route " + key +
                           " into namespace " + ns);
      }
      claimed_wildcards_[domain].push_back(route);
    } else {
      claimed_hosts_[d.host].push_back(route);
      blocked_wildcards_[domain].push_back(route);
    }
    return std::move(d);
  }

  // openshift-router's unique-host index: per exact host, the namespace of
  // the first route admitted owns it (unless the ownership check is off),
  // one route per path, and a passthrough route shares its host with no
  // other TLS route.
  AdmissionDecision UniqueHost(const RoutePtr& route, AdmissionDecision&& d) {
    std::vector<RoutePtr>& active = unique_[d.host];
    const std::string key = route->Key();
    if (!active.empty() && ownership_ && !SameNamespace(*active.front(), *route)) {
      return NamespaceOwns(std::move(d), active.front(), *route, d.host);
    }
    for (const RoutePtr& other : active) {
      if (other->spec.path == route->spec.path) return PathTaken(std::move(d), other, *route, d.host);
      if (!other->spec.tls_termination.empty() && !route->spec.tls_termination.empty() &&
          (other->spec.tls_termination == "passthrough" ||
           route->spec.tls_termination == "passthrough")) {
        return Claimed(std::move(d), AdmissionRule::kPassthroughSharesHost, other,
                       "route " + other->Key() + " already serves " + d.host + " with TLS " +
                           std::string(other->spec.tls_termination) + " and is older; a "
                           "passthrough route cannot share its host with another TLS route "
                           "(path-based TLS needs the router to terminate TLS): use another "
                           "host for route " + key);
      }
    }
    active.push_back(route);
    return std::move(d);
  }

  const AdmissionOptions& options_;
  const bool ownership_;
  std::unordered_map<std::string, std::vector<RoutePtr>> claimed_hosts_;
  std::unordered_map<std::string, std::vector<RoutePtr>> claimed_wildcards_;
  std::unordered_map<std::string, std::vector<RoutePtr>> blocked_wildcards_;
  std::unordered_map<std::string, std::vector<RoutePtr>> unique_;
};

}  // namespace

AdmissionDecision Admit(const Route& route, const std::vector<RoutePtr>& peers,
                        const AdmissionOptions& options) {
  std::vector<const RoutePtr*> older;
  older.reserve(peers.size());
  for (const RoutePtr& peer : peers) {
    if (peer && peer->metadata.uid != route.metadata.uid && IsOlder(*peer, route)) {
      older.push_back(&peer);
    }
  }
  std::sort(older.begin(), older.end(),
            [](const RoutePtr* a, const RoutePtr* b) { return IsOlder(**a, **b); });
  ClaimReplay replay(options);
  for (const RoutePtr* peer : older) replay.Offer(*peer);
  // Why an aliasing pointer to `route`: the replay keeps the routes it has
  // admitted; `route` outlives it (this call) and is never handed out.
  AdmissionDecision d = replay.Offer(RoutePtr(RoutePtr(), &route));
  // Why after a rejection too: openshift-router hands a route that its
  // admission function rejected, or that has no valid host, on down its
  // chain as a deletion; its extended validator still checks it and records
  // a failure last. A route that lost a host claim is not handed on.
  if (options.extended_validation && d.reason != kReasonHostAlreadyClaimed) {
    if (std::string problem = ExtendedValidationProblem(route); !problem.empty()) {
      const std::string left =
          d.admitted ? "" : "; with spec.tls fixed it is still rejected " + d.reason + ": " + d.message;
      d.admitted = false;
      d.rule = AdmissionRule::kExtendedValidation;
      d.reason = kReasonExtendedValidationFailed;
      d.host_problem = problem;
      d.message = "route " + route.Key() + ": " + problem + left;
    }
  }
  return d;
}

}  // namespace routestatus::controller
