#include "e2e/bench/bench_cluster.h"

#include <signal.h>

#include <thread>

#include <glog/logging.h>

#include "apiserver/resources.h"
#include "e2e/harness/prom_text.h"
#include "e2e/harness/route_factory.h"
#include "kubeclient/rest/kube_config.h"
#include "kubeclient/rest/rest_kube_client.h"

namespace routestatus::e2e::bench {

BenchCluster::BenchCluster(const std::string& name) : dir_(MakeTempDir("routestatus-bench-" + name)) {
  apiserver::ServerOptions options;
  options.watch_history = 100000;
  options.watcher_buffer = 200000;
  server_ = std::make_unique<apiserver::Server>(options);
  kubeclient::Status started = server_->Start();
  CHECK(started.ok()) << started.ToString();
  kubeconfig_ = dir_ + "/kubeconfig";
  CHECK(server_->WriteKubeconfig(kubeconfig_).ok());
  auto config = kubeclient::rest::LoadKubeconfigFile(kubeconfig_);
  CHECK(config.ok()) << config.status().ToString();
  kubeclient::rest::RestOptions rest;
  rest.qps = 0;  // the benchmark's own changes are paced by the benchmark
  auto client = kubeclient::rest::NewRestKubeClient(*config, clock_, rest);
  CHECK(client.ok()) << client.status().ToString();
  client_ = std::move(*client);
}

BenchCluster::~BenchCluster() {
  StopReplicas();
  client_.reset();
  server_->Stop();
}

ServerWrites BenchCluster::Writes() const {
  return ServerWritesFromSamples(ParsePromText(server_->metrics().Exposition()));
}

void BenchCluster::SeedNamespaces(const std::vector<std::string>& names) {
  for (const std::string& n : names) {
    auto r = server_->CreateNamespace(n);
    CHECK(r.ok()) << "namespace " << n;
  }
}

void BenchCluster::SeedRoute(const nlohmann::json& route) {
  auto r = server_->CreateRoute(route);
  CHECK(r.ok()) << "seed route " << route["metadata"].dump();
}

std::vector<nlohmann::json> BenchCluster::ListRoutes() const {
  std::vector<nlohmann::json> out;
  auto page = server_->store().List(apiserver::RoutesInfo(), apiserver::ObjectFilter{}, 0, "");
  if (!page.ok()) return out;
  out.reserve(page.value.items.size());
  for (const auto& item : page.value.items) out.push_back(nlohmann::json::parse(item->json));
  return out;
}

size_t BenchCluster::CountRoutesWithEntry(const std::string& router_name) const {
  auto page = server_->store().List(apiserver::RoutesInfo(), apiserver::ObjectFilter{}, 0, "");
  if (!page.ok()) return 0;
  const std::string needle = "\"routerName\":\"" + router_name + "\"";
  size_t n = 0;
  for (const auto& item : page.value.items) {
    if (item->json.find(needle) != std::string::npos) ++n;
  }
  return n;
}

size_t BenchCluster::RouteCount() const { return server_->store().Count(apiserver::RoutesInfo()); }

void BenchCluster::StartReplicas(int n, const ControllerFlags& flags) {
  for (int i = 0; i < n; ++i) {
    replicas_.push_back(std::make_unique<Replica>(next_index_++, kubeconfig_, flags, dir_));
  }
}

bool BenchCluster::WaitReady(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    bool all = true;
    for (auto& r : replicas_) {
      if (!r->Running() && r->RestartIfPortTaken()) {
        all = false;
        continue;
      }
      if (!r->Running()) {
        LOG(ERROR) << "replica " << r->index() << " exited; see " << r->log_path();
        return false;
      }
      all = all && r->Ready();
    }
    if (all) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

void BenchCluster::StopReplicas() {
  // Why: signal all first so they stop in parallel, then reap.
  for (auto& r : replicas_) kill(r->pid(), SIGTERM);
  for (auto& r : replicas_) r->Stop();
  replicas_.clear();
}

double BenchCluster::ReplicaCpuSeconds() const {
  double total = 0;
  for (const auto& r : replicas_) total += r->Stats().cpu_seconds;
  return total;
}

nlohmann::json BenchRoute(const std::string& ns, const std::string& name, const std::string& host,
                          const std::map<std::string, std::string>& labels) {
  RouteShape shape;
  shape.ns = ns;
  shape.name = name;
  shape.host = host;
  shape.labels = labels;
  return MakeRoute(shape);
}

bool EditRoute(kubeclient::KubeClient& client, const std::string& ns, const std::string& name,
               const std::function<void(nlohmann::json&)>& edit) {
  for (int attempt = 0; attempt < 10; ++attempt) {
    auto current = client.Get(kubeclient::RoutesResource(), ns, name);
    if (!current.ok()) return false;
    nlohmann::json object = *current;
    edit(object);
    auto updated = client.Update(kubeclient::RoutesResource(), object);
    if (updated.ok()) return true;
    if (updated.status().code() != kubeclient::StatusCode::kConflict) return false;
  }
  return false;
}

}  // namespace routestatus::e2e::bench
