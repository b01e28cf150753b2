#include "conflict/contention_tracker.h"

#include <algorithm>
#include <sstream>

#include <glog/logging.h>

namespace routestatus::conflict {

using kubeclient::RouteIngress;
using kubeclient::SteadyTime;

namespace {

// "6m", "90s" -> "1m30s", "250ms".
std::string FormatDuration(kubeclient::Duration d) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
  if (ms < 1000) return std::to_string(ms) + "ms";
  const auto s = ms / 1000;
  std::string out;
  if (s >= 60) out += std::to_string(s / 60) + "m";
  if (s % 60 != 0 || s < 60) out += std::to_string(s % 60) + "s";
  return out;
}

}  // namespace

ContentionTracker::ContentionTracker(const kubeclient::Clock& clock,
                                     ContentionTrackerOptions options)
    : clock_(clock), options_(std::move(options)) {
  CHECK(options_.interval > kubeclient::Duration::zero())
      << "contention interval must be > 0";
  CHECK(options_.limit >= 0) << "contention limit must be >= 0";
  window_start_ = clock_.Now();
  next_flush_ = window_start_ + 2 * options_.interval;
}

std::string ContentionTracker::DescribeEntry(const RouteIngress& entry) {
  std::ostringstream out;
  out << "{host=" << (entry.host.empty() ? "\"\"" : entry.host)
      << " canonicalHostname=" << (entry.router_canonical_hostname.empty()
                                       ? "\"\""
                                       : entry.router_canonical_hostname);
  if (!entry.wildcard_policy.empty()) out << " wildcardPolicy=" << entry.wildcard_policy;
  std::vector<const kubeclient::RouteCondition*> conditions;
  for (const auto& c : entry.conditions) conditions.push_back(&c);
  std::sort(conditions.begin(), conditions.end(),
            [](auto* a, auto* b) { return a->type < b->type; });
  for (const auto* c : conditions) {
    out << " " << c->type << "=" << c->status;
    if (!c->reason.empty()) out << "(" << c->reason << ")";
  }
  out << "}";
  return out.str();
}

void ContentionTracker::Log(const std::string& warning) {
  if (!warning.empty()) LOG(WARNING) << warning;
}

void ContentionTracker::Changed(const std::string& uid, const std::string& route_key,
                                const RouteIngress& old_entry, const RouteIngress& new_entry,
                                const RouteIngress* desired, Difference difference) {
  // Why: lastTransitionTime-only or condition-order-only updates are no
  // change of the entry, whoever made them.
  if (kubeclient::IngressEqual(old_entry, new_entry)) return;
  std::string warning;
  {
    std::lock_guard<std::mutex> l(mu_);
    const SteadyTime now = clock_.Now();
    warning = MaybeFlushLocked(now);
    const uint64_t new_print = kubeclient::IngressFingerprint(new_entry);
    if (contentions_ > options_.limit) {
      // Cut-off: stop tracking for the rest of the window.
    } else if (desired != nullptr && kubeclient::IngressEqual(new_entry, *desired)) {
      // What we would write ourselves: not contention. A suspect value was
      // a peer's stale view, now replaced: the route is writable again.
      Element& e = ids_[uid];
      e.last = new_print;
      e.own = false;
      if (e.state == State::kSuspect) e.state = State::kCandidate;
      if (e.state == State::kCandidate) e.at = now;
      VLOG(4) << "contention: " << route_key << " changed to our desired entry";
    } else if (auto it = ids_.find(uid);
               it == ids_.end() &&
               !(desired != nullptr && kubeclient::IngressEqual(old_entry, *desired))) {
      ids_[uid] = Element{now, State::kCandidate, new_print, false};
      VLOG(4) << "contention: " << route_key << " is a candidate";
    } else if (it == ids_.end() || new_print != it->second.last) {
      // Why (unknown uid): the old entry was exactly what we compute for
      // this object and another writer changed it to something we do not;
      // that is a fight even if this process never wrote the route (e.g.
      // it listed the route after a peer wrote it).
      if (it == ids_.end()) {
        it = ids_.emplace(uid, Element{now, State::kCandidate,
                                       kubeclient::IngressFingerprint(old_entry), false})
                 .first;
      }
      Element& e = it->second;
      // Why a view difference counts only as a second change away (as the
      // OpenShift router counts only a second change away from a recorded
      // value): a peer with our configuration that computed its entry from
      // a cache a moment older than ours (a host holder deleted meanwhile,
      // a PUT that waited for QPS tokens) writes it once and then writes
      // what we compute. A router configured differently keeps changing
      // it: it replaces our own write, or changes the entry again while
      // it is still suspect.
      const bool again = (e.state == State::kSuspect && e.at + options_.interval > now) ||
                         e.state == State::kContended;
      const bool replaced_ours = e.state == State::kCandidate && e.own &&
                                 e.last == kubeclient::IngressFingerprint(old_entry);
      if (difference == Difference::kView && !again && !replaced_ours) {
        e.state = State::kSuspect;
        e.at = now;
        e.last = new_print;
        e.own = false;
        VLOG(4) << "contention: " << route_key << " changed by another writer to "
                << DescribeEntry(new_entry)
                << ", which differs from ours only in host claims (a peer's older view?): "
                   "suspect, not written for the window, not counted";
      } else {
        // Without `desired`, the entry the change replaced stands for ours.
        const RouteIngress& ours = desired != nullptr ? *desired : old_entry;
        const bool fresh = std::none_of(examples_.begin(), examples_.end(), [&](const Example& x) {
          return x.route_key == route_key;
        });
        if (fresh && examples_.size() < options_.max_examples) {
          examples_.push_back(Example{route_key, ours, new_entry});
        }
        VLOG(4) << "contention: " << route_key << " changed by another writer from "
                << DescribeEntry(old_entry) << " to " << DescribeEntry(new_entry);
        e.state = State::kContended;
        e.at = now;
        e.last = new_print;
        e.own = false;
        ++contentions_;
        ++window_events_;
        ++events_total_;
        if (contentions_ == options_.limit + 1) {
          VLOG(2) << "contention: more than " << options_.limit
                  << " contentions; not changing existing entries until the window ends";
        }
      }
    }
  }
  Log(warning);
}

void ContentionTracker::Appeared(const std::string& uid, const std::string& route_key,
                                 const RouteIngress& new_entry, const RouteIngress* desired,
                                 Difference difference) {
  if (desired == nullptr) return;
  // Why: to the tracker, "absent, and we would create `desired`" is the same
  // as "our entry was `desired`": another value replacing it is a fight.
  Changed(uid, route_key, *desired, new_entry, desired, difference);
}

void ContentionTracker::Clear(const std::string& uid, const std::optional<RouteIngress>& written) {
  std::string warning;
  {
    std::lock_guard<std::mutex> l(mu_);
    const SteadyTime now = clock_.Now();
    warning = MaybeFlushLocked(now);
    if (!written) {
      ids_.erase(uid);
    } else {
      Element& e = ids_[uid];
      e.at = now;
      e.state = State::kCandidate;
      e.last = kubeclient::IngressFingerprint(*written);
      e.own = true;
    }
  }
  Log(warning);
}

void ContentionTracker::Forget(const std::string& uid) {
  std::lock_guard<std::mutex> l(mu_);
  ids_.erase(uid);
}

bool ContentionTracker::IsChangeContended(const std::string& uid) {
  std::string warning;
  bool contended = false;
  {
    std::lock_guard<std::mutex> l(mu_);
    const SteadyTime now = clock_.Now();
    warning = MaybeFlushLocked(now);
    if (contentions_ > options_.limit) {
      contended = true;
    } else if (auto it = ids_.find(uid); it != ids_.end()) {
      contended = it->second.state != State::kCandidate && it->second.at + options_.interval > now;
    }
  }
  Log(warning);
  return contended;
}

std::string ContentionTracker::Flush() {
  std::string warning;
  {
    std::lock_guard<std::mutex> l(mu_);
    warning = FlushLocked(clock_.Now());
  }
  Log(warning);
  return warning;
}

std::string ContentionTracker::MaybeFlushLocked(SteadyTime now) {
  if (!options_.auto_flush || now < next_flush_) return "";
  return FlushLocked(now);
}

std::string ContentionTracker::FlushLocked(SteadyTime now) {
  const bool cutoff = contentions_ > options_.limit;
  std::string warning = window_events_ > 0 ? WarningLocked(now, cutoff) : "";
  int still = 0;
  for (auto it = ids_.begin(); it != ids_.end();) {
    const Element& e = it->second;
    const auto age = now - e.at;
    const bool drop = e.state != State::kCandidate ? age > options_.interval
                                                   : age > 3 * options_.interval;
    if (drop) {
      it = ids_.erase(it);
      continue;
    }
    if (e.state == State::kContended) ++still;
    ++it;
  }
  contentions_ = still;
  window_events_ = 0;
  examples_.clear();
  window_start_ = now;
  next_flush_ = now + 2 * options_.interval;
  ++flushes_;
  if (!warning.empty()) {
    ++warnings_;
    last_warning_ = warning;
  }
  return warning;
}

std::string ContentionTracker::WarningLocked(SteadyTime now, bool cutoff) const {
  std::ostringstream out;
  out << "router \"" << options_.router_name << "\": " << window_events_
      << " status contention(s) in the last " << FormatDuration(now - window_start_)
      << ": another writer using router name \"" << options_.router_name
      << "\" changed our status.ingress entries to values this router does not compute (";
  for (size_t i = 0; i < examples_.size(); ++i) {
    const Example& x = examples_[i];
    if (i > 0) out << "; ";
    out << x.route_key << " ours=" << DescribeEntry(x.ours)
        << " theirs=" << DescribeEntry(x.theirs);
  }
  out << "). Writes to contended routes are paused for " << FormatDuration(options_.interval);
  if (cutoff) {
    out << ", and more than " << options_.limit
        << " contentions paused all changes of existing entries for this window";
  }
  out << ". Make the configuration of every router using router name \""
      << options_.router_name
      << "\" consistent (hostname template, canonical hostname, wildcard policy, route and "
         "namespace selectors), or give them different router names.";
  return out.str();
}

kubeclient::SteadyTime ContentionTracker::NextFlush() const {
  std::lock_guard<std::mutex> l(mu_);
  return next_flush_;
}

std::string ContentionTracker::LastWarning() const {
  std::lock_guard<std::mutex> l(mu_);
  return last_warning_;
}

ContentionSnapshot ContentionTracker::Snapshot() const {
  std::lock_guard<std::mutex> l(mu_);
  ContentionSnapshot s;
  s.contentions = contentions_;
  s.contentions_in_window = window_events_;
  s.tracked_routes = ids_.size();
  for (const auto& [uid, e] : ids_) {
    if (e.state == State::kContended) ++s.contended_routes;
    if (e.state == State::kSuspect) ++s.suspect_routes;
  }
  s.flushes = flushes_;
  s.warnings = warnings_;
  s.events_total = events_total_;
  s.cutoff_active = contentions_ > options_.limit;
  return s;
}

}  // namespace routestatus::conflict
