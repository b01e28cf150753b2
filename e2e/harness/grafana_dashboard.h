#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"

namespace routestatus::e2e {

// One query of a dashboard panel, as Grafana would send it. Value type.
struct DashboardQuery {
  std::string ref_id;
  std::string expr;  // with Grafana's variables ($__rate_interval, ...)
  std::string legend;
};

// A panel of deploy/monitoring/dashboard.json (rows left out). Value type.
struct DashboardPanel {
  std::string title;
  std::vector<DashboardQuery> queries;
};

// A metric the dashboard's queries use, as tools/monitoring/dashboard.py
// (the one PromQL tokenizer) and METRICS.md say. Value type.
struct DashboardMetric {
  bool in_e2e = true;  // false: METRICS.md says the e2e suite does not scrape it
  std::vector<std::string> panels;
};

// deploy/monitoring/dashboard.json of the source tree.
std::string DashboardFile();

// The panels of the Grafana dashboard at `path` (those in collapsed rows
// included), in the file's order. kInvalid when it does not parse or a
// panel has no title or a target no expr.
StatusOr<std::vector<DashboardPanel>> ReadDashboard(const std::string& path);

// `expr` as Prometheus can run it: Grafana's $__rate_interval and
// $__interval replaced by `rate_interval`, $__range by `range` (Prometheus
// durations such as "1m"). Pure function.
std::string WithGrafanaVariables(const std::string& expr, const std::string& rate_interval,
                                 const std::string& range);

// Every metric the dashboard's queries use, by name, from
// `python3 tools/monitoring/dashboard.py --print-metrics`. An error naming
// the tool's output when it fails.
StatusOr<std::map<std::string, DashboardMetric>> DashboardMetrics();

// Prometheus' own graph page (/graph) at `prometheus_url` with one graph
// per expression of `exprs` (g0, g1, ...), each over the last
// `range_input` (e.g. "15m"). Pure function.
std::string PrometheusGraphUrl(const std::string& prometheus_url, const std::vector<std::string>& exprs,
                               const std::string& range_input);

}  // namespace routestatus::e2e
