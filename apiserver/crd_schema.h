#pragma once

#include <map>
#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "apiserver/api_error.h"

namespace routestatus::apiserver {

// What kube-apiserver does with a custom resource's body under its CRD's
// structural schema (openAPIV3Schema), in its order: prune unknown fields
// (kept under x-kubernetes-preserve-unknown-fields), drop nulls the schema
// does not allow, apply defaults, then validate type, required, enum,
// maxLength, pattern (ECMAScript syntax, which the patterns of the Route CRD
// share with Go's RE2) and x-kubernetes-int-or-string. metadata is left to
// the server's own checks, as kube does. Formats, numeric bounds and CEL
// rules are not checked. Immutable; thread-safe.
class CrdSchema {
 public:
  // `schema`: a version's schema.openAPIV3Schema (null = nothing enforced).
  explicit CrdSchema(nlohmann::json schema);
  // The schema of `version` in a CustomResourceDefinition object.
  static CrdSchema FromCrd(const nlohmann::json& crd, const std::string& version);
  // That version's spec.versions[].schema.openAPIV3Schema in `crd`, or
  // nullptr when the CRD has none.
  static const nlohmann::json* VersionSchema(const nlohmann::json& crd,
                                             const std::string& version);

  // Prunes and defaults *object in place; appends the paths of pruned
  // fields ("spec.foo", as kube's strict decoding names them) to *pruned.
  void Normalize(nlohmann::json* object, std::vector<std::string>* pruned) const;
  // Appends one cause per violation, fields named like kube's
  // ("spec.host", "spec.to"), in kube's order: properties first (by name),
  // then required ones missing.
  void Validate(const nlohmann::json& object, std::vector<FieldCause>* causes) const;
  bool empty() const { return schema_.is_null(); }

 private:
  nlohmann::json schema_;
  // Every "pattern" of schema_, compiled once (by its text).
  std::map<std::string, std::regex> patterns_;
};

}  // namespace routestatus::apiserver
