#include "apiserver/request_info.h"

#include <cctype>
#include <limits>
#include <vector>

namespace routestatus::apiserver {

namespace {

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string Upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// The first value of a query parameter, if present (kube's converters read
// only the first of repeated values).
std::optional<std::string> First(const HttpRequest& req, const std::string& key) {
  // Why: most requests carry none of the parameters asked about; skip the
  // decode of the whole query for them.
  if (req.raw_query.find(key) == std::string::npos) return std::nullopt;
  std::vector<std::string> values = req.QueryValues(key);
  if (values.empty()) return std::nullopt;
  return values.front();
}

// Go's strconv.Quote for the ASCII range (what our error texts quote).
std::string GoQuote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          static const char kHex[] = "0123456789abcdef";
          out += "\\x";
          out += kHex[c >> 4];
          out += kHex[c & 15];
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

// Go's strconv.ParseInt(s, 10, 64).
std::optional<int64_t> GoParseInt(const std::string& s, std::string* error) {
  size_t i = 0;
  bool negative = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
  if (i == s.size()) {
    *error = "strconv.ParseInt: parsing " + GoQuote(s) + ": invalid syntax";
    return std::nullopt;
  }
  uint64_t v = 0;
  bool overflow = false;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') {
      *error = "strconv.ParseInt: parsing " + GoQuote(s) + ": invalid syntax";
      return std::nullopt;
    }
    uint64_t d = static_cast<uint64_t>(s[i] - '0');
    if (v > (std::numeric_limits<uint64_t>::max() - d) / 10) overflow = true;
    if (!overflow) v = v * 10 + d;
  }
  const uint64_t limit = negative ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
  if (overflow || v > limit) {
    *error = "strconv.ParseInt: parsing " + GoQuote(s) + ": value out of range";
    return std::nullopt;
  }
  return negative ? static_cast<int64_t>(0 - v) : static_cast<int64_t>(v);
}

// kube's path.IsValidPathSegmentName: not "." or "..", no '/' or '%'.
bool ValidPathSegment(const std::string& name) {
  return name != "." && name != ".." && name.find_first_of("/%") == std::string::npos;
}

}  // namespace

bool QueryBool(const HttpRequest& req, const std::string& key) {
  return QueryOptionalBool(req, key).value_or(false);
}

std::optional<bool> QueryOptionalBool(const HttpRequest& req, const std::string& key) {
  std::optional<std::string> v = First(req, key);
  if (!v) return std::nullopt;
  return !(*v == "0" || Lower(*v) == "false");
}

std::optional<int64_t> QueryInt64(const HttpRequest& req, const std::string& key,
                                  std::string* error) {
  std::optional<std::string> v = First(req, key);
  if (!v) return std::nullopt;
  return GoParseInt(*v, error);
}

std::string RequestVerb(const HttpRequest& req, bool has_name) {
  if (req.method == "GET" || req.method == "HEAD") {
    if (has_name) return "get";
    return QueryBool(req, "watch") ? "watch" : "list";
  }
  if (req.method == "POST") return "create";
  if (req.method == "PUT") return "update";
  if (req.method == "PATCH") return "patch";
  if (req.method == "DELETE") return has_name ? "delete" : "deletecollection";
  return Lower(req.method);
}

std::string FieldSelectorName(const HttpRequest& req) {
  std::optional<std::string> selector = First(req, "fieldSelector");
  if (!selector || selector->empty()) return "";
  // Why: kube's RequestInfoFactory drops the name when any list option fails
  // to decode.
  std::string ignored;
  for (const char* key : {"limit", "timeoutSeconds"}) {
    std::optional<std::string> v = First(req, key);
    if (v && !GoParseInt(*v, &ignored)) return "";
  }
  std::string name;
  size_t start = 0;
  const std::string& text = *selector;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    std::string term = text.substr(start, comma - start);
    size_t ne = term.find("!=");
    size_t eq = term.find('=');
    if (ne == std::string::npos && eq != std::string::npos) {
      size_t value_at = term.compare(eq, 2, "==") == 0 ? eq + 2 : eq + 1;
      if (term.substr(0, eq) == "metadata.name") name = term.substr(value_at);
    } else if (ne == std::string::npos) {
      return "";  // not a selector term: the list options do not decode
    }
    start = comma + 1;
  }
  return ValidPathSegment(name) ? name : "";
}

MetricLabels MetricLabelsFor(const HttpRequest& req, const ResourceInfo& r,
                             const RequestInfo& info) {
  MetricLabels out;
  if (r.custom_resource) {
    if (!info.metrics_name.empty() || info.verb == "create") {
      out.scope = "resource";
    } else {
      out.scope = info.ns.empty() ? "cluster" : "namespace";
    }
  } else if (!info.name.empty() || req.method == "POST") {
    out.scope = "resource";
  } else {
    out.scope = r.namespaced && !info.ns.empty() ? "namespace" : "cluster";
  }
  std::string method = Upper(req.method);
  if (info.verb == "watch") {
    out.verb = "WATCH";
  } else if (method == "GET" || method == "HEAD") {
    out.verb = out.scope == "resource" ? "GET" : "LIST";
  } else if (method == "PATCH" && req.Header("Content-Type") == "application/apply-patch+yaml") {
    out.verb = "APPLY";
  } else if (method == "POST" || method == "PUT" || method == "PATCH" || method == "DELETE" ||
             method == "CONNECT") {
    out.verb = method;
  } else {
    out.verb = "other";
  }
  return out;
}

std::string SystemClient(const std::string& user_agent) {
  std::string program = user_agent.substr(0, user_agent.find('/'));
  if (program == "kube-apiserver" || program == "kube-controller-manager" ||
      program == "kube-scheduler") {
    return program;
  }
  return "";
}

}  // namespace routestatus::apiserver
