#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace routestatus::e2e {

// A container's resource limits for one process, as the kubelet applies a
// pod's `resources.limits` on a cgroup v1 node: a CFS quota of
// `cpu_millis`/1000 CPUs per 100 ms period (cpu.cfs_quota_us) and a memory
// limit (memory.limit_in_bytes; the kernel reclaims, then OOM-kills, at
// it). Made of /sys/fs/cgroup/{cpu,memory}/routestatus-bench/<name>; the
// process joins them before it execs (LaunchPrefix), so nothing it does runs
// outside them. Needs root and cgroup v1 controllers; Create() says
// kUnavailable otherwise. Removed on destruction (its processes must have
// exited). Not thread-safe.
class PodLimits {
 public:
  explicit PodLimits(std::string name) : name_(std::move(name)) {}
  ~PodLimits();
  PodLimits(const PodLimits&) = delete;
  PodLimits& operator=(const PodLimits&) = delete;

  Status Create(int cpu_millis, uint64_t memory_bytes);
  // What to put before a command's argv so that it runs inside the
  // cgroups: a shell writes its pid into them and execs the command (the
  // same pid).
  std::vector<std::string> LaunchPrefix() const;
  // The largest memory use the cgroup has seen (memory.max_usage_in_bytes:
  // RSS and page cache, as the kubelet's limit counts it), MiB.
  double PeakMemoryMiB() const;
  // Times the limit was hit (memory.failcnt) and OOM kills (oom_kill in
  // memory.oom_control; 0 where the kernel does not report it).
  uint64_t LimitHits() const;
  uint64_t OomKills() const;

 private:
  std::string Dir(const char* controller) const;
  std::string name_;
  bool created_ = false;
};

}  // namespace routestatus::e2e
