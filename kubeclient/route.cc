#include "kubeclient/route.h"

#include <algorithm>
#include <cstdint>
#include <ctime>
#include <tuple>

#include <nlohmann/json.hpp>

namespace routestatus::kubeclient {
namespace {

using nlohmann::json;

// Returns object[key] as a string, "" when absent or null; false when the
// field has another type.
bool GetString(const json& object, const char* key, std::string* out) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) {
    out->clear();
    return true;
  }
  if (!it->is_string()) return false;
  *out = it->get<std::string>();
  return true;
}

bool GetString(const json& object, const char* key, CompactString* out) {
  std::string s;
  if (!GetString(object, key, &s)) return false;
  *out = s;
  return true;
}

std::string StringOr(const json& object, const char* key) {
  std::string s;
  if (!object.is_object() || !GetString(object, key, &s)) return "";
  return s;
}

// `m` shared, or null when it holds nothing (the common case).
std::shared_ptr<const RouteTlsMaterial> SharedTlsMaterial(RouteTlsMaterial m) {
  if (m.certificate.empty() && m.key.empty() && m.ca_certificate.empty() &&
      m.destination_ca_certificate.empty() && m.insecure_edge_termination_policy.empty()) {
    return nullptr;
  }
  return std::make_shared<const RouteTlsMaterial>(std::move(m));
}

Status Invalid(const std::string& what) { return Status(StatusCode::kInvalid, what); }

}  // namespace

std::string Route::Key() const { return metadata.namespace_name + "/" + metadata.name; }

namespace {

// The value of the `n` digits of `s` at `pos`, or -1 when one is not a digit.
int Digits(std::string_view s, size_t pos, size_t n) {
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return -1;
    v = v * 10 + (s[i] - '0');
  }
  return v;
}

// Days from 1970-01-01 to the given proleptic Gregorian date (H. Hinnant's
// days_from_civil). Linear in `day`, so an overflowing day (Feb 31) rolls
// over into the next month as timegm does.
int64_t DaysFromCivil(int64_t year, int month, int day) {
  year -= month <= 2;
  const int64_t era = (year >= 0 ? year : year - 399) / 400;
  const int64_t yoe = year - era * 400;
  const int64_t doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

}  // namespace

// Why by hand, not sscanf + timegm: every route's creationTimestamp is
// parsed when it is decoded, and the two were ~2% of a 100,000-route
// restart's CPU. Accepts exactly what they did: DDDD-DD-DDTDD:DD:DD, an
// optional fraction, then Z, z or +HH:MM / -HH:MM.
std::optional<int64_t> ParseRfc3339(std::string_view s) {
  if (s.size() < 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' ||
      s[16] != ':') {
    return std::nullopt;
  }
  const int year = Digits(s, 0, 4), mon = Digits(s, 5, 2), day = Digits(s, 8, 2),
            hour = Digits(s, 11, 2), min = Digits(s, 14, 2), sec = Digits(s, 17, 2);
  if (year < 0 || mon < 1 || mon > 12 || day < 1 || day > 31 || hour < 0 || hour > 23 ||
      min < 0 || min > 59 || sec < 0 || sec > 60) {
    return std::nullopt;
  }
  size_t pos = 19;
  if (s[pos] == '.') {
    ++pos;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') ++pos;
  }
  int64_t offset = 0;
  if (pos < s.size() && (s[pos] == 'Z' || s[pos] == 'z')) {
    ++pos;
  } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    if (s.size() < pos + 6 || s[pos + 3] != ':') return std::nullopt;
    const int oh = Digits(s, pos + 1, 2), om = Digits(s, pos + 4, 2);
    if (oh < 0 || om < 0) return std::nullopt;
    offset = (s[pos] == '+' ? 1 : -1) * (oh * 3600 + om * 60);
    pos += 6;
  } else {
    return std::nullopt;
  }
  if (pos != s.size()) return std::nullopt;
  return DaysFromCivil(year, mon, day) * 86400 + hour * 3600 + min * 60 + sec - offset;
}

std::string FormatRfc3339(int64_t unix_seconds) {
  std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

StatusOr<ObjectMeta> ObjectMetaFromJson(const json& object) {
  if (!object.is_object()) return Invalid("object is not a JSON object");
  auto mit = object.find("metadata");
  if (mit == object.end() || !mit->is_object()) return Invalid("metadata is missing");
  const json& m = *mit;
  ObjectMeta meta;
  if (!GetString(m, "name", &meta.name) || meta.name.empty()) {
    return Invalid("metadata.name is missing or not a string");
  }
  if (!GetString(m, "namespace", &meta.namespace_name)) return Invalid("metadata.namespace is not a string");
  if (!GetString(m, "uid", &meta.uid)) return Invalid("metadata.uid is not a string");
  if (!GetString(m, "resourceVersion", &meta.resource_version)) {
    return Invalid("metadata.resourceVersion is not a string");
  }
  std::string created;
  if (!GetString(m, "creationTimestamp", &created)) {
    return Invalid("metadata.creationTimestamp is not a string");
  }
  if (!created.empty()) {
    auto t = ParseRfc3339(created);
    if (!t) return Invalid("metadata.creationTimestamp is not RFC 3339: " + created);
    meta.creation_unix = *t;
  }
  auto git = m.find("generation");
  if (git != m.end() && !git->is_null()) {
    if (!git->is_number_integer()) return Invalid("metadata.generation is not an integer");
    meta.generation = git->get<int64_t>();
  }
  auto lit = m.find("labels");
  if (lit != m.end() && !lit->is_null()) {
    if (!lit->is_object()) return Invalid("metadata.labels is not an object");
    for (auto it = lit->begin(); it != lit->end(); ++it) {
      if (!it.value().is_string()) return Invalid("metadata.labels." + it.key() + " is not a string");
      meta.labels.insert_or_assign(it.key(), it.value().get<std::string>());
    }
    meta.labels.shrink_to_fit();
  }
  return meta;
}

RouteIngress IngressFromJson(const json& entry) {
  RouteIngress in;
  if (!entry.is_object()) return in;
  in.router_name = StringOr(entry, "routerName");
  in.host = StringOr(entry, "host");
  in.router_canonical_hostname = StringOr(entry, "routerCanonicalHostname");
  in.wildcard_policy = StringOr(entry, "wildcardPolicy");
  auto cit = entry.find("conditions");
  if (cit != entry.end() && cit->is_array()) {
    for (const auto& c : *cit) {
      if (!c.is_object()) continue;
      RouteCondition cond;
      cond.type = StringOr(c, "type");
      cond.status = StringOr(c, "status");
      cond.reason = StringOr(c, "reason");
      cond.message = StringOr(c, "message");
      cond.last_transition_time = StringOr(c, "lastTransitionTime");
      in.conditions.push_back(std::move(cond));
    }
  }
  return in;
}

json IngressToJson(const RouteIngress& entry) {
  json out = json::object();
  out["routerName"] = entry.router_name;
  if (!entry.host.empty()) out["host"] = entry.host;
  if (!entry.router_canonical_hostname.empty()) {
    out["routerCanonicalHostname"] = entry.router_canonical_hostname;
  }
  if (!entry.wildcard_policy.empty()) out["wildcardPolicy"] = entry.wildcard_policy;
  json conds = json::array();
  for (const auto& c : entry.conditions) {
    json jc = json::object();
    jc["type"] = c.type;
    jc["status"] = c.status;
    if (!c.reason.empty()) jc["reason"] = c.reason;
    if (!c.message.empty()) jc["message"] = c.message;
    if (!c.last_transition_time.empty()) jc["lastTransitionTime"] = c.last_transition_time;
    conds.push_back(std::move(jc));
  }
  out["conditions"] = std::move(conds);
  return out;
}

StatusOr<Route> RouteFromJson(const json& object) {
  auto meta = ObjectMetaFromJson(object);
  if (!meta.ok()) return meta.status();
  Route route;
  route.metadata = std::move(meta).value();
  auto sit = object.find("spec");
  if (sit != object.end() && !sit->is_null()) {
    if (!sit->is_object()) return Invalid("spec is not an object");
    const json& s = *sit;
    if (!GetString(s, "host", &route.spec.host)) return Invalid("spec.host is not a string");
    if (!GetString(s, "subdomain", &route.spec.subdomain)) return Invalid("spec.subdomain is not a string");
    if (!GetString(s, "path", &route.spec.path)) return Invalid("spec.path is not a string");
    if (!GetString(s, "wildcardPolicy", &route.spec.wildcard_policy)) {
      return Invalid("spec.wildcardPolicy is not a string");
    }
    auto tlsit = s.find("tls");
    if (tlsit != s.end() && tlsit->is_object()) {
      route.spec.tls_termination = StringOr(*tlsit, "termination");
      RouteTlsMaterial m;
      m.certificate = StringOr(*tlsit, "certificate");
      m.key = StringOr(*tlsit, "key");
      m.ca_certificate = StringOr(*tlsit, "caCertificate");
      m.destination_ca_certificate = StringOr(*tlsit, "destinationCACertificate");
      m.insecure_edge_termination_policy = StringOr(*tlsit, "insecureEdgeTerminationPolicy");
      route.spec.tls_material = SharedTlsMaterial(std::move(m));
    }
  }
  auto stit = object.find("status");
  if (stit != object.end() && stit->is_object()) {
    auto iit = stit->find("ingress");
    if (iit != stit->end() && !iit->is_null()) {
      if (!iit->is_array()) return Invalid("status.ingress is not an array");
      route.ingress_json = iit->dump();
    }
  }
  return route;
}

// ---- RouteFromText: one pass over the text, no DOM ----

namespace {

bool IsAsciiDigit(char c) { return c >= '0' && c <= '9'; }

// A field read with GetString semantics: null/absent -> "", string -> its
// value, any other type -> bad. Duplicate keys: the last one wins. The
// value is a view into the decoded text when it has no escapes (nearly
// always), else into `unescaped`; valid while the text and this field live
// (a filled field is never copied or moved: the states holding it are only
// reset by assigning fresh ones). Why a view: a std::string first cost one
// more allocation and copy per long field (uid, host) before the value was
// copied into the route's CompactString.
struct StrField {
  std::string_view value;
  std::string unescaped;
  bool bad = false;
};

bool ReadStr(JsonReader& r, StrField* f) {
  f->bad = false;
  char c = r.Peek();
  if (c == '"') {
    const char* start = r.pos();
    if (!r.String(nullptr)) return false;  // validates only
    const std::string_view quoted(start, r.pos() - start);
    if (quoted.find('\\') == std::string_view::npos) {
      f->value = quoted.substr(1, quoted.size() - 2);
      return true;
    }
    JsonReader escaped(quoted);
    if (!escaped.String(&f->unescaped)) return false;
    f->value = f->unescaped;
    return true;
  }
  f->value = std::string_view();
  if (c != 'n') f->bad = true;
  return r.SkipValue();
}

// StringOr semantics: a string's value, else "".
bool ReadStrOr(JsonReader& r, std::string* out) {
  if (r.Peek() == '"') return r.String(out);
  out->clear();
  return r.SkipValue();
}

struct MetaState {
  StrField name, ns, uid, rv, created;
  bool generation_bad = false;
  int64_t generation = 0;
  bool labels_bad = false;  // labels is neither null nor an object
  Labels labels;
  std::vector<std::string> bad_labels;  // keys whose (last) value is not a string
};

bool ReadLabels(JsonReader& r, MetaState* m) {
  m->labels.clear();
  m->bad_labels.clear();
  m->labels_bad = false;
  char c = r.Peek();
  if (c != '{') {
    if (c != 'n') m->labels_bad = true;
    return r.SkipValue();
  }
  r.BeginObject();
  std::string_view key;
  for (int more; (more = r.NextMember(&key)) != 0;) {
    if (more < 0) return false;
    std::string k(key);
    if (r.Peek() == '"') {
      std::string v;
      if (!r.String(&v)) return false;
      m->labels.insert_or_assign(k, std::move(v));
      if (!m->bad_labels.empty()) {
        m->bad_labels.erase(std::remove(m->bad_labels.begin(), m->bad_labels.end(), k),
                            m->bad_labels.end());
      }
    } else {
      if (!r.SkipValue()) return false;
      m->labels.erase(k);
      m->bad_labels.push_back(std::move(k));
    }
  }
  return true;
}

bool ReadMeta(JsonReader& r, MetaState* m) {
  r.BeginObject();
  std::string_view key;
  for (int more; (more = r.NextMember(&key)) != 0;) {
    if (more < 0) return false;
    bool ok;
    if (key == "name") ok = ReadStr(r, &m->name);
    else if (key == "namespace") ok = ReadStr(r, &m->ns);
    else if (key == "uid") ok = ReadStr(r, &m->uid);
    else if (key == "resourceVersion") ok = ReadStr(r, &m->rv);
    else if (key == "creationTimestamp") ok = ReadStr(r, &m->created);
    else if (key == "labels") ok = ReadLabels(r, m);
    else if (key == "generation") {
      m->generation = 0;
      m->generation_bad = false;
      char c = r.Peek();
      if (c == '-' || IsAsciiDigit(c)) {
        bool integer = false;
        ok = r.Number(&integer, &m->generation);
        if (!integer) {
          m->generation = 0;
          m->generation_bad = true;
        }
      } else {
        m->generation_bad = c != 'n';
        ok = r.SkipValue();
      }
    } else {
      ok = r.SkipValue();
    }
    if (!ok) return false;
  }
  return true;
}

struct SpecState {
  StrField host, subdomain, path, wildcard;
  std::string tls_termination;
  RouteTlsMaterial tls;
};

// Reads an object calling fn(key) for each member (fn consumes the value);
// any other type resets nothing and is skipped. Returns false on bad JSON.
template <typename F>
bool ForMembers(JsonReader& r, F&& fn) {
  r.BeginObject();
  std::string_view key;
  for (int more; (more = r.NextMember(&key)) != 0;) {
    if (more < 0 || !fn(key)) return false;
  }
  return true;
}

bool ReadSpec(JsonReader& r, SpecState* s) {
  return ForMembers(r, [&](std::string_view key) {
    if (key == "host") return ReadStr(r, &s->host);
    if (key == "subdomain") return ReadStr(r, &s->subdomain);
    if (key == "path") return ReadStr(r, &s->path);
    if (key == "wildcardPolicy") return ReadStr(r, &s->wildcard);
    if (key == "tls") {
      s->tls_termination.clear();
      s->tls = RouteTlsMaterial();
      if (r.Peek() != '{') return r.SkipValue();
      return ForMembers(r, [&](std::string_view k) {
        if (k == "termination") return ReadStrOr(r, &s->tls_termination);
        if (k == "certificate") return ReadStrOr(r, &s->tls.certificate);
        if (k == "key") return ReadStrOr(r, &s->tls.key);
        if (k == "caCertificate") return ReadStrOr(r, &s->tls.ca_certificate);
        if (k == "destinationCACertificate") {
          return ReadStrOr(r, &s->tls.destination_ca_certificate);
        }
        if (k == "insecureEdgeTerminationPolicy") {
          return ReadStrOr(r, &s->tls.insecure_edge_termination_policy);
        }
        return r.SkipValue();
      });
    }
    return r.SkipValue();
  });
}

bool ReadCondition(JsonReader& r, RouteCondition* c) {
  return ForMembers(r, [&](std::string_view k) {
    if (k == "type") return ReadStrOr(r, &c->type);
    if (k == "status") return ReadStrOr(r, &c->status);
    if (k == "reason") return ReadStrOr(r, &c->reason);
    if (k == "message") return ReadStrOr(r, &c->message);
    if (k == "lastTransitionTime") return ReadStrOr(r, &c->last_transition_time);
    return r.SkipValue();
  });
}

bool ReadIngressEntry(JsonReader& r, RouteIngress* in) {
  if (r.Peek() != '{') return r.SkipValue();  // IngressFromJson: an empty entry
  return ForMembers(r, [&](std::string_view k) {
    if (k == "routerName") return ReadStrOr(r, &in->router_name);
    if (k == "host") return ReadStrOr(r, &in->host);
    if (k == "routerCanonicalHostname") return ReadStrOr(r, &in->router_canonical_hostname);
    if (k == "wildcardPolicy") return ReadStrOr(r, &in->wildcard_policy);
    if (k == "conditions") {
      in->conditions.clear();
      if (r.Peek() != '[') return r.SkipValue();
      r.BeginArray();
      for (int more; (more = r.NextElement()) != 0;) {
        if (more < 0) return false;
        if (r.Peek() != '{') {
          if (!r.SkipValue()) return false;
          continue;
        }
        RouteCondition c;
        if (!ReadCondition(r, &c)) return false;
        in->conditions.push_back(std::move(c));
      }
      return true;
    }
    return r.SkipValue();
  });
}

// status.ingress as RouteFromText sees it: whether it has a wrong type,
// and the exact text of the array (kept as Route::ingress_json; the entries
// are decoded on demand by Route::Ingress).
struct StatusState {
  bool ingress_bad = false;
  std::string_view ingress_text;  // "" when absent or null
};

bool ReadStatus(JsonReader& r, StatusState* st) {
  return ForMembers(r, [&](std::string_view key) {
    if (key != "ingress") return r.SkipValue();
    const char c = r.Peek();
    st->ingress_bad = c != '[' && c != 'n';
    const char* start = r.pos();
    if (!r.SkipValue()) return false;
    st->ingress_text = c == '[' ? std::string_view(start, r.pos() - start) : std::string_view();
    return true;
  });
}

// Reads a status.ingress array's entries into *out. False on invalid JSON
// or another type than an array.
bool ReadIngressArray(JsonReader& r, std::vector<RouteIngress>* out) {
  if (r.Peek() != '[') return false;
  r.BeginArray();
  for (int more; (more = r.NextElement()) != 0;) {
    if (more < 0) return false;
    RouteIngress in;
    if (!ReadIngressEntry(r, &in)) return false;
    out->push_back(std::move(in));
  }
  return r.AtEnd();
}

// Everything RouteFromText learns in its pass; Finish() applies
// RouteFromJson's checks in RouteFromJson's order.
struct RouteState {
  bool meta_present = false;
  MetaState meta;
  bool spec_bad = false;
  SpecState spec;
  StatusState status;

  bool Read(JsonReader& r) {
    return ForMembers(r, [&](std::string_view key) {
      if (key == "metadata") {
        meta = MetaState();
        meta_present = r.Peek() == '{';
        return meta_present ? ReadMeta(r, &meta) : r.SkipValue();
      }
      if (key == "spec") {
        spec = SpecState();
        char c = r.Peek();
        spec_bad = c != '{' && c != 'n';
        return c == '{' ? ReadSpec(r, &spec) : r.SkipValue();
      }
      if (key == "status") {
        status = StatusState();
        return r.Peek() == '{' ? ReadStatus(r, &status) : r.SkipValue();
      }
      return r.SkipValue();
    });
  }

  StatusOr<Route> Finish() {
    if (!meta_present) return Invalid("metadata is missing");
    MetaState& m = meta;
    if (m.name.bad || m.name.value.empty()) return Invalid("metadata.name is missing or not a string");
    if (m.ns.bad) return Invalid("metadata.namespace is not a string");
    if (m.uid.bad) return Invalid("metadata.uid is not a string");
    if (m.rv.bad) return Invalid("metadata.resourceVersion is not a string");
    if (m.created.bad) return Invalid("metadata.creationTimestamp is not a string");
    Route route;
    ObjectMeta& om = route.metadata;
    if (!m.created.value.empty()) {
      auto t = ParseRfc3339(m.created.value);
      if (!t) {
        return Invalid("metadata.creationTimestamp is not RFC 3339: " +
                       std::string(m.created.value));
      }
      om.creation_unix = *t;
    }
    if (m.generation_bad) return Invalid("metadata.generation is not an integer");
    if (m.labels_bad) return Invalid("metadata.labels is not an object");
    if (!m.bad_labels.empty()) {
      return Invalid("metadata.labels." +
                     *std::min_element(m.bad_labels.begin(), m.bad_labels.end()) +
                     " is not a string");
    }
    if (spec_bad) return Invalid("spec is not an object");
    if (spec.host.bad) return Invalid("spec.host is not a string");
    if (spec.subdomain.bad) return Invalid("spec.subdomain is not a string");
    if (spec.path.bad) return Invalid("spec.path is not a string");
    if (spec.wildcard.bad) return Invalid("spec.wildcardPolicy is not a string");
    if (status.ingress_bad) return Invalid("status.ingress is not an array");
    om.name = std::move(m.name.value);
    om.namespace_name = std::move(m.ns.value);
    om.uid = std::move(m.uid.value);
    om.resource_version = std::move(m.rv.value);
    om.generation = m.generation;
    om.labels = std::move(m.labels);
    om.labels.shrink_to_fit();
    RouteSpec& s = route.spec;
    s.host = std::move(spec.host.value);
    s.subdomain = std::move(spec.subdomain.value);
    s.path = std::move(spec.path.value);
    s.wildcard_policy = std::move(spec.wildcard.value);
    s.tls_termination = std::move(spec.tls_termination);
    s.tls_material = SharedTlsMaterial(std::move(spec.tls));
    route.ingress_json = status.ingress_text;
    return route;
  }
};

}  // namespace

std::vector<RouteIngress> Route::Ingress() const {
  std::vector<RouteIngress> entries;
  if (ingress_json.empty()) return entries;
  JsonReader r(ingress_json);
  if (!ReadIngressArray(r, &entries)) entries.clear();
  return entries;
}

std::optional<RouteIngress> Route::FindIngress(std::string_view router_name) const {
  for (auto& entry : Ingress()) {
    if (entry.router_name == router_name) return std::move(entry);
  }
  return std::nullopt;
}

void Route::SetIngress(const std::vector<RouteIngress>& entries) {
  json list = json::array();
  for (const auto& e : entries) list.push_back(IngressToJson(e));
  ingress_json = list.dump();
}

StatusOr<Route> RouteFromText(std::string_view text) {
  JsonReader r(text);
  r.SkipBom();
  char c = r.Peek();
  if (c != '{') {
    if (!r.SkipValue() || !r.AtEnd()) return Invalid("route is not valid JSON");
    return Invalid("object is not a JSON object");
  }
  RouteState state;
  if (!state.Read(r)) return Invalid("route is not valid JSON");
  if (!r.AtEnd()) return Invalid("route is not valid JSON");
  return state.Finish();
}

StatusOr<Namespace> NamespaceFromJson(const json& object) {
  auto meta = ObjectMetaFromJson(object);
  if (!meta.ok()) return meta.status();
  Namespace ns;
  ns.metadata = std::move(meta).value();
  return ns;
}

StatusOr<json> IngressStatusPatch(const Route& route, std::string_view router_name,
                                  const std::optional<RouteIngress>& entry) {
  if (route.metadata.resource_version.empty()) {
    return Invalid("cached route " + route.Key() + " has no resourceVersion to guard the write");
  }
  json ingress = json::array();
  if (!route.ingress_json.empty()) {
    ingress = json::parse(route.ingress_json.view(), nullptr, /*allow_exceptions=*/false);
    if (ingress.is_discarded() || !ingress.is_array()) {
      return Invalid("cached route " + route.Key() + " has no valid status.ingress");
    }
  }
  json updated = json::array();
  bool placed = false;
  for (auto& e : ingress) {
    bool ours = e.is_object() && StringOr(e, "routerName") == router_name;
    if (!ours) {
      updated.push_back(std::move(e));
    } else if (entry && !placed) {
      updated.push_back(IngressToJson(*entry));
      placed = true;
    }  // else: a removal, or a duplicate of ours: drop it.
  }
  if (entry && !placed) updated.push_back(IngressToJson(*entry));
  json patch = json::object();
  patch["metadata"]["resourceVersion"] = route.metadata.resource_version.str();
  patch["status"]["ingress"] = std::move(updated);
  return patch;
}

bool IngressEqual(const RouteIngress& a, const RouteIngress& b) {
  if (a.router_name != b.router_name || a.host != b.host ||
      a.router_canonical_hostname != b.router_canonical_hostname ||
      a.wildcard_policy != b.wildcard_policy || a.conditions.size() != b.conditions.size()) {
    return false;
  }
  auto key = [](const RouteCondition& c) {
    return std::tie(c.type, c.status, c.reason, c.message);
  };
  std::vector<const RouteCondition*> x, y;
  for (const auto& c : a.conditions) x.push_back(&c);
  for (const auto& c : b.conditions) y.push_back(&c);
  auto less = [&](const RouteCondition* l, const RouteCondition* r) { return key(*l) < key(*r); };
  std::sort(x.begin(), x.end(), less);
  std::sort(y.begin(), y.end(), less);
  for (size_t i = 0; i < x.size(); ++i) {
    if (key(*x[i]) != key(*y[i])) return false;
  }
  return true;
}

uint64_t IngressFingerprint(const RouteIngress& entry) {
  // FNV-1a over length-prefixed fields (so "ab"+"c" != "a"+"bc"), the
  // conditions in IngressEqual's order-free sort.
  uint64_t h = 1469598103934665603ull;
  auto mix = [&h](std::string_view s) {
    const uint64_t n = s.size();
    for (int i = 0; i < 8; ++i) h = (h ^ ((n >> (8 * i)) & 0xff)) * 1099511628211ull;
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  };
  mix(entry.router_name);
  mix(entry.host);
  mix(entry.router_canonical_hostname);
  mix(entry.wildcard_policy);
  std::vector<const RouteCondition*> conditions;
  for (const auto& c : entry.conditions) conditions.push_back(&c);
  std::sort(conditions.begin(), conditions.end(), [](const RouteCondition* l, const RouteCondition* r) {
    return std::tie(l->type, l->status, l->reason, l->message) <
           std::tie(r->type, r->status, r->reason, r->message);
  });
  mix(std::to_string(conditions.size()));
  for (const RouteCondition* c : conditions) {
    mix(c->type);
    mix(c->status);
    mix(c->reason);
    mix(c->message);
  }
  return h;
}

}  // namespace routestatus::kubeclient
