#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <ext/pb_ds/assoc_container.hpp>
#include <ext/pb_ds/tree_policy.hpp>
#include <nlohmann/json.hpp>

#include "apiserver/api_error.h"
#include "apiserver/crd_schema.h"
#include "apiserver/resources.h"
#include "apiserver/watch_progress.h"
#include "apiserver/watcher.h"
#include "base/clock.h"

namespace routestatus::apiserver {

// A value or an ApiError. Value type.
template <typename T>
struct ApiResult {
  T value{};
  std::optional<ApiError> error;
  std::vector<std::string> warnings = {};  // for "Warning: 299 - ..." response headers
  bool ok() const { return !error.has_value(); }
  static ApiResult Error(ApiError e) {
    ApiResult r;
    r.error = std::move(e);
    return r;
  }
};

// One page of a list.
struct ListPage {
  uint64_t rv = 0;              // the snapshot's resourceVersion
  std::vector<ObjectPtr> items;
  std::string continue_token;   // "" on the last page
  // remainingItemCount: objects after this page, set like kube-apiserver
  // only for a cut page of a list without label or field selectors.
  std::optional<int64_t> remaining;
};

// How a write is carried out. Value type.
struct WriteOptions {
  // dryRun=All: every check runs and the result is what the write would
  // return (a create has uid/creationTimestamp/generation but no
  // resourceVersion; an update keeps the current one), but nothing is
  // stored, no resourceVersion is used and no watch event is sent.
  bool dry_run = false;
  // fieldValidation: fields a custom resource's schema prunes are a 400
  // under "Strict", a warning under "Warn" or "" (kube's default), nothing
  // under "Ignore".
  std::string field_validation = "";
};

// One object of a StorageMirror's initial load: its resource, its store
// key ("ns/name" or "name") and its stored state.
struct MirroredObject {
  const ResourceInfo* resource;
  std::string key;
  ObjectPtr object;
};

// Where the ObjectStore also writes what it commits: kube's storage (etcd)
// behind the embedded server's memory. Implementations must be thread-safe;
// the store calls them with its lock held, so in version order.
class StorageMirror {
 public:
  virtual ~StorageMirror() = default;
  // Writes one change (`object` is the new state, or with `deleted` the
  // state deleted) before the store applies it. An error fails the write:
  // the store changes nothing and returns the error (a 500 for etcd's).
  virtual std::optional<ApiError> Commit(const ResourceInfo& r, const std::string& key,
                                         const ObjectPtr& object, bool deleted) = 0;
  // Replaces everything the mirror holds by `objects`, the store's state at `rv`.
  virtual std::optional<ApiError> Load(const std::vector<MirroredObject>& objects,
                                       uint64_t rv) = 0;
  // The store forgot its history up to `rv` (ObjectStore::Compact).
  virtual void Compact(uint64_t rv) = 0;
};

// What etcd (default --max-request-bytes, 1.5 MiB) answers, as kube-apiserver
// passes it on, to a write of `object` under store key `key`: a 500 with
// message "etcdserver: request is too large" and no reason, or nullopt when
// it fits. The size is the stored JSON plus the transaction's three copies
// of the etcd key and some framing: an estimate within about 100 bytes.
// With no mirror the store checks every create and update with it, so a
// route too big for etcd is refused as on a real cluster. Pure.
std::optional<ApiError> EtcdRequestTooLarge(const ResourceInfo& r, const std::string& key,
                                            const StoredObject& object);

// The in-memory object store: one global, increasing resourceVersion (like
// etcd's revision), uid/creationTimestamp/generation bookkeeping, a bounded
// event history for watch replay and consistent paginated lists, and the
// watch fan-out. Objects are kept as compact JSON text (see StoredObject).
// Thread-safe: every method may be called from any thread.
class ObjectStore {
 public:
  struct Options {
    size_t history = 10000;          // events kept for watch resume / pagination
    size_t watcher_buffer = 10000;   // events queued per watcher before it is closed
    // etcd's progress notification interval (WatchProgress); 0 = never.
    Duration progress_notify_interval = std::chrono::minutes(10);
  };
  ObjectStore(const Clock& clock, Options options);

  // POST. Fills uid, creationTimestamp, resourceVersion, generation; drops
  // status when the type has a status subresource unless `keep_status`
  // (seeding from tests). 404 if the namespace is missing, 409 AlreadyExists,
  // 422 without a name, 400 for a namespace mismatch.
  ApiResult<ObjectPtr> Create(const ResourceInfo& r, const std::string& ns,
                              nlohmann::json object, bool keep_status = false,
                              const WriteOptions& options = {});

  // Computes the new object from the current one (PUT body or patched
  // object) and stores it under the update rules: `status_subresource`
  // takes only .status from the result; otherwise .status is kept from the
  // current object (for types with a status subresource). A
  // metadata.resourceVersion in the result that differs from the current one
  // is 409 Conflict. A result identical to the current object stores
  // nothing (no new version), like etcd3's no-op update.
  using Mutation = std::function<ApiResult<nlohmann::json>(const nlohmann::json& current)>;
  // A non-empty `precondition_uid` (a PUT body's metadata.uid) must be the
  // object's: 409 otherwise, also for a missing object, like kube.
  ApiResult<ObjectPtr> Mutate(const ResourceInfo& r, const std::string& ns,
                              const std::string& name, bool status_subresource,
                              bool require_rv, const Mutation& mutation,
                              const WriteOptions& options = {},
                              const std::string& precondition_uid = "");
  // PUT: Mutate with the body as the result.
  ApiResult<ObjectPtr> Update(const ResourceInfo& r, const std::string& ns,
                              const std::string& name, nlohmann::json object,
                              bool status_subresource, const WriteOptions& options = {});

  // DELETE; optional preconditions. Deleting a namespace deletes its routes.
  // A dry run returns the object as it is now.
  ApiResult<ObjectPtr> Delete(const ResourceInfo& r, const std::string& ns,
                              const std::string& name,
                              const std::optional<std::string>& precondition_rv = std::nullopt,
                              const std::optional<std::string>& precondition_uid = std::nullopt,
                              const WriteOptions& options = {});

  // DELETE on a collection: deletes every object `filter` selects (a
  // namespace's routes never include other namespaces'), one event each, as
  // one atomic step. Returns them as they were, with the version before.
  ApiResult<ListPage> DeleteCollection(const ResourceInfo& r, const ObjectFilter& filter,
                                       const WriteOptions& options = {});

  ApiResult<ObjectPtr> Get(const ResourceInfo& r, const std::string& ns,
                           const std::string& name) const;

  // A page of at most `limit` objects (0 = all) in key order, from the
  // snapshot named by `continue_token`, else the one at `exact_rv`, else
  // the current state. An expired snapshot is 410 Expired (for a continue,
  // with a token that continues from the current state, like etcd after
  // compaction); a malformed token is 400; an `exact_rv` in the future 504.
  ApiResult<ListPage> List(const ResourceInfo& r, const ObjectFilter& filter, size_t limit,
                           const std::string& continue_token,
                           std::optional<uint64_t> exact_rv = std::nullopt) const;

  // Opens a watch. `from_rv` nullopt or 0: synthetic ADDED events for the
  // current objects first; otherwise events after that version (410 Expired
  // if it is older than the history window). With `initial` (a watch's
  // sendInitialEvents), `from_rv` is ignored: the objects the filter selects
  // now go into *initial in key order, their version into *initial_rv, and
  // the watcher gets the events after it (one snapshot, read from memory
  // as kube's watch cache serves it: no storage read).
  ApiResult<std::shared_ptr<Watcher>> Watch(const ResourceInfo& r, ObjectFilter filter,
                                            std::optional<uint64_t> from_rv,
                                            std::vector<ObjectPtr>* initial = nullptr,
                                            uint64_t* initial_rv = nullptr);
  // The version a bookmark of `r` carries now, as kube-apiserver's watch
  // cache sets it (WatchProgress): moved by r's own events and by etcd's
  // progress notifications only; 0 = none yet. A watcher gets a bookmark
  // only when this is above its start_rv().
  uint64_t BookmarkRv(const ResourceInfo& r);
  // Removes a finished watcher (the HTTP layer calls this when a watch ends).
  void Unwatch(const std::shared_ptr<Watcher>& watcher);

  // Forgets all history: resumes and continues from older versions get 410.
  void Compact();
  // The store as a restarted kube-apiserver shows it: its fresh watch cache
  // starts at the current revision, which its own start-up writes have moved
  // on (by one here), so a watch from any earlier resourceVersion gets 410
  // Expired "too old resource version"; objects, lists and continue tokens
  // are unchanged (etcd kept them). Returns the new revision, the oldest a
  // watch may start from.
  uint64_t RestartWatchCache();
  // Closes every open watch (clients see the stream end).
  void CloseAllWatches();
  // From now on every commit is written to `mirror` first (nullptr: none),
  // which first gets every object stored now (StorageMirror::Load); on a
  // failed load nothing changes and the error is returned. `mirror` must
  // outlive the store or be replaced. Blocks every other call meanwhile.
  std::optional<ApiError> SetMirror(StorageMirror* mirror);

  // The immutable stored form of `object` at version `rv`.
  static ObjectPtr Freeze(const nlohmann::json& object, uint64_t rv);

  // The newest resourceVersion whose events reached every watcher.
  uint64_t CurrentRv() const { return dispatched_rv_.load(std::memory_order_acquire); }
  size_t Count(const ResourceInfo& r) const;
  size_t WatcherCount() const;
  uint64_t OldestResumableRv() const;

 private:
  // key: "ns/name" or "name". Why an order-statistics tree (a red-black
  // tree whose nodes count their subtree): a cut page's remainingItemCount
  // is the number of keys after it, which order_of_key answers in O(log n);
  // walking the rest of a std::map made each 500-object page O(n) and a
  // paged list of n objects O(n^2/500) (6x slower restarts at 100k routes).
  using Table = __gnu_pbds::tree<std::string, ObjectPtr, std::less<std::string>,
                                 __gnu_pbds::rb_tree_tag,
                                 __gnu_pbds::tree_order_statistics_node_update>;
  struct Event {
    const ResourceInfo* resource;
    std::string key;
    uint64_t rv;
    ObjectPtr object;  // new state (deleted state for DELETED)
    ObjectPtr prev;    // nullptr for ADDED
    bool deleted;
  };
  // Queues `e` on `w` as the watcher sees it: a change that makes an object
  // match is ADDED, one that makes it stop matching is DELETED.
  static void Dispatch(Watcher& w, const Event& e);

  static std::string Key(const ResourceInfo& r, const std::string& ns, const std::string& name);
  Table& TableFor(const ResourceInfo& r);
  // REQUIRES: mu_ is held. The schema writes of `r` must satisfy: its
  // stored CRD's, else the built-in Route CRD's; none for built-in types.
  const CrdSchema& SchemaLocked(const ResourceInfo& r);
  const Table* FindTable(const ResourceInfo& r) const;
  // REQUIRES: mu_ is held. How many objects of the snapshot whose changes
  // after it `overlay` undoes (key -> state at the snapshot) have a key
  // after `after` and starting with `prefix`. O(log n + overlay).
  static int64_t CountAfter(const Table& table, const std::map<std::string, ObjectPtr>& overlay,
                            const std::string& after, const std::string& prefix);
  // REQUIRES: mu_ is held. Stamps rv, serializes, writes the mirror (its
  // error changes nothing and is returned), stores/erases, records history
  // and fans the event out.
  ApiResult<ObjectPtr> CommitLocked(const ResourceInfo& r, const std::string& key,
                                    nlohmann::json* object, const ObjectPtr& prev, bool deleted);
  ApiResult<ObjectPtr> DeleteLocked(const ResourceInfo& r, const std::string& ns,
                                    const std::string& name);

  const Clock& clock_;
  const Options options_;
  mutable std::mutex mu_;
  std::map<std::string, Table> tables_;       // by GroupResource; guarded by mu_
  std::deque<Event> history_;                 // guarded by mu_
  uint64_t rv_ = 0;                           // guarded by mu_
  uint64_t compacted_rv_ = 0;                 // guarded by mu_
  uint64_t watch_floor_rv_ = 0;               // guarded by mu_; see RestartWatchCache
  uint64_t uid_counter_ = 0;                  // guarded by mu_
  std::vector<std::shared_ptr<Watcher>> watchers_;  // guarded by mu_
  WatchProgress progress_;                    // guarded by mu_
  // Parsed schemas by GroupResource, dropped on any CRD change; guarded by mu_.
  std::map<std::string, std::shared_ptr<const CrdSchema>> schemas_;
  StorageMirror* mirror_ = nullptr;           // guarded by mu_
  std::atomic<uint64_t> dispatched_rv_{0};
};

// Parses a decimal resourceVersion; nullopt if malformed.
std::optional<uint64_t> ParseRv(const std::string& text);

}  // namespace routestatus::apiserver
