#include "apiserver/request_metrics.h"

#include <sstream>

namespace routestatus::apiserver {

namespace {

std::string Escape(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

}  // namespace

void RequestMetrics::Record(const RequestLabels& labels) {
  std::lock_guard<std::mutex> lock(mu_);
  ++counts_[labels];
}

uint64_t RequestMetrics::Count(const std::string& verb, const std::string& resource,
                               const std::string& subresource, int code,
                               const std::string& scope) const {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t total = 0;
  for (const auto& [l, n] : counts_) {
    if (!verb.empty() && l.verb != verb) continue;
    if (!resource.empty() && l.resource != resource) continue;
    if (subresource == "-" ? !l.subresource.empty()
                           : (!subresource.empty() && l.subresource != subresource)) {
      continue;
    }
    if (code >= 0 && l.code != std::to_string(code)) continue;
    if (!scope.empty() && l.scope != scope) continue;
    total += n;
  }
  return total;
}

std::string RequestMetrics::Exposition() const {
  std::ostringstream out;
  out << "# HELP apiserver_request_total [STABLE] Counter of apiserver requests broken out for "
         "each verb, dry run value, group, version, resource, scope, component, and HTTP "
         "response code.\n"
      << "# TYPE apiserver_request_total counter\n";
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [l, n] : counts_) {
    out << "apiserver_request_total{code=\"" << Escape(l.code) << "\",component=\""
        << Escape(l.component) << "\",dry_run=\"" << Escape(l.dry_run) << "\",group=\""
        << Escape(l.group) << "\",resource=\"" << Escape(l.resource) << "\",scope=\""
        << Escape(l.scope) << "\",subresource=\"" << Escape(l.subresource)
        << "\",system_client=\"" << Escape(l.system_client) << "\",verb=\""
        << Escape(l.verb) << "\",version=\"" << Escape(l.version) << "\"} " << n << "\n";
  }
  return out.str();
}

}  // namespace routestatus::apiserver
