// ExplanationText and ExplanationJson: the two renderings of an Explanation
// (explain.h). Both read only the Explanation; neither decides anything.
#include <sstream>

#include "controller/explain.h"

namespace routestatus::controller {

using kubeclient::Route;
using nlohmann::json;

namespace {

json LabelsJson(const kubeclient::Labels& labels) {
  json out = json::object();
  for (const auto& [k, v] : labels) out[k] = v;
  return out;
}

std::string LabelsText(const kubeclient::Labels& labels) {
  std::string out;
  for (const auto& [k, v] : labels) out += (out.empty() ? "" : ",") + k + "=" + v;
  return "{" + out + "}";
}

std::string ListText(const std::vector<std::string>& items, const char* when_empty) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
  return out.empty() ? when_empty : out;
}

const char* Result(const Explanation& e) {
  if (e.decision.shard != ShardRule::kInShard) return "OutOfShard";
  return e.decision.admission.admitted ? "Admitted" : "Rejected";
}

int64_t Age(const Explanation& e, const Route& r) { return e.now_unix - r.metadata.creation_unix; }

std::string Created(const Explanation& e, const Route& r) {
  return "created " + kubeclient::FormatRfc3339(r.metadata.creation_unix) + " (" +
         FormatAge(Age(e, r)) + " ago)";
}

json RouteRef(const Explanation& e, const Route& r) {
  return {{"namespace", r.metadata.namespace_name},
          {"name", r.metadata.name},
          {"uid", r.metadata.uid},
          {"creationTimestamp", kubeclient::FormatRfc3339(r.metadata.creation_unix)},
          {"ageSeconds", Age(e, r)}};
}

// One line per selector of the shard, saying whether it selects the route.
std::vector<std::string> ShardLines(const Explanation& e) {
  const ShardOptions& s = e.shard_options;
  const Route& r = *e.route;
  const ShardRule rule = e.decision.shard;
  std::vector<std::string> out;
  out.push_back(s.route_selector.Empty()
                    ? "route-labels: any"
                    : "route-labels \"" + s.route_selector.ToString() + "\" " +
                          (rule == ShardRule::kRouteLabels ? "do NOT match" : "match") +
                          " route labels " + LabelsText(r.metadata.labels));
  if (rule == ShardRule::kRouteLabels) return out;  // Check stops at the first exclusion
  out.push_back(s.namespaces.empty()
                    ? "namespaces: all"
                    : "namespaces [" + ListText(s.namespaces, "") + "] " +
                          (rule == ShardRule::kNamespaceList ? "do NOT include " : "include ") +
                          r.metadata.namespace_name);
  if (rule == ShardRule::kNamespaceList) return out;
  if (s.namespace_selector.Empty()) {
    out.push_back("namespace-labels: any");
  } else if (rule == ShardRule::kNamespaceNotFound) {
    out.push_back("namespace-labels \"" + s.namespace_selector.ToString() + "\": namespace " +
                  r.metadata.namespace_name + " was NOT found in the namespace list");
  } else {
    out.push_back("namespace-labels \"" + s.namespace_selector.ToString() + "\" " +
                  (rule == ShardRule::kNamespaceLabels ? "do NOT match" : "match") +
                  " namespace " + r.metadata.namespace_name + " labels " +
                  LabelsText(e.namespace_labels.value_or(kubeclient::Labels{})));
  }
  return out;
}

// `text` with every line indented by two spaces.
std::string Indented(const std::string& text) {
  std::string out = "  ";
  for (char c : text) {
    out += c;
    if (c == '\n') out += "  ";
  }
  return out;
}

std::string ClaimOf(const Route& r, const AdmissionOptions& o) {
  std::string host = EffectiveHost(r, o);
  return r.spec.path.empty() ? host : host + r.spec.path;
}

}  // namespace

std::string ExplanationText(const Explanation& e) {
  const Route& r = *e.route;
  const AdmissionDecision& d = e.decision.admission;
  const AdmissionOptions& o = e.admission;
  std::ostringstream out;
  out << "route " << r.Key() << ", router " << o.router_name << "\n";
  out << "  uid " << r.metadata.uid << ", " << Created(e, r) << ", resourceVersion "
      << r.metadata.resource_version << "\n\n";

  const std::string result = Result(e);
  if (result == "OutOfShard") {
    out << "decision:  not in the shard of router " << o.router_name
        << " (a replica writes no entry of ours)\n";
  } else if (d.admitted) {
    out << "decision:  admitted\n";
  } else {
    out << "decision:  rejected: " << d.reason << "\n           " << d.message << "\n";
  }
  out << "rule:      "
      << (result == "OutOfShard" ? ShardRuleName(e.decision.shard) : AdmissionRuleName(d.rule))
      << "\n";
  out << "shard:     " << (result == "OutOfShard" ? "OUT" : "in") << "\n";
  for (const std::string& line : ShardLines(e)) out << "             " << line << "\n";
  if (result != "OutOfShard") {
    out << "host:      " << (d.host.empty() ? "(none)" : d.host) << ", wildcardPolicy "
        << d.wildcard_policy << (r.spec.path.empty() ? "" : ", path " + r.spec.path) << "\n";
    if (!d.host_problem.empty()) {
      out << "           " << (d.rule == AdmissionRule::kExtendedValidation ? "spec.tls" : "invalid")
          << ": " << d.host_problem << "\n";
    }
    out << "domains:   allowed: " << ListText(o.allowed_domains, "any");
    if (d.allowed_domain_index >= 0) out << " (matched " << o.allowed_domains[d.allowed_domain_index] << ")";
    out << "; denied: " << ListText(o.denied_domains, "none");
    if (d.denied_domain_index >= 0) out << " (matched " << o.denied_domains[d.denied_domain_index] << ")";
    out << "\n";
    out << "wildcards: " << (o.allow_wildcard_routes ? "allowed" : "not allowed")
        << "; namespace ownership check " << (o.disable_namespace_ownership_check ? "off" : "on")
        << "; extended validation " << (o.extended_validation ? "on" : "off") << "\n";
    if (e.holder) {
      if (e.holder == e.route) {
        out << "claim:     this route holds " << d.host << " (no older route in the shard blocks it)\n";
      } else {
        out << "claim:     held by route " << e.holder->Key() << " (" << ClaimOf(*e.holder, o)
            << ", wildcardPolicy "
            << (e.holder->spec.wildcard_policy.empty() ? "None" : e.holder->spec.wildcard_policy)
            << "), " << Created(e, *e.holder) << "\n           this route was "
            << Created(e, r) << "\n";
        if (e.holder_same_second) {
          out << "           same second: the route with the smaller uid is older ("
              << e.holder->metadata.uid << " < " << r.metadata.uid << ")\n";
        }
      }
    }
    if (!e.decision.peers.empty()) {
      out << "peers:     " << e.decision.peers.size()
          << " other route(s) of the shard linked to this one through claims, oldest first:\n";
      for (const auto& p : e.decision.peers) {
        out << "             " << p->Key() << "  " << ClaimOf(*p, o) << "  "
            << kubeclient::FormatRfc3339(p->metadata.creation_unix) << "  "
            << (IsOlder(*p, r) ? "older" : "younger") << "\n";
      }
    }
  }

  out << "\nentry a replica would write:";
  if (e.decision.entry) {
    out << "\n" << Indented(kubeclient::IngressToJson(*e.decision.entry).dump(2)) << "\n";
  } else {
    out << " none (outside the shard)\n";
  }
  out << "stored entry: ";
  switch (e.state) {
    case EntryState::kUpToDate: out << "up to date (nothing to write)\n"; break;
    case EntryState::kMissing: out << "no entry (a replica adds it)\n"; break;
    case EntryState::kNone: out << "none (nothing to do)\n"; break;
    case EntryState::kExtra:
      out << "present, and a replica removes it:\n"
          << Indented(kubeclient::IngressToJson(*e.stored).dump(2)) << "\n";
      break;
    case EntryState::kDiffers:
      out << "differs (a replica writes the entry above):\n";
      for (const FieldDifference& f : e.differences) {
        out << "  " << f.field << ": " << json(f.stored).dump() << " -> " << json(f.desired).dump()
            << "\n";
      }
      break;
  }
  if (e.entries_of_ours > 1) {
    out << "duplicates: " << e.entries_of_ours << " entries carry routerName " << o.router_name
        << "; the first counts, the others go with the next write of ours\n";
  }
  out << "other routers' entries: " << ListText(e.other_routers, "none") << "\n";
  return out.str();
}

json ExplanationJson(const Explanation& e) {
  const Route& r = *e.route;
  const AdmissionDecision& d = e.decision.admission;
  const AdmissionOptions& o = e.admission;
  const ShardOptions& s = e.shard_options;
  const bool in_shard = e.decision.shard == ShardRule::kInShard;

  json route = RouteRef(e, r);
  route["resourceVersion"] = r.metadata.resource_version;
  route["labels"] = LabelsJson(r.metadata.labels);

  json router = {{"name", o.router_name},
                 {"canonicalHostname", o.canonical_hostname},
                 {"routerDomain", o.router_domain},
                 {"hostnameTemplate", o.hostname_template},
                 {"overrideHostname", o.override_hostname},
                 {"allowWildcardRoutes", o.allow_wildcard_routes},
                 {"allowedDomains", o.allowed_domains},
                 {"deniedDomains", o.denied_domains},
                 {"namespaceOwnershipCheck", !o.disable_namespace_ownership_check},
                 {"extendedValidation", o.extended_validation}};

  json decision = {{"result", Result(e)},
                   {"rule", in_shard ? AdmissionRuleName(d.rule) : ShardRuleName(e.decision.shard)},
                   {"reason", d.reason},
                   {"message", d.message}};

  json shard = {{"inShard", in_shard},
                {"rule", ShardRuleName(e.decision.shard)},
                {"routeSelector", s.route_selector.ToString()},
                {"namespaceSelector", s.namespace_selector.ToString()},
                {"namespaces", s.namespaces},
                {"namespaceLabels",
                 e.namespace_labels ? LabelsJson(*e.namespace_labels) : json(nullptr)}};

  json host = nullptr;
  if (in_shard) {
    json peers = json::array();
    for (const auto& p : e.decision.peers) {
      json peer = RouteRef(e, *p);
      peer["host"] = EffectiveHost(*p, o);
      peer["path"] = p->spec.path;
      peer["wildcardPolicy"] = p->spec.wildcard_policy.empty() ? "None" : p->spec.wildcard_policy;
      peer["older"] = IsOlder(*p, r);
      peers.push_back(std::move(peer));
    }
    json holder = nullptr;
    if (e.holder) {
      holder = RouteRef(e, *e.holder);
      holder["self"] = e.holder == e.route;
      holder["sameSecond"] = e.holder_same_second;
    }
    host = {{"host", d.host},
            {"path", r.spec.path},
            {"wildcardPolicy", d.wildcard_policy},
            {"problem", d.host_problem.empty() ? json(nullptr) : json(d.host_problem)},
            {"allowedDomain", d.allowed_domain_index >= 0
                                  ? json(o.allowed_domains[d.allowed_domain_index])
                                  : json(nullptr)},
            {"deniedDomain", d.denied_domain_index >= 0
                                 ? json(o.denied_domains[d.denied_domain_index])
                                 : json(nullptr)},
            {"holder", std::move(holder)},
            {"peers", std::move(peers)}};
  }

  json differences = json::array();
  for (const FieldDifference& f : e.differences) {
    differences.push_back({{"field", f.field}, {"stored", f.stored}, {"desired", f.desired}});
  }
  json entry = {{"state", EntryStateName(e.state)},
                {"differences", std::move(differences)},
                {"entriesOfOurs", e.entries_of_ours},
                {"otherRouters", e.other_routers}};

  return {{"apiVersion", "routestatus.explain/v1"},
          {"route", std::move(route)},
          {"router", std::move(router)},
          {"decision", std::move(decision)},
          {"shard", std::move(shard)},
          {"host", std::move(host)},
          {"desiredEntry",
           e.decision.entry ? kubeclient::IngressToJson(*e.decision.entry) : json(nullptr)},
          {"storedEntry", e.stored ? kubeclient::IngressToJson(*e.stored) : json(nullptr)},
          {"entry", std::move(entry)}};
}

}  // namespace routestatus::controller
