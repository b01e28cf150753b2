// The failover probes: when a probe's clock starts, what ends it, and its
// verdict (issue 59; test/sim/README.md, "What the checker measures").
#include <algorithm>
#include <string>

#include "test/sim/engine.h"

namespace routestatus::sim::internal {

using std::chrono::milliseconds;

void Engine::AddProbe(const std::string& key) {
  Probe p;
  p.id = ++next_probe_id_;
  p.key = key;
  p.expect = Expectations(0).at(key);
  p.changed = clock_.Now();
  p.bound = FailoverBound();
  p.seq = api_.last_seq();
  p.races_before = races_injected_;
  probes_.push_back(p);
  const int64_t id = p.id;
  After(kReceiveWindow, [this, id] { ProbeVerdict(id); });
}

Engine::ProbeClock Engine::ClockOf(const Probe& p, SteadyTime until) const {
  ProbeClock c{p.changed, ClockStart::kChange, 0};
  if (p.seen && *p.seen > c.start) c = {*p.seen, ClockStart::kDelivery, 0};
  // Why any writer's death after the change: no controller can write
  // before the failure it recovers from; a lost race's winner wrote, then
  // died, and its followers must detect it again (issue 59 rules 1 and 3).
  for (SteadyTime death : deaths_) {
    if (death <= p.changed || death > until) continue;
    ++c.deaths;
    if (death > c.start) c = {death, ClockStart::kDeath, c.deaths};
  }
  return c;
}

void Engine::RecordDeath(const std::string& what) {
  deaths_.push_back(clock_.Now());
  if (!probes_.empty()) Trace("failover: a writer died (" + what + "); open probes count from now");
}

void Engine::SeenBy(int replica, int64_t id) {
  auto it = std::find_if(probes_.begin(), probes_.end(), [id](const Probe& p) { return p.id == id; });
  if (it == probes_.end() || it->seen) return;
  if (replica < 0 || static_cast<size_t>(replica) >= slots_.size()) {
    it->seen = clock_.Now();
    After(it->bound, [this, id] { ProbeVerdict(id); });
    return;
  }
  const Slot& slot = slots_[static_cast<size_t>(replica)];
  // Why a crashed receiver ends the wait: its next life lists the route
  // afresh, and that delivery counts then.
  if (!slot.live) return;
  if (slot.live->Synced()) {
    it->seen = clock_.Now();
    // Its verdict: once its bound has passed since its clock's start.
    After(it->bound, [this, id] { ProbeVerdict(id); });
    return;
  }
  it->awaiting_sync = true;
  After(milliseconds(10), [this, replica, id] { SeenBy(replica, id); });
}

void Engine::ProbeDelivered(const std::string& key, int64_t seq, int receiver) {
  // Collected first: SeenBy may schedule, never erase, but keep it simple.
  std::vector<int64_t> ids;
  for (const Probe& p : probes_) {
    if (!p.seen && p.key == key && seq >= p.seq) ids.push_back(p.id);
  }
  for (int64_t id : ids) SeenBy(receiver, id);
}

void Engine::ProbeWritten(const Route& written) {
  const std::string key = written.Key();
  for (auto it = probes_.begin(); it != probes_.end();) {
    if (it->key != key || !Matches(written, it->expect)) {
      ++it;
      continue;
    }
    // Issue 59 rule 1: from the latest of the change, its delivery and the
    // last writer's death before this write, to this write's commit, less
    // only the delay the simulator injected into this one request (it
    // cannot be faster than its own stall). The raw figure beside it
    // counts from the change.
    const Probe& p = *it;
    const SteadyTime now = clock_.Now();
    const ProbeClock c = ClockOf(p, now);
    ProbeFigure f;
    f.raw = now - p.changed;
    f.measured = now - c.start - api_.request_injected();
    f.moved = c.start - p.changed;
    f.start = c.cause;
    result_.failover.push_back(f);
    ++result_.failovers;
    result_.max_failover_gap = std::max(result_.max_failover_gap, f.measured);
    Trace("failover: change of " + key + " written " + Ms(f.raw) + " after it was made, " +
          Ms(f.measured) + " after its clock's start (" + ClockStartName(c.cause) + ", " +
          Ms(f.moved) + " after the change) less the " + Ms(api_.request_injected()) +
          " the simulator injected into its request (bound " + Ms(p.bound) + ")");
    if (f.measured > p.bound) {
      Fail("failover: change of " + key + " written " + Ms(f.measured) + " after its clock's start (" +
           Ms(f.raw) + " raw, from the " + ClockStartName(c.cause) +
           "; less the delay injected into its request), more than the bound (" + Ms(p.bound) +
           (o_.takeover == lease::TakeoverMode::kOff ? ": lease interval + retry)"
                                                    : ": failure -> change written, with the "
                                                      "takeover)") +
           "; " + ProbeCircumstances(p));
    }
    it = probes_.erase(it);
  }
}

void Engine::ProbesReplaced() {
  if (probes_.empty()) return;
  const auto now_expected = Expectations(0);
  for (auto it = probes_.begin(); it != probes_.end();) {
    auto e = now_expected.find(it->key);
    if (e != now_expected.end() && e->second == it->expect) {
      ++it;
      continue;
    }
    // Why here, not at the route's next write: the owner replaced what the
    // probe waits for, and the entry it expected may never be written (or
    // written only when a namespace comes back: partitioned outage seed
    // 99552570918062, ns-1 left the shard 0.8 s after the probe's host
    // change of a route with no entry yet and came back 4.1 s later). The
    // change must have been written within the bound before that, counted
    // as if a write were on its way with the scenario's fixed injected
    // delay only. A change nobody received yet is no sample.
    const ProbeClock c = ClockOf(*it, clock_.Now());
    const Duration waited = clock_.Now() - c.start;
    const Duration fixed = slots_.empty() ? Duration::zero() : slots_[0].spec.delays.put_request.base;
    if (it->seen && waited - fixed > it->bound) {
      Fail("failover: change of " + it->key + " not written " + Ms(waited) +
           " after its clock's start (" + ClockStartName(c.cause) + "), when an owner replaced it (bound " +
           Ms(it->bound) + "); " + ProbeCircumstances(*it));
    }
    Trace("failover: probe of " + it->key + " replaced by an owner " + Ms(waited) +
          " after its clock's start" + (it->seen ? "" : " (not received yet: no sample)"));
    it = probes_.erase(it);
  }
}

void Engine::ProbeVerdict(int64_t id) {
  auto it = std::find_if(probes_.begin(), probes_.end(), [id](const Probe& p) { return p.id == id; });
  if (it == probes_.end()) return;
  const SteadyTime now = clock_.Now();
  if (!it->seen) {
    if (now - it->changed < kReceiveWindow) {
      After(it->changed + kReceiveWindow - now, [this, id] { ProbeVerdict(id); });
      return;
    }
    ++result_.probes_not_received;
    Trace("failover: probe of " + it->key + ": no live, synced replica received the change within " +
          Ms(kReceiveWindow) + " (no failover sample)");
    probes_.erase(it);
    return;
  }
  // Why the longest injected request delay too: a write still on its way
  // may land later and still measure within the bound (the slow part of a
  // request leg is up to 1 s, plus the scenario's fixed delay).
  const Duration longest = slots_.empty() ? Duration::zero()
                                          : slots_[0].spec.delays.put_request.base +
                                                slots_[0].spec.delays.put_request.slow;
  const ProbeClock c = ClockOf(*it, now);
  const SteadyTime due = c.start + it->bound + longest;
  if (now < due) {
    After(due - now + milliseconds(1), [this, id] { ProbeVerdict(id); });
    return;
  }
  Fail("failover: change of " + it->key + " still not written " + Ms(now - c.start) +
       " after its clock's start (" + ClockStartName(c.cause) + ", " + Ms(now - it->changed) +
       " after the change; bound " + Ms(it->bound) + "); " + ProbeCircumstances(*it));
  probes_.erase(it);
}

void Engine::FinishProbes() {
  for (const Probe& p : probes_) {
    if (!p.seen) {
      ++result_.probes_not_received;
      continue;
    }
    Fail("failover: change of " + p.key + " still not written when the fleet settled, " +
         Ms(clock_.Now() - p.changed) + " after the change; " + ProbeCircumstances(p));
  }
  probes_.clear();
}

std::string Engine::ProbeCircumstances(const Probe& p) const {
  const int64_t races = races_injected_ - p.races_before;
  const ProbeClock c = ClockOf(p, clock_.Now());
  std::string out = "meanwhile " + std::to_string(races) + " lost race(s) and " +
                    std::to_string(c.deaths) + " writer death(s); ";
  if (!p.seen) return out + "no live, synced replica had the change";
  return out + "a live, synced replica had the change after " + Ms(*p.seen - p.changed);
}

}  // namespace routestatus::sim::internal
