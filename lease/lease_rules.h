#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace routestatus::lease {

// The rules beyond the plain progress deadline (D = clamp(2 x p95 of the
// waits), one jitter draw per wait), each on by default and switchable off
// only for the ablation that keeps them (docs/lease.md): route-sim's and
// the controller's hidden --lease-rules-off. Value type.
struct LeaseRules {
  // Our own answered writes (probes, election writes) are samples of D.
  bool own_write_samples = true;
  // The largest of two or more samples never sets the quantile; one sample
  // alone counts at most as the minimum deadline.
  bool sample_guard = true;
  // Only a peer's write of a key we held ends a sample, counted from when
  // we began holding it (otherwise any peer write while holding does,
  // counted from the wait's start).
  bool held_key_samples = true;
  // The jitter's stretch is capped (1 s, and 2 s from the wait's start
  // unless D alone comes near it); otherwise it is jitter x D.
  bool stretch_caps = true;
  // In progress mode a follower's lease expiry is no faster detector: its
  // expiry is at least the longest takeover wait, and its expired work
  // waits for the takeover wait.
  bool expiry_waits_for_takeover = true;
  // A write that succeeds makes us lead only if no other writer showed
  // itself while it was out (we began following, or a peer's write reached
  // our watch while we followed).
  bool lead_uncontested = true;
  // A peer's write of a key we held that came later than D, but within
  // twice our own last write's answer time, is a sample too, of a second
  // estimator; D is the larger of the two, so never smaller than without
  // it (a restarted replica learns a slow leader's pace from its peers, not
  // from contested takeovers).
  bool late_peer_samples = true;
};

// The rules' names, in the order above ("own-write-samples", ...).
std::vector<std::string> LeaseRuleNames();

// `rules` with the comma-separated names in `off` switched off ("all": every
// one; "" or "none": none); nullopt naming nothing when a name is unknown.
std::optional<LeaseRules> LeaseRulesOff(LeaseRules rules, std::string_view off);

}  // namespace routestatus::lease
