#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "apiserver/etcd_client.h"
#include "apiserver/object_store.h"

namespace routestatus::apiserver {

// kube-apiserver's storage layer on a real etcd, for the embedded server's
// storage reads: every change the ObjectStore commits is written to etcd
// under kube's key layout (/registry/<group>/<resource>/<ns>/<name>, the
// core group without its part) with the object's JSON as the value, and a
// list served from storage is what kube's etcd3 store makes of it: one
// range per page (linearizable when it starts a list, at the list's
// revision when it continues one), the objects decoded from etcd's values,
// the continue token built from the last key. The embedded server keeps its
// own resourceVersions (they are in the stored JSON): this class maps each
// committed version to the etcd revision that holds it, both ways. It owns
// etcd's /registry/ prefix (Load replaces it). Every etcd failure is a 500
// Status (kube's InternalError) and an ERROR log line, never a crash.
// Thread-safe.
class EtcdStorage : public StorageMirror {
 public:
  explicit EtcdStorage(std::unique_ptr<EtcdClient> client);

  // "/registry/route.openshift.io/routes/", "/registry/namespaces/".
  static std::string KeyPrefix(const ResourceInfo& r);

  // StorageMirror: one write per change, before the store applies it.
  std::optional<ApiError> Commit(const ResourceInfo& r, const std::string& key,
                                 const ObjectPtr& object, bool deleted) override;
  // StorageMirror: etcd's /registry/ emptied, then `objects` put in
  // transactions of up to kTxnOps operations (etcd must allow that many:
  // --max-txn-ops) and about 1 MiB.
  std::optional<ApiError> Load(const std::vector<MirroredObject>& objects, uint64_t rv) override;
  // StorageMirror: continue tokens and exact lists older than `rv` are 410.
  void Compact(uint64_t rv) override;

  // A page as ObjectStore::List promises it (same arguments, same errors
  // for bad or expired tokens and versions), read from etcd. `current_rv`:
  // the store's version now (a later exact version is 504).
  ApiResult<ListPage> List(const ResourceInfo& r, const ObjectFilter& filter, size_t limit,
                           const std::string& continue_token, std::optional<uint64_t> exact_rv,
                           uint64_t current_rv);

  // Range requests sent to etcd so far (a page may take more than one when
  // a selector filters objects out).
  uint64_t RangeReads() const { return range_reads_.load(std::memory_order_relaxed); }
  const std::string& endpoint() const { return client_->endpoint(); }

  static constexpr size_t kTxnOps = 1000;

 private:
  // The etcd revision holding the store's state at `rv`; nullopt when `rv`
  // is older than what was loaded or compacted.
  std::optional<int64_t> RevisionAt(uint64_t rv);
  // The store's version whose state etcd `revision` holds; for a revision
  // at or after the last write, `current_rv` when that is later (the store
  // moves its version without a write on a watch-cache restart).
  uint64_t RvAt(int64_t revision, uint64_t current_rv);
  ApiError Failed(const std::string& what, const Status& status) const;
  // REQUIRES: mu_ is held.
  void RecordLocked(uint64_t rv, int64_t revision);

  std::unique_ptr<EtcdClient> client_;
  // Why held across each write: a read that saw revision E waits for the
  // write that made E to record its version (RvAt never answers an older one).
  std::mutex mu_;
  // (store version, etcd revision) in increasing order of both; guarded by mu_.
  std::vector<std::pair<uint64_t, int64_t>> versions_;
  uint64_t oldest_rv_ = 0;  // guarded by mu_: Load's or Compact's version
  std::atomic<uint64_t> range_reads_{0};
};

}  // namespace routestatus::apiserver
