#include "apiserver/table_convertor.h"

#include <glog/logging.h>

#include "kubeclient/route.h"

namespace routestatus::apiserver {

namespace {

using nlohmann::json;
using Render = PrinterColumn::Render;

// kube 1.26's ObjectMeta.name documentation, its Name column's description.
constexpr char kNameDescription[] =
    "Name must be unique within a namespace. Is required when creating resources, although "
    "some resources may allow a client to request the generation of an appropriate name "
    "automatically. Name is primarily intended for creation idempotence and configuration "
    "definition. Cannot be updated. More info: "
    "http://kubernetes.io/docs/user-guide/identifiers#names";
// kube 1.26's ObjectMeta.creationTimestamp documentation.
constexpr char kCreatedDescription[] =
    "CreationTimestamp is a timestamp representing the server time when this object was "
    "created. It is not guaranteed to be set in happens-before order across separate "
    "operations. Clients may not set this value. It is represented in RFC3339 form and is in "
    "UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

PrinterColumn Column(const std::string& name, const std::string& type, const std::string& path,
                     Render render, const std::string& description,
                     const std::string& format = "") {
  PrinterColumn c;
  c.name = name;
  c.type = type;
  c.format = format;
  c.description = description;
  std::string error;
  std::optional<JsonPath> parsed = JsonPath::Parse(path, &error);
  CHECK(parsed) << error;  // built-in paths are constants
  c.path = *parsed;
  c.render = render;
  return c;
}

PrinterColumn NameColumn() {
  return Column("Name", "string", ".metadata.name", Render::kText, kNameDescription, "name");
}

int64_t SecondsSince(const std::string& timestamp, std::chrono::system_clock::time_point now,
                     bool* ok) {
  std::optional<int64_t> t = kubeclient::ParseRfc3339(timestamp);
  *ok = t.has_value();
  if (!t) return 0;
  return std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count() - *t;
}

json TypedCell(const std::string& type, const json& v) {
  if (type == "integer" && v.is_number()) {
    return v.is_number_float() ? json(static_cast<int64_t>(v.get<double>())) : v;
  }
  if (type == "number" && v.is_number()) return v.get<double>();
  if (type == "boolean" && v.is_boolean()) return v;
  if (type == "string" && v.is_string()) return v;
  return nullptr;
}

}  // namespace

std::optional<IncludeObject> ParseIncludeObject(const std::string& text) {
  if (text.empty() || text == "Metadata") return IncludeObject::kMetadata;
  if (text == "Object") return IncludeObject::kObject;
  if (text == "None") return IncludeObject::kNone;
  return std::nullopt;
}

std::string ShortHumanDuration(int64_t s) {
  if (s < -1) return "<invalid>";
  if (s < 0) return "0s";
  if (s < 60) return std::to_string(s) + "s";
  if (s < 3600) return std::to_string(s / 60) + "m";
  int64_t hours = s / 3600;
  if (hours < 24) return std::to_string(hours) + "h";
  if (hours < 24 * 365) return std::to_string(hours / 24) + "d";
  return std::to_string(hours / 24 / 365) + "y";
}

std::string HumanDuration(int64_t s) {
  if (s < -1) return "<invalid>";
  if (s < 0) return "0s";
  if (s < 120) return std::to_string(s) + "s";
  int64_t minutes = s / 60;
  if (minutes < 10) {
    int64_t rest = s % 60;
    return std::to_string(minutes) + "m" + (rest == 0 ? "" : std::to_string(rest) + "s");
  }
  if (minutes < 180) return std::to_string(minutes) + "m";
  int64_t hours = s / 3600;
  if (hours < 8) {
    int64_t rest = minutes % 60;
    return std::to_string(hours) + "h" + (rest == 0 ? "" : std::to_string(rest) + "m");
  }
  if (hours < 48) return std::to_string(hours) + "h";
  if (hours < 24 * 8) {
    int64_t rest = hours % 24;
    return std::to_string(hours / 24) + "d" + (rest == 0 ? "" : std::to_string(rest) + "h");
  }
  if (hours < 24 * 365 * 2) return std::to_string(hours / 24) + "d";
  if (hours < 24 * 365 * 8) {
    int64_t rest = (hours / 24) % 365;
    return std::to_string(hours / 24 / 365) + "y" + (rest == 0 ? "" : std::to_string(rest) + "d");
  }
  return std::to_string(hours / 24 / 365) + "y";
}

std::optional<TableConvertor> TableConvertor::FromCrdColumns(const json& columns,
                                                             std::string* error) {
  TableConvertor t;
  t.columns_.push_back(NameColumn());
  if (!columns.is_array()) {
    *error = "additionalPrinterColumns must be an array";
    return std::nullopt;
  }
  for (const auto& col : columns) {
    if (!col.is_object() || !col.contains("name") || !col["name"].is_string() ||
        !col.contains("jsonPath") || !col["jsonPath"].is_string()) {
      *error = "a printer column needs a name and a jsonPath";
      return std::nullopt;
    }
    PrinterColumn c;
    c.name = col["name"].get<std::string>();
    c.type = col.value("type", std::string("string"));
    c.format = col.value("format", std::string());
    std::string path = col["jsonPath"].get<std::string>();
    c.description = col.value("description", std::string());
    if (c.description.empty()) {
      c.description = "Custom resource definition column (in JSONPath format): " + path;
    }
    c.priority = col.contains("priority") && col["priority"].is_number_integer()
                     ? col["priority"].get<int>()
                     : 0;
    std::optional<JsonPath> parsed = JsonPath::Parse(path, error);
    if (!parsed) return std::nullopt;
    c.path = *parsed;
    c.render = c.type == "string" ? Render::kText
                                  : (c.type == "date" ? Render::kShortAge : Render::kTyped);
    t.columns_.push_back(std::move(c));
  }
  return t;
}

TableConvertor TableConvertor::For(const ResourceInfo& r, const json* crd, std::string* warning) {
  TableConvertor t;
  if (&r == &NamespacesInfo()) {
    t.columns_ = {NameColumn(),
                  Column("Status", "string", ".status.phase", Render::kText,
                         "The status of the namespace"),
                  Column("Age", "string", ".metadata.creationTimestamp", Render::kHumanAge,
                         kCreatedDescription)};
    return t;
  }
  if (&r == &CrdsInfo()) {
    // Why: kube serves CRDs with its default convertor (the raw timestamp).
    t.columns_ = {NameColumn(), Column("Created At", "date", ".metadata.creationTimestamp",
                                       Render::kText, kCreatedDescription)};
    return t;
  }
  json columns = json::array();
  if (crd != nullptr) {
    const json* versions = nullptr;
    auto spec = crd->find("spec");
    if (spec != crd->end() && spec->is_object()) {
      auto v = spec->find("versions");
      if (v != spec->end() && v->is_array()) versions = &*v;
    }
    for (size_t i = 0; versions != nullptr && i < versions->size(); ++i) {
      const json& v = (*versions)[i];
      if (v.is_object() && v.value("name", std::string()) == r.version &&
          v.contains("additionalPrinterColumns")) {
        columns = v["additionalPrinterColumns"];
      }
    }
  }
  if (columns.is_array() && columns.empty()) {
    columns.push_back({{"name", "Age"},
                       {"type", "date"},
                       {"jsonPath", ".metadata.creationTimestamp"},
                       {"description", kCreatedDescription}});
  }
  std::string error;
  std::optional<TableConvertor> from_crd = FromCrdColumns(columns, &error);
  if (from_crd) return *from_crd;
  if (warning != nullptr) *warning = "CRD " + r.GroupResource() + ": " + error;
  t.columns_ = {NameColumn(), Column("Age", "date", ".metadata.creationTimestamp",
                                     Render::kShortAge, kCreatedDescription)};
  return t;
}

json TableConvertor::ColumnDefinitions() const {
  json defs = json::array();
  for (const auto& c : columns_) {
    defs.push_back({{"name", c.name},
                    {"type", c.type},
                    {"format", c.format},
                    {"description", c.description},
                    {"priority", c.priority}});
  }
  return defs;
}

json TableConvertor::Cells(const json& object, std::chrono::system_clock::time_point now) const {
  json cells = json::array();
  for (const auto& c : columns_) {
    std::vector<const json*> found = c.path.Evaluate(object);
    // Why: kube-apiserver shows only the first value a column's path selects.
    const json* v = found.empty() || found.front()->is_null() ? nullptr : found.front();
    switch (c.render) {
      case Render::kText:
        cells.push_back(v == nullptr ? json(nullptr) : json(JsonPath::Format(*v)));
        break;
      case Render::kTyped:
        cells.push_back(v == nullptr ? json(nullptr) : TypedCell(c.type, *v));
        break;
      case Render::kShortAge:
      case Render::kHumanAge: {
        bool human = c.render == Render::kHumanAge;
        if (v == nullptr || !v->is_string()) {
          cells.push_back(human ? json("<unknown>") : json(nullptr));
          break;
        }
        const std::string& text = v->get_ref<const std::string&>();
        if (text.empty()) {
          cells.push_back("<unknown>");
          break;
        }
        bool ok = false;
        int64_t age = SecondsSince(text, now, &ok);
        if (!ok) {
          cells.push_back("<invalid>");
        } else {
          cells.push_back(human ? HumanDuration(age) : ShortHumanDuration(age));
        }
        break;
      }
    }
  }
  return cells;
}

void TableConvertor::AppendRow(const StoredObject& object, const RenderOptions& options,
                               std::string* out) const {
  json parsed = json::parse(object.json, nullptr, false);
  if (parsed.is_discarded()) parsed = json::object();
  *out += "{\"cells\":";
  *out += Cells(parsed, options.now).dump(-1, ' ', false, json::error_handler_t::replace);
  *out += ",\"object\":";
  switch (options.include) {
    case IncludeObject::kObject:
      *out += object.json;
      break;
    case IncludeObject::kMetadata: {
      *out += "{\"kind\":\"PartialObjectMetadata\",\"apiVersion\":\"" + options.api_version +
              "\",\"metadata\":";
      auto meta = parsed.find("metadata");
      *out += meta == parsed.end() ? "{}" : meta->dump(-1, ' ', false, json::error_handler_t::replace);
      *out += '}';
      break;
    }
    case IncludeObject::kNone:
      *out += "null";
      break;
  }
  *out += '}';
}

std::string TableConvertor::Render(const std::vector<ObjectPtr>& objects,
                                   const RenderOptions& options) const {
  std::string out = "{\"kind\":\"Table\",\"apiVersion\":\"" + options.api_version +
                    "\",\"metadata\":{";
  if (!options.continue_token.empty()) out += "\"continue\":\"" + options.continue_token + "\",";
  if (options.remaining) {
    out += "\"remainingItemCount\":" + std::to_string(*options.remaining) + ",";
  }
  out += "\"resourceVersion\":\"" + options.resource_version + "\"},\"columnDefinitions\":";
  out += options.headers ? ColumnDefinitions().dump() : "null";
  out += ",\"rows\":[";
  for (size_t i = 0; i < objects.size(); ++i) {
    if (i > 0) out += ',';
    AppendRow(*objects[i], options, &out);
  }
  out += "]}";
  return out;
}

}  // namespace routestatus::apiserver
