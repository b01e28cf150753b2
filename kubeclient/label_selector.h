#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "kubeclient/labels.h"

namespace routestatus::kubeclient {

// A Kubernetes label selector in its string form: equality-based
// ("a=b", "a==b", "a!=b") and set-based ("a in (x,y)", "a notin (x)", "a",
// "!a") requirements joined by commas. The empty selector matches
// everything. Value type; thread-compatible.
class LabelSelector {
 public:
  enum class Op { kEquals, kNotEquals, kIn, kNotIn, kExists, kDoesNotExist };
  struct Requirement {
    std::string key;
    Op op = Op::kExists;
    std::vector<std::string> values;
  };

  LabelSelector() = default;
  // Parses `text`; kInvalid with a message naming the bad part.
  static StatusOr<LabelSelector> Parse(std::string_view text);

  // True when `labels` satisfy every requirement.
  bool Matches(const Labels& labels) const;
  bool Matches(const std::map<std::string, std::string>& labels) const;
  bool Empty() const { return requirements_.empty(); }
  const std::vector<Requirement>& requirements() const { return requirements_; }
  // The canonical string form ("" for the empty selector).
  std::string ToString() const;

 private:
  std::vector<Requirement> requirements_;
};

}  // namespace routestatus::kubeclient
