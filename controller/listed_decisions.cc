#include "controller/listed_decisions.h"

#include <algorithm>

namespace routestatus::controller {

uint64_t ListedDecisions::generation() const {
  std::lock_guard<std::mutex> lock(mu_);
  return generation_;
}

void ListedDecisions::Invalidate() {
  std::lock_guard<std::mutex> lock(mu_);
  ++generation_;
  ClearLocked();
}

void ListedDecisions::Batch::Add(std::shared_ptr<const kubeclient::Route> route, bool admitted,
                                 std::string_view reason) {
  if (!route) return;
  // Why a linear search: the reasons are a handful of constants.
  auto it = std::find(reasons_.begin(), reasons_.end(), reason);
  if (it == reasons_.end()) it = reasons_.insert(reasons_.end(), std::string(reason));
  kept_.push_back({std::move(route), static_cast<uint16_t>(it - reasons_.begin()), admitted, false});
}

void ListedDecisions::Install(uint64_t generation, Batch batch) {
  if (batch.kept_.empty()) return;  // frees what Reserve took (a cold start keeps nothing)
  std::sort(batch.kept_.begin(), batch.kept_.end(),
            [](const Kept& a, const Kept& b) { return a.route.get() < b.route.get(); });
  std::lock_guard<std::mutex> lock(mu_);
  if (generation != generation_) return;  // a cache changed while the report read it
  kept_ = std::move(batch.kept_);
  reasons_ = std::move(batch.reasons_);
  left_ = kept_.size();
  any_.store(left_ > 0, std::memory_order_release);
}

std::optional<ListedDecisions::Taken> ListedDecisions::Take(const kubeclient::Route* route) {
  if (!any_.load(std::memory_order_acquire)) return std::nullopt;
  std::lock_guard<std::mutex> lock(mu_);
  if (left_ == 0 || route == nullptr) return std::nullopt;
  auto it = std::lower_bound(kept_.begin(), kept_.end(), route,
                             [](const Kept& k, const kubeclient::Route* r) {
                               return k.route.get() < r;
                             });
  if (it == kept_.end() || it->route.get() != route || it->taken) return std::nullopt;
  it->taken = true;
  Taken out{it->admitted, reasons_[it->reason]};
  if (--left_ == 0) ClearLocked();
  return out;
}

size_t ListedDecisions::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return left_;
}

void ListedDecisions::ClearLocked() {
  // Why swap with empties: clear() would keep the capacity.
  std::vector<Kept>().swap(kept_);
  std::vector<std::string>().swap(reasons_);
  left_ = 0;
  any_.store(false, std::memory_order_release);
}

}  // namespace routestatus::controller
