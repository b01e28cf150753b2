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

void RequestMetrics::RecordList(const std::string& group, const std::string& resource,
                                ListSource source) {
  std::lock_guard<std::mutex> lock(mu_);
  ++lists_[{source, group, resource}];
}

void RequestMetrics::AddSentBytes(const std::string& verb, const std::string& resource,
                                  uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  sent_bytes_[{verb, resource}] += bytes;
}

uint64_t RequestMetrics::ListCount(ListSource source, const std::string& resource) const {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t total = 0;
  for (const auto& [k, n] : lists_) {
    if (std::get<0>(k) == source && (resource.empty() || std::get<2>(k) == resource)) total += n;
  }
  return total;
}

uint64_t RequestMetrics::SentBytes(const std::string& verb, const std::string& resource) const {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t total = 0;
  for (const auto& [k, n] : sent_bytes_) {
    if ((verb.empty() || k.first == verb) && (resource.empty() || k.second == resource)) {
      total += n;
    }
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
  // Why these names and labels: kube-apiserver's own (its storage and
  // cacher metrics); apiserver_watch_list_total and the byte counter are
  // ours (kube times watch lists in apiserver_watch_list_duration_seconds
  // and has no byte counter of watch streams).
  auto group_resource = [](const std::string& group, const std::string& resource) {
    return group.empty() ? resource : resource + "." + group;
  };
  const struct {
    ListSource source;
    const char* name;
    const char* help;
  } kLists[] = {
      {ListSource::kStorage, "apiserver_storage_list_total",
       "Number of LIST requests served from storage"},
      {ListSource::kWatchCache, "apiserver_cache_list_total",
       "Number of LIST requests served from watch cache"},
      {ListSource::kWatchList, "apiserver_watch_list_total",
       "Number of WATCH requests with sendInitialEvents=true whose initial state the watch "
       "cache served"},
  };
  for (const auto& m : kLists) {
    out << "# HELP " << m.name << " [ALPHA] " << m.help << "\n# TYPE " << m.name << " counter\n";
    for (const auto& [k, n] : lists_) {
      if (std::get<0>(k) != m.source) continue;
      const std::string& group = std::get<1>(k);
      const std::string& resource = std::get<2>(k);
      out << m.name;
      if (m.source == ListSource::kWatchCache) {
        out << "{index=\"\",resource_prefix=\"/" << (group.empty() ? "" : Escape(group) + "/")
            << Escape(resource) << "\"}";
      } else {
        out << "{resource=\"" << Escape(group_resource(group, resource)) << "\"}";
      }
      out << " " << n << "\n";
    }
  }
  out << "# HELP apiserver_response_sent_bytes_total Bytes of LIST response bodies and WATCH "
         "streams sent, by verb and resource\n"
      << "# TYPE apiserver_response_sent_bytes_total counter\n";
  for (const auto& [k, n] : sent_bytes_) {
    out << "apiserver_response_sent_bytes_total{resource=\"" << Escape(k.second) << "\",verb=\""
        << Escape(k.first) << "\"} " << n << "\n";
  }
  return out.str();
}

}  // namespace routestatus::apiserver
