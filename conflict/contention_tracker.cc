#include "conflict/contention_tracker.h"

#include <algorithm>
#include <functional>
#include <string_view>
#include <sstream>
#include <utility>

#include <glog/logging.h>

namespace routestatus::conflict {

using kubeclient::RouteIngress;

namespace {

// "6m", "90s" -> "1m30s", "250ms".
std::string FormatDuration(Duration d) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
  if (ms < 1000) return std::to_string(ms) + "ms";
  const auto s = ms / 1000;
  std::string out;
  if (s >= 60) out += std::to_string(s / 60) + "m";
  if (s % 60 != 0 || s < 60) out += std::to_string(s % 60) + "s";
  return out;
}

// The facts of an observation that the entries tell (the shell adds the
// record, the difference, the cut-off and the time).
ObservationFacts FactsOf(const std::optional<RouteIngress>& old_entry,
                         const std::optional<RouteIngress>& new_entry,
                         const RouteIngress* desired) {
  ObservationFacts facts;
  facts.had_entry = old_entry.has_value();
  facts.has_entry = new_entry.has_value();
  facts.computes_entry = desired != nullptr;
  facts.new_is_desired = new_entry ? desired != nullptr &&
                                         kubeclient::IngressEqual(*new_entry, *desired)
                                   : desired == nullptr;
  facts.old_is_desired =
      old_entry && desired != nullptr && kubeclient::IngressEqual(*old_entry, *desired);
  facts.new_print = new_entry ? kubeclient::IngressFingerprint(*new_entry) : 0;
  return facts;
}

// The VLOG(4) line of a per-route decision.
void LogNote(ObservationNote note, const std::string& route_key,
             const std::optional<RouteIngress>& new_entry, Duration suspect_block) {
  switch (note) {
    case ObservationNote::kNone: break;
    case ObservationNote::kDesired:
      VLOG(4) << "contention: " << route_key << " changed to our desired entry";
      break;
    case ObservationNote::kSuspect:
      VLOG(4) << "contention: " << route_key << " changed by another writer to "
              << ContentionTracker::DescribeEntry(new_entry)
              << ", which differs from ours only in what other objects decide (an older view?): "
                 "suspect, not changed by us for "
              << FormatDuration(suspect_block) << ", not counted";
      break;
    case ObservationNote::kCandidate:
      VLOG(4) << "contention: " << route_key << " is a candidate";
      break;
  }
}

}  // namespace

ContentionTracker::ContentionTracker(const Clock& clock,
                                     ContentionTrackerOptions options)
    : clock_(clock), options_(std::move(options)), started_(clock.WallNow()) {
  CHECK(options_.interval > Duration::zero())
      << "contention interval must be > 0";
  CHECK(options_.limit >= 0) << "contention limit must be >= 0";
  window_start_ = clock_.Now();
  next_flush_ = window_start_ + 2 * options_.interval;
}

std::string ContentionTracker::DescribeEntry(const std::optional<RouteIngress>& entry) {
  return entry ? DescribeEntry(*entry) : "{no entry}";
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

uint64_t ContentionTracker::IdOf(const std::string& uid) {
  return std::hash<std::string_view>()(uid);
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
    MaybeFlushLocked(now);
    ObserveLocked(uid, route_key, old_entry, new_entry, desired, difference, now);
    warning = std::exchange(pending_warning_, std::string());
  }
  Log(warning);
}

bool ContentionTracker::WrittenSinceWeStarted(SystemTime written_at) const {
  return written_at >= started_ - options_.listed_skew;
}

bool ContentionTracker::WrittenJustBeforeWeStarted(SystemTime written_at) const {
  return !WrittenSinceWeStarted(written_at) &&
         written_at >= started_ - options_.listed_skew - options_.listed_recent;
}

void ContentionTracker::Listed(const std::string& uid, const std::string& route_key,
                               const RouteIngress& entry, const RouteIngress* desired,
                               Difference difference, SystemTime written_at) {
  if (desired == nullptr || difference != Difference::kConfiguration) return;
  if (!WrittenSinceWeStarted(written_at) && !WrittenJustBeforeWeStarted(written_at)) return;
  VLOG(2) << "contention: " << route_key
          << " was listed with an entry a router configured differently wrote "
          << std::chrono::duration_cast<std::chrono::milliseconds>(written_at - started_).count()
          << " ms after we started";
  Appeared(uid, route_key, entry, desired, difference);
}

void ContentionTracker::Appeared(const std::string& uid, const std::string& route_key,
                                 const RouteIngress& new_entry, const RouteIngress* desired,
                                 Difference difference) {
  std::string warning;
  {
    std::lock_guard<std::mutex> l(mu_);
    const SteadyTime now = clock_.Now();
    MaybeFlushLocked(now);
    ObserveLocked(uid, route_key, std::nullopt, new_entry, desired, difference, now);
    warning = std::exchange(pending_warning_, std::string());
  }
  Log(warning);
}

void ContentionTracker::Removed(const std::string& uid, const std::string& route_key,
                                const RouteIngress& old_entry, const RouteIngress* desired) {
  std::string warning;
  {
    std::lock_guard<std::mutex> l(mu_);
    const SteadyTime now = clock_.Now();
    MaybeFlushLocked(now);
    ObserveLocked(uid, route_key, old_entry, std::nullopt, desired, Difference::kView, now);
    warning = std::exchange(pending_warning_, std::string());
  }
  Log(warning);
}

void ContentionTracker::ObserveLocked(const std::string& uid, const std::string& route_key,
                                      const std::optional<RouteIngress>& old_entry,
                                      const std::optional<RouteIngress>& new_entry,
                                      const RouteIngress* desired, Difference difference,
                                      SteadyTime now) {
  const uint64_t id = IdOf(uid);
  auto it = ids_.find(id);
  ObservationFacts facts = FactsOf(old_entry, new_entry, desired);
  if (it != ids_.end()) facts.record = it->second;
  facts.view_only = difference == Difference::kView;
  facts.cutoff = contentions_ > options_.limit;
  facts.now = now;
  const ObservationEffects effects = InterpretObservation(facts);

  if (effects.record && it != ids_.end()) {
    it->second = *effects.record;
  } else if (effects.record) {
    ids_.emplace(id, *effects.record);
  } else if (it != ids_.end()) {
    ids_.erase(it);
  }
  LogNote(effects.note, route_key, new_entry, options_.suspect_block);
  if (!effects.counted) return;
  std::optional<RouteIngress> ours;
  if (desired != nullptr) ours = *desired;
  CountLocked(route_key, ours, old_entry, new_entry, now);
}

void ContentionTracker::RestoredLocked(RouteRecord& e, SteadyTime now) const {
  e.state = RouteState::kCandidate;
  // Why only after suspect_block: until every view has caught up, a restore
  // (ours or a peer's) may itself come from an older view.
  if (now - e.suspected >= options_.suspect_block) e.armed_until = now + options_.interval;
}

void ContentionTracker::CountLocked(const std::string& route_key,
                                    const std::optional<RouteIngress>& ours,
                                    const std::optional<RouteIngress>& old_entry,
                                    const std::optional<RouteIngress>& new_entry, SteadyTime now) {
  const bool fresh = std::none_of(examples_.begin(), examples_.end(),
                                  [&](const Example& x) { return x.route_key == route_key; });
  if (fresh && examples_.size() < options_.max_examples) {
    examples_.push_back(Example{route_key, ours, new_entry});
  }
  VLOG(4) << "contention: " << route_key << " changed by another writer from "
          << DescribeEntry(old_entry) << " to " << DescribeEntry(new_entry);
  ++contentions_;
  ++window_events_;
  ++events_total_;
  if (contentions_ == options_.limit + 1) {
    VLOG(2) << "contention: more than " << options_.limit
            << " contentions; not changing existing entries until the window ends";
  }
  PromptWarningLocked(route_key, ours, new_entry, now);
}

void ContentionTracker::PromptWarningLocked(const std::string& route_key,
                                            const std::optional<RouteIngress>& ours,
                                            const std::optional<RouteIngress>& theirs,
                                            SteadyTime now) {
  // Why at once, at most one of each kind per window: an operator must not
  // wait for the flush (up to 2 x interval) to learn of a fight, and a
  // fight must not flood the log.
  std::string warning;
  if (contentions_ > options_.limit && !warned_cutoff_) {
    warned_cutoff_ = true;
    warned_contended_ = true;  // the cut-off warning names the routes too
    warning = WarningLocked(now, /*cutoff=*/true);
  } else if (!warned_contended_) {
    warned_contended_ = true;
    std::ostringstream out;
    out << "router \"" << options_.router_name << "\": another writer using router name \""
        << options_.router_name << "\" changed the status.ingress entry of " << route_key
        << " to a value this router does not compute (ours=" << DescribeEntry(ours)
        << " theirs=" << DescribeEntry(theirs) << "). Writes to this route are paused for "
        << FormatDuration(options_.interval) << "; more than " << options_.limit
        << " contentions pause all changes of existing entries. " << AdviceLocked();
    warning = out.str();
  }
  if (warning.empty()) return;
  ++warnings_;
  last_warning_ = warning;
  pending_warning_ = std::move(warning);
}

std::string ContentionTracker::AdviceLocked() const {
  return "Make the configuration of every router using router name \"" + options_.router_name +
         "\" consistent (hostname template, canonical hostname, wildcard policy, route and "
         "namespace selectors), or give them different router names.";
}

void ContentionTracker::Clear(const std::string& uid, const std::optional<RouteIngress>& written) {
  {
    std::lock_guard<std::mutex> l(mu_);
    const SteadyTime now = clock_.Now();
    MaybeFlushLocked(now);
    auto it = ids_.find(IdOf(uid));
    if (it == ids_.end() && written) it = ids_.emplace(IdOf(uid), RouteRecord{}).first;
    if (it != ids_.end()) {
      RouteRecord& e = it->second;
      if (e.state == RouteState::kSuspect) RestoredLocked(e, now);
      // Why: a write of ours over a fought value is the probe made when
      // its block ended.
      if (e.fought) e.probed = true;
      e.fought = false;
      e.held = false;
      e.at = now;
      e.state = RouteState::kCandidate;
      e.last = written ? kubeclient::IngressFingerprint(*written) : 0;
      e.own = true;
      // Why a removal is kept until its echo: when our view changes before
      // the echo arrives (a namespace rejoined the shard), the echo would
      // look like another writer removing what we now keep, and make the
      // route Suspect on our own write; our restore 15 s later then armed
      // it, and the next lagging view difference counted (the simulator's
      // claims seed 71387308572265). ObserveLocked forgets it at the echo.
    }
  }
}

void ContentionTracker::Agreed(const std::string& uid) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = ids_.find(IdOf(uid));
  if (it == ids_.end() || it->second.state != RouteState::kSuspect) return;
  it->second.state = RouteState::kCandidate;
  it->second.at = clock_.Now();
}

void ContentionTracker::Forget(const std::string& uid) {
  std::lock_guard<std::mutex> l(mu_);
  ids_.erase(IdOf(uid));
}

bool ContentionTracker::IsChangeContended(const std::string& uid, bool beyond_view) {
  bool contended = false;
  {
    std::lock_guard<std::mutex> l(mu_);
    const SteadyTime now = clock_.Now();
    MaybeFlushLocked(now);
    if (contentions_ > options_.limit) {
      contended = true;
    } else if (auto it = ids_.find(IdOf(uid)); it != ids_.end()) {
      contended = !(beyond_view && it->second.state == RouteState::kSuspect) &&
                  BlockedLocked(it->second, now);
    }
  }
  return contended;
}

bool ContentionTracker::BlockedLocked(const RouteRecord& e, SteadyTime now) const {
  switch (e.state) {
    case RouteState::kCandidate: return false;
    case RouteState::kSuspect: return e.at + options_.suspect_block > now;
    case RouteState::kContended: return e.held || e.at + options_.interval > now;
  }
  return false;
}

bool ContentionTracker::IsCreationBlocked(const std::string& uid) {
  std::lock_guard<std::mutex> l(mu_);
  const SteadyTime now = clock_.Now();
  MaybeFlushLocked(now);
  auto it = ids_.find(IdOf(uid));
  return it != ids_.end() && BlockedLocked(it->second, now);
}

Duration ContentionTracker::RecheckAfter(const std::string& uid) const {
  return RecheckIn(uid, /*cutoff_blocks=*/true);
}

Duration ContentionTracker::RecheckCreationAfter(const std::string& uid) const {
  return RecheckIn(uid, /*cutoff_blocks=*/false);
}

Duration ContentionTracker::RecheckIn(const std::string& uid, bool cutoff_blocks) const {
  std::lock_guard<std::mutex> l(mu_);
  const SteadyTime now = clock_.Now();
  auto left = [now](SteadyTime end) { return end > now ? end - now : Duration::zero(); };
  // Why the flush for every route under the cut-off: it ends only there
  // (when the count falls back to the limit); a route held by it, or by its
  // own block that outlasts it, is asked again then.
  auto it = ids_.find(IdOf(uid));
  if (it != ids_.end() && it->second.held) return Duration::zero();
  if (cutoff_blocks && contentions_ > options_.limit) return left(next_flush_);
  if (it == ids_.end()) return Duration::zero();
  switch (it->second.state) {
    case RouteState::kCandidate: return Duration::zero();
    case RouteState::kSuspect: return left(it->second.at + options_.suspect_block);
    case RouteState::kContended: return left(it->second.at + options_.interval);
  }
  return Duration::zero();
}

std::string ContentionTracker::Flush() {
  std::lock_guard<std::mutex> l(mu_);
  return FlushLocked(clock_.Now());
}

void ContentionTracker::MaybeFlushLocked(SteadyTime now) {
  if (options_.auto_flush && now >= next_flush_) FlushLocked(now);
}

std::string ContentionTracker::FlushLocked(SteadyTime now) {
  const bool cutoff = contentions_ > options_.limit;
  // Why only VLOG: each window's WARNINGs were logged when they happened
  // (PromptWarningLocked); the summary adds nothing an operator acts on.
  std::string summary = window_events_ > 0 ? WarningLocked(now, cutoff) : "";
  if (!summary.empty()) VLOG(1) << "contention: window summary: " << summary;
  int still = 0;
  for (auto it = ids_.begin(); it != ids_.end();) {
    RouteRecord& e = it->second;
    const auto age = now - e.at;
    const bool expired = e.state != RouteState::kCandidate ? age > options_.interval
                                                      : age > 3 * options_.interval;
    if (expired && e.state == RouteState::kContended && !e.held) {
      // Why kept as a Candidate: whether our next write of it is a probe
      // (fought) must outlive the window, or a fight restarts every flush.
      e.state = RouteState::kCandidate;
      e.at = now;
      ++it;
      continue;
    }
    // Why a fought or held record stays: until we rewrite the value that
    // fought us, our next write of it is the probe (see RouteRecord::held).
    if (expired && !e.held && !e.fought) {
      it = ids_.erase(it);
      continue;
    }
    if (e.state == RouteState::kContended && !e.held) ++still;
    ++it;
  }
  contentions_ = still;
  window_events_ = 0;
  examples_.clear();
  window_start_ = now;
  next_flush_ = now + 2 * options_.interval;
  ++flushes_;
  warned_contended_ = false;
  warned_cutoff_ = false;
  return summary;
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
  out << ". " << AdviceLocked();
  return out.str();
}

SteadyTime ContentionTracker::NextFlush() const {
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
  for (const auto& [id, e] : ids_) {
    if (e.state == RouteState::kContended) ++s.contended_routes;
    if (e.state == RouteState::kSuspect) ++s.suspect_routes;
  }
  s.flushes = flushes_;
  s.warnings = warnings_;
  s.events_total = events_total_;
  s.cutoff_active = contentions_ > options_.limit;
  return s;
}

}  // namespace routestatus::conflict
