#include "apiserver/object_meta_types.h"

namespace routestatus::apiserver {

namespace {

using nlohmann::json;

// The word Go's encoding/json uses for a JSON value's kind.
const char* GoValueKind(const json& v) {
  if (v.is_object()) return "object";
  if (v.is_array()) return "array";
  if (v.is_string()) return "string";
  if (v.is_boolean()) return "bool";
  return "number";
}

std::string TypeError(const json& v, const std::string& field, const char* go_type) {
  return std::string("json: cannot unmarshal ") + GoValueKind(v) +
         " into Go struct field ObjectMeta.metadata." + field + " of type " + go_type;
}

}  // namespace

std::optional<std::string> ObjectMetaTypeError(const json& object) {
  if (!object.is_object()) return std::nullopt;
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return std::nullopt;
  for (const char* field : {"annotations", "labels"}) {
    auto map = meta->find(field);
    if (map == meta->end() || map->is_null()) continue;
    if (!map->is_object()) return TypeError(*map, field, "map[string]string");
    for (const auto& [key, value] : map->items()) {
      if (!value.is_string() && !value.is_null()) return TypeError(value, field, "string");
    }
  }
  return std::nullopt;
}

void NormalizeObjectMetaMaps(json* object) {
  if (!object->is_object()) return;
  auto meta = object->find("metadata");
  if (meta == object->end() || !meta->is_object()) return;
  for (const char* field : {"annotations", "labels"}) {
    auto map = meta->find(field);
    if (map == meta->end()) continue;
    if (map->is_null()) {
      meta->erase(map);
      continue;
    }
    if (!map->is_object()) continue;
    for (auto& [key, value] : map->items()) {
      if (value.is_null()) value = "";
    }
  }
}

std::string CannotBeHandledMessage(const json& object, const std::string& default_kind,
                                   const std::string& default_version,
                                   const std::string& detail) {
  std::string kind = default_kind;
  std::string version = default_version;
  if (object.is_object()) {
    auto k = object.find("kind");
    if (k != object.end() && k->is_string() && !k->get<std::string>().empty()) {
      kind = k->get<std::string>();
    }
    auto av = object.find("apiVersion");
    if (av != object.end() && av->is_string() && !av->get<std::string>().empty()) {
      const std::string& api_version = av->get_ref<const std::string&>();
      version = api_version.substr(api_version.rfind('/') + 1);
    }
  }
  return kind + " in version \"" + version + "\" cannot be handled as a " + default_kind + ": " +
         detail;
}

}  // namespace routestatus::apiserver
