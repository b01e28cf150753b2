#include "cmd/demo/demo_prometheus.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

#include "e2e/harness/grafana_dashboard.h"

namespace routestatus::demo {
namespace {

// "{instance="127.0.0.1:1234", state="leader"} " without __name__; "" when
// no labels are left.
std::string Labels(const std::map<std::string, std::string>& labels) {
  std::string out;
  for (const auto& [k, v] : labels) {
    if (k == "__name__") continue;
    out += (out.empty() ? "" : ", ") + k + "=\"" + v + "\"";
  }
  return out.empty() ? "" : "{" + out + "} ";
}

}  // namespace

std::vector<DemoQuery> DemoQueries() {
  return {
      {"successful status writes per second by replica (last minute)",
       "sum by (instance) (rate(routestatus_status_writes_total{result=\"success\"}[1m]))", {}, ""},
      // Why the counters, not rate(): the demo's API server started with it,
      // so the totals are exact; on a cluster use the recording rule
      // :apiserver_route_status_puts_per_route_change:ratio_rate5m.
      {"status writes per route change, as the API server counts them (since it started)",
       "sum(apiserver_request_total{resource=\"routes\", subresource=\"status\", verb=~\"PUT|PATCH\"})\n"
       "    / sum(apiserver_request_total{resource=\"routes\", subresource=\"\", "
       "verb=~\"POST|PUT|PATCH|DELETE\"})",
       {}, ""},
      {"write lease state by replica", "routestatus_lease_state == 1", {}, ""},
  };
}

std::vector<std::string> MainPanelTitles() {
  return {"Leader by replica",
          "Status writes per second by replica",
          "Status writes per route change",
          "Conflicts, takeovers and failovers",
          "Routes by admission outcome",
          "API server reachable",
          "API request latency by verb (p99)"};
}

bool DashboardLinks(const std::string& prometheus_url, std::vector<PanelLink>* links,
                    std::string* error) {
  auto panels = e2e::ReadDashboard(e2e::DashboardFile());
  if (!panels.ok()) {
    *error = panels.status().ToString();
    return false;
  }
  for (const std::string& title : MainPanelTitles()) {
    auto panel = std::find_if(panels->begin(), panels->end(),
                              [&](const e2e::DashboardPanel& p) { return p.title == title; });
    if (panel == panels->end()) {
      *error = e2e::DashboardFile() + " has no panel \"" + title + "\"";
      return false;
    }
    std::vector<std::string> exprs;
    for (const auto& q : panel->queries) exprs.push_back(e2e::WithGrafanaVariables(q.expr, "1m", "10m"));
    links->push_back({title, e2e::PrometheusGraphUrl(prometheus_url, exprs, "10m")});
  }
  return true;
}

std::unique_ptr<e2e::PrometheusServer> StartDemoPrometheus(const std::string& dir,
                                                           const std::vector<int>& replica_ports,
                                                           int server_port, PrometheusFacts* facts,
                                                           std::string* error) {
  if (e2e::PrometheusServer::FindBinary().empty()) {
    facts->not_started = "prometheus is not installed (Debian package prometheus; make deps)";
    return nullptr;
  }
  e2e::PrometheusOptions options;
  options.dir = dir;
  options.rule_files = {e2e::ProductionRulesFile()};
  e2e::PrometheusJob replicas{"route-status-controller", {}};
  for (int port : replica_ports) replicas.targets.push_back("127.0.0.1:" + std::to_string(port));
  options.jobs = {replicas, {"apiserver", {"127.0.0.1:" + std::to_string(server_port)}}};
  auto prometheus = e2e::PrometheusServer::Start(options, error);
  if (!prometheus) return nullptr;
  // Why wait: the queries need a scrape of every target.
  const size_t targets = replica_ports.size() + 1;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (true) {
    auto up = prometheus->Query("up == 1");
    if (up.ok() && up->size() == targets) break;
    if (std::chrono::steady_clock::now() > deadline) {
      *error = "Prometheus " + prometheus->url() + " did not scrape every target within 15 s";
      return nullptr;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  facts->started = true;
  facts->url = prometheus->url();
  facts->rules_file = e2e::ProductionRulesFile();
  facts->queries = DemoQueries();
  if (!DashboardLinks(prometheus->url(), &facts->panel_links, error)) return nullptr;
  return prometheus;
}

bool RunDemoQueries(e2e::PrometheusServer& prometheus, PrometheusFacts* facts, std::string* error) {
  bool ok = true;
  for (DemoQuery& q : facts->queries) {
    auto result = prometheus.Query(q.promql);
    if (result.ok()) {
      q.result = *result;
      q.error.clear();
      continue;
    }
    q.error = result.status().ToString();
    if (ok) *error = q.promql + ": " + q.error;
    ok = false;
  }
  return ok;
}

void PrintPrometheus(const PrometheusFacts& facts, std::ostream& out) {
  out << "Prometheus\n";
  if (!facts.started) {
    out << "  not started: " << facts.not_started << "\n\n";
    return;
  }
  out << "  " << facts.url << " scrapes the replicas and the API server every second and\n"
      << "  evaluates " << facts.rules_file << "\n"
      << "  (alerts: " << facts.url << "/alerts, runbook: docs/runbook.md). Queries worth running:\n";
  for (const DemoQuery& q : facts.queries) {
    out << "  - " << q.title << ":\n      " << q.promql << "\n";
    if (!q.error.empty()) {
      out << "      error: " << q.error << "\n";
      continue;
    }
    for (const auto& s : q.result) {
      char value[32];
      std::snprintf(value, sizeof(value), "%.3g", s.value);
      out << "      now: " << Labels(s.labels) << value << "\n";
    }
    if (q.result.empty()) out << "      now: (no samples)\n";
  }
  out << "  The dashboard's main panels (deploy/monitoring/dashboard.json) in Prometheus' graph view,\n"
      << "  last 10 minutes:\n";
  for (const PanelLink& link : facts.panel_links) {
    out << "  - " << link.title << ":\n      " << link.url << "\n";
  }
  out << "\n";
}

}  // namespace routestatus::demo
