#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "e2e/harness/cluster.h"
#include "kubeclient/route.h"

namespace routestatus::e2e {

// One change a user makes to a route.
enum class ChangeKind { kCreate, kHostChange, kLabelChange, kDelete };
const char* ChangeKindName(ChangeKind kind);

struct RouteChange {
  ChangeKind kind = ChangeKind::kCreate;
  std::string ns;
  std::string name;
  std::string host;                           // create / host change
  std::map<std::string, std::string> labels;  // create / label change
  // Whether a router whose shard excludes label shard=out must write our
  // entry for it (create in shard, host change in shard, move in or out).
  bool needs_write = false;
};

// Relative weights of the change kinds a generator draws.
struct ChurnMix {
  int create = 3;
  int host_change = 3;
  int label_change = 2;
  int del = 2;
};

// Generates `count` random changes in `ns` (deterministic for `seed`),
// tracking which routes exist so that every change is valid when applied in
// order. Routes are named "<prefix>-<n>", hosts are unique (no claims), and
// label changes toggle shard=in / shard=out. `existing` names routes that
// already exist (shard=in, host "<name>.<ns>.apps.example.com").
// Pure function.
std::vector<RouteChange> RandomChanges(const std::string& ns, const std::string& prefix, int count,
                                       uint64_t seed, const ChurnMix& mix = {},
                                       const std::vector<std::string>& existing = {});

// What happened when a change was applied.
struct AppliedChange {
  RouteChange change;
  std::chrono::steady_clock::time_point at;  // when the API call returned
  Status status;
};

// Applies `changes` in order, paced at `per_second` (0 = as fast as
// possible), from the calling thread. Blocks until all are applied.
// Transient failures (transport, 429, 5xx) are retried for ~5 s.
std::vector<AppliedChange> ApplyChanges(TestCluster& cluster, const std::vector<RouteChange>& changes,
                                        double per_second);

// Count of changes with needs_write.
int CountNeedingWrites(const std::vector<RouteChange>& changes);

// The state RandomChanges' changes aim at for a router whose shard excludes
// label shard=out: a route in the shard is admitted by `router` with
// host == spec.host; a route out of it has no entry of `router`.
bool InDesiredState(const kubeclient::Route& route, const std::string& router);

}  // namespace routestatus::e2e
