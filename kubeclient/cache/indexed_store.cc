#include "kubeclient/cache/indexed_store.h"

#include <algorithm>

#include <glog/logging.h>

namespace routestatus::kubeclient::cache {

void IndexedStore::AddIndex(const std::string& name, RawIndexFunc fn) {
  std::lock_guard<std::mutex> l(mu_);
  CHECK(fn) << "index " << name << " has no function";
  index_funcs_[name] = std::move(fn);
  Postings& postings = indexes_[name];
  postings.clear();
  for (const auto& [key, obj] : items_) {
    for (auto& v : Values(index_funcs_[name], obj)) postings[std::move(v)].push_back(key);
  }
}

std::vector<std::string> IndexedStore::Values(const RawIndexFunc& fn, const DecodedObject& obj) {
  std::vector<std::string> values = fn(obj.object.get());
  if (values.size() > 1) {
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
  }
  return values;
}

void IndexedStore::IndexLocked(const DecodedObject& obj, bool add) {
  for (const auto& [name, fn] : index_funcs_) {
    Postings& postings = indexes_[name];
    for (auto& v : Values(fn, obj)) {
      if (add) {
        postings[std::move(v)].push_back(obj.key);
      } else {
        auto it = postings.find(v);
        if (it == postings.end()) continue;
        auto& keys = it->second;
        auto k = std::find(keys.begin(), keys.end(), obj.key);
        if (k != keys.end()) {
          if (k + 1 != keys.end()) *k = std::move(keys.back());
          keys.pop_back();
        }
        if (keys.empty()) postings.erase(it);
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
  return it->second;
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
  auto pit = iit->second.find(value);
  if (pit == iit->second.end()) return out;
  for (const auto& key : pit->second) {
    auto it = items_.find(key);
    if (it != items_.end()) out.push_back(it->second.object);
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
  auto it = items_.find(obj.key);
  if (it != items_.end()) {
    IndexLocked(it->second, /*add=*/false);
    old = std::move(it->second);
    it->second = std::move(obj);
  } else {
    it = items_.emplace(obj.key, std::move(obj)).first;
  }
  IndexLocked(it->second, /*add=*/true);
  return old;
}

std::optional<DecodedObject> IndexedStore::Remove(const std::string& key) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = items_.find(key);
  if (it == items_.end()) return std::nullopt;
  IndexLocked(it->second, /*add=*/false);
  DecodedObject old = std::move(it->second);
  items_.erase(it);
  return old;
}

ReplaceResult IndexedStore::Replace(std::unordered_map<std::string, DecodedObject> items) {
  ReplaceResult result;
  std::unordered_map<std::string, DecodedObject> old;
  {
    std::lock_guard<std::mutex> l(mu_);
    for (auto& [key, obj] : items) {
      auto it = items_.find(key);
      if (it == items_.end()) {
        result.added.push_back(obj);
      } else if (it->second.resource_version != obj.resource_version) {
        result.updated.emplace_back(it->second, obj);
      } else {
        obj = it->second;  // unchanged: keep the object holders already share
      }
    }
    for (auto& [key, obj] : items_) {
      if (!items.count(key)) result.deleted.push_back(obj);
    }
    old.swap(items_);
    items_.swap(items);
    for (auto& [name, postings] : indexes_) postings.clear();
    if (!index_funcs_.empty()) {
      for (const auto& [key, obj] : items_) IndexLocked(obj, /*add=*/true);
    }
  }
  // Why outside the lock: freeing 100k objects takes a while; readers
  // should not wait for it.
  old.clear();
  return result;
}

}  // namespace routestatus::kubeclient::cache
