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

// Prometheus beside the demo's fleet. Value type.
struct PrometheusFacts {
  bool started = false;
  std::string not_started;  // why not, when !started (e.g. not installed)
  std::string url;
  std::string rules_file;
  std::vector<DemoQuery> queries;
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

// Runs DemoQueries() on `prometheus` into facts->queries. False (with the
// first error in *error) when a query failed.
bool RunDemoQueries(e2e::PrometheusServer& prometheus, PrometheusFacts* facts, std::string* error);

// The report's Prometheus section: the URL, each query with its answer,
// the alerts page. Pure apart from writing to `out`.
void PrintPrometheus(const PrometheusFacts& facts, std::ostream& out);

}  // namespace routestatus::demo
