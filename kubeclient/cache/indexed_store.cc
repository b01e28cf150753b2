#include "kubeclient/cache/indexed_store.h"

#include <algorithm>
#include <functional>

#include <glog/logging.h>

namespace routestatus::kubeclient::cache {

namespace {

DecodedObject ToDecoded(const ObjectMap::value_type& entry) {
  return DecodedObject{entry.first, entry.second.resource_version, entry.second.object};
}

}  // namespace

void IndexedStore::AddIndex(const std::string& name, RawIndexFunc fn) {
  std::lock_guard<std::mutex> l(mu_);
  CHECK(fn) << "index " << name << " has no function";
  index_funcs_[name] = std::move(fn);
  Postings& postings = indexes_[name];
  postings.clear();
  for (const auto& entry : items_) {
    for (uint64_t h : Hashes(index_funcs_[name], entry.second.object.get())) {
      postings.emplace(h, &entry);
    }
  }
}

std::vector<uint64_t> IndexedStore::Hashes(const RawIndexFunc& fn, const void* object) {
  std::vector<uint64_t> hashes;
  for (const std::string& v : fn(object)) hashes.push_back(std::hash<std::string>()(v));
  if (hashes.size() > 1) {
    std::sort(hashes.begin(), hashes.end());
    hashes.erase(std::unique(hashes.begin(), hashes.end()), hashes.end());
  }
  return hashes;
}

void IndexedStore::IndexLocked(const ObjectMap::value_type& entry, bool add) {
  const ObjectMap::value_type* key = &entry;
  for (const auto& [name, fn] : index_funcs_) {
    Postings& postings = indexes_[name];
    for (uint64_t h : Hashes(fn, entry.second.object.get())) {
      if (add) {
        postings.emplace(h, key);
      } else {
        auto [first, last] = postings.equal_range(h);
        for (auto it = first; it != last; ++it) {
          if (it->second == key) {
            postings.erase(it);
            break;
          }
        }
      }
    }
  }
}

std::shared_ptr<const void> IndexedStore::Get(const std::string& key) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = items_.find(key);
  return it == items_.end() ? nullptr : it->second.object;
}

std::optional<DecodedObject> IndexedStore::GetEntry(const std::string& key) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = items_.find(key);
  if (it == items_.end()) return std::nullopt;
  return ToDecoded(*it);
}

std::vector<std::shared_ptr<const void>> IndexedStore::List() const {
  std::lock_guard<std::mutex> l(mu_);
  std::vector<std::shared_ptr<const void>> out;
  out.reserve(items_.size());
  for (const auto& [key, obj] : items_) out.push_back(obj.object);
  return out;
}

std::vector<std::string> IndexedStore::Keys() const {
  std::lock_guard<std::mutex> l(mu_);
  std::vector<std::string> out;
  out.reserve(items_.size());
  for (const auto& [key, obj] : items_) out.push_back(key);
  return out;
}

std::vector<std::shared_ptr<const void>> IndexedStore::ByIndex(const std::string& index,
                                                               const std::string& value) const {
  std::lock_guard<std::mutex> l(mu_);
  std::vector<std::shared_ptr<const void>> out;
  auto iit = indexes_.find(index);
  if (iit == indexes_.end()) return out;
  auto [first, last] = iit->second.equal_range(std::hash<std::string>()(value));
  if (first == last) return out;
  const RawIndexFunc& fn = index_funcs_.at(index);
  for (auto pit = first; pit != last; ++pit) {
    const StoredObject& stored = pit->second->second;
    // Why: the posting is the value's hash; another value may share it.
    const std::vector<std::string> values = fn(stored.object.get());
    if (std::find(values.begin(), values.end(), value) != values.end()) {
      out.push_back(stored.object);
    }
  }
  return out;
}

size_t IndexedStore::Size() const {
  std::lock_guard<std::mutex> l(mu_);
  return items_.size();
}

std::optional<DecodedObject> IndexedStore::Upsert(DecodedObject obj) {
  std::lock_guard<std::mutex> l(mu_);
  std::optional<DecodedObject> old;
  StoredObject stored{std::move(obj.resource_version), std::move(obj.object)};
  auto it = items_.find(obj.key);
  if (it != items_.end()) {
    IndexLocked(*it, /*add=*/false);
    old = ToDecoded(*it);
    it->second = std::move(stored);
  } else {
    it = items_.emplace(std::move(obj.key), std::move(stored)).first;
  }
  IndexLocked(*it, /*add=*/true);
  return old;
}

std::optional<DecodedObject> IndexedStore::Remove(const std::string& key) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = items_.find(key);
  if (it == items_.end()) return std::nullopt;
  IndexLocked(*it, /*add=*/false);
  DecodedObject old = ToDecoded(*it);
  items_.erase(it);
  return old;
}

ReplaceResult IndexedStore::Replace(ObjectMap items) {
  ReplaceResult result;
  ObjectMap old;
  {
    std::lock_guard<std::mutex> l(mu_);
    // Why reserve: the first list adds every object (100,000 at a time).
    if (items_.empty()) result.added.reserve(items.size());
    for (auto& entry : items) {
      auto it = items_.find(entry.first);
      if (it == items_.end()) {
        result.added.push_back(&entry);
      } else if (it->second.resource_version != entry.second.resource_version) {
        result.updated.emplace_back(ToDecoded(*it), ToDecoded(entry));
      } else {
        entry.second = it->second;  // unchanged: keep the object holders already share
      }
    }
    for (auto& entry : items_) {
      if (!items.count(entry.first)) result.deleted.push_back(ToDecoded(entry));
    }
    old.swap(items_);
    items_.swap(items);
    // Why result.added stays valid: swapping unordered_maps moves no node,
    // so its entries are now items_'s.
    for (auto& [name, postings] : indexes_) {
      postings.clear();
      // Why: nearly every object has a value of its own (a host); growing
      // the table from empty rehashed it ~17 times at 100,000 objects.
      postings.reserve(items_.size());
    }
    if (!index_funcs_.empty()) {
      for (const auto& entry : items_) IndexLocked(entry, /*add=*/true);
    }
  }
  // Why outside the lock: freeing 100k objects takes a while; readers
  // should not wait for it.
  old.clear();
  return result;
}

}  // namespace routestatus::kubeclient::cache
