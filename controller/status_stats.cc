#include "controller/status_stats.h"

namespace routestatus::controller {

void StatusStats::SetAdmission(const std::string& key, const std::string& result,
                               const std::string& reason) {
  std::string label = result + "/" + reason;
  std::lock_guard<std::mutex> lock(mu_);
  auto [it, inserted] = admission_by_key_.try_emplace(key, label);
  if (!inserted) {
    if (it->second == label) return;
    if (--admission_counts_[it->second] == 0) admission_counts_.erase(it->second);
    it->second = label;
  }
  ++admission_counts_[label];
}

void StatusStats::ForgetAdmission(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = admission_by_key_.find(key);
  if (it == admission_by_key_.end()) return;
  if (--admission_counts_[it->second] == 0) admission_counts_.erase(it->second);
  admission_by_key_.erase(it);
}

std::map<std::string, int64_t> StatusStats::AdmissionCounts() const {
  std::lock_guard<std::mutex> lock(mu_);
  return admission_counts_;
}

void StatusStats::CountWriteError(const std::string& reason) {
  std::lock_guard<std::mutex> lock(mu_);
  ++write_errors_[reason];
}

std::map<std::string, int64_t> StatusStats::WriteErrorsByReason() const {
  std::lock_guard<std::mutex> lock(mu_);
  return write_errors_;
}

}  // namespace routestatus::controller
