#include "lease/lease_presets.h"

namespace routestatus::lease {

WriteLeaseOptions OpenshiftLikeLeaseOptions() {
  WriteLeaseOptions o;
  o.interval = std::chrono::seconds(60);
  o.retry = std::chrono::seconds(3);
  o.election_delay = Duration::zero();
  o.election_follows_extend = false;
  o.follower_min_delay = Duration::zero();  // two base steps: 40 ms
  o.follower_delay_jitter = false;
  o.leader_follows_foreign_extend = false;
  o.takeover.mode = TakeoverMode::kOff;
  return o;
}

}  // namespace routestatus::lease
