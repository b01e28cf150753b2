#include "e2e/bench/churn.h"

#include <algorithm>
#include <thread>

#include <glog/logging.h>

namespace routestatus::e2e::bench {

using SteadyClock = std::chrono::steady_clock;

RouteModel::RouteModel(BenchCluster& cluster, std::vector<std::string> namespaces, uint64_t seed)
    : cluster_(cluster), namespaces_(std::move(namespaces)), rng_(seed) {}

std::string RouteModel::Create() {
  Route r;
  r.ns = namespaces_[static_cast<size_t>(next_id_) % namespaces_.size()];
  r.name = "r-" + std::to_string(next_id_++);
  r.host = r.name + "." + r.ns + ".bench.example.com";
  auto created = cluster_.client().Create(kubeclient::RoutesResource(), r.ns,
                                          BenchRoute(r.ns, r.name, r.host));
  CHECK(created.ok()) << created.status().ToString();
  std::string key = r.ns + "/" + r.name;
  routes_[key] = r;
  return key;
}

bool RouteModel::ChangeHost(int i) {
  std::vector<std::string> in_shard;
  for (const auto& [key, r] : routes_) {
    if (r.in_shard) in_shard.push_back(key);
  }
  if (in_shard.empty()) return false;
  Route& r = routes_[in_shard[rng_() % in_shard.size()]];
  r.host = "v" + std::to_string(i) + "-" + r.name + "." + r.ns + ".bench.example.com";
  std::string host = r.host;
  Update(r, [&host](nlohmann::json& o) { o["spec"]["host"] = host; });
  return true;
}

bool RouteModel::RandomChange(int i) {
  std::vector<std::string> in_shard, all;
  for (const auto& [key, r] : routes_) {
    all.push_back(key);
    if (r.in_shard) in_shard.push_back(key);
  }
  int dice = static_cast<int>(rng_() % 100);
  if (dice >= 40 && dice < 80 && in_shard.empty()) dice = 0;
  if (dice >= 80 && all.empty()) dice = 0;
  if (dice < 40) {
    Create();
    return true;
  }
  if (dice < 80) {
    Route& r = routes_[in_shard[rng_() % in_shard.size()]];
    if (dice < 65) {
      r.host = "v" + std::to_string(i) + "-" + r.name + "." + r.ns + ".bench.example.com";
      std::string host = r.host;
      Update(r, [&host](nlohmann::json& o) { o["spec"]["host"] = host; });
    } else {
      r.in_shard = false;
      Update(r, [](nlohmann::json& o) { o["metadata"]["labels"]["router"] = "internal"; });
    }
    return true;
  }
  std::string key = all[rng_() % all.size()];
  Route r = routes_[key];
  CHECK(cluster_.client().Delete(kubeclient::RoutesResource(), r.ns, r.name).ok());
  routes_.erase(key);
  return false;
}

void RouteModel::Update(const Route& r, const std::function<void(nlohmann::json&)>& mutate) {
  auto updated = UpdateRouteWith(cluster_.client(), r.ns, r.name, mutate);
  CHECK(updated.ok()) << r.ns << "/" << r.name << ": " << updated.status().ToString();
}

int RouteModel::RandomChanges(int count, double rate) {
  int writes = 0;
  auto start = SteadyClock::now();
  auto period = std::chrono::duration<double>(1.0 / rate);
  for (int i = 0; i < count; ++i) {
    std::this_thread::sleep_until(
        start + std::chrono::duration_cast<SteadyClock::duration>(period * i));
    if (RandomChange(i)) ++writes;
  }
  return writes;
}

bool RouteModel::Converged(std::string* why) const {
  std::string ignored;
  if (why == nullptr) why = &ignored;
  std::vector<nlohmann::json> routes;
  // Why only the model's namespaces: a scenario may seed routes of its own
  // elsewhere (the lease bench's failing route).
  for (auto& route : cluster_.ListRoutes()) {
    const std::string ns = route["metadata"].value("namespace", "");
    if (std::find(namespaces_.begin(), namespaces_.end(), ns) != namespaces_.end()) {
      routes.push_back(std::move(route));
    }
  }
  if (routes.size() != routes_.size()) {
    *why = "route count " + std::to_string(routes.size()) + " != " + std::to_string(routes_.size());
    return false;
  }
  for (const auto& route : routes) {
    const auto& meta = route["metadata"];
    auto it = routes_.find(meta.value("namespace", "") + "/" + meta.value("name", ""));
    if (it == routes_.end()) {
      *why = "unexpected route " + meta.dump();
      return false;
    }
    EntryView entry = FindEntry(route, "default");
    if (it->second.in_shard) {
      if (!entry.present || entry.host != it->second.host || entry.admitted != "True") {
        *why = it->first + " expected host " + it->second.host + ", status " +
               route.value("status", nlohmann::json::object()).dump();
        return false;
      }
    } else if (entry.present) {
      *why = it->first + " left the shard but has " + route["status"].dump();
      return false;
    }
  }
  return true;
}

double RouteModel::WaitConverged(std::chrono::seconds timeout, std::chrono::milliseconds quiet) {
  auto start = SteadyClock::now();
  double last = -1;
  auto last_change = start;
  double converged_at = -1;
  while (SteadyClock::now() - start < timeout) {
    double attempts = cluster_.Writes().status_attempts();
    if (attempts != last) {
      last = attempts;
      last_change = SteadyClock::now();
    }
    bool ok = Converged();
    if (ok && converged_at < 0) {
      converged_at = std::chrono::duration<double>(SteadyClock::now() - start).count();
    }
    if (!ok) converged_at = -1;
    if (ok && SteadyClock::now() - last_change >= quiet) return converged_at;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  std::string why;
  Converged(&why);
  LOG(WARNING) << "not converged: " << why;
  return -1;
}

}  // namespace routestatus::e2e::bench
