#include "lease/write_lease.h"

namespace routestatus::lease {

const char* LeaseStateName(LeaseState state) {
  switch (state) {
    case LeaseState::kElection:
      return "election";
    case LeaseState::kLeader:
      return "leader";
    case LeaseState::kFollower:
      return "follower";
  }
  return "unknown";
}

}  // namespace routestatus::lease
