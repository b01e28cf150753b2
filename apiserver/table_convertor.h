#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "apiserver/json_path.h"
#include "apiserver/resources.h"
#include "apiserver/watcher.h"

namespace routestatus::apiserver {

// What each Table row carries in .object (the includeObject parameter).
enum class IncludeObject { kNone, kMetadata, kObject };
// "" and "Metadata" (kube's default), "Object", "None"; nullopt otherwise.
std::optional<IncludeObject> ParseIncludeObject(const std::string& text);

// kube's duration.ShortHumanDuration ("45s", "3m", "5h", "12d", "2y"), used
// for CRD date columns.
std::string ShortHumanDuration(int64_t seconds);
// kube's duration.HumanDuration ("90s", "3m20s", "5h10m", "3d4h"), used by
// built-in printers such as namespaces' AGE.
std::string HumanDuration(int64_t seconds);

// One column of a server-side Table (meta.k8s.io TableColumnDefinition plus
// how its cells are computed). Value type.
struct PrinterColumn {
  enum class Render {
    kText,       // first value printed as kube's JSONPath printer does
    kTyped,      // first value as a typed cell (integer, number, boolean, string)
    kShortAge,   // RFC 3339 timestamp -> ShortHumanDuration since now
    kHumanAge,   // RFC 3339 timestamp -> HumanDuration since now
  };
  std::string name;
  std::string type;  // string, integer, number, boolean, date
  std::string format;
  std::string description;
  int priority = 0;
  JsonPath path;
  Render render = Render::kText;
};

// Renders objects of one resource type as a meta.k8s.io Table, like
// kube-apiserver's TableConvertor: routes from the CRD's
// additionalPrinterColumns (NAME first; AGE alone when it has none),
// namespaces NAME STATUS AGE, CRDs NAME CREATED AT. Immutable after
// construction; thread-safe.
class TableConvertor {
 public:
  // The convertor for `r`. `crd` is the stored CRD of a custom resource
  // (nullptr = none stored: the default columns). A CRD column with a
  // malformed jsonPath makes the default columns serve and sets *warning.
  static TableConvertor For(const ResourceInfo& r, const nlohmann::json* crd,
                            std::string* warning = nullptr);
  // From a CRD version's additionalPrinterColumns array; nullopt and *error
  // if a column is malformed.
  static std::optional<TableConvertor> FromCrdColumns(const nlohmann::json& columns,
                                                      std::string* error);

  const std::vector<PrinterColumn>& columns() const { return columns_; }
  // The columnDefinitions array.
  nlohmann::json ColumnDefinitions() const;
  // The cells of one object's row (one per column; null for no value).
  nlohmann::json Cells(const nlohmann::json& object, std::chrono::system_clock::time_point now) const;

  // Table options of one response.
  struct RenderOptions {
    std::string api_version = "meta.k8s.io/v1";  // or meta.k8s.io/v1beta1
    IncludeObject include = IncludeObject::kMetadata;
    bool headers = true;               // false: "columnDefinitions":null
    std::string resource_version;      // metadata.resourceVersion
    std::string continue_token;        // metadata.continue ("" = none)
    std::optional<int64_t> remaining;  // metadata.remainingItemCount
    std::chrono::system_clock::time_point now;
  };
  // A complete Table document (JSON text) with one row per object.
  std::string Render(const std::vector<ObjectPtr>& objects, const RenderOptions& options) const;

 private:
  // Appends one row object ({"cells":[...],"object":...}) to *out.
  void AppendRow(const StoredObject& object, const RenderOptions& options, std::string* out) const;

  std::vector<PrinterColumn> columns_;
};

}  // namespace routestatus::apiserver
