#include "e2e/bench/bench_cluster.h"

#include <algorithm>

#include <glog/logging.h>

#include "apiserver/resources.h"
#include "e2e/harness/prom_text.h"
#include "e2e/bench/table.h"
#include "e2e/harness/route_factory.h"
#include "kubeclient/rest/kube_config.h"
#include "kubeclient/rest/rest_kube_client.h"

namespace routestatus::e2e::bench {

BenchCluster::BenchCluster(const std::string& name) : dir_(MakeTempDir("routestatus-bench-" + name)) {
  apiserver::ServerOptions options;
  options.watch_history = 100000;
  options.watcher_buffer = 200000;
  server_ = std::make_unique<apiserver::Server>(options);
  Status started = server_->Start();
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
  replicas_ = std::make_unique<ReplicaSet>(ReplicaTarget{"", kubeconfig_, dir_, {}});
}

BenchCluster::~BenchCluster() {
  StopReplicas();
  client_.reset();
  server_->Stop();
}

std::string BenchCluster::UseRealEtcd() {
  if (EtcdServer::FindBinary().empty()) {
    return "no etcd binary (Debian package etcd-server): storage reads are reads of the "
           "embedded server's memory, as before";
  }
  std::string error;
  const SteadyTime started = clock_.Now();
  etcd_ = EtcdServer::Start(dir_, &error);
  if (!etcd_) return "etcd did not start (" + error + "): storage reads are reads of memory";
  Status used = server_->UseEtcd(etcd_->endpoint());
  if (!used.ok()) {
    etcd_.reset();
    return "etcd refused the load (" + used.ToString() + "): storage reads are reads of memory";
  }
  const double seconds = std::chrono::duration<double>(clock_.Now() - started).count();
  return Fmt("storage reads go to a real etcd %s on loopback (%s, data in %s; started and "
             "loaded with %zu routes in %.1f s)",
             etcd_->version().c_str(), etcd_->endpoint().c_str(), dir_.c_str(), RouteCount(),
             seconds);
}

uint64_t BenchCluster::EtcdRangeReads() const {
  const apiserver::EtcdStorage* etcd = server_->etcd();
  return etcd == nullptr ? 0 : etcd->RangeReads();
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

void BenchCluster::SeedPlainRoutes(int from, int to) {
  std::vector<std::string> namespaces;
  for (int i = 0; i < 10; ++i) namespaces.push_back("scale-" + std::to_string(i));
  if (from == 0) SeedNamespaces(namespaces);
  for (int i = from; i < to; ++i) {
    const std::string& ns = namespaces[static_cast<size_t>(i) % namespaces.size()];
    std::string name = "r-" + std::to_string(i);
    SeedRoute(BenchRoute(ns, name, name + "." + ns + ".bench.example.com"));
  }
}

std::vector<nlohmann::json> BenchCluster::ListRoutes() const {
  std::vector<nlohmann::json> out;
  auto page = server_->store().List(apiserver::RoutesInfo(), apiserver::ObjectFilter{}, 0, "");
  if (!page.ok()) return out;
  out.reserve(page.value.items.size());
  for (const auto& item : page.value.items) out.push_back(nlohmann::json::parse(item->json));
  return out;
}

std::optional<nlohmann::json> BenchCluster::GetRoute(const std::string& key) const {
  size_t slash = key.find('/');
  auto got = server_->store().Get(apiserver::RoutesInfo(), key.substr(0, slash),
                                  key.substr(slash + 1));
  if (!got.ok()) return std::nullopt;
  return nlohmann::json::parse(got.value->json);
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
  CHECK(replicas_->size() == 0) << "StopReplicas() first";
  for (int i = 0; i < n; ++i) {
    const std::string id = "replica-" + std::to_string(next_index_++);
    ReplicaOptions options = ToReplicaOptions(flags);
    if (flags.pod_limits) {
      auto pod = std::make_unique<PodLimits>(id);
      Status s = pod->Create(kPodCpuMillis, kPodMemoryBytes);
      CHECK(s.ok()) << s.ToString();
      options.launch_prefix = pod->LaunchPrefix();
      pods_.push_back(std::move(pod));
    }
    replicas_->Add(id, options);
  }
  replicas_->StartAll();
}

double BenchCluster::PodPeakMemoryMiB() const {
  double peak = 0;
  for (const auto& pod : pods_) peak = std::max(peak, pod->PeakMemoryMiB());
  return peak;
}

uint64_t BenchCluster::PodOomKills() const {
  uint64_t kills = 0;
  for (const auto& pod : pods_) kills += pod->OomKills();
  return kills;
}

bool BenchCluster::WaitReady(std::chrono::milliseconds timeout) {
  bool ready = replicas_->WaitReady(timeout);
  for (int i = 0; i < replicas_->size(); ++i) {
    if (!replicas_->at(i).Running()) {
      LOG(ERROR) << replicas_->at(i).id() << " exited; see " << replicas_->at(i).log_path();
      return false;
    }
  }
  return ready;
}

void BenchCluster::StopReplicas() {
  replicas_->StopAll();
  replicas_ = std::make_unique<ReplicaSet>(ReplicaTarget{"", kubeconfig_, dir_, {}});
  pods_.clear();  // the processes have exited: their cgroups can go
}

ProcStats BenchCluster::ReplicaStats() {
  ProcStats total;
  total.ok = true;
  for (int i = 0; i < replicas_->size(); ++i) {
    ProcStats s = replicas_->at(i).Stats();
    total.cpu_seconds += s.cpu_seconds;
    total.vm_hwm_kb = std::max(total.vm_hwm_kb, s.vm_hwm_kb);
    total.vm_rss_kb = std::max(total.vm_rss_kb, s.vm_rss_kb);
    total.ok = total.ok && s.ok;
  }
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

}  // namespace routestatus::e2e::bench
