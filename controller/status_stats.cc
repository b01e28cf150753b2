#include "controller/status_stats.h"

#include <functional>

namespace routestatus::controller {

void StatusStats::SetAdmission(const std::string& key, const std::string& result,
                               const std::string& reason) {
  std::string label = result + "/" + reason;
  std::lock_guard<std::mutex> lock(mu_);
  auto* counted = &*admission_counts_.try_emplace(std::move(label), 0).first;
  auto [it, inserted] = admission_by_key_.try_emplace(std::hash<std::string>()(key), counted);
  if (!inserted) {
    if (it->second == counted) return;
    --it->second->second;
    it->second = counted;
  }
  ++counted->second;
}

void StatusStats::ForgetAdmission(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = admission_by_key_.find(std::hash<std::string>()(key));
  if (it == admission_by_key_.end()) return;
  --it->second->second;
  admission_by_key_.erase(it);
}

void StatusStats::ReserveAdmissions(size_t routes) {
  std::lock_guard<std::mutex> lock(mu_);
  admission_by_key_.reserve(routes);
}

std::map<std::string, int64_t> StatusStats::AdmissionCounts() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::map<std::string, int64_t> out;
  for (const auto& [label, n] : admission_counts_) {
    if (n > 0) out.emplace_hint(out.end(), label, n);
  }
  return out;
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
