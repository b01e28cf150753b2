#pragma once

// Fakes for the controller tests: an in-memory cache with indexes, a work
// queue without threads, a pass-through write lease and an in-memory
// KubeClient that records status PUTs. Not thread-safe unless stated.

#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "controller/contention_gate.h"
#include "kubeclient/cache/store.h"
#include "kubeclient/cache/work_queue.h"
#include "kubeclient/kube_client.h"
#include "kubeclient/route.h"
#include "lease/write_lease.h"

namespace routestatus::controller::testing {

// An ObjectStore with named index functions; tests Set/Delete objects.
template <typename T>
class FakeStore final : public kubeclient::cache::ObjectStore<T> {
 public:
  using Ptr = typename kubeclient::cache::ObjectStore<T>::Ptr;

  void AddIndex(const std::string& name, kubeclient::cache::IndexFunc<T> fn) { indexes_[name] = fn; }
  void Set(T obj) {
    std::string key = obj.Key();
    objects_[key] = std::make_shared<const T>(std::move(obj));
  }
  void Delete(const std::string& key) { objects_.erase(key); }
  void SetSynced(bool synced) { synced_ = synced; }
  // false: as an informer relisting after a 410 Gone (IsCurrent).
  void SetCurrent(bool current) { current_ = current; }

  Ptr Get(const std::string& key) const override {
    auto it = objects_.find(key);
    return it == objects_.end() ? nullptr : it->second;
  }
  std::vector<Ptr> List() const override {
    std::vector<Ptr> out;
    for (const auto& [k, v] : objects_) out.push_back(v);
    return out;
  }
  std::vector<Ptr> ByIndex(const std::string& index, const std::string& value) const override {
    ++by_index_calls;
    std::vector<Ptr> out;
    auto it = indexes_.find(index);
    if (it == indexes_.end()) return out;
    for (const auto& [k, v] : objects_) {
      for (const auto& iv : it->second(*v)) {
        if (iv == value) {
          out.push_back(v);
          break;
        }
      }
    }
    return out;
  }
  bool HasSynced() const override { return synced_; }
  bool IsCurrent() const override { return synced_ && current_; }

  // ByIndex calls so far: one per claim key of every route decided.
  mutable std::atomic<int> by_index_calls{0};

 private:
  std::map<std::string, Ptr> objects_;
  std::map<std::string, kubeclient::cache::IndexFunc<T>> indexes_;
  std::atomic<bool> synced_{true};  // Why atomic: a worker thread may poll it
  std::atomic<bool> current_{true};
};

// A FIFO of unique keys; Get never blocks (false when empty).
class FakeWorkQueue final : public kubeclient::cache::WorkQueueInterface {
 public:
  void Add(const std::string& key) override;
  void AddAfter(const std::string& key, Duration delay) override {
    delayed.push_back(key);
    delays.emplace_back(key, delay);
  }
  void AddRateLimited(const std::string& key) override { Add(key); }
  void Forget(const std::string& key) override { forgotten.insert(key); }
  int NumRequeues(const std::string&) const override { return 0; }
  bool Get(std::string* key) override;
  void Done(const std::string&) override {}
  size_t Len() const override { return keys.size(); }
  void ShutDown() override {}

  // Drains and returns the queued keys (sorted).
  std::vector<std::string> Take();

  std::deque<std::string> keys;
  std::vector<std::string> delayed;
  std::vector<std::pair<std::string, Duration>> delays;  // every AddAfter, in order
  // Adds every delayed key (their time has come) and forgets them.
  void FireDelayed();
  std::set<std::string> forgotten;
};

// Runs work at once; work that asks for a retry is kept (latest per key)
// until the test calls RunRetries.
class PassThroughLease final : public lease::WriteLease {
 public:
  void Try(const std::string& key, lease::Work work) override;
  void Extend(const std::string& key, lease::EntryWriter writer) override;
  void Remove(const std::string& key) override;
  lease::LeaseState State() const override { return state_; }

  // Runs every kept retry once; returns how many ran.
  int RunRetries();
  // When false, Try only records the work (as a follower would defer it).
  bool run_immediately = true;

  std::map<std::string, lease::Work> pending;
  std::vector<lease::WorkResult> results;
  std::vector<Duration> retry_delays;  // WorkOutcome::retry_after of each retry
  std::vector<bool> key_failing;       // each retry's failure is Failure::kThisKey
  std::vector<std::string> extended;
  std::vector<lease::EntryWriter> writers;  // of each Extend
  std::vector<std::string> removed;
  int tries = 0;

 private:
  void Run(const std::string& key, lease::Work work);
  lease::LeaseState state_ = lease::LeaseState::kElection;
};

// Records the contention calls; contended UIDs block changes.
class FakeGate final : public ContentionGate {
 public:
  void EntryChanged(const kubeclient::Route& route,
                    const std::optional<kubeclient::RouteIngress>& old_entry,
                    const std::optional<kubeclient::RouteIngress>& new_entry,
                    const std::optional<kubeclient::RouteIngress>&) override {
    (!new_entry ? removed : old_entry ? changed : appeared).push_back(route.metadata.uid);
    if (on_entry_changed) on_entry_changed(route);
  }
  void EntriesListed(const std::vector<ListedEntry>& l) override {
    for (const ListedEntry& e : l) listed.push_back(e.route->Key());
  }
  void Forget(const std::string& uid) override { forgotten.push_back(uid); }
  bool IsChangeContended(const std::string& uid, bool) override {
    return contended.count(uid) > 0;
  }
  void Clear(const std::string& uid, const std::optional<kubeclient::RouteIngress>&) override {
    cleared.push_back(uid);
  }
  std::set<std::string> contended;
  // Called at the end of each EntryChanged (when set).
  std::function<void(const kubeclient::Route&)> on_entry_changed;
  std::vector<std::string> changed;   // entry changed (it existed before)
  std::vector<std::string> appeared;  // entry created
  std::vector<std::string> removed;   // entry removed
  std::vector<std::string> listed;    // keys handed to EntriesListed
  std::vector<std::string> forgotten;
  std::vector<std::string> cleared;
};

// An in-memory route API: resourceVersion-guarded UpdateStatus and
// MergePatchStatus, paginated List, Get. Tests can queue errors for the next
// status writes.
class FakeKubeClient final : public kubeclient::KubeClient {
 public:
  // Stores `route` (a full route JSON object); sets uid, resourceVersion
  // and creationTimestamp when absent. Returns the stored object.
  nlohmann::json Put(nlohmann::json route);
  nlohmann::json Object(const std::string& ns, const std::string& name) const;
  void Remove(const std::string& ns, const std::string& name);
  // Typed view of a stored route (for the fake cache).
  kubeclient::Route Typed(const std::string& ns, const std::string& name) const;

  StatusOr<nlohmann::json> Get(const kubeclient::ResourceRef& res,
                                           const std::string& ns, const std::string& name) override;
  StatusOr<kubeclient::ListPage> List(const kubeclient::ResourceRef& res,
                                                  const std::string& ns,
                                                  const kubeclient::ListOptions& options) override;
  StatusOr<std::unique_ptr<kubeclient::WatchStream>> Watch(
      const kubeclient::ResourceRef&, const std::string&, const kubeclient::WatchOptions&) override;
  StatusOr<nlohmann::json> Create(const kubeclient::ResourceRef&, const std::string&,
                                              const nlohmann::json& object) override;
  StatusOr<nlohmann::json> Update(const kubeclient::ResourceRef&,
                                              const nlohmann::json& object) override;
  StatusOr<nlohmann::json> UpdateStatus(const kubeclient::ResourceRef& res,
                                                    const nlohmann::json& object) override;
  // Like kube-apiserver: merges the patch's .status only; guarded when the
  // patch names metadata.resourceVersion.
  StatusOr<nlohmann::json> MergePatchStatus(const kubeclient::ResourceRef& res,
                                            const std::string& ns, const std::string& name,
                                            const nlohmann::json& patch) override;
  Status Delete(const kubeclient::ResourceRef&, const std::string& ns,
                            const std::string& name) override;

  std::deque<Status> next_status_errors;  // returned by the next status writes
  // Run once after the next successful status write is applied, before its
  // answer returns (the watch may deliver our write before its answer).
  std::function<void()> after_status_put;
  // Run once when the next status merge patch is refused with 409, before
  // its answer returns (the watch may deliver the winner first).
  std::function<void()> before_conflict_answer;
  // Run once before the next Get is served.
  std::function<void()> before_get;
  std::vector<nlohmann::json> puts;     // every UpdateStatus and MergePatchStatus body received
  std::vector<std::string> patched;     // "ns/name" of every MergePatchStatus call
  int successful_puts = 0;
  int gets = 0;

 private:
  // Stores `stored` with .status replaced by `status` (a successful status
  // write) and runs after_status_put.
  nlohmann::json StoreStatus(nlohmann::json stored, nlohmann::json status);

  std::map<std::string, nlohmann::json> objects_;  // "ns/name" -> object
  int64_t rv_ = 100;
  int64_t uid_ = 0;
};

}  // namespace routestatus::controller::testing
