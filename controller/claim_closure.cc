#include "controller/claim_closure.h"

#include <initializer_list>
#include <optional>
#include <string>
#include <unordered_set>

#include "controller/status_syncer.h"

namespace routestatus::controller {

using kubeclient::Route;

std::vector<std::shared_ptr<const Route>> ClaimClosure(
    const Route& route, const kubeclient::cache::ObjectStore<Route>& routes,
    const AdmissionOptions& options, ClaimSide side,
    const std::function<bool(const Route&)>& keep) {
  std::vector<std::shared_ptr<const Route>> out;
  // Why made at the first peer: most routes have none (a host of their
  // own), and a restart decides every route once; the set and the uid's
  // copy were three allocations per route for nothing.
  std::optional<std::unordered_set<std::string>> seen;
  // `out` is also the worklist: out[next] is the next route whose peers
  // are looked up (`route` itself first).
  for (size_t next = 0;; ++next) {
    const Route* at = next == 0 ? &route : out[next - 1].get();
    for (const auto& key : HostClaimPeerKeys(*at, options)) {
      for (auto& peer : routes.ByIndex(kRoutesByHostIndex, key)) {
        if (!peer) continue;
        const bool toward = side == ClaimSide::kOlder ? IsOlder(*peer, *at) : IsOlder(*at, *peer);
        if (!toward || (keep && !keep(*peer))) continue;
        if (!seen) seen.emplace(std::initializer_list<std::string>{std::string(route.metadata.uid)});
        if (!seen->insert(std::string(peer->metadata.uid)).second) continue;
        out.push_back(std::move(peer));
      }
    }
    if (next >= out.size()) break;
  }
  return out;
}

}  // namespace routestatus::controller
