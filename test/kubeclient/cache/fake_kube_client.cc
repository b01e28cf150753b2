#include "test/kubeclient/cache/fake_kube_client.h"

#include <atomic>

namespace routestatus::kubeclient::cache::testing {

using nlohmann::json;

json MakeRouteJson(const std::string& ns, const std::string& name, int64_t rv,
                   const std::string& host) {
  return json{{"apiVersion", "route.openshift.io/v1"},
              {"kind", "Route"},
              {"metadata",
               {{"name", name},
                {"namespace", ns},
                {"uid", "uid-" + ns + "-" + name},
                {"resourceVersion", std::to_string(rv)},
                {"creationTimestamp", "2026-11-29T14:00:00Z"}}},
              {"spec", {{"host", host.empty() ? name + "." + ns + ".example.com" : host},
                        {"to", {{"kind", "Service"}, {"name", name}}}}},
              {"status", json::object()}};
}

json MakeNamespaceJson(const std::string& name, int64_t rv,
                       const std::map<std::string, std::string>& labels) {
  json meta{{"name", name}, {"uid", "uid-" + name}, {"resourceVersion", std::to_string(rv)}};
  if (!labels.empty()) meta["labels"] = labels;
  return json{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", meta}};
}

namespace {

class ScriptedStream final : public WatchStream {
 public:
  explicit ScriptedStream(WatchScript script) : script_(std::move(script)) {}
  StatusOr<WatchEvent> Next() override {
    if (cancelled_) return Status(StatusCode::kCancelled, "cancelled");
    if (next_ < script_.events.size()) return script_.events[next_++];
    return script_.end;
  }
  void Cancel() override { cancelled_ = true; }

 private:
  WatchScript script_;
  size_t next_ = 0;
  std::atomic<bool> cancelled_{false};
};

}  // namespace

// Blocks in Next() until cancelled; tells the client it is idle.
class BlockingStream final : public WatchStream {
 public:
  explicit BlockingStream(FakeKubeClient* client) : client_(client) {}
  StatusOr<WatchEvent> Next() override {
    std::unique_lock<std::mutex> l(client_->mu_);
    ++client_->idle_waiters_;
    client_->cv_.notify_all();
    client_->cv_.wait(l, [&] { return cancelled_; });
    --client_->idle_waiters_;
    return Status(StatusCode::kCancelled, "cancelled");
  }
  void Cancel() override {
    std::lock_guard<std::mutex> l(client_->mu_);
    cancelled_ = true;
    client_->cv_.notify_all();
  }

 private:
  FakeKubeClient* client_;
  bool cancelled_ = false;  // GUARDED_BY(client_->mu_)
};

void FakeKubeClient::SetObject(const std::string& key, json object) {
  std::lock_guard<std::mutex> l(mu_);
  objects_[key] = std::move(object);
}

void FakeKubeClient::RemoveObject(const std::string& key) {
  std::lock_guard<std::mutex> l(mu_);
  objects_.erase(key);
}

void FakeKubeClient::SetListResourceVersion(int64_t rv) {
  std::lock_guard<std::mutex> l(mu_);
  list_rv_ = std::to_string(rv);
}

void FakeKubeClient::SetListResourceVersion(std::string rv) {
  std::lock_guard<std::mutex> l(mu_);
  list_rv_ = std::move(rv);
}

void FakeKubeClient::FailNextLists(std::vector<Status> errors) {
  std::lock_guard<std::mutex> l(mu_);
  for (auto& e : errors) list_errors_.push_back(std::move(e));
}

void FakeKubeClient::AddWatch(WatchScript script) {
  std::lock_guard<std::mutex> l(mu_);
  watches_.push_back(std::move(script));
}

int FakeKubeClient::list_calls() const {
  std::lock_guard<std::mutex> l(mu_);
  return list_calls_;
}

std::vector<WatchOptions> FakeKubeClient::watch_calls() const {
  std::lock_guard<std::mutex> l(mu_);
  return watch_calls_;
}

void FakeKubeClient::WaitForIdleWatch() {
  std::unique_lock<std::mutex> l(mu_);
  cv_.wait(l, [&] { return idle_waiters_ > 0; });
}

void FakeKubeClient::ExpireNextContinues(int n) {
  std::lock_guard<std::mutex> l(mu_);
  expire_continues_ = n;
}

std::vector<ListOptions> FakeKubeClient::list_options() const {
  std::lock_guard<std::mutex> l(mu_);
  return list_options_;
}

StatusOr<ListPage> FakeKubeClient::List(const ResourceRef&, const std::string&,
                                        const ListOptions& options) {
  std::lock_guard<std::mutex> l(mu_);
  ++list_calls_;
  list_options_.push_back(options);
  if (!options.continue_token.empty() && expire_continues_ > 0) {
    --expire_continues_;
    return StatusFromResponse(
        410,
        R"({"kind":"Status","apiVersion":"v1","status":"Failure","message":"The provided )"
        R"(continue parameter is too old to display a consistent list result. You can start )"
        R"(a new list without the continue parameter.","reason":"Expired","code":410})");
  }
  if (!list_errors_.empty()) {
    Status s = list_errors_.front();
    list_errors_.pop_front();
    return s;
  }
  ListPage page;
  page.resource_version = list_rv_;
  auto it = options.continue_token.empty() ? objects_.begin()
                                           : objects_.upper_bound(options.continue_token);
  int64_t n = 0;
  for (; it != objects_.end(); ++it) {
    if (options.limit > 0 && n == options.limit) {
      page.continue_token = std::prev(it)->first;
      break;
    }
    page.items.push_back(it->second);
    ++n;
  }
  return page;
}

StatusOr<std::unique_ptr<WatchStream>> FakeKubeClient::Watch(const ResourceRef&,
                                                             const std::string&,
                                                             const WatchOptions& options) {
  std::lock_guard<std::mutex> l(mu_);
  watch_calls_.push_back(options);
  if (watches_.empty()) return std::unique_ptr<WatchStream>(std::make_unique<BlockingStream>(this));
  WatchScript script = std::move(watches_.front());
  watches_.pop_front();
  if (!script.open_error.ok()) return script.open_error;
  return std::unique_ptr<WatchStream>(std::make_unique<ScriptedStream>(std::move(script)));
}

StatusOr<json> FakeKubeClient::Get(const ResourceRef&, const std::string&, const std::string&) {
  return Status(StatusCode::kInternal, "not implemented");
}
StatusOr<json> FakeKubeClient::Create(const ResourceRef&, const std::string&, const json&) {
  return Status(StatusCode::kInternal, "not implemented");
}
StatusOr<json> FakeKubeClient::Update(const ResourceRef&, const json&) {
  return Status(StatusCode::kInternal, "not implemented");
}
StatusOr<json> FakeKubeClient::UpdateStatus(const ResourceRef&, const json&) {
  return Status(StatusCode::kInternal, "not implemented");
}
StatusOr<json> FakeKubeClient::MergePatchStatus(const ResourceRef&, const std::string&,
                                                const std::string&, const json&) {
  return Status(StatusCode::kInternal, "not implemented");
}
Status FakeKubeClient::Delete(const ResourceRef&, const std::string&, const std::string&) {
  return Status(StatusCode::kInternal, "not implemented");
}

}  // namespace routestatus::kubeclient::cache::testing
