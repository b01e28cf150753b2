#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kubeclient/kube_client.h"
#include "kubeclient/route.h"
#include "test/sim/sim_clock.h"

namespace routestatus::sim {

enum class EventType { kAdded, kModified, kDeleted };

// One change of the model, as every watch would see it.
struct ModelEvent {
  EventType type = EventType::kAdded;
  int64_t resource_version = 0;
  std::shared_ptr<const kubeclient::Route> route;  // the new (or last) object
};

// Counters of status PUTs, per writer. Value type.
struct PutCounts {
  int64_t attempts = 0;
  int64_t success = 0;
  int64_t conflicts = 0;
  int64_t not_found = 0;
};

// The one API server of a simulation: routes in memory with a global
// resourceVersion. A status PUT whose metadata.resourceVersion (or uid) is
// stale fails with kConflict; a success replaces only `status`, bumps the
// resourceVersion and emits a MODIFIED event. Route owners' operations
// (create, spec/label change, delete) emit ADDED/MODIFIED/DELETED. Not
// thread-safe.
class SimApi {
 public:
  using Listener = std::function<void(const ModelEvent&)>;
  // Called after each successful status write by `writer`.
  using WriteObserver = std::function<void(int writer, const kubeclient::Route& written)>;

  explicit SimApi(const SimClock& clock) : clock_(clock) {}

  void SetListener(Listener listener) { listener_ = std::move(listener); }
  void SetWriteObserver(WriteObserver observer) { write_observer_ = std::move(observer); }
  // Called after each status PUT that failed with a conflict.
  using ConflictObserver = std::function<void(int writer, const std::string& key)>;
  void SetConflictObserver(ConflictObserver observer) { conflict_observer_ = std::move(observer); }

  // Route owner operations. `host` "" leaves spec.host empty (the router's
  // hostname template applies). Return false when the route does not exist
  // (or already exists, for Create).
  bool Create(const std::string& ns, const std::string& name, const std::string& host,
              const std::map<std::string, std::string>& labels);
  bool SetHost(const std::string& key, const std::string& host);
  bool SetLabel(const std::string& key, const std::string& label, const std::string& value);
  bool Delete(const std::string& key);

  // PUT .../status on behalf of replica `writer` (see ReplicaClient).
  kubeclient::StatusOr<nlohmann::json> UpdateStatus(int writer, const nlohmann::json& object);

  // Snapshot of every route (a list), and the list's resourceVersion.
  std::vector<std::shared_ptr<const kubeclient::Route>> List() const;
  std::shared_ptr<const kubeclient::Route> Get(const std::string& key) const;
  int64_t resource_version() const { return rv_; }

  // PUT counts per writer (replica id), and in total.
  const std::map<int, PutCounts>& puts_by_writer() const { return puts_; }
  PutCounts TotalPuts() const;

 private:
  struct Stored {
    nlohmann::json object;
    std::shared_ptr<const kubeclient::Route> route;
  };
  // Bumps the rv, re-decodes and emits.
  void Commit(const std::string& key, nlohmann::json object, EventType type);

  const SimClock& clock_;
  std::map<std::string, Stored> objects_;
  int64_t rv_ = 1000;
  int64_t next_uid_ = 1;
  std::map<int, PutCounts> puts_;
  Listener listener_;
  WriteObserver write_observer_;
  ConflictObserver conflict_observer_;
};

// The KubeClient one replica uses: UpdateStatus goes to the model under the
// replica's id; everything else is not used by the status path and fails
// with kInternal. Not thread-safe.
class ReplicaClient final : public kubeclient::KubeClient {
 public:
  ReplicaClient(SimApi& api, int writer) : api_(api), writer_(writer) {}

  kubeclient::StatusOr<nlohmann::json> Get(const kubeclient::ResourceRef&, const std::string&,
                                           const std::string&) override;
  kubeclient::StatusOr<kubeclient::ListPage> List(const kubeclient::ResourceRef&,
                                                  const std::string&,
                                                  const kubeclient::ListOptions&) override;
  kubeclient::StatusOr<std::unique_ptr<kubeclient::WatchStream>> Watch(
      const kubeclient::ResourceRef&, const std::string&, const kubeclient::WatchOptions&) override;
  kubeclient::StatusOr<nlohmann::json> Create(const kubeclient::ResourceRef&, const std::string&,
                                              const nlohmann::json&) override;
  kubeclient::StatusOr<nlohmann::json> Update(const kubeclient::ResourceRef&,
                                              const nlohmann::json&) override;
  kubeclient::StatusOr<nlohmann::json> UpdateStatus(const kubeclient::ResourceRef&,
                                                    const nlohmann::json& object) override {
    return api_.UpdateStatus(writer_, object);
  }
  kubeclient::Status Delete(const kubeclient::ResourceRef&, const std::string&,
                            const std::string&) override;

 private:
  SimApi& api_;
  const int writer_;
};

}  // namespace routestatus::sim
