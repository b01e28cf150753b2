#include "test/sim/sim_replica.h"

#include <glog/logging.h>

namespace routestatus::sim {

using kubeclient::Route;

SimStore::Ptr SimStore::Get(const std::string& key) const {
  auto it = objects_.find(key);
  return it == objects_.end() ? nullptr : it->second;
}

std::vector<SimStore::Ptr> SimStore::List() const {
  std::vector<Ptr> out;
  out.reserve(objects_.size());
  for (const auto& [key, obj] : objects_) out.push_back(obj);
  return out;
}

std::vector<SimStore::Ptr> SimStore::ByIndex(const std::string& index,
                                             const std::string& value) const {
  std::vector<Ptr> out;
  if (index != controller::kRoutesByHostIndex) return out;
  auto it = hosts_.find(value);
  if (it == hosts_.end()) return out;
  for (const auto& key : it->second) out.push_back(objects_.at(key));
  return out;
}

void SimStore::Index(const Ptr& obj, bool add) {
  for (const auto& host : by_host_(*obj)) {
    if (add) {
      hosts_[host].insert(obj->Key());
    } else if (auto it = hosts_.find(host); it != hosts_.end()) {
      it->second.erase(obj->Key());
      if (it->second.empty()) hosts_.erase(it);
    }
  }
}

SimStore::Ptr SimStore::Upsert(Ptr obj) {
  Ptr old = Erase(obj->Key());
  Index(obj, true);
  objects_[obj->Key()] = std::move(obj);
  return old;
}

SimStore::Ptr SimStore::Erase(const std::string& key) {
  auto it = objects_.find(key);
  if (it == objects_.end()) return nullptr;
  Ptr old = it->second;
  Index(old, false);
  objects_.erase(it);
  return old;
}

void SimQueue::Add(const std::string& key) {
  if (shut_down_ || !queued_.insert(key).second) return;
  keys_.push_back(key);
}

void SimQueue::AddAfter(const std::string& key, kubeclient::Duration delay) {
  after_(delay, [this, key] { Add(key); });
}

bool SimQueue::Get(std::string* key) {
  if (keys_.empty()) return false;
  *key = std::move(keys_.front());
  keys_.pop_front();
  queued_.erase(*key);
  return true;
}

Replica::Replica(const SimClock& clock, SimApi& api, ReplicaSpec spec, SimQueue::After after)
    : clock_(clock), spec_(std::move(spec)), client_(api, spec_.id) {
  store_ = std::make_unique<SimStore>(controller::RoutesByHostIndexFunc(spec_.admission));
  queue_ = std::make_unique<SimQueue>(std::move(after));
  lease_ = std::make_unique<lease::BackoffWriteLease>(clock_, spec_.lease);
  tracker_ = std::make_unique<conflict::ContentionTracker>(clock_, spec_.tracker);
  gate_ = std::make_unique<controller::TrackerGate>(*tracker_, spec_.admission.router_name);
  shard_ = std::make_unique<controller::ShardFilter>(spec_.shard, nullptr);
  stats_ = std::make_unique<controller::StatusStats>();
  syncer_ = std::make_unique<controller::StatusSyncer>(spec_.admission, *shard_, *store_, client_,
                                                       *lease_, *gate_, clock_, *stats_);
  gate_->SetSyncer(syncer_.get());
  controller_ = std::make_unique<controller::Controller>(*syncer_, *store_, nullptr, *shard_,
                                                         *queue_, *gate_);
}

Replica::~Replica() {
  // Why: queued lease work points at the syncer; drop it first.
  lease_->Shutdown();
  queue_->ShutDown();
}

void Replica::Start(const std::vector<RoutePtr>& list) {
  for (const auto& obj : list) store_->Upsert(obj);
  store_->SetSynced();
  for (const auto& obj : list) controller_->route_handler().OnAdd(obj, true);
  Drain();
}

void Replica::Deliver(const ModelEvent& event) {
  auto& handler = controller_->route_handler();
  switch (event.type) {
    case EventType::kAdded:
    case EventType::kModified: {
      RoutePtr old = store_->Upsert(event.route);
      // Why: the gate is registered before the controller's handler, as in
      // cmd/, so it knows the update behind each Changed/Appeared call.
      if (old) {
        gate_->OnUpdate(old, event.route);
        handler.OnUpdate(old, event.route);
      } else {
        gate_->OnAdd(event.route, false);
        handler.OnAdd(event.route, false);
      }
      break;
    }
    case EventType::kDeleted: {
      RoutePtr old = store_->Erase(event.route->Key());
      gate_->OnDelete(old ? old : event.route);
      handler.OnDelete(old ? old : event.route);
      break;
    }
  }
  Drain();
}

void Replica::Resync() {
  for (const auto& [key, obj] : store_->objects()) queue_->Add(key);
  Drain();
}

void Replica::Drain() {
  while (queue_->Len() > 0) controller_->ProcessNextItem();
}

int Replica::Run() {
  Drain();
  return lease_->RunDue();
}

}  // namespace routestatus::sim
