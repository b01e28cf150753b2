#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace routestatus::kubeclient::cache {

// A read-only view of an informer's cache of T (Route or Namespace), keyed by
// "namespace/name" (or "name" for cluster-scoped objects). Objects are
// immutable and shared: holders of a Ptr see a consistent snapshot of that
// object forever. Thread-safe.
template <typename T>
class ObjectStore {
 public:
  using Ptr = std::shared_ptr<const T>;
  virtual ~ObjectStore() = default;

  // The cached object, or nullptr.
  virtual Ptr Get(const std::string& key) const = 0;
  // Every cached object, in no particular order.
  virtual std::vector<Ptr> List() const = 0;
  // Objects whose index function `index` produced `value`.
  virtual std::vector<Ptr> ByIndex(const std::string& index, const std::string& value) const = 0;
  // True once the first full list has been stored.
  virtual bool HasSynced() const = 0;
  // True while the cache misses no change the server reported: synced, and
  // not between a watch that ended 410 Gone (the changes since its last
  // version are lost) and the relist that replaces the cache.
  // Default: HasSynced() (a store that never misses changes).
  virtual bool IsCurrent() const { return HasSynced(); }
};

// Computes the index values of one object (e.g. its effective hosts).
template <typename T>
using IndexFunc = std::function<std::vector<std::string>(const T&)>;

// Receives cache changes. Called on the informer's thread, after the cache
// has been updated, one call at a time and in event order. Handlers must be
// quick: enqueue keys, feed trackers; never do I/O.
template <typename T>
class EventHandler {
 public:
  using Ptr = std::shared_ptr<const T>;
  virtual ~EventHandler() = default;
  // `initial_list` is true only while delivering the first full list; an
  // object a later relist adds is a new object like a watch ADDED.
  virtual void OnAdd(const Ptr& obj, bool initial_list) = 0;
  // `old_obj` is the cached version that `new_obj` replaced.
  virtual void OnUpdate(const Ptr& old_obj, const Ptr& new_obj) = 0;
  // `last` is the last version the cache held.
  virtual void OnDelete(const Ptr& last) = 0;
};

}  // namespace routestatus::kubeclient::cache
