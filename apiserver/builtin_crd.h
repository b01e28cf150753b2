#pragma once

// The Route CRD the server stands behind when none is stored: the one
// routestatus deploys (deploy/crd/routes.route.openshift.io.yaml, compiled
// in), so routes get its printer columns and schema whether or not a client
// applied it.

#include <string>

#include <nlohmann/json.hpp>

namespace routestatus::apiserver {

// deploy/crd's Route CustomResourceDefinition as JSON. Parsed once;
// thread-safe.
const nlohmann::json& BuiltinRouteCrd();

// A YAML document as JSON: plain scalars become booleans, integers, floats
// or null where YAML 1.2's core schema says so, quoted ones strings. Throws
// YAML::Exception on malformed YAML.
nlohmann::json YamlToJson(const std::string& yaml);

}  // namespace routestatus::apiserver
