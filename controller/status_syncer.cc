#include "controller/status_syncer.h"

#include <glog/logging.h>

#include "controller/desired_status.h"

namespace routestatus::controller {

using kubeclient::Route;
using kubeclient::RouteIngress;
using kubeclient::StatusCode;
using lease::WorkOutcome;
using lease::WorkResult;

kubeclient::cache::IndexFunc<Route> RoutesByHostIndexFunc(AdmissionOptions options) {
  return [options = std::move(options)](const Route& route) {
    return HostClaimKeys(route, options);
  };
}

const char* SyncResultName(SyncResult result) {
  switch (result) {
    case SyncResult::kQueued: return "queued";
    case SyncResult::kNoChange: return "no_change";
    case SyncResult::kFollower: return "follower";
    case SyncResult::kContended: return "contended";
    case SyncResult::kOutOfShard: return "out_of_shard";
    case SyncResult::kGone: return "gone";
  }
  return "unknown";
}

namespace {

bool SameEntry(const std::optional<RouteIngress>& observed,
               const std::optional<RouteIngress>& desired) {
  if (!observed || !desired) return !observed && !desired;
  return kubeclient::IngressEqual(*observed, *desired);
}

std::string Describe(const std::optional<RouteIngress>& entry) {
  if (!entry) return "remove our entry";
  const auto& c = entry->conditions.front();
  return "host=" + entry->host + " admitted=" + c.status + (c.reason.empty() ? "" : " " + c.reason);
}

}  // namespace

StatusSyncer::StatusSyncer(AdmissionOptions admission, const ShardFilter& shard,
                           const kubeclient::cache::ObjectStore<Route>& routes,
                           kubeclient::KubeClient& client, lease::WriteLease& lease,
                           ContentionGate& gate, const kubeclient::Clock& clock, StatusStats& stats)
    : admission_(std::move(admission)),
      shard_(shard),
      routes_(routes),
      client_(client),
      lease_(lease),
      gate_(gate),
      clock_(clock),
      stats_(stats) {}

std::optional<RouteIngress> StatusSyncer::Desired(const Route& route,
                                                  AdmissionDecision* decision) const {
  return DesiredGiven(route, route.FindIngress(admission_.router_name), decision);
}

std::optional<RouteIngress> StatusSyncer::DesiredGiven(const Route& route,
                                                       const std::optional<RouteIngress>& observed,
                                                       AdmissionDecision* decision) const {
  if (!shard_.InShard(route)) {
    stats_.SetAdmission(route.Key(), "out_of_shard", "");
    return std::nullopt;
  }
  std::vector<std::shared_ptr<const Route>> peers;
  for (const auto& key : HostClaimPeerKeys(route, admission_)) {
    for (auto& peer : routes_.ByIndex(kRoutesByHostIndex, key)) {
      if (peer && peer->metadata.uid != route.metadata.uid && shard_.InShard(*peer)) {
        peers.push_back(std::move(peer));
      }
    }
  }
  AdmissionDecision d = Admit(route, peers, admission_);
  stats_.SetAdmission(route.Key(), d.admitted ? "true" : "false",
                      d.admitted ? kReasonAdmitted : d.reason);
  RouteIngress entry =
      DesiredEntry(d, admission_, observed ? &*observed : nullptr, clock_.WallNow());
  if (decision != nullptr) *decision = std::move(d);
  return entry;
}

SyncResult StatusSyncer::Sync(const std::string& key, bool watched_entry_change) {
  auto route = routes_.Get(key);
  if (!route) {
    TakeOwnWrite(key, "");
    lease_.Remove(key);
    stats_.ForgetAdmission(key);
    return SyncResult::kGone;
  }
  std::optional<RouteIngress> observed = route->FindIngress(admission_.router_name);
  std::optional<RouteIngress> desired = DesiredGiven(*route, observed, nullptr);
  const bool own_write =
      watched_entry_change && TakeOwnWrite(key, route->metadata.resource_version);
  if (!desired && !observed) {
    if (watched_entry_change) {
      // Why: our entry was just removed by our router name (the leader
      // took it off a route that left the shard): drop queued work, and
      // the lease sees the leader's progress.
      ++(own_write ? stats_.skipped_own_write : stats_.skipped_follower);
      lease_.Extend(key);
      return SyncResult::kFollower;
    }
    ++stats_.skipped_out_of_shard;
    VLOG(4) << "route " << key << ": outside our shard, no entry of ours";
    return SyncResult::kOutOfShard;
  }
  if (SameEntry(observed, desired)) {
    if (watched_entry_change && IsNewestEntry(*route, admission_.router_name)) {
      // Why: DESIGN.md section 2: a follower seeing its entry already correct
      // and written last by its router name drops its work and extends.
      // (The lease tells our own write's echo from a peer's by itself; the
      // counters tell them apart for the operator.)
      ++(own_write ? stats_.skipped_own_write : stats_.skipped_follower);
      lease_.Extend(key);
      return SyncResult::kFollower;
    }
    ++stats_.skipped_no_change;
    return SyncResult::kNoChange;
  }
  if (observed && gate_.IsChangeContended(route->metadata.uid)) {
    ++stats_.skipped_contended;
    VLOG(4) << "route " << key << ": change contended, not writing";
    return SyncResult::kContended;
  }
  VLOG(4) << "route " << key << ": queueing write: " << Describe(desired);
  ++stats_.queued;
  std::string uid = route->metadata.uid;
  lease_.Try(key, [this, key, uid] { return RunWork(key, uid); });
  return SyncResult::kQueued;
}

WorkOutcome StatusSyncer::RunWork(const std::string& key, const std::string& uid) {
  // Why: the latest cached object, never the event's copy: a queued work item
  // may run long after it was queued.
  auto route = routes_.Get(key);
  if (!route || route->metadata.uid != uid) {
    ++stats_.skipped_gone;
    VLOG(4) << "route " << key << ": gone or replaced before our write ran; dropping work";
    return {WorkResult::kNone, false};
  }
  std::optional<RouteIngress> observed = route->FindIngress(admission_.router_name);
  std::optional<RouteIngress> desired = DesiredGiven(*route, observed, nullptr);
  if (SameEntry(observed, desired)) {
    ++stats_.skipped_done;  // e.g. after a 409 the watch brought a correct entry
    return {WorkResult::kNone, false};
  }
  if (observed && gate_.IsChangeContended(uid)) {
    ++stats_.skipped_contended;
    return {WorkResult::kRelease, false};
  }
  auto body = kubeclient::WithIngressEntry(*route, admission_.router_name, desired);
  if (!body.ok()) {
    ++stats_.writes_error;
    LOG(ERROR) << "route " << key << ": cannot build status: " << body.status().ToString();
    return {WorkResult::kNone, false};
  }
  auto result = client_.UpdateStatus(kubeclient::RoutesResource(), *body);
  if (result.ok()) {
    ++stats_.writes_success;
    NoteOwnWrite(key, kubeclient::ResourceVersionOf(*result));
    gate_.Clear(uid, desired);
    VLOG(2) << "route " << key << ": wrote status: " << Describe(desired);
    return {WorkResult::kExtend, false};
  }
  const auto& status = result.status();
  switch (status.code()) {
    case StatusCode::kConflict:
      ++stats_.writes_conflict;
      VLOG(2) << "route " << key << ": status write conflicted; following";
      return {WorkResult::kRelease, true};
    case StatusCode::kNotFound:
      ++stats_.writes_not_found;
      VLOG(2) << "route " << key << ": deleted before our status write";
      return {WorkResult::kNone, false};
    default:
      ++stats_.writes_error;
      // Why: without an answer the server is down or cut off; the binary
      // reports that once per outage, not once per route and retry.
      if (kubeclient::IsNoAnswer(kubeclient::FailureClassOf(status))) {
        VLOG(1) << "route " << key << ": status write failed, will retry: " << status.ToString();
      } else {
        LOG(WARNING) << "route " << key << ": status write failed, will retry: "
                     << status.ToString();
      }
      // Why kNone: only a 409 shows another writer. A leader whose write
      // found no server (or a 5xx/429) stays leader; releasing made the
      // next change after an outage wait the follower delay and race.
      return {WorkResult::kNone, true};
  }
}

void StatusSyncer::NoteOwnWrite(const std::string& key, std::string resource_version) {
  if (resource_version.empty()) return;
  std::lock_guard<std::mutex> lock(own_writes_mu_);
  own_writes_[key] = std::move(resource_version);
}

bool StatusSyncer::TakeOwnWrite(const std::string& key, const std::string& resource_version) {
  std::lock_guard<std::mutex> lock(own_writes_mu_);
  auto it = own_writes_.find(key);
  if (it == own_writes_.end()) return false;
  const bool ours = it->second == resource_version;
  own_writes_.erase(it);
  return ours;
}

}  // namespace routestatus::controller
