#include "e2e/harness/replica.h"

#include <signal.h>

#include <algorithm>
#include <cctype>
#include <sstream>

#include <glog/logging.h>

namespace routestatus::e2e {


namespace {

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

}  // namespace

ReplicaOptions TestReplicaOptions(const std::string& router_name,
                                  const std::map<std::string, std::string>& overrides) {
  ReplicaOptions o;
  o.router_name = router_name;
  o.flags = {
      {"lease-interval", "2s"},
      {"lease-retry-interval", "500ms"},
      {"contention-interval", "10s"},
      {"lease-election-delay", "500ms"},
      {"router-canonical-hostname", "router-" + router_name + ".apps.example.com"},
      {"v", "2"},
  };
  for (const auto& [k, v] : overrides) o.flags[k] = v;
  return o;
}

Replica::Replica(TestCluster& cluster, std::string id, ReplicaOptions options)
    : Replica(ReplicaTarget{cluster.env().controller_binary, cluster.kubeconfig(),
                            cluster.temp_dir(), {}},
              std::move(id), std::move(options)) {
  cluster_ = &cluster;
}

Replica::Replica(ReplicaTarget target, std::string id, ReplicaOptions options)
    : target_(std::move(target)),
      id_(std::move(id)),
      options_(std::move(options)),
      log_path_(target_.log_dir + "/" + id_ + ".log") {
  if (target_.controller_binary.empty()) {
    target_.controller_binary = E2eEnvFromProcess().controller_binary;
  }
}

Replica::~Replica() {
  if (process_) process_->Stop(std::chrono::seconds(3));
}

void Replica::Start() {
  if (process_ && process_->Running()) Kill();
  if (cluster_ != nullptr && !cluster_->embedded()) {
    // Why: on a shared cluster, stay out of everybody else's routes
    // (including earlier tests' namespaces still terminating).
    target_.namespaces = cluster_->namespaces();
  }
  metrics_port_ = PickFreePort();
  std::vector<std::string> argv = options_.launch_prefix;
  argv.push_back(target_.controller_binary);
  for (const std::string& a : options_.args) argv.push_back(a);
  std::map<std::string, std::string> flags = options_.flags;
  flags["kubeconfig"] = target_.kubeconfig;
  flags["router-name"] = options_.router_name;
  flags["metrics-address"] = "127.0.0.1:" + std::to_string(metrics_port_);
  if (!flags.count("namespaces") && !target_.namespaces.empty()) {
    std::string list;
    for (const auto& ns : target_.namespaces) list += (list.empty() ? "" : ",") + ns;
    flags["namespaces"] = list;
  }
  for (const auto& [k, v] : flags) argv.push_back("--" + k + "=" + v);
  std::ostringstream line;
  for (const auto& a : argv) line << a << ' ';
  LOG(INFO) << "e2e: starting " << id_ << ": " << line.str();
  log_offset_ = Log().size();
  process_ = std::make_unique<Subprocess>(DieWithParent(argv), log_path_);
}

bool Replica::RestartIfPortTaken() {
  if (!process_ || process_->Running()) return false;
  // Why: only this process's part of the (appended) log counts.
  std::string log = Log();
  if (log.find("Address already in use", std::min(log_offset_, log.size())) == std::string::npos) {
    return false;
  }
  LOG(WARNING) << "e2e: " << id_ << " exited: metrics port taken; restarting";
  Start();
  return true;
}

std::string Replica::MetricsUrl() const {
  return "http://127.0.0.1:" + std::to_string(metrics_port_) + "/metrics";
}

pid_t Replica::pid() const { return process_ ? process_->pid() : -1; }

void Replica::Kill() {
  if (!process_) return;
  process_->Signal(SIGKILL);
  process_->Wait(std::chrono::seconds(5));
}

int Replica::Stop(std::chrono::milliseconds grace) { return process_ ? process_->Stop(grace) : 0; }

int Replica::WaitExit(std::chrono::milliseconds timeout) {
  return process_ ? process_->Wait(timeout) : -1;
}

bool Replica::Running() { return process_ && process_->Running(); }

std::string Replica::Log() const { return process_ ? process_->ReadLog() : std::string(); }

StatusOr<std::vector<PromSample>> Replica::Scrape() {
  bool ok = false;
  int code = 0;
  std::string body = HttpGetLocal(metrics_port_, "/metrics", &ok, &code);
  if (!ok || code != 200) {
    return Status(StatusCode::kUnavailable,
                  id_ + ": GET /metrics failed (code " + std::to_string(code) + ")");
  }
  return ParsePromText(body);
}

bool Replica::Ready() {
  bool ok = false;
  int code = 0;
  HttpGetLocal(metrics_port_, "/readyz", &ok, &code);
  return ok && code == 200;
}

ReplicaWrites Replica::Writes() {
  ReplicaWrites w;
  auto samples = Scrape();
  if (!samples.ok()) return w;
  const char* name = "routestatus_status_writes_total";
  w.success = SumSamples(*samples, name, {{"result", "success"}});
  w.conflict = SumSamples(*samples, name, {{"result", "conflict"}});
  w.other = SumSamples(*samples, name) - w.success - w.conflict;
  return w;
}

std::string Replica::LeaseState() {
  auto samples = Scrape();
  if (!samples.ok()) return "";
  // Why: match any gauge named *lease_state* with a state-like label whose
  // value is 1, so the harness does not hard-code the exporter's spelling.
  for (const PromSample& s : *samples) {
    if (s.name.find("lease_state") == std::string::npos || s.value != 1) continue;
    for (const auto& [k, v] : s.labels) {
      std::string lv = Lower(v);
      if (lv == "leader" || lv == "follower" || lv == "election" || lv == "disabled") return lv;
    }
  }
  return "";
}

ReplicaSet::ReplicaSet(TestCluster& cluster, const std::string& prefix, int n,
                       const ReplicaOptions& options)
    : cluster_(&cluster) {
  for (int i = 0; i < n; ++i) Add(prefix + "-" + std::to_string(i), options);
}

ReplicaSet::ReplicaSet(ReplicaTarget target) : target_(std::move(target)) {}

Replica& ReplicaSet::Add(const std::string& id, const ReplicaOptions& options) {
  replicas_.push_back(cluster_ != nullptr ? std::make_unique<Replica>(*cluster_, id, options)
                                          : std::make_unique<Replica>(target_, id, options));
  return *replicas_.back();
}

void ReplicaSet::StopAll(std::chrono::milliseconds grace) {
  for (auto& r : replicas_) {
    if (r->Running()) kill(r->pid(), SIGTERM);
  }
  for (auto& r : replicas_) r->Stop(grace);
}

void ReplicaSet::StartAll() {
  for (auto& r : replicas_) r->Start();
  // Why: PickFreePort races with other processes; a replica whose metrics
  // port was taken meanwhile exits at once. Start it again on a new port.
  for (int round = 0; round < 3; ++round) {
    bool restarted = false;
    WaitFor(
        [&] {
          for (auto& r : replicas_) {
            bool ok = false;
            int code = 0;
            HttpGetLocal(r->metrics_port(), "/healthz", &ok, &code);
            if (!(ok && code == 200) && r->Running()) return false;
          }
          return true;
        },
        std::chrono::seconds(10), std::chrono::milliseconds(50));
    for (auto& r : replicas_) restarted = r->RestartIfPortTaken() || restarted;
    if (!restarted) return;
  }
}

bool ReplicaSet::WaitReady(std::chrono::milliseconds timeout) {
  return WaitFor(
      [&] {
        for (auto& r : replicas_) {
          if (r->Running() && !r->Ready()) return false;
        }
        return true;
      },
      timeout, std::chrono::milliseconds(100));
}

int ReplicaSet::FindLeader() {
  for (size_t i = 0; i < replicas_.size(); ++i) {
    if (replicas_[i]->Running() && replicas_[i]->LeaseState() == "leader") {
      return static_cast<int>(i);
    }
  }
  return -1;
}

double ReplicaSet::SumMetric(const std::string& name, const std::map<std::string, std::string>& match) {
  double total = 0;
  for (auto& r : replicas_) {
    if (!r->Running()) continue;
    auto samples = r->Scrape();
    if (samples.ok()) total += SumSamples(*samples, name, match);
  }
  return total;
}

std::string ReplicaSet::LogTails(size_t tail_bytes) const {
  std::ostringstream out;
  for (const auto& r : replicas_) {
    std::string log = r->Log();
    if (log.size() > tail_bytes) log = "..." + log.substr(log.size() - tail_bytes);
    out << "==== " << r->id() << " (" << r->log_path() << ") ====\n" << log << "\n";
  }
  return out.str();
}

std::vector<std::string> ReplicaSet::GrepLogs(const std::string& needle) const {
  std::vector<std::string> lines;
  for (const auto& r : replicas_) {
    std::istringstream in(r->Log());
    std::string line;
    while (std::getline(in, line)) {
      if (line.find(needle) != std::string::npos) lines.push_back(r->id() + ": " + line);
    }
  }
  return lines;
}

}  // namespace routestatus::e2e
