#include "e2e/harness/pod_limits.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace routestatus::e2e {
namespace {

constexpr const char* kRoot = "/sys/fs/cgroup";
constexpr const char* kParent = "routestatus-bench";

bool WriteFile(const std::string& path, const std::string& value) {
  std::ofstream out(path);
  out << value;
  out.flush();
  return static_cast<bool>(out);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

std::string PodLimits::Dir(const char* controller) const {
  return std::string(kRoot) + "/" + controller + "/" + kParent + "/" + name_;
}

Status PodLimits::Create(int cpu_millis, uint64_t memory_bytes) {
  for (const char* controller : {"cpu", "memory"}) {
    const std::string parent = std::string(kRoot) + "/" + controller + "/" + kParent;
    if (::mkdir(parent.c_str(), 0755) != 0 && errno != EEXIST) {
      return Status(StatusCode::kUnavailable,
                    "cannot create " + parent + ": " + std::strerror(errno) +
                        " (pod limits need root and cgroup v1 cpu and memory controllers)");
    }
    const std::string dir = Dir(controller);
    if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
      return Status(StatusCode::kUnavailable, "cannot create " + dir + ": " + std::strerror(errno));
    }
  }
  created_ = true;
  // Why the kubelet's arithmetic: quota = millis x period / 1000.
  if (!WriteFile(Dir("cpu") + "/cpu.cfs_period_us", "100000") ||
      !WriteFile(Dir("cpu") + "/cpu.cfs_quota_us", std::to_string(cpu_millis * 100)) ||
      !WriteFile(Dir("memory") + "/memory.limit_in_bytes", std::to_string(memory_bytes)) ||
      !WriteFile(Dir("memory") + "/memory.max_usage_in_bytes", "0")) {
    return Status(StatusCode::kUnavailable, "cannot set the limits of " + Dir("cpu"));
  }
  return Status::Ok();
}

std::vector<std::string> PodLimits::LaunchPrefix() const {
  return {"/bin/sh", "-c",
          "echo $$ > " + Dir("cpu") + "/cgroup.procs && echo $$ > " + Dir("memory") +
              "/cgroup.procs && exec \"$@\"",
          "sh"};
}

double PodLimits::PeakMemoryMiB() const {
  return std::atof(ReadFile(Dir("memory") + "/memory.max_usage_in_bytes").c_str()) / (1 << 20);
}

uint64_t PodLimits::LimitHits() const {
  return std::strtoull(ReadFile(Dir("memory") + "/memory.failcnt").c_str(), nullptr, 10);
}

uint64_t PodLimits::OomKills() const {
  std::istringstream in(ReadFile(Dir("memory") + "/memory.oom_control"));
  std::string key;
  uint64_t value = 0;
  while (in >> key >> value) {
    if (key == "oom_kill") return value;
  }
  return 0;
}

PodLimits::~PodLimits() {
  if (!created_) return;
  ::rmdir(Dir("cpu").c_str());
  ::rmdir(Dir("memory").c_str());
}

}  // namespace routestatus::e2e
