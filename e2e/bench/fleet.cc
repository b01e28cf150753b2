#include "e2e/bench/fleet.h"

#include <utility>

namespace routestatus::e2e::bench {

namespace {

// The host and shard flags of `flags` that are set, as (name, value).
std::vector<std::pair<std::string, std::string>> SetFlags(const ControllerFlags& flags) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [name, value] :
       {std::pair<const char*, const std::string*>{"router-canonical-hostname",
                                                   &flags.router_canonical_hostname},
        {"hostname-template", &flags.hostname_template},
        {"router-domain", &flags.router_domain},
        {"route-labels", &flags.route_labels},
        {"namespace-labels", &flags.namespace_labels}}) {
    if (!value->empty()) out.emplace_back(name, *value);
  }
  return out;
}

}  // namespace

ControllerFlags DefaultRateLimits(ControllerFlags flags) {
  flags.qps = 0;
  flags.burst = 0;
  return flags;
}

std::string DescribeFlags(const ControllerFlags& flags) {
  std::string out = "--router-name=" + flags.router_name;
  for (const auto& [name, value] : SetFlags(flags)) out += " --" + name + "='" + value + "'";
  for (const std::string& e : flags.extra) out += " " + e;
  return out;
}

ReplicaOptions ToReplicaOptions(const ControllerFlags& flags) {
  ReplicaOptions o;
  o.router_name = flags.router_name;
  if (flags.qps > 0) o.flags["qps"] = std::to_string(flags.qps);
  if (flags.burst > 0) o.flags["burst"] = std::to_string(flags.burst);
  for (const auto& [name, value] : SetFlags(flags)) o.flags[name] = value;
  for (const std::string& e : flags.extra) {
    size_t start = e.find_first_not_of('-');
    size_t eq = e.find('=');
    if (start == std::string::npos || eq == std::string::npos) {
      o.args.push_back(e);  // e.g. a bare boolean flag (--noupdate-status), kept as given
    } else {
      o.flags[e.substr(start, eq - start)] = e.substr(eq + 1);
    }
  }
  return o;
}

Replica::Replica(int index, const std::string& kubeconfig, const ControllerFlags& flags,
                 const std::string& log_dir)
    : e2e::Replica(ReplicaTarget{"", kubeconfig, log_dir, {}},
                   "replica-" + std::to_string(index), ToReplicaOptions(flags)),
      index_(index) {
  Start();
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
