#include "e2e/harness/prometheus_server.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "e2e/harness/cluster.h"
#include "e2e/harness/prom_text.h"

#ifndef E2E_PRODUCTION_RULES_FILE
#define E2E_PRODUCTION_RULES_FILE "deploy/monitoring/routestatus.rules.yaml"
#endif

namespace routestatus::e2e {
namespace {

// Prometheus' duration syntax for a whole number of milliseconds.
std::string PromDuration(std::chrono::milliseconds d) {
  if (d.count() % 1000 == 0) return std::to_string(d.count() / 1000) + "s";
  return std::to_string(d.count()) + "ms";
}

// A rules file's `for:` line: indentation and key, then the value.
const std::regex& ForLine() {
  static const std::regex kFor(R"(^(\s*for:\s*)(\S+)\s*$)");
  return kFor;
}

// A Prometheus duration ("10m", "1h30m", "500ms"); nullopt when it is not one.
std::optional<std::chrono::milliseconds> ParsePromDuration(const std::string& text) {
  static const std::regex kPart(R"((\d+)(ms|s|m|h|d|w|y))");
  static const std::map<std::string, int64_t> kUnitMs = {
      {"ms", 1},           {"s", 1000},           {"m", 60000},          {"h", 3600000},
      {"d", 86400000},     {"w", 604800000},      {"y", 31536000000}};
  if (text.empty()) return std::nullopt;
  int64_t ms = 0;
  size_t at = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), kPart); it != std::sregex_iterator(); ++it) {
    if (static_cast<size_t>(it->position()) != at) return std::nullopt;
    ms += std::stoll((*it)[1]) * kUnitMs.at((*it)[2]);
    at += it->length();
  }
  if (at != text.size()) return std::nullopt;
  return std::chrono::milliseconds(ms);
}

// A YAML double-quoted string (JSON's escaping is valid YAML).
std::string Quoted(const std::string& s) { return nlohmann::json(s).dump(); }

bool IsExecutable(const std::string& path) { return access(path.c_str(), X_OK) == 0; }

// The "data" member of a successful API answer, or the error it reports.
StatusOr<nlohmann::json> ApiData(const std::string& body) {
  nlohmann::json doc = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    return Status(StatusCode::kInvalid, "not JSON: " + body.substr(0, 200));
  }
  if (doc.value("status", "") != "success") {
    return Status(StatusCode::kInvalid, "Prometheus API error: " + doc.value("error", body.substr(0, 200)));
  }
  return doc["data"];
}

std::map<std::string, std::string> StringMap(const nlohmann::json& object) {
  std::map<std::string, std::string> out;
  if (!object.is_object()) return out;
  for (const auto& [k, v] : object.items()) {
    if (v.is_string()) out[k] = v.get<std::string>();
  }
  return out;
}

}  // namespace

std::string ProductionRulesFile() { return E2E_PRODUCTION_RULES_FILE; }

StatusOr<std::string> ShortenForDurations(const std::string& rules_text, double divisor,
                                          std::chrono::milliseconds min) {
  std::istringstream in(rules_text);
  std::ostringstream out;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    std::smatch m;
    if (std::regex_match(line, m, ForLine())) {
      auto d = ParsePromDuration(m[2]);
      if (!d) {
        return Status(StatusCode::kInvalid, "line " + std::to_string(number) + ": for: " +
                                                m[2].str() + " is not a duration");
      }
      auto shortened = std::chrono::milliseconds(static_cast<int64_t>(d->count() / divisor));
      line = m[1].str() + PromDuration(std::max(shortened, min));
    }
    out << line << "\n";
  }
  return out.str();
}

StatusOr<std::string> WriteTestRules(const std::string& dir) {
  std::ifstream in(ProductionRulesFile());
  std::stringstream text;
  text << in.rdbuf();
  if (!in) return Status(StatusCode::kNotFound, "cannot read " + ProductionRulesFile());
  auto shortened = ShortenForDurations(text.str(), 30, std::chrono::seconds(1));
  if (!shortened.ok()) return shortened.status();
  const std::string path = dir + "/routestatus-test.rules.yaml";
  std::ofstream out(path);
  out << "# " << ProductionRulesFile() << " with every for: divided by 30 (at least 1s).\n"
      << *shortened;
  if (!out) return Status(StatusCode::kUnavailable, "cannot write " + path);
  return path;
}

std::chrono::milliseconds LongestFor(const std::string& rules_text) {
  std::istringstream in(rules_text);
  std::string line;
  std::chrono::milliseconds longest{0};
  while (std::getline(in, line)) {
    std::smatch m;
    if (!std::regex_match(line, m, ForLine())) continue;
    if (auto d = ParsePromDuration(m[2])) longest = std::max(longest, *d);
  }
  return longest;
}

std::string PromAlert::name() const {
  auto it = labels.find("alertname");
  return it == labels.end() ? "" : it->second;
}

std::string PrometheusConfig(const PrometheusOptions& options) {
  std::ostringstream out;
  out << "# Written by the e2e harness (e2e/harness/prometheus_server.cc).\n"
      << "global:\n"
      << "  scrape_interval: " << PromDuration(options.scrape_interval) << "\n"
      << "  scrape_timeout: " << PromDuration(options.scrape_interval) << "\n"
      << "  evaluation_interval: " << PromDuration(options.evaluation_interval) << "\n";
  if (!options.rule_files.empty()) {
    out << "rule_files:\n";
    for (const auto& f : options.rule_files) out << "  - " << Quoted(f) << "\n";
  }
  out << "scrape_configs:\n";
  for (const auto& job : options.jobs) {
    out << "  - job_name: " << Quoted(job.name) << "\n"
        << "    static_configs:\n"
        << "      - targets: [";
    for (size_t i = 0; i < job.targets.size(); ++i) {
      out << (i ? ", " : "") << Quoted(job.targets[i]);
    }
    out << "]\n";
  }
  return out.str();
}

std::string UrlQueryEscape(const std::string& text) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

std::string PrometheusServer::FindBinary(const std::string& binary) {
  if (!binary.empty()) return IsExecutable(binary) ? binary : "";
  return FindExecutable("prometheus", "E2E_PROMETHEUS_BINARY");
}

std::unique_ptr<PrometheusServer> PrometheusServer::Start(const PrometheusOptions& options,
                                                          std::string* error) {
  const std::string binary = FindBinary(options.binary);
  if (binary.empty()) {
    *error = "prometheus not found (Debian package prometheus: make deps; or E2E_PROMETHEUS_BINARY)";
    return nullptr;
  }
  const std::string config_path = options.dir + "/prometheus.yml";
  {
    std::ofstream config(config_path);
    config << PrometheusConfig(options);
    if (!config) {
      *error = "cannot write " + config_path;
      return nullptr;
    }
  }
  // Why a few attempts: the port picked may be taken before Prometheus
  // binds it (it then exits at once).
  for (int attempt = 0; attempt < 3; ++attempt) {
    std::unique_ptr<PrometheusServer> server(new PrometheusServer());
    server->port_ = PickFreePort();
    server->process_ = std::make_unique<Subprocess>(
        DieWithParent({binary, "--config.file=" + config_path,
                       "--storage.tsdb.path=" + options.dir + "/data",
                       "--storage.tsdb.retention.time=1d",
                       "--web.listen-address=127.0.0.1:" + std::to_string(server->port_)}),
        options.dir + "/prometheus.log");
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline && server->process_->Running()) {
      int code = 0;
      HttpGetLocal(server->port_, "/-/ready", nullptr, &code);
      if (code == 200) return server;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    const bool exited = !server->process_->Running();
    *error = std::string("prometheus did not become ready (") + (exited ? "it exited" : "timeout") +
             "); log " + server->log_path() + ":\n" + server->ReadLog();
    if (!exited) break;
  }
  return nullptr;
}

PrometheusServer::~PrometheusServer() { Stop(); }

void PrometheusServer::Stop() {
  if (process_ && process_->Running()) process_->Stop(std::chrono::seconds(5));
}

StatusOr<nlohmann::json> PrometheusServer::GetApiData(const std::string& path_and_query) {
  int code = 0;
  bool ok = false;
  std::string body = HttpGetLocal(port_, path_and_query, &ok, &code);
  if (!ok) return Status(StatusCode::kUnavailable, "GET " + path_and_query + ": no answer");
  if (code != 200) {
    return Status(StatusCode::kInvalid,
                  "GET " + path_and_query + ": HTTP " + std::to_string(code) + ": " + body.substr(0, 300));
  }
  return ApiData(body);
}

StatusOr<std::vector<PromAlert>> PrometheusServer::Alerts() {
  auto data = GetApiData("/api/v1/alerts");
  if (!data.ok()) return data.status();
  std::vector<PromAlert> alerts;
  for (const auto& a : (*data)["alerts"]) {
    alerts.push_back({StringMap(a["labels"]), StringMap(a["annotations"]), a.value("state", "")});
  }
  return alerts;
}

StatusOr<std::vector<PromQuerySample>> PrometheusServer::Query(const std::string& promql) {
  auto data = GetApiData("/api/v1/query?query=" + UrlQueryEscape(promql));
  if (!data.ok()) return data.status();
  if (data->value("resultType", "") != "vector") {
    return Status(StatusCode::kInvalid, "not a vector: " + promql);
  }
  std::vector<PromQuerySample> samples;
  for (const auto& r : (*data)["result"]) {
    PromQuerySample s;
    s.labels = StringMap(r["metric"]);
    s.value = std::strtod(r["value"][1].get<std::string>().c_str(), nullptr);
    samples.push_back(std::move(s));
  }
  return samples;
}

StatusOr<std::vector<PromRule>> PrometheusServer::Rules() {
  auto data = GetApiData("/api/v1/rules");
  if (!data.ok()) return data.status();
  std::vector<PromRule> rules;
  for (const auto& group : (*data)["groups"]) {
    for (const auto& r : group["rules"]) {
      rules.push_back({r.value("name", ""), r.value("type", ""), r.value("health", ""),
                       r.value("lastError", "")});
    }
  }
  return rules;
}

}  // namespace routestatus::e2e
