#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "e2e/harness/subprocess.h"

namespace routestatus::e2e {

// One scrape job: its name (the `job` label) and its targets ("host:port",
// scraped at /metrics over plain http). Value type.
struct PrometheusJob {
  std::string name;
  std::vector<std::string> targets;
};

// How to run a Prometheus server. Value type.
struct PrometheusOptions {
  std::string binary;  // "" = E2E_PROMETHEUS_BINARY, else "prometheus" in PATH
  std::string dir;     // its config, data and log go here (must exist)
  std::vector<PrometheusJob> jobs;
  std::vector<std::string> rule_files;  // absolute paths
  std::chrono::milliseconds scrape_interval{1000};
  std::chrono::milliseconds evaluation_interval{1000};
};

// An alert as Prometheus' /api/v1/alerts reports it. Value type.
struct PromAlert {
  std::map<std::string, std::string> labels;  // alertname included
  std::map<std::string, std::string> annotations;
  std::string state;  // "pending" or "firing"
  std::string name() const;
};

// One sample of an instant query's vector result. Value type.
struct PromQuerySample {
  std::map<std::string, std::string> labels;
  double value = 0;
};

// A rule as /api/v1/rules reports it. Value type.
struct PromRule {
  std::string name;    // alert or record name
  std::string type;    // "alerting" or "recording"
  std::string health;  // "ok", "err" or "unknown" (not evaluated yet)
  std::string last_error;
};

// Prometheus (Debian's binary; `make deps` installs package prometheus) as
// a child process on a loopback port picked at start, dying with this
// process, scraping `jobs` and evaluating `rule_files` at the given
// intervals. Reads go through its HTTP API. Not thread-safe: one owner; the
// destructor stops it.
class PrometheusServer {
 public:
  // The binary that Start() would run ("" when none is installed).
  static std::string FindBinary(const std::string& binary = "");
  // Writes the config, starts the server and waits (bounded) until
  // /-/ready answers 200. nullptr with *error (naming the log) on failure.
  static std::unique_ptr<PrometheusServer> Start(const PrometheusOptions& options,
                                                 std::string* error);
  ~PrometheusServer();
  PrometheusServer(const PrometheusServer&) = delete;
  PrometheusServer& operator=(const PrometheusServer&) = delete;

  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  const std::string& log_path() const { return process_->log_path(); }
  std::string ReadLog() const { return process_->ReadLog(); }

  // Active alerts (pending and firing), from /api/v1/alerts.
  StatusOr<std::vector<PromAlert>> Alerts();
  // An instant query (/api/v1/query) whose result is a vector.
  StatusOr<std::vector<PromQuerySample>> Query(const std::string& promql);
  // Every loaded rule, from /api/v1/rules.
  StatusOr<std::vector<PromRule>> Rules();
  // Stops the server (SIGTERM, then SIGKILL after 5 s). Idempotent.
  void Stop();

 private:
  PrometheusServer() = default;
  // GET of an API path; the answer's "data", or the error.
  StatusOr<nlohmann::json> GetApiData(const std::string& path_and_query);

  int port_ = 0;
  std::unique_ptr<Subprocess> process_;
};

// deploy/monitoring/routestatus.rules.yaml of the source tree (the shipped
// `for:` durations).
std::string ProductionRulesFile();

// `rules_text` (a Prometheus rules file) with every `for: DURATION` line's
// duration divided by `divisor`, at least `min`, written in whole seconds
// (or milliseconds); every other line as it was. kInvalid naming the line
// when a `for:` value does not parse. Pure function.
StatusOr<std::string> ShortenForDurations(const std::string& rules_text, double divisor,
                                          std::chrono::milliseconds min);
// The test copy of ProductionRulesFile(): ShortenForDurations(/ 30, at
// least 1 s), written to `dir`/routestatus-test.rules.yaml, so that alerts
// fire within a test while deploy/ keeps the production values. Returns
// its path.
StatusOr<std::string> WriteTestRules(const std::string& dir);
// The longest `for:` of a rules file's text (0 when none). Pure function.
std::chrono::milliseconds LongestFor(const std::string& rules_text);

// The Prometheus config (prometheus.yml) for `options`. Pure function.
std::string PrometheusConfig(const PrometheusOptions& options);

// `text` percent-encoded for a URL query value. Pure function.
std::string UrlQueryEscape(const std::string& text);

}  // namespace routestatus::e2e
