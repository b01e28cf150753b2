#pragma once

#include "lease/backoff_write_lease.h"

namespace routestatus::lease {

// The write lease as openshift-router runs it (pkg/router/writerlease, a
// 60 s lease and a 3 s retry): no start-up election delay, Extend in
// Election does not make a replica follow, a follower waits at least two
// base backoff steps (40 ms) and otherwise for its lease to expire (the
// backoff grows to the 60 s cap with every write it sees), a leader never
// steps down on seeing another writer, and no takeover: a follower notices
// a dead leader only when its lease expires. The defaults of
// WriteLeaseOptions are route-status-controller's; this preset is
// `--lease-preset=openshift` and the benchmarks' comparison. Pure.
WriteLeaseOptions OpenshiftLikeLeaseOptions();

}  // namespace routestatus::lease
