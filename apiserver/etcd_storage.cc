#include "apiserver/etcd_storage.h"

#include <algorithm>

#include <glog/logging.h>

#include "apiserver/continue_token.h"

namespace routestatus::apiserver {

namespace {

constexpr size_t kTxnBytes = 1 << 20;  // below etcd's default --max-request-bytes (1.5 MiB)

// The stored object of etcd value `text`; nullptr when it is not one.
ObjectPtr DecodeStored(const std::string& text) {
  nlohmann::json object = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!object.is_object()) return nullptr;
  std::string rv;
  auto meta = object.find("metadata");
  if (meta != object.end() && meta->is_object()) rv = meta->value("resourceVersion", "");
  return ObjectStore::Freeze(object, ParseRv(rv).value_or(0));
}

}  // namespace

EtcdStorage::EtcdStorage(std::unique_ptr<EtcdClient> client) : client_(std::move(client)) {}

std::string EtcdStorage::KeyPrefix(const ResourceInfo& r) {
  return "/registry/" + (r.group.empty() ? "" : r.group + "/") + r.resource + "/";
}

ApiError EtcdStorage::Failed(const std::string& what, const Status& status) const {
  LOG(ERROR) << "etcd " << client_->endpoint() << ": " << what << " failed: " << status.message();
  return InternalError(what + ": " + status.message());
}

void EtcdStorage::RecordLocked(uint64_t rv, int64_t revision) {
  if (!versions_.empty() && versions_.back().first == rv) {
    versions_.back().second = revision;
  } else {
    versions_.emplace_back(rv, revision);
  }
}

std::optional<ApiError> EtcdStorage::Commit(const ResourceInfo& r, const std::string& key,
                                            const ObjectPtr& object, bool deleted) {
  std::lock_guard<std::mutex> lock(mu_);
  EtcdOp op{KeyPrefix(r) + key, std::nullopt};
  if (!deleted) op.value = object->json;
  auto revision = client_->Txn({op});
  if (!revision.ok()) return Failed(deleted ? "delete " + op.key : "put " + op.key, revision.status());
  RecordLocked(object->rv, *revision);
  return std::nullopt;
}

std::optional<ApiError> EtcdStorage::Load(const std::vector<MirroredObject>& objects,
                                          uint64_t rv) {
  std::lock_guard<std::mutex> lock(mu_);
  auto revision = client_->DeleteRange("/registry/", EtcdClient::PrefixEnd("/registry/"));
  if (!revision.ok()) return Failed("clear /registry/", revision.status());
  std::vector<EtcdOp> batch;
  size_t bytes = 0;
  auto flush = [&]() -> std::optional<ApiError> {
    if (batch.empty()) return std::nullopt;
    revision = client_->Txn(batch);
    if (!revision.ok()) return Failed("load " + std::to_string(batch.size()) + " objects",
                                      revision.status());
    batch.clear();
    bytes = 0;
    return std::nullopt;
  };
  for (const MirroredObject& o : objects) {
    batch.push_back({KeyPrefix(*o.resource) + o.key, o.object->json});
    bytes += batch.back().key.size() + batch.back().value->size();
    if (batch.size() >= kTxnOps || bytes >= kTxnBytes) {
      if (auto error = flush()) return error;
    }
  }
  if (auto error = flush()) return error;
  versions_.clear();
  oldest_rv_ = rv;
  RecordLocked(rv, *revision);
  return std::nullopt;
}

void EtcdStorage::Compact(uint64_t rv) {
  std::lock_guard<std::mutex> lock(mu_);
  oldest_rv_ = std::max(oldest_rv_, rv);
  // Keep the last change at or before `rv`: it names etcd's state at rv.
  auto it = std::upper_bound(versions_.begin(), versions_.end(), rv,
                             [](uint64_t v, const auto& e) { return v < e.first; });
  if (it != versions_.begin()) versions_.erase(versions_.begin(), std::prev(it));
}

std::optional<int64_t> EtcdStorage::RevisionAt(uint64_t rv) {
  std::lock_guard<std::mutex> lock(mu_);
  if (rv < oldest_rv_ || versions_.empty()) return std::nullopt;
  // The last change at or before `rv`: etcd's state then is the store's at rv.
  auto it = std::upper_bound(versions_.begin(), versions_.end(), rv,
                             [](uint64_t v, const auto& e) { return v < e.first; });
  if (it == versions_.begin()) return std::nullopt;
  return std::prev(it)->second;
}

uint64_t EtcdStorage::RvAt(int64_t revision, uint64_t current_rv) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = std::upper_bound(versions_.begin(), versions_.end(), revision,
                             [](int64_t r, const auto& e) { return r < e.second; });
  if (it == versions_.begin()) return oldest_rv_;
  // Why: a list must not answer a version older than the store's own when
  // nothing changed since (a watch from it would be 410 after a restart).
  return it == versions_.end() ? std::max(std::prev(it)->first, current_rv) : std::prev(it)->first;
}

ApiResult<ListPage> EtcdStorage::List(const ResourceInfo& r, const ObjectFilter& filter,
                                      size_t limit, const std::string& continue_token,
                                      std::optional<uint64_t> exact_rv, uint64_t current_rv) {
  using Result = ApiResult<ListPage>;
  // Why: like kube, keys in tokens are relative to the listed prefix.
  const std::string prefix =
      KeyPrefix(r) + (filter.ns.empty() || !r.namespaced ? "" : filter.ns + "/");
  std::string start = prefix;
  Result result;
  int64_t revision = 0;  // 0: the latest, a linearizable read
  if (!continue_token.empty()) {
    std::string error;
    std::optional<ContinueToken> token = DecodeContinueToken(continue_token, &error);
    if (!token) return Result::Error(BadRequestError("invalid continue token: " + error));
    start = prefix + token->last_key + std::string(1, '\0');
    if (token->rv > 0) {
      const uint64_t rv = static_cast<uint64_t>(token->rv);
      std::optional<int64_t> at = rv > current_rv ? std::nullopt : RevisionAt(rv);
      if (!at) {
        ApiError e = ExpiredContinueError();
        e.continue_token = EncodeContinueToken({-1, token->last_key});
        return Result::Error(e);
      }
      revision = *at;
      result.value.rv = rv;
    }
  } else if (exact_rv) {
    if (*exact_rv > current_rv) {
      return Result::Error(TooLargeResourceVersionError(*exact_rv, current_rv));
    }
    std::optional<int64_t> at = RevisionAt(*exact_rv);
    if (!at) {
      ApiError e = ExpiredContinueError();
      e.message = "The resourceVersion for the provided list is too old.";
      return Result::Error(e);
    }
    revision = *at;
    result.value.rv = *exact_rv;
  }
  const std::string end = EtcdClient::PrefixEnd(prefix);
  const bool unfiltered = filter.labels.Empty() && filter.fields.Empty();
  std::string last_key;
  // Why a loop: like kube's etcd3 store, a page a selector thinned out is
  // filled by further ranges at the same revision.
  while (true) {
    range_reads_.fetch_add(1, std::memory_order_relaxed);
    auto read = client_->Range(start, end, static_cast<int64_t>(limit), revision);
    if (!read.ok()) return Result::Error(Failed("list " + prefix, read.status()));
    if (revision == 0) {
      revision = read->revision;
      result.value.rv = RvAt(revision, current_rv);
    }
    for (size_t i = 0; i < read->kvs.size(); ++i) {
      const EtcdKv& kv = read->kvs[i];
      if (limit != 0 && result.value.items.size() >= limit) {
        result.value.continue_token = EncodeContinueToken(
            {static_cast<int64_t>(result.value.rv), last_key.substr(prefix.size())});
        return result;
      }
      ObjectPtr object = DecodeStored(kv.value);
      if (!object) {
        return Result::Error(
            Failed("decode " + kv.key, Status(StatusCode::kInternal, "not a JSON object")));
      }
      last_key = kv.key;
      if (filter.Matches(*object)) result.value.items.push_back(std::move(object));
    }
    if (limit == 0 || !read->more || read->kvs.empty()) return result;
    if (result.value.items.size() >= limit) {
      result.value.continue_token = EncodeContinueToken(
          {static_cast<int64_t>(result.value.rv), last_key.substr(prefix.size())});
      if (unfiltered) {
        result.value.remaining = read->count - static_cast<int64_t>(read->kvs.size());
      }
      return result;
    }
    start = last_key + std::string(1, '\0');
  }
}

}  // namespace routestatus::apiserver
