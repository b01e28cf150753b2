#include "test/controller/fakes.h"

#include <algorithm>

namespace routestatus::controller::testing {

using nlohmann::json;

void FakeWorkQueue::Add(const std::string& key) {
  if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
}

bool FakeWorkQueue::Get(std::string* key) {
  if (keys.empty()) return false;
  *key = keys.front();
  keys.pop_front();
  return true;
}

void FakeWorkQueue::FireDelayed() {
  for (const auto& key : delayed) Add(key);
  delayed.clear();
  delays.clear();
}

std::vector<std::string> FakeWorkQueue::Take() {
  std::vector<std::string> out(keys.begin(), keys.end());
  keys.clear();
  std::sort(out.begin(), out.end());
  return out;
}

void PassThroughLease::Try(const std::string& key, lease::Work work) {
  ++tries;
  if (!run_immediately) {
    pending[key] = std::move(work);
    return;
  }
  Run(key, std::move(work));
}

void PassThroughLease::Run(const std::string& key, lease::Work work) {
  lease::WorkOutcome outcome = work();
  results.push_back(outcome.result);
  if (outcome.result == lease::WorkResult::kExtend) state_ = lease::LeaseState::kLeader;
  if (outcome.result == lease::WorkResult::kRelease) state_ = lease::LeaseState::kFollower;
  if (outcome.retry) {
    retry_delays.push_back(outcome.retry_after);
    key_failing.push_back(outcome.failure == lease::Failure::kThisKey);
    pending[key] = std::move(work);
  }
}

void PassThroughLease::Extend(const std::string& key, lease::EntryWriter writer) {
  extended.push_back(key);
  writers.push_back(writer);
  pending.erase(key);
}

void PassThroughLease::Remove(const std::string& key) {
  removed.push_back(key);
  pending.erase(key);
}

int PassThroughLease::RunRetries() {
  auto work = std::move(pending);
  pending.clear();
  for (auto& [key, w] : work) Run(key, std::move(w));
  return static_cast<int>(work.size());
}

namespace {
std::string KeyOf(const json& o) {
  return o["metadata"].value("namespace", "") + "/" + o["metadata"].value("name", "");
}
}  // namespace

json FakeKubeClient::Put(json route) {
  json& m = route["metadata"];
  if (!m.contains("uid")) m["uid"] = "uid-" + std::to_string(++uid_);
  if (!m.contains("creationTimestamp")) m["creationTimestamp"] = "2026-01-01T00:00:00Z";
  m["resourceVersion"] = std::to_string(++rv_);
  objects_[KeyOf(route)] = route;
  return route;
}

json FakeKubeClient::Object(const std::string& ns, const std::string& name) const {
  auto it = objects_.find(ns + "/" + name);
  return it == objects_.end() ? json() : it->second;
}

void FakeKubeClient::Remove(const std::string& ns, const std::string& name) {
  objects_.erase(ns + "/" + name);
}

kubeclient::Route FakeKubeClient::Typed(const std::string& ns, const std::string& name) const {
  return kubeclient::RouteFromJson(Object(ns, name)).value();
}

StatusOr<json> FakeKubeClient::Get(const kubeclient::ResourceRef&,
                                               const std::string& ns, const std::string& name) {
  ++gets;
  if (before_get) {
    auto hook = std::move(before_get);
    before_get = nullptr;
    hook();
  }
  auto it = objects_.find(ns + "/" + name);
  if (it == objects_.end()) return Status(StatusCode::kNotFound, "routes \"" + name + "\" not found");
  return it->second;
}

StatusOr<kubeclient::ListPage> FakeKubeClient::List(
    const kubeclient::ResourceRef&, const std::string& ns, const kubeclient::ListOptions& options) {
  kubeclient::ListPage page;
  page.resource_version = std::to_string(rv_);
  auto it = options.continue_token.empty() ? objects_.begin()
                                           : objects_.upper_bound(options.continue_token);
  for (; it != objects_.end(); ++it) {
    if (!ns.empty() && it->second["metadata"].value("namespace", "") != ns) continue;
    if (options.limit > 0 && static_cast<int64_t>(page.items.size()) == options.limit) {
      page.continue_token = KeyOf(page.items.back());
      break;
    }
    page.items.push_back(it->second);
  }
  return page;
}

StatusOr<std::unique_ptr<kubeclient::WatchStream>> FakeKubeClient::Watch(
    const kubeclient::ResourceRef&, const std::string&, const kubeclient::WatchOptions&) {
  return Status(StatusCode::kInternal, "FakeKubeClient has no watch");
}

StatusOr<json> FakeKubeClient::Create(const kubeclient::ResourceRef&,
                                                  const std::string&, const json& object) {
  return Put(object);
}

StatusOr<json> FakeKubeClient::Update(const kubeclient::ResourceRef&,
                                                  const json& object) {
  return Put(object);
}

StatusOr<json> FakeKubeClient::UpdateStatus(const kubeclient::ResourceRef&,
                                                        const json& object) {
  puts.push_back(object);
  if (!next_status_errors.empty()) {
    Status s = next_status_errors.front();
    next_status_errors.pop_front();
    return s;
  }
  auto it = objects_.find(KeyOf(object));
  if (it == objects_.end()) return Status(StatusCode::kNotFound, "route not found");
  if (it->second["metadata"]["resourceVersion"] != object["metadata"]["resourceVersion"]) {
    return Status(StatusCode::kConflict, "the object has been modified");
  }
  return StoreStatus(it->second, object.contains("status") ? object["status"] : json::object());
}

json FakeKubeClient::StoreStatus(json stored, json status) {
  stored["status"] = std::move(status);
  ++successful_puts;
  json answer = Put(std::move(stored));
  if (after_status_put) {
    auto hook = std::move(after_status_put);
    after_status_put = nullptr;
    hook();
  }
  return answer;
}

StatusOr<json> FakeKubeClient::MergePatchStatus(const kubeclient::ResourceRef&,
                                                const std::string& ns, const std::string& name,
                                                const json& patch) {
  puts.push_back(patch);
  patched.push_back(ns + "/" + name);
  if (!next_status_errors.empty()) {
    Status s = next_status_errors.front();
    next_status_errors.pop_front();
    return s;
  }
  auto it = objects_.find(ns + "/" + name);
  if (it == objects_.end()) return Status(StatusCode::kNotFound, "route not found");
  const json* rv = patch.contains("metadata") ? &patch["metadata"] : nullptr;
  if (rv != nullptr && rv->contains("resourceVersion") &&
      it->second["metadata"]["resourceVersion"] != (*rv)["resourceVersion"]) {
    if (before_conflict_answer) {
      auto hook = std::move(before_conflict_answer);
      before_conflict_answer = nullptr;
      hook();
    }
    return Status(StatusCode::kConflict, "the object has been modified");
  }
  const json& stored = it->second;
  json status = json{{"status", stored.contains("status") ? stored["status"] : json::object()}};
  if (patch.contains("status")) status.merge_patch({{"status", patch["status"]}});
  return StoreStatus(stored, status["status"].is_object() ? status["status"] : json::object());
}

Status FakeKubeClient::Delete(const kubeclient::ResourceRef&, const std::string& ns,
                              const std::string& name) {
  if (objects_.erase(ns + "/" + name) == 0) return Status(StatusCode::kNotFound, "not found");
  return Status::Ok();
}

}  // namespace routestatus::controller::testing
