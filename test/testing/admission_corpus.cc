#include "test/testing/admission_corpus.h"

#include <fstream>

namespace routestatus::testing {

std::vector<nlohmann::json> ReadAdmissionCorpus() {
  std::ifstream in(std::string(ROUTESTATUS_SOURCE_DIR) +
                   "/test/controller/testdata/openshift_router_admission/cases.jsonl");
  std::vector<nlohmann::json> sets;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) sets.push_back(nlohmann::json::parse(line));
  }
  return sets;
}

nlohmann::json CorpusRouteObject(const nlohmann::json& route, const std::string& ns) {
  nlohmann::json spec = {{"to", {{"kind", "Service"}, {"name", "web"}}}};
  // Why empty fields are left out: the Route CRD's host pattern refuses "",
  // and an absent field is what the corpus's "" means.
  for (const char* field : {"host", "subdomain", "path", "wildcardPolicy"}) {
    if (!route.value(field, "").empty()) spec[field] = route.at(field);
  }
  if (!route.value("tls", "").empty()) {
    nlohmann::json tls = {{"termination", route.at("tls")}};
    for (const char* field : {"certificate", "key", "caCertificate", "destinationCACertificate",
                              "insecureEdgeTerminationPolicy"}) {
      if (route.contains(field)) tls[field] = route.at(field);
    }
    spec["tls"] = std::move(tls);
  }
  return {{"apiVersion", "route.openshift.io/v1"},
          {"kind", "Route"},
          {"metadata",
           {{"namespace", ns.empty() ? route.at("namespace").get<std::string>() : ns},
            {"name", route.at("name")}}},
          {"spec", std::move(spec)}};
}

std::string CorpusOutcome(const nlohmann::json& expected) {
  const std::string outcome = expected.at("outcome").get<std::string>();
  return outcome == "admitted" ? outcome : outcome + "/" + expected.value("reason", "");
}

}  // namespace routestatus::testing
