#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "kubeclient/compact_string.h"

namespace routestatus::kubeclient::cache {

// One decoded API object, type-erased so that the cache and the reflector
// are compiled once (Informer<T> casts `object` back to const T). Value type.
struct DecodedObject {
  std::string key;               // "namespace/name" or "name"
  std::string resource_version;  // metadata.resourceVersion
  std::shared_ptr<const void> object;
};

// What the store keeps per key: the key is the map's own (not repeated
// here). Value type.
struct StoredObject {
  // Why not std::string: 16 bytes less per cached object (a version fits
  // the inline buffer), 1.6 MB at 100,000 routes.
  CompactString resource_version;
  std::shared_ptr<const void> object;
};

// Objects by key, as a list is buffered and as the store holds them.
using ObjectMap = std::unordered_map<std::string, StoredObject>;

// Index values of a type-erased object (the const T* behind `object`).
using RawIndexFunc = std::function<std::vector<std::string>(const void* object)>;

// What Replace() changed, in the order handlers should hear it.
struct ReplaceResult {
  std::vector<DecodedObject> deleted;                               // last cached version
  std::vector<std::pair<DecodedObject, DecodedObject>> updated;     // old, new
  // The added entries, in the store itself. Valid until the store's next
  // Upsert, Remove or Replace. Why not copies: the first list adds every
  // object, and a copy of each key (with its version) cost ~80 bytes per
  // object at the start's peak.
  std::vector<const ObjectMap::value_type*> added;
};

// The informer's cache: objects by key with named secondary indexes.
// Objects are immutable and shared. Thread-safe: readers never see a
// half-applied Replace().
class IndexedStore {
 public:
  // Adds a named index; only before the store holds objects.
  void AddIndex(const std::string& name, RawIndexFunc fn);

  std::shared_ptr<const void> Get(const std::string& key) const;
  // The cached entry (object and resourceVersion), if any.
  std::optional<DecodedObject> GetEntry(const std::string& key) const;
  std::vector<std::shared_ptr<const void>> List() const;
  std::vector<std::string> Keys() const;
  std::vector<std::shared_ptr<const void>> ByIndex(const std::string& index,
                                                   const std::string& value) const;
  size_t Size() const;

  // Inserts or replaces; returns the previous entry, if any.
  std::optional<DecodedObject> Upsert(DecodedObject obj);
  // Removes; returns the removed entry, if any.
  std::optional<DecodedObject> Remove(const std::string& key);
  // Swaps in `items` as the whole content. Entries whose resourceVersion
  // did not change keep their old object (no update reported).
  ReplaceResult Replace(ObjectMap items);

 private:
  // A 64-bit hash of a value -> entries of items_ of the objects that
  // produced it, one node per (hash, entry) (no duplicates: each object's
  // values are deduplicated before indexing). Why a multimap, not a map to
  // a vector or a set: nearly every value (a host) has one object; a map
  // node with a vector and the vector's block cost ~80 bytes per route, a
  // multimap node 32 (a set ~250 more). Why pointers to the entries of
  // items_ (stable: an unordered_map never moves its nodes), not copies of
  // the keys: a key of "namespace/name" is usually too long for the
  // string's inline buffer, so each copy cost ~64 bytes per route; and not
  // pointers to the keys: ByIndex then looked each key up in items_ again
  // (a string hash and a bucket walk per peer of every decision). Why a
  // hash of the value, not its text: a host is as long, and ByIndex checks
  // each object's values anyway (two values sharing a hash only cost that
  // check).
  using Postings = std::unordered_multimap<uint64_t, const ObjectMap::value_type*>;
  // `entry` is a node of items_. REQUIRES: mu_ is held.
  void IndexLocked(const ObjectMap::value_type& entry, bool add);
  // The hashes of fn's values for object, deduplicated.
  static std::vector<uint64_t> Hashes(const RawIndexFunc& fn, const void* object);

  mutable std::mutex mu_;
  ObjectMap items_;                                       // GUARDED_BY(mu_)
  std::map<std::string, RawIndexFunc> index_funcs_;       // GUARDED_BY(mu_)
  std::map<std::string, Postings> indexes_;               // GUARDED_BY(mu_)
};

}  // namespace routestatus::kubeclient::cache
