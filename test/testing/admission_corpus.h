#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace routestatus::testing {

// openshift-router's admission corpus
// (test/controller/testdata/openshift_router_admission/, its README gives
// the format), shared by the corpus test and the end-to-end TLS test.

// Every set of the corpus, in file order. Empty when the file cannot be
// read.
std::vector<nlohmann::json> ReadAdmissionCorpus();

// The create body of corpus route `route` in namespace `ns` (the corpus's
// own namespace unless given): metadata.name and namespace, spec.to, and
// spec.host, subdomain, path, wildcardPolicy and tls (termination and
// every certificate field the corpus gives) where not empty. No uid,
// resourceVersion or creationTimestamp: the API server sets them.
nlohmann::json CorpusRouteObject(const nlohmann::json& route, const std::string& ns = "");

// "admitted" or "rejected/<reason>" of an `expected` entry.
std::string CorpusOutcome(const nlohmann::json& expected);

}  // namespace routestatus::testing
