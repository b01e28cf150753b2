#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace routestatus::apiserver {

// A field selector over metadata.name and metadata.namespace ("a=b",
// "a==b", "a!=b", comma-separated), the fields every resource supports in
// kube-apiserver. Value type; thread-compatible.
class FieldSelector {
 public:
  struct Requirement {
    std::string field;  // "metadata.name" or "metadata.namespace"
    bool equals = true;
    std::string value;
  };

  // Parses `text`; on failure returns nullopt and sets *error to a message
  // like kube-apiserver's ("field label not supported: spec.host").
  static std::optional<FieldSelector> Parse(std::string_view text, std::string* error);

  bool Matches(const std::string& ns, const std::string& name) const;
  bool Empty() const { return requirements_.empty(); }
  // The value required by "metadata.namespace=X", if any.
  std::optional<std::string> RequiredNamespace() const;

 private:
  std::vector<Requirement> requirements_;
};

}  // namespace routestatus::apiserver
