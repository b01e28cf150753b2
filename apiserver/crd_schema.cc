#include "apiserver/crd_schema.h"

#include <cmath>

namespace routestatus::apiserver {

namespace {

using nlohmann::json;
using Patterns = std::map<std::string, std::regex>;

// Compiles every "pattern" under `schema` into *out.
void CollectPatterns(const json& schema, Patterns* out) {
  if (schema.is_object()) {
    auto pattern = schema.find("pattern");
    if (pattern != schema.end() && pattern->is_string() && !out->count(*pattern)) {
      try {
        out->emplace(pattern->get<std::string>(), std::regex(pattern->get<std::string>()));
      } catch (const std::regex_error&) {
        // Why ignored: kube refuses such a CRD; ours are built in and tested.
      }
    }
  }
  if (schema.is_structured()) {
    for (const json& child : schema) CollectPatterns(child, out);
  }
}

bool Flag(const json& schema, const char* key) {
  auto it = schema.find(key);
  return it != schema.end() && it->is_boolean() && it->get<bool>();
}

const json* Child(const json& schema, const char* key) {
  auto it = schema.find(key);
  return it == schema.end() || !it->is_object() ? nullptr : &*it;
}

std::string Join(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

// go-openapi's name for the type of a JSON value.
std::string TypeName(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return "boolean";
    case json::value_t::string: return "string";
    case json::value_t::array: return "array";
    case json::value_t::object: return "object";
    case json::value_t::number_float: {
      double d = v.get<double>();
      return std::floor(d) == d ? "integer" : "number";
    }
    default: return "integer";
  }
}

bool HasType(const json& v, const std::string& type) {
  std::string actual = TypeName(v);
  return actual == type || (type == "number" && actual == "integer");
}

size_t Runes(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// A value as kube's field errors print it: strings quoted, others as JSON.
std::string Printed(const json& v) { return v.dump(); }

// The schema of `key` in an object's schema: its property, else
// additionalProperties; nullptr for neither.
const json* PropertySchema(const json& schema, const std::string& key) {
  const json* properties = Child(schema, "properties");
  if (properties != nullptr) {
    auto p = properties->find(key);
    if (p != properties->end() && p->is_object()) return &*p;
  }
  return Child(schema, "additionalProperties");
}

std::string ItemPath(const std::string& path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

bool Preserves(const json& schema) {
  return Flag(schema, "x-kubernetes-preserve-unknown-fields") ||
         (schema.contains("additionalProperties") && schema["additionalProperties"].is_boolean() &&
          schema["additionalProperties"].get<bool>());
}

void ApplyDefaults(json* node, const json& schema) {
  const json* properties = Child(schema, "properties");
  if (properties == nullptr) return;
  for (auto p = properties->begin(); p != properties->end(); ++p) {
    if (p.value().is_object() && p.value().contains("default") && !node->contains(p.key())) {
      (*node)[p.key()] = p.value()["default"];
    }
  }
}

void NormalizeNode(json* node, const json& schema, const std::string& path, bool root,
                   std::vector<std::string>* pruned) {
  if (node->is_array()) {
    const json* items = Child(schema, "items");
    for (size_t i = 0; items != nullptr && i < node->size(); ++i) {
      NormalizeNode(&(*node)[i], *items, ItemPath(path, i), false, pruned);
    }
    return;
  }
  if (!node->is_object()) return;
  const bool preserve = Preserves(schema);
  for (auto it = node->begin(); it != node->end();) {
    // Why: kube checks apiVersion, kind and metadata itself, never by schema.
    if (root && (it.key() == "apiVersion" || it.key() == "kind" || it.key() == "metadata")) {
      ++it;
      continue;
    }
    const json* sub = PropertySchema(schema, it.key());
    if (sub == nullptr) {
      if (preserve) {
        ++it;
      } else {
        pruned->push_back(Join(path, it.key()));
        it = node->erase(it);
      }
      continue;
    }
    if (it.value().is_null() && !Flag(*sub, "nullable")) {
      // Why: kube drops nulls the schema does not allow before defaulting.
      it = node->erase(it);
      continue;
    }
    NormalizeNode(&it.value(), *sub, Join(path, it.key()), false, pruned);
    ++it;
  }
  ApplyDefaults(node, schema);
}

// The checks of one value against its own schema (type, enum, maxLength);
// false when the type is wrong (nothing below it is checked then).
// Why: kept out of ValidateNode so the recursion's frames stay small (the
// HTTP worker threads have small stacks).
bool CheckValue(const json& node, const json& schema, const std::string& path,
                const Patterns& patterns, std::vector<FieldCause>* causes) {
  std::string type = schema.value("type", std::string());
  std::string actual = TypeName(node);
  if (Flag(schema, "x-kubernetes-int-or-string")) {
    if (!HasType(node, "integer") && !node.is_string()) {
      causes->push_back({path,
                         "Invalid value: \"" + actual + "\": " + path +
                             " in body must be of type integer,string: \"" + actual + "\"",
                         "FieldValueTypeInvalid"});
      return false;
    }
  } else if (!type.empty() && !HasType(node, type)) {
    std::string where = path.empty() ? "body" : path + " in body";
    causes->push_back({path,
                       "Invalid value: \"" + actual + "\": " + where + " must be of type " + type +
                           ": \"" + actual + "\"",
                       "FieldValueTypeInvalid"});
    return false;
  }
  auto en = schema.find("enum");
  if (en != schema.end() && en->is_array() &&
      std::find(en->begin(), en->end(), node) == en->end()) {
    std::string values;
    for (const json& v : *en) values += (values.empty() ? "" : ", ") + Printed(v);
    causes->push_back({path,
                       "Unsupported value: " + Printed(node) + ": supported values: " + values,
                       "FieldValueNotSupported"});
  }
  auto max_length = schema.find("maxLength");
  if (node.is_string() && max_length != schema.end() && max_length->is_number_integer() &&
      Runes(node.get_ref<const std::string&>()) > max_length->get<size_t>()) {
    causes->push_back(
        {path, "Too long: may not be longer than " + max_length->dump(), "FieldValueTooLong"});
  }
  auto pattern = schema.find("pattern");
  if (node.is_string() && pattern != schema.end() && pattern->is_string()) {
    auto compiled = patterns.find(pattern->get<std::string>());
    if (compiled != patterns.end() &&
        !std::regex_search(node.get_ref<const std::string&>(), compiled->second)) {
      causes->push_back({path,
                         "Invalid value: " + Printed(node) + ": " + path + " in body should match '" +
                             pattern->get<std::string>() + "'",
                         "FieldValueInvalid"});
    }
  }
  return true;
}

void CheckRequired(const json& node, const json& schema, const std::string& path,
                   std::vector<FieldCause>* causes) {
  auto required = schema.find("required");
  if (required == schema.end() || !required->is_array()) return;
  for (const json& r : *required) {
    if (r.is_string() && !node.contains(r.get<std::string>())) {
      causes->push_back({Join(path, r.get<std::string>()), "Required value", "FieldValueRequired"});
    }
  }
}

void ValidateNode(const json& node, const json& schema, const std::string& path, bool root,
                  const Patterns& patterns, std::vector<FieldCause>* causes) {
  if (node.is_null() && Flag(schema, "nullable")) return;
  if (!CheckValue(node, schema, path, patterns, causes)) return;
  if (node.is_array()) {
    const json* items = Child(schema, "items");
    for (size_t i = 0; items != nullptr && i < node.size(); ++i) {
      ValidateNode(node[i], *items, ItemPath(path, i), false, patterns, causes);
    }
    return;
  }
  if (!node.is_object()) return;
  for (auto it = node.begin(); it != node.end(); ++it) {
    if (root && (it.key() == "apiVersion" || it.key() == "kind" || it.key() == "metadata")) {
      continue;
    }
    if (const json* sub = PropertySchema(schema, it.key())) {
      ValidateNode(it.value(), *sub, Join(path, it.key()), false, patterns, causes);
    }
  }
  CheckRequired(node, schema, path, causes);
}

}  // namespace

CrdSchema::CrdSchema(json schema) : schema_(std::move(schema)) {
  CollectPatterns(schema_, &patterns_);
}

const json* CrdSchema::VersionSchema(const json& crd, const std::string& version) {
  const json* spec = crd.is_object() ? Child(crd, "spec") : nullptr;
  if (spec == nullptr || !spec->contains("versions") || !(*spec)["versions"].is_array()) {
    return nullptr;
  }
  for (const json& v : (*spec)["versions"]) {
    if (!v.is_object() || v.value("name", std::string()) != version) continue;
    const json* schema = Child(v, "schema");
    return schema ? Child(*schema, "openAPIV3Schema") : nullptr;
  }
  return nullptr;
}

CrdSchema CrdSchema::FromCrd(const json& crd, const std::string& version) {
  const json* open_api = VersionSchema(crd, version);
  return CrdSchema(open_api ? *open_api : json(nullptr));
}

void CrdSchema::Normalize(json* object, std::vector<std::string>* pruned) const {
  if (schema_.is_object()) NormalizeNode(object, schema_, "", true, pruned);
}

void CrdSchema::Validate(const json& object, std::vector<FieldCause>* causes) const {
  if (schema_.is_object()) ValidateNode(object, schema_, "", true, patterns_, causes);
}

}  // namespace routestatus::apiserver
