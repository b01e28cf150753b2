#include "e2e/harness/grafana_dashboard.h"

#include <cstdio>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "e2e/harness/prometheus_server.h"

namespace routestatus::e2e {
namespace {

using nlohmann::json;

void ReplaceAll(std::string& text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
}

Status Invalid(const std::string& message) { return Status(StatusCode::kInvalid, message); }

// Appends the panels of `list` (a "panels" array) to `out`, rows' nested
// panels included.
Status AddPanels(const json& list, std::vector<DashboardPanel>* out) {
  for (const json& p : list) {
    if (p.value("type", "") == "row") {
      if (p.contains("panels")) {
        if (Status s = AddPanels(p["panels"], out); !s.ok()) return s;
      }
      continue;
    }
    DashboardPanel panel;
    panel.title = p.value("title", "");
    if (panel.title.empty()) return Invalid("a panel without a title");
    for (const json& t : p.value("targets", json::array())) {
      DashboardQuery q{t.value("refId", ""), t.value("expr", ""), t.value("legendFormat", "")};
      if (q.expr.empty()) return Invalid("panel " + panel.title + ": a target without expr");
      panel.queries.push_back(q);
    }
    out->push_back(panel);
  }
  return Status();
}

}  // namespace

std::string DashboardFile() { return E2E_DASHBOARD_FILE; }

StatusOr<std::vector<DashboardPanel>> ReadDashboard(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status(StatusCode::kNotFound, "cannot read " + path);
  json dashboard = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (dashboard.is_discarded() || !dashboard.contains("panels")) {
    return Invalid(path + ": not a dashboard (JSON with panels)");
  }
  std::vector<DashboardPanel> panels;
  if (Status s = AddPanels(dashboard["panels"], &panels); !s.ok()) {
    return Invalid(path + ": " + s.message());
  }
  return panels;
}

std::string WithGrafanaVariables(const std::string& expr, const std::string& rate_interval,
                                 const std::string& range) {
  std::string out = expr;
  // Why braces first: ${__rate_interval} is the same variable.
  ReplaceAll(out, "${__rate_interval}", rate_interval);
  ReplaceAll(out, "$__rate_interval", rate_interval);
  ReplaceAll(out, "${__interval}", rate_interval);
  ReplaceAll(out, "$__interval", rate_interval);
  ReplaceAll(out, "${__range}", range);
  ReplaceAll(out, "$__range", range);
  return out;
}

StatusOr<std::map<std::string, DashboardMetric>> DashboardMetrics() {
  const std::string command = "/usr/bin/python3 " + std::string(E2E_DASHBOARD_TOOL) + " --print-metrics";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return Status(StatusCode::kInternal, "cannot run " + command);
  std::string output;
  char buffer[4096];
  for (size_t n; (n = fread(buffer, 1, sizeof(buffer), pipe)) > 0;) output.append(buffer, n);
  const int rc = pclose(pipe);
  json parsed = json::parse(output, nullptr, /*allow_exceptions=*/false);
  if (rc != 0 || parsed.is_discarded() || !parsed.is_object()) {
    return Status(StatusCode::kInternal, command + " failed (status " + std::to_string(rc) + "): " + output);
  }
  std::map<std::string, DashboardMetric> metrics;
  for (const auto& [name, entry] : parsed.items()) {
    metrics[name] = {entry.value("in_e2e", true), entry.value("panels", std::vector<std::string>{})};
  }
  return metrics;
}

std::string PrometheusGraphUrl(const std::string& prometheus_url, const std::vector<std::string>& exprs,
                               const std::string& range_input) {
  std::string url = prometheus_url + "/graph";
  for (size_t i = 0; i < exprs.size(); ++i) {
    const std::string g = "g" + std::to_string(i) + ".";
    url += (i == 0 ? "?" : "&") + g + "expr=" + UrlQueryEscape(exprs[i]) + "&" + g + "tab=0&" + g +
           "range_input=" + UrlQueryEscape(range_input);
  }
  return url;
}

}  // namespace routestatus::e2e
