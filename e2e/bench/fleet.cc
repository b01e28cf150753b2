#include "e2e/bench/fleet.h"

#include <stdlib.h>
#include <unistd.h>

#include <cctype>
#include <fstream>
#include <sstream>
#include <thread>

#include <glog/logging.h>

namespace routestatus::e2e::bench {

std::string ControllerBinary() { return ROUTESTATUS_CONTROLLER_BIN; }
std::string ApiServerBinary() { return ROUTESTATUS_APISERVER_BIN; }

std::string MakeTempDir(const std::string& prefix) {
  const char* tmp = getenv("TMPDIR");
  std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/" + prefix +
                        "-XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  CHECK(mkdtemp(buf.data()) != nullptr) << "mkdtemp " << pattern;
  return std::string(buf.data());
}

ProcStats ReadProcStats(pid_t pid) {
  ProcStats stats;
  std::ifstream stat_file("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat_file, line)) return stats;
  // Why: the command name (field 2) may hold spaces; fields restart after ')'.
  size_t close = line.rfind(')');
  if (close == std::string::npos) return stats;
  std::istringstream rest(line.substr(close + 2));
  std::vector<std::string> fields;
  std::string field;
  while (rest >> field) fields.push_back(field);
  // fields[0] is field 3 (state); utime is field 14, stime field 15.
  if (fields.size() < 13) return stats;
  double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  stats.cpu_seconds = (std::stod(fields[11]) + std::stod(fields[12])) / ticks;
  std::ifstream status_file("/proc/" + std::to_string(pid) + "/status");
  while (std::getline(status_file, line)) {
    if (line.rfind("VmHWM:", 0) == 0) stats.vm_hwm_kb = std::atol(line.c_str() + 6);
    if (line.rfind("VmRSS:", 0) == 0) stats.vm_rss_kb = std::atol(line.c_str() + 6);
  }
  stats.ok = true;
  return stats;
}

std::string DescribeFlags(const ControllerFlags& flags) {
  std::string out = "--router-name=" + flags.router_name;
  auto add = [&out](const std::string& name, const std::string& value) {
    if (!value.empty()) out += " --" + name + "='" + value + "'";
  };
  add("router-canonical-hostname", flags.router_canonical_hostname);
  add("hostname-template", flags.hostname_template);
  add("router-domain", flags.router_domain);
  add("route-labels", flags.route_labels);
  add("namespace-labels", flags.namespace_labels);
  for (const std::string& e : flags.extra) out += " " + e;
  return out;
}

Replica::Replica(int index, const std::string& kubeconfig, const ControllerFlags& flags,
                 const std::string& log_dir)
    : index_(index), metrics_port_(0), kubeconfig_(kubeconfig), flags_(flags), log_dir_(log_dir) {
  Start();
}

bool Replica::RestartIfPortTaken() {
  if (process_->Running()) return false;
  if (process_->ReadLog().find("Address already in use") == std::string::npos) return false;
  Start();
  return true;
}

void Replica::Start() {
  metrics_port_ = PickFreePort();
  const ControllerFlags& flags = flags_;
  std::vector<std::string> argv = {
      ControllerBinary(),
      "--kubeconfig=" + kubeconfig_,
      "--router-name=" + flags.router_name,
      "--metrics-address=127.0.0.1:" + std::to_string(metrics_port_),
      "--qps=" + std::to_string(flags.qps),
      "--burst=" + std::to_string(flags.burst),
  };
  auto add = [&argv](const std::string& name, const std::string& value) {
    if (!value.empty()) argv.push_back("--" + name + "=" + value);
  };
  add("router-canonical-hostname", flags.router_canonical_hostname);
  add("hostname-template", flags.hostname_template);
  add("router-domain", flags.router_domain);
  add("route-labels", flags.route_labels);
  add("namespace-labels", flags.namespace_labels);
  for (const std::string& e : flags.extra) argv.push_back(e);
  // Why: a fresh log per attempt, so a retry is not mistaken for the old failure.
  std::string log = log_dir_ + "/replica-" + std::to_string(index_) + ".log";
  if (process_ != nullptr) log += ".retry-" + std::to_string(metrics_port_);
  process_ = std::make_unique<Subprocess>(argv, log);
}

std::string Replica::MetricsUrl() const {
  return "http://127.0.0.1:" + std::to_string(metrics_port_) + "/metrics";
}

bool Replica::Ready() const {
  bool ok = false;
  int code = 0;
  HttpGetLocal(metrics_port_, "/readyz", &ok, &code);
  return ok && code == 200;
}

std::vector<PromSample> Replica::Scrape() const {
  bool ok = false;
  std::string body = HttpGetLocal(metrics_port_, "/metrics", &ok);
  if (!ok) return {};
  return ParsePromText(body);
}

ReplicaWrites Replica::Writes() const {
  std::vector<PromSample> samples = Scrape();
  ReplicaWrites w;
  bool found = false;
  for (const PromSample& s : samples) {
    if (s.name != "routestatus_status_writes_total") continue;
    found = true;
    std::string result = s.labels.count("result") ? s.labels.at("result") : "";
    if (result == "success") {
      w.success += s.value;
    } else if (result == "conflict") {
      w.conflict += s.value;
    } else {
      w.other += s.value;
    }
  }
  if (found) return w;
  // Why: fall back on the API client's own request counter, which counts
  // every PUT .../status by result whatever the status metrics are called.
  for (const PromSample& s : samples) {
    if (s.name != "routestatus_api_requests_total") continue;
    auto get = [&s](const char* key) {
      auto it = s.labels.find(key);
      return it == s.labels.end() ? std::string() : it->second;
    };
    if (get("verb") != "update" || get("resource") != "routes" || get("subresource") != "status") {
      continue;
    }
    std::string result = get("result");
    if (result == "ok") {
      w.success += s.value;
    } else if (result == "conflict") {
      w.conflict += s.value;
    } else {
      w.other += s.value;
    }
  }
  return w;
}

std::string Replica::LeaseState() const {
  for (const PromSample& s : Scrape()) {
    if (s.name.find("lease_state") == std::string::npos || s.value != 1) continue;
    auto it = s.labels.find("state");
    if (it != s.labels.end()) {
      std::string state = it->second;
      for (char& c : state) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      return state;
    }
  }
  return "?";
}

ServerWrites ServerWritesFromSamples(const std::vector<PromSample>& samples) {
  ServerWrites w;
  for (const PromSample& s : samples) {
    if (s.name != "apiserver_request_total") continue;
    auto get = [&s](const char* key) {
      auto it = s.labels.find(key);
      return it == s.labels.end() ? std::string() : it->second;
    };
    std::string verb = get("verb");
    if (verb != "CREATE" && verb != "UPDATE" && verb != "PATCH" && verb != "DELETE" &&
        verb != "APPLY" && verb != "DELETECOLLECTION") {
      continue;
    }
    if (get("resource") == "routes" && get("subresource") == "status" &&
        (verb == "UPDATE" || verb == "PATCH")) {
      std::string code = get("code");
      if (!code.empty() && code[0] == '2') {
        w.status_ok += s.value;
      } else if (code == "409") {
        w.status_conflict += s.value;
      } else {
        w.status_other += s.value;
      }
    } else {
      w.other_writes += s.value;
    }
  }
  return w;
}

ApiServerProcess::ApiServerProcess(const std::string& dir) : kubeconfig_(dir + "/kubeconfig") {
  process_ = std::make_unique<Subprocess>(
      std::vector<std::string>{ApiServerBinary(), "--listen", "127.0.0.1:0", "--kubeconfig-out",
                               kubeconfig_},
      dir + "/local-apiserver.log");
}

bool ApiServerProcess::WaitStarted(std::chrono::milliseconds timeout, std::string* error) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    std::istringstream log(process_->ReadLog());
    std::string line;
    while (std::getline(log, line)) {
      if (line.rfind("http://127.0.0.1:", 0) == 0) {
        url_ = line;
        port_ = std::atoi(line.c_str() + std::string("http://127.0.0.1:").size());
        return port_ > 0;
      }
    }
    if (!process_->Running()) {
      *error = "local-apiserver exited; see " + process_->log_path();
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  *error = "local-apiserver did not print its URL in time; see " + process_->log_path();
  return false;
}

ServerWrites ApiServerProcess::Writes() const {
  bool ok = false;
  std::string body = HttpGetLocal(port_, "/metrics", &ok);
  return ServerWritesFromSamples(ParsePromText(body));
}

EntryView FindEntry(const nlohmann::json& route, const std::string& router_name) {
  EntryView view;
  const nlohmann::json* ingress = nullptr;
  if (route.contains("status") && route["status"].is_object() &&
      route["status"].contains("ingress") && route["status"]["ingress"].is_array()) {
    ingress = &route["status"]["ingress"];
  }
  if (ingress == nullptr) return view;
  for (const nlohmann::json& entry : *ingress) {
    if (!entry.is_object() || entry.value("routerName", "") != router_name) continue;
    view.present = true;
    view.host = entry.value("host", "");
    if (entry.contains("conditions") && entry["conditions"].is_array()) {
      for (const nlohmann::json& c : entry["conditions"]) {
        if (c.is_object() && c.value("type", "") == "Admitted") {
          view.admitted = c.value("status", "");
          view.reason = c.value("reason", "");
        }
      }
    }
    break;
  }
  return view;
}

bool IsInternalShard(const nlohmann::json& route,
                     const std::vector<std::string>& internal_namespaces) {
  const nlohmann::json& meta = route["metadata"];
  if (meta.contains("labels") && meta["labels"].is_object() &&
      meta["labels"].value("router", "") == "internal") {
    return true;
  }
  std::string ns = meta.value("namespace", "");
  for (const std::string& n : internal_namespaces) {
    if (n == ns) return true;
  }
  return false;
}

}  // namespace routestatus::e2e::bench
