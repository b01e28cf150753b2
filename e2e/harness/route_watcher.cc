#include "e2e/harness/route_watcher.h"

#include <glog/logging.h>

namespace routestatus::e2e {

using kubeclient::RouteIngress;

namespace {

bool SameEntry(const std::optional<RouteIngress>& a, const std::optional<RouteIngress>& b) {
  if (!a.has_value() || !b.has_value()) return a.has_value() == b.has_value();
  return kubeclient::IngressEqual(*a, *b);
}

}  // namespace

RouteWatcher::RouteWatcher(TestCluster& cluster, std::string router_name)
    : cluster_(cluster), router_name_(std::move(router_name)) {}

RouteWatcher::~RouteWatcher() { Stop(); }

void RouteWatcher::Start() {
  namespaces_ = std::set<std::string>(cluster_.namespaces().begin(), cluster_.namespaces().end());
  std::string rv;
  for (int attempt = 0; attempt < 50 && rv.empty(); ++attempt) {
    rv = Relist(/*baseline=*/true);
    if (rv.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  CHECK(!rv.empty()) << "RouteWatcher: cannot list routes";
  thread_ = std::thread([this, rv] {
    std::string version = rv;
    while (true) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (stopping_) return;
      }
      kubeclient::WatchOptions options;
      options.resource_version = version;
      options.allow_bookmarks = true;
      options.timeout = std::chrono::seconds(60);
      auto watch = cluster_.client().Watch(kubeclient::RoutesResource(), "", options);
      if (!watch.ok()) {
        if (watch.status().code() == StatusCode::kGone) {
          std::string relisted = Relist(false);
          if (!relisted.empty()) version = relisted;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        continue;
      }
      kubeclient::WatchStream* stream = nullptr;
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (stopping_) return;
        stream_ = std::move(*watch);
        stream = stream_.get();
      }
      while (true) {
        auto event = stream->Next();
        if (!event.ok()) break;
        auto now = Clock::now();
        switch (event->type) {
          case kubeclient::WatchEventType::kAdded:
          case kubeclient::WatchEventType::kModified: {
            auto route = kubeclient::RouteFromJson(event->object);
            if (route.ok()) Observe(*route, now);
            version = event->ResourceVersion();
            break;
          }
          case kubeclient::WatchEventType::kDeleted: {
            auto route = kubeclient::RouteFromJson(event->object);
            if (route.ok() && namespaces_.count(route->metadata.namespace_name)) {
              ObserveDelete(route->Key());
            }
            version = event->ResourceVersion();
            break;
          }
          case kubeclient::WatchEventType::kBookmark:
            if (!event->ResourceVersion().empty()) version = event->ResourceVersion();
            break;
          case kubeclient::WatchEventType::kError:
            if (event->ErrorStatus().code() == StatusCode::kGone) {
              std::string relisted;
              while (relisted.empty()) {
                {
                  std::lock_guard<std::mutex> lock(mu_);
                  if (stopping_) return;
                }
                relisted = Relist(false);
                if (relisted.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
              }
              version = relisted;
            }
            break;
        }
        if (event->type == kubeclient::WatchEventType::kError) break;
      }
      restarts_++;
      std::lock_guard<std::mutex> lock(mu_);
      stream_.reset();
    }
  });
}

void RouteWatcher::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    if (stream_) stream_->Cancel();
  }
  if (thread_.joinable()) thread_.join();
}

std::string RouteWatcher::Relist(bool baseline) {
  auto page = cluster_.client().List(kubeclient::RoutesResource(), "", {});
  if (!page.ok()) {
    LOG(WARNING) << "RouteWatcher: list: " << page.status().ToString();
    return "";
  }
  if (!baseline) relists_++;
  auto now = Clock::now();
  std::set<std::string> seen;
  for (const auto& item : page->items) {
    auto route = kubeclient::RouteFromJson(item);
    if (!route.ok() || !namespaces_.count(route->metadata.namespace_name)) continue;
    seen.insert(route->Key());
    if (baseline) {
      std::lock_guard<std::mutex> lock(mu_);
      History& h = routes_[route->Key()];
      h.entry = route->FindIngress(router_name_);
      h.uid = route->metadata.uid;
      since_[route->Key()] = now;
    } else {
      Observe(*route, now);
    }
  }
  if (!baseline) {
    std::vector<std::string> gone;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (const auto& [key, h] : routes_) {
        if (!h.deleted && !seen.count(key)) gone.push_back(key);
      }
    }
    for (const auto& key : gone) ObserveDelete(key);
  }
  return page->resource_version;
}

void RouteWatcher::Observe(const kubeclient::Route& route, Clock::time_point at) {
  if (!namespaces_.count(route.metadata.namespace_name)) return;
  std::optional<RouteIngress> entry = route.FindIngress(router_name_);
  std::lock_guard<std::mutex> lock(mu_);
  auto [it, inserted] = routes_.try_emplace(route.Key());
  History& h = it->second;
  if (inserted || h.deleted || h.uid != route.metadata.uid) {
    // A new object under this key: its life starts without an entry.
    h.entry.reset();
    h.deleted = false;
    h.uid = route.metadata.uid;
    since_[route.Key()] = at;
  }
  if (!SameEntry(h.entry, entry)) {
    h.entry = entry;
    h.changes++;
    h.change_times.push_back(at);
    since_[route.Key()] = at;
  }
  changed_.notify_all();
}

void RouteWatcher::ObserveDelete(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = routes_.find(key);
  if (it == routes_.end()) return;
  it->second.deleted = true;
  it->second.entry.reset();
  since_[key] = Clock::now();
  changed_.notify_all();
}

std::map<std::string, RouteWatcher::History> RouteWatcher::Snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  return routes_;
}

int RouteWatcher::Changes(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = routes_.find(key);
  return it == routes_.end() ? 0 : it->second.changes;
}

std::optional<RouteWatcher::Clock::time_point> RouteWatcher::WaitForEntry(
    const std::string& key, const std::function<bool(const std::optional<RouteIngress>&)>& pred,
    std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    auto it = routes_.find(key);
    if (it != routes_.end() && !it->second.deleted && pred(it->second.entry)) return since_[key];
    if (changed_.wait_until(lock, deadline) == std::cv_status::timeout) {
      it = routes_.find(key);
      if (it != routes_.end() && !it->second.deleted && pred(it->second.entry)) return since_[key];
      return std::nullopt;
    }
  }
}

}  // namespace routestatus::e2e
