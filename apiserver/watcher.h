#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>

#include "apiserver/field_selector.h"
#include "apiserver/resources.h"
#include "base/clock.h"
#include "kubeclient/label_selector.h"

namespace routestatus::apiserver {

// One stored object version: compact JSON text (whose
// metadata.resourceVersion equals `rv`) plus the parsed fields the server
// filters and orders by. Immutable once published; shared between the store,
// the event history and watchers.
struct StoredObject {
  std::string ns;
  std::string name;
  std::string uid;
  uint64_t rv = 0;
  std::map<std::string, std::string> labels;
  std::string json;
};
using ObjectPtr = std::shared_ptr<const StoredObject>;

// What a list or watch selects: namespace ("" = all), label and field
// selectors. Value type.
struct ObjectFilter {
  std::string ns;
  kubeclient::LabelSelector labels;
  FieldSelector fields;

  bool Matches(const StoredObject& o) const {
    return (ns.empty() || o.ns == ns) && labels.Matches(o.labels) &&
           fields.Matches(o.ns, o.name);
  }
};

// One event as a watcher sees it.
struct WatchRecord {
  std::string type;  // ADDED, MODIFIED, DELETED
  ObjectPtr object;
};

// The receiving end of one watch: a bounded queue filled by the store (under
// its lock) and drained by the HTTP thread serving the watch. A watcher whose
// queue overflows is closed (the client re-watches from its last version,
// as with kube-apiserver's slow-watcher termination). Thread-safe.
class Watcher {
 public:
  // `linger`: once events are queued, how long Wait lingers for more before
  // returning (batching cuts wake-ups under load; 0 = return at once).
  Watcher(const ResourceInfo& resource, ObjectFilter filter, size_t capacity,
          const Clock& clock,
          Duration linger = std::chrono::milliseconds(2))
      : resource_(resource),
        filter_(std::move(filter)),
        capacity_(capacity),
        clock_(clock),
        linger_(linger) {}

  const ResourceInfo& resource() const { return resource_; }
  const ObjectFilter& filter() const { return filter_; }

  // Queues one record; closes the watcher on overflow.
  void Push(WatchRecord record);
  // Ends the watch; Wait returns false once the queue is drained.
  void Close();
  bool closed() const;

  // Moves queued records into *out, waiting until there are some, the watch
  // is closed, or `deadline`. Returns false when closed and drained.
  bool Wait(SteadyTime deadline, std::deque<WatchRecord>* out);
  // True if nothing is queued (used to place bookmarks safely).
  bool Empty() const;

  // The resourceVersion the watch began at: kube's watch cache sends a
  // watcher nothing, bookmarks included, at or below it
  // (cacheWatcher.process). Set by the store before the watcher is shared.
  uint64_t start_rv() const { return start_rv_; }
  void set_start_rv(uint64_t rv) { start_rv_ = rv; }

 private:
  const ResourceInfo& resource_;
  const ObjectFilter filter_;
  const size_t capacity_;
  const Clock& clock_;
  const Duration linger_;
  uint64_t start_rv_ = 0;  // written once before the watcher is shared
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<WatchRecord> queue_;  // guarded by mu_
  bool closed_ = false;            // guarded by mu_
};

}  // namespace routestatus::apiserver
