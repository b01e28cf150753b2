// ObjectStore's reads: single objects, consistent paginated lists over a
// snapshot rebuilt from the event history, watches and their bookkeeping.

#include "apiserver/continue_token.h"
#include "apiserver/object_store.h"

namespace routestatus::apiserver {

ApiResult<ObjectPtr> ObjectStore::Get(const ResourceInfo& r, const std::string& ns,
                                      const std::string& name) const {
  using Result = ApiResult<ObjectPtr>;
  std::lock_guard<std::mutex> lock(mu_);
  const Table* table = FindTable(r);
  if (table != nullptr) {
    auto it = table->find(Key(r, ns, name));
    if (it != table->end()) return Result{it->second, std::nullopt};
  }
  return Result::Error(NotFoundError(r.group, r.resource, name));
}

ApiResult<ListPage> ObjectStore::List(const ResourceInfo& r, const ObjectFilter& filter,
                                      size_t limit, const std::string& continue_token,
                                      std::optional<uint64_t> exact_rv) const {
  using Result = ApiResult<ListPage>;
  // Why: tokens carry keys relative to the listed prefix, like kube's.
  const std::string ns_prefix = filter.ns.empty() || !r.namespaced ? "" : filter.ns + "/";
  int64_t token_rv = 0;
  std::string start_after;
  const bool continuing = !continue_token.empty();
  if (continuing) {
    std::string error;
    std::optional<ContinueToken> token = DecodeContinueToken(continue_token, &error);
    if (!token) return Result::Error(BadRequestError("invalid continue token: " + error));
    token_rv = token->rv;
    start_after = ns_prefix + token->last_key;
  }
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t snapshot_rv = rv_;
  if (continuing && token_rv > 0) {
    snapshot_rv = static_cast<uint64_t>(token_rv);
    if (snapshot_rv < compacted_rv_ || snapshot_rv > rv_) {
      ApiError e = ExpiredContinueError();
      e.continue_token = EncodeContinueToken({-1, start_after.substr(ns_prefix.size())});
      return Result::Error(e);
    }
  } else if (!continuing && exact_rv) {
    snapshot_rv = *exact_rv;
    if (snapshot_rv > rv_) return Result::Error(TooLargeResourceVersionError(snapshot_rv, rv_));
    if (snapshot_rv < compacted_rv_) {
      ApiError e = ExpiredContinueError();
      e.message = "The resourceVersion for the provided list is too old.";
      return Result::Error(e);
    }
  }
  // Why: the snapshot is the current table with every change after
  // snapshot_rv undone; `overlay` holds each changed key's state at the snapshot.
  std::map<std::string, ObjectPtr> overlay;
  for (auto it = history_.rbegin(); it != history_.rend() && it->rv > snapshot_rv; ++it) {
    if (it->resource == &r) overlay[it->key] = it->prev;
  }
  static const Table kEmpty;
  const Table* found = FindTable(r);
  const Table& table = found ? *found : kEmpty;
  std::string lower = start_after;
  if (!ns_prefix.empty() && lower < ns_prefix) lower = ns_prefix;
  auto cur = continuing ? table.upper_bound(lower) : table.lower_bound(lower);
  auto ov = continuing ? overlay.upper_bound(lower) : overlay.lower_bound(lower);
  const bool unfiltered = filter.labels.Empty() && filter.fields.Empty();
  Result result;
  result.value.rv = snapshot_rv;
  std::string last_key;
  while (cur != table.end() || ov != overlay.end()) {
    const std::string* key;
    ObjectPtr obj;
    if (ov == overlay.end() || (cur != table.end() && cur->first < ov->first)) {
      key = &cur->first;
      obj = cur->second;
      ++cur;
    } else {
      if (cur != table.end() && cur->first == ov->first) ++cur;
      key = &ov->first;
      obj = ov->second;
      ++ov;
    }
    if (!ns_prefix.empty() && key->compare(0, ns_prefix.size(), ns_prefix) != 0) break;
    if (!obj) continue;  // created after the snapshot
    if (limit != 0 && result.value.items.size() >= limit) {
      result.value.continue_token = EncodeContinueToken(
          ContinueToken{static_cast<int64_t>(snapshot_rv), last_key.substr(ns_prefix.size())});
      if (unfiltered) result.value.remaining = CountAfter(table, overlay, last_key, ns_prefix);
      break;
    }
    last_key = *key;
    if (filter.Matches(*obj)) result.value.items.push_back(obj);
  }
  return result;
}

int64_t ObjectStore::CountAfter(const Table& table, const std::map<std::string, ObjectPtr>& overlay,
                                const std::string& after, const std::string& prefix) {
  auto rank = [&table](const std::string& key) {  // keys before `key`
    return static_cast<int64_t>(table.order_of_key(key));
  };
  int64_t end = static_cast<int64_t>(table.size());
  // Why: the keys with `prefix` are one range; its end is the prefix with
  // its last byte below 0xff incremented.
  std::string prefix_end = prefix;
  while (!prefix_end.empty() && static_cast<unsigned char>(prefix_end.back()) == 0xff) {
    prefix_end.pop_back();
  }
  if (!prefix_end.empty()) {
    ++prefix_end.back();
    end = rank(prefix_end);
  }
  int64_t count = end - rank(after) - (table.find(after) != table.end() ? 1 : 0);
  // The snapshot differs from the table only in the overlay's keys.
  for (auto it = overlay.upper_bound(after); it != overlay.end(); ++it) {
    if (it->first.compare(0, prefix.size(), prefix) != 0) break;
    const bool now = table.find(it->first) != table.end();
    const bool then = it->second != nullptr;
    count += (then ? 1 : 0) - (now ? 1 : 0);
  }
  return count;
}

ApiResult<std::shared_ptr<Watcher>> ObjectStore::Watch(const ResourceInfo& r, ObjectFilter filter,
                                                       std::optional<uint64_t> from_rv,
                                                       std::vector<ObjectPtr>* initial,
                                                       uint64_t* initial_rv) {
  using Result = ApiResult<std::shared_ptr<Watcher>>;
  auto watcher = std::make_shared<Watcher>(r, std::move(filter), options_.watcher_buffer, clock_);
  std::lock_guard<std::mutex> lock(mu_);
  if (initial != nullptr) {
    const Table* table = FindTable(r);
    if (table != nullptr) {
      const std::string& ns = watcher->filter().ns;
      const std::string prefix = ns.empty() || !r.namespaced ? "" : ns + "/";
      if (prefix.empty()) initial->reserve(table->size());
      for (auto it = table->lower_bound(prefix);
           it != table->end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
        if (watcher->filter().Matches(*it->second)) initial->push_back(it->second);
      }
    }
    if (initial_rv != nullptr) *initial_rv = rv_;
    watcher->set_start_rv(rv_);
  } else if (!from_rv || *from_rv == 0) {
    const Table* table = FindTable(r);
    bool sent = false;
    if (table != nullptr) {
      for (const auto& [key, obj] : *table) {
        if (!watcher->filter().Matches(*obj)) continue;
        watcher->Push({"ADDED", obj});
        sent = true;
      }
    }
    // Why: kube stamps a watch's initial events with its cache's version and
    // starts the watch there; with none sent, it starts at 0.
    progress_.CatchUp(rv_);
    watcher->set_start_rv(sent ? progress_.CacheRv(r.GroupResource()) : 0);
  } else {
    if (*from_rv < compacted_rv_) {
      return Result::Error(TooOldResourceVersionError(*from_rv, compacted_rv_ + 1));
    }
    if (*from_rv < watch_floor_rv_) {
      return Result::Error(TooOldResourceVersionError(*from_rv, watch_floor_rv_));
    }
    for (const Event& e : history_) {
      if (e.rv > *from_rv && e.resource == &r) Dispatch(*watcher, e);
    }
    watcher->set_start_rv(*from_rv);
  }
  watchers_.push_back(watcher);
  Result result;
  result.value = watcher;
  return result;
}

void ObjectStore::Unwatch(const std::shared_ptr<Watcher>& watcher) {
  watcher->Close();
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = watchers_.begin(); it != watchers_.end(); ++it) {
    if (*it == watcher) {
      watchers_.erase(it);
      break;
    }
  }
}

uint64_t ObjectStore::BookmarkRv(const ResourceInfo& r) {
  std::lock_guard<std::mutex> lock(mu_);
  progress_.CatchUp(rv_);
  return progress_.LastProcessed(r.GroupResource());
}

void ObjectStore::Compact() {
  std::lock_guard<std::mutex> lock(mu_);
  history_.clear();
  compacted_rv_ = rv_;
  if (mirror_ != nullptr) mirror_->Compact(rv_);
}

std::optional<ApiError> ObjectStore::SetMirror(StorageMirror* mirror) {
  std::lock_guard<std::mutex> lock(mu_);
  if (mirror != nullptr) {
    std::vector<MirroredObject> objects;
    for (const ResourceInfo& r : ServedResources()) {
      const Table* table = FindTable(r);
      if (table == nullptr) continue;
      for (const auto& [key, object] : *table) objects.push_back({&r, key, object});
    }
    if (auto error = mirror->Load(objects, rv_)) return error;
  }
  mirror_ = mirror;
  return std::nullopt;
}

uint64_t ObjectStore::RestartWatchCache() {
  std::lock_guard<std::mutex> lock(mu_);
  watch_floor_rv_ = ++rv_;
  progress_.Restart(rv_);
  dispatched_rv_.store(rv_, std::memory_order_release);
  return rv_;
}

void ObjectStore::CloseAllWatches() {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& w : watchers_) w->Close();
  watchers_.clear();
}

size_t ObjectStore::Count(const ResourceInfo& r) const {
  std::lock_guard<std::mutex> lock(mu_);
  const Table* table = FindTable(r);
  return table == nullptr ? 0 : table->size();
}

size_t ObjectStore::WatcherCount() const {
  std::lock_guard<std::mutex> lock(mu_);
  size_t n = 0;
  for (const auto& w : watchers_) n += w->closed() ? 0 : 1;
  return n;
}

uint64_t ObjectStore::OldestResumableRv() const {
  std::lock_guard<std::mutex> lock(mu_);
  return compacted_rv_;
}

}  // namespace routestatus::apiserver
