#include "controller/tracker_gate.h"

#include <glog/logging.h>

namespace routestatus::controller {

TrackerGate::TrackerGate(conflict::ContentionTracker& tracker, std::string router_name)
    : tracker_(tracker), router_name_(std::move(router_name)) {}

void TrackerGate::OnAdd(const Ptr&, bool) {
  std::lock_guard<std::mutex> lock(mu_);
  old_.reset();
  new_.reset();
}

void TrackerGate::OnUpdate(const Ptr& old_obj, const Ptr& new_obj) {
  std::lock_guard<std::mutex> lock(mu_);
  old_ = old_obj;
  new_ = new_obj;
}

void TrackerGate::OnDelete(const Ptr& last) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    old_.reset();
    new_.reset();
  }
  if (last) tracker_.Forget(last->metadata.uid);
}

void TrackerGate::Changed(const std::string& uid, const kubeclient::RouteIngress& entry) {
  Ptr old_obj, new_obj;
  {
    std::lock_guard<std::mutex> lock(mu_);
    old_obj = old_;
    new_obj = new_;
  }
  std::optional<kubeclient::RouteIngress> old_entry;
  if (old_obj) old_entry = old_obj->FindIngress(router_name_);
  if (!old_entry || !new_obj || new_obj->metadata.uid != uid) {
    // Why not CHECK: a misordered registration must not crash the process;
    // it only weakens detection, so say so once in a while.
    LOG_EVERY_N(WARNING, 100) << "contention: change of " << uid
                              << " without the update that caused it; ignored";
    return;
  }
  std::optional<kubeclient::RouteIngress> desired;
  if (syncer_ != nullptr) desired = syncer_->Desired(*new_obj, nullptr);
  tracker_.Changed(uid, new_obj->Key(), *old_entry, entry, desired ? &*desired : nullptr);
}

void TrackerGate::Appeared(const std::string& uid, const kubeclient::RouteIngress& entry) {
  Ptr new_obj;
  {
    std::lock_guard<std::mutex> lock(mu_);
    new_obj = new_;
  }
  if (!new_obj || new_obj->metadata.uid != uid || syncer_ == nullptr) return;
  std::optional<kubeclient::RouteIngress> desired = syncer_->Desired(*new_obj, nullptr);
  tracker_.Appeared(uid, new_obj->Key(), entry, desired ? &*desired : nullptr);
}

bool TrackerGate::IsChangeContended(const std::string& uid) {
  return tracker_.IsChangeContended(uid);
}

void TrackerGate::Clear(const std::string& uid,
                        const std::optional<kubeclient::RouteIngress>& written) {
  tracker_.Clear(uid, written);
}

}  // namespace routestatus::controller
