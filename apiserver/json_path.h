#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace routestatus::apiserver {

// The subset of Kubernetes JSONPath that printer columns use
// (CRD additionalPrinterColumns, kubectl custom columns):
//   .a.b  ['a.b']  ["a"]   fields (missing keys give no result)
//   [N]  [-N]               array index (out of range gives no result)
//   [*]  .*                 every element of an array or value of an object
//   ..name                  recursive descent
//   [?(@.x.y=="v")]         filter elements; ==, !=, <, <=, >, >= against a
//   [?(@.x)]                string, number, true/false/null literal, or existence
// The path may be wrapped in {} and may start with $. Anything else is a
// parse error with a message naming the position; evaluation never throws.
// Immutable once parsed; thread-safe.
class JsonPath {
 public:
  // Parses `text`; nullopt with *error set ("jsonpath .a[: unterminated [ at 2").
  static std::optional<JsonPath> Parse(std::string_view text, std::string* error);

  // Every value the path selects in `root`, in document order. The pointers
  // point into `root`.
  std::vector<const nlohmann::json*> Evaluate(const nlohmann::json& root) const;

  // A value as kube's JSONPath printer shows it: strings verbatim, other
  // scalars as JSON text, objects and arrays as compact JSON.
  static std::string Format(const nlohmann::json& value);
  // Every selected value formatted and joined with `separator` ("" if none),
  // as kubectl's custom-columns printer does with ",".
  std::string EvaluateJoined(const nlohmann::json& root, const std::string& separator) const;

  const std::string& text() const { return text_; }

  struct Step;  // defined in json_path.cc

 private:
  std::string text_;
  std::vector<std::shared_ptr<const Step>> steps_;
};

}  // namespace routestatus::apiserver
