#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "e2e/harness/prometheus_server.h"

namespace routestatus::demo {

// One query the demo report prints, with its answer when the demo ran it.
// Value type.
struct DemoQuery {
  std::string title;
  std::string promql;
  std::vector<e2e::PromQuerySample> result;
  std::string error;  // "" when the query answered
};

// A panel of the Grafana dashboard as a link to Prometheus' graph view.
// Value type.
struct PanelLink {
  std::string title;
  std::string url;
};

// Prometheus beside the demo's fleet. Value type.
struct PrometheusFacts {
  bool started = false;
  std::string not_started;  // why not, when !started (e.g. not installed)
  std::string url;
  std::string rules_file;
  std::vector<DemoQuery> queries;
  std::vector<PanelLink> panel_links;  // the main panels of the dashboard
};

// The three queries worth running: status writes per second by replica,
// status PUTs per route change (the API server's own counts), and the
// write lease's state by replica. Pure function.
std::vector<DemoQuery> DemoQueries();

// Starts Prometheus (when installed) in `dir`, scraping every second the
// replicas' metrics ports and the API server on 127.0.0.1 and evaluating
// deploy/monitoring/'s rules as shipped; waits (bounded) until every target
// is up. nullptr when the binary is not installed (facts->not_started says
// so); also nullptr, with *error set, when it is installed but failed.
std::unique_ptr<e2e::PrometheusServer> StartDemoPrometheus(const std::string& dir,
                                                           const std::vector<int>& replica_ports,
                                                           int server_port, PrometheusFacts* facts,
                                                           std::string* error);

// The titles of the dashboard panels the demo links (the main ones). Pure
// function.
std::vector<std::string> MainPanelTitles();

// For each of MainPanelTitles(), a link to `prometheus_url`'s graph view
// of the panel's queries (deploy/monitoring/dashboard.json; Grafana's
// $__rate_interval as 1m) over the last 10 minutes. False (with *error)
// when the dashboard cannot be read or lacks one of the titles.
bool DashboardLinks(const std::string& prometheus_url, std::vector<PanelLink>* links,
                    std::string* error);

// Runs DemoQueries() on `prometheus` into facts->queries. False (with the
// first error in *error) when a query failed.
bool RunDemoQueries(e2e::PrometheusServer& prometheus, PrometheusFacts* facts, std::string* error);

// The report's Prometheus section: the URL, each query with its answer,
// the dashboard's main panels as graph links, the alerts page. Pure apart from writing to `out`.
void PrintPrometheus(const PrometheusFacts& facts, std::ostream& out);

}  // namespace routestatus::demo
