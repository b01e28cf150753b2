#include "apiserver/protobuf_object.h"

#include <cstdint>

#include "apiserver/protobuf_wire.h"

namespace routestatus::apiserver {

namespace {

using nlohmann::json;

constexpr std::string_view kMagic("k8s\0", 4);

const char* WireTypeName(WireType t) {
  switch (t) {
    case WireType::kVarint: return "varint";
    case WireType::kFixed64: return "fixed64";
    case WireType::kLengthDelimited: return "length-delimited";
    case WireType::kStartGroup: return "start-group";
    case WireType::kEndGroup: return "end-group";
    case WireType::kFixed32: return "fixed32";
  }
  return "unknown";
}

// Fails `r` unless `f` has wire type `want`.
bool Expect(WireReader& r, const WireField& f, WireType want, const char* message) {
  if (f.type == want) return true;
  r.Fail(std::string("protobuf: ") + message + " field " + std::to_string(f.number) + " has wire type " +
         WireTypeName(f.type) + ", want " + WireTypeName(want));
  return false;
}

// A string field: length-delimited and valid UTF-8.
bool String(WireReader& r, const WireField& f, const char* message, std::string* out) {
  if (!Expect(r, f, WireType::kLengthDelimited, message)) return false;
  if (!IsValidUtf8(f.bytes)) {
    r.Fail(std::string("protobuf: ") + message + " field " + std::to_string(f.number) +
           " is not valid UTF-8");
    return false;
  }
  out->assign(f.bytes);
  return true;
}

// Sets j[key] = s unless s is empty (Go's omitempty).
void SetString(json* j, const char* key, const std::string& s) {
  if (!s.empty()) (*j)[key] = s;
}

// The result of a decoder: the reader's error, or `value`.
std::optional<json> Finish(const WireReader& r, json value, std::string* error) {
  if (!r.ok()) {
    *error = r.error();
    return std::nullopt;
  }
  return value;
}

// map<string, string> entry {key = 1, value = 2} into (*out)[key] = value.
bool MapEntry(WireReader& parent, std::string_view bytes, const char* message, json* out) {
  WireReader r = parent.Nested(bytes);
  std::string key;
  std::string value;
  WireField f;
  while (r.Next(&f)) {
    if (f.number == 1) {
      String(r, f, message, &key);
    } else if (f.number == 2) {
      String(r, f, message, &value);
    }
  }
  if (!r.ok()) {
    parent.Fail(r.error());
    return false;
  }
  (*out)[key] = value;
  return true;
}

// Decodes a nested message with `fn(reader, field)` per field; the nested
// reader's error is copied to `parent`.
template <typename Fn>
bool Message(WireReader& parent, const WireField& f, const char* message, Fn fn) {
  if (!Expect(parent, f, WireType::kLengthDelimited, message)) return false;
  WireReader r = parent.Nested(f.bytes);
  WireField field;
  while (r.Next(&field)) fn(r, field);
  if (!r.ok()) {
    parent.Fail(r.error());
    return false;
  }
  return true;
}

bool OwnerReference(WireReader& parent, const WireField& f, json* out) {
  json ref = json::object();
  bool ok = Message(parent, f, "OwnerReference", [&](WireReader& r, const WireField& g) {
    std::string s;
    switch (g.number) {
      case 1: if (String(r, g, "OwnerReference", &s)) SetString(&ref, "kind", s); break;
      case 3: if (String(r, g, "OwnerReference", &s)) SetString(&ref, "name", s); break;
      case 4: if (String(r, g, "OwnerReference", &s)) SetString(&ref, "uid", s); break;
      case 5: if (String(r, g, "OwnerReference", &s)) SetString(&ref, "apiVersion", s); break;
      case 6:
        if (Expect(r, g, WireType::kVarint, "OwnerReference")) ref["controller"] = g.value != 0;
        break;
      case 7:
        if (Expect(r, g, WireType::kVarint, "OwnerReference")) {
          ref["blockOwnerDeletion"] = g.value != 0;
        }
        break;
      default: break;
    }
  });
  if (ok) out->push_back(std::move(ref));
  return ok;
}

// ObjectMeta (k8s.io/apimachinery/pkg/apis/meta/v1).
bool ObjectMeta(WireReader& parent, const WireField& f, json* meta) {
  return Message(parent, f, "ObjectMeta", [&](WireReader& r, const WireField& g) {
    std::string s;
    switch (g.number) {
      case 1: if (String(r, g, "ObjectMeta", &s)) SetString(meta, "name", s); break;
      case 2: if (String(r, g, "ObjectMeta", &s)) SetString(meta, "generateName", s); break;
      case 3: if (String(r, g, "ObjectMeta", &s)) SetString(meta, "namespace", s); break;
      case 5: if (String(r, g, "ObjectMeta", &s)) SetString(meta, "uid", s); break;
      case 6: if (String(r, g, "ObjectMeta", &s)) SetString(meta, "resourceVersion", s); break;
      case 4:  // selfLink: deprecated, never stored
        String(r, g, "ObjectMeta", &s);
        break;
      case 7:   // generation: server-set
      case 10:  // deletionGracePeriodSeconds: server-set
        Expect(r, g, WireType::kVarint, "ObjectMeta");
        break;
      case 8:   // creationTimestamp: server-set
      case 9:   // deletionTimestamp: server-set
      case 17:  // managedFields: the server keeps its own
        Expect(r, g, WireType::kLengthDelimited, "ObjectMeta");
        break;
      case 11:
      case 12: {
        const char* key = g.number == 11 ? "labels" : "annotations";
        if (!Expect(r, g, WireType::kLengthDelimited, "ObjectMeta")) break;
        if (!meta->contains(key)) (*meta)[key] = json::object();
        MapEntry(r, g.bytes, "ObjectMeta map entry", &(*meta)[key]);
        break;
      }
      case 13:
        if (!meta->contains("ownerReferences")) (*meta)["ownerReferences"] = json::array();
        OwnerReference(r, g, &(*meta)["ownerReferences"]);
        break;
      case 14:
        if (String(r, g, "ObjectMeta", &s)) (*meta)["finalizers"].push_back(s);
        break;
      default: break;
    }
  });
}

}  // namespace

std::optional<ProtobufEnvelope> ParseProtobufEnvelope(std::string_view body, std::string* error) {
  if (body.size() < kMagic.size() || body.substr(0, kMagic.size()) != kMagic) {
    *error = "protobuf: the body does not start with the \"k8s\\x00\" prefix";
    return std::nullopt;
  }
  ProtobufEnvelope env;
  WireReader r(body.substr(kMagic.size()));
  WireField f;
  while (r.Next(&f)) {
    switch (f.number) {
      case 1:
        Message(r, f, "TypeMeta", [&](WireReader& t, const WireField& g) {
          if (g.number == 1) String(t, g, "TypeMeta", &env.api_version);
          if (g.number == 2) String(t, g, "TypeMeta", &env.kind);
        });
        break;
      case 2:
        if (Expect(r, f, WireType::kLengthDelimited, "Unknown")) env.raw = f.bytes;
        break;
      case 3: String(r, f, "Unknown", &env.content_encoding); break;
      case 4: String(r, f, "Unknown", &env.content_type); break;
      default: break;
    }
  }
  if (!r.ok()) {
    *error = r.error();
    return std::nullopt;
  }
  return env;
}

std::optional<json> DecodeNamespace(std::string_view raw, std::string* error) {
  json meta = json::object();
  json spec = json::object();
  json status = json::object();
  WireReader r(raw);
  WireField f;
  while (r.Next(&f)) {
    switch (f.number) {
      case 1: ObjectMeta(r, f, &meta); break;
      case 2:
        Message(r, f, "NamespaceSpec", [&](WireReader& s, const WireField& g) {
          std::string v;
          if (g.number == 1 && String(s, g, "NamespaceSpec", &v)) spec["finalizers"].push_back(v);
        });
        break;
      case 3:
        Message(r, f, "NamespaceStatus", [&](WireReader& s, const WireField& g) {
          std::string v;
          if (g.number == 1 && String(s, g, "NamespaceStatus", &v)) SetString(&status, "phase", v);
          if (g.number == 2) Expect(s, g, WireType::kLengthDelimited, "NamespaceStatus");
        });
        break;
      default: break;
    }
  }
  return Finish(r,
                {{"apiVersion", "v1"},
                 {"kind", "Namespace"},
                 {"metadata", std::move(meta)},
                 {"spec", std::move(spec)},
                 {"status", std::move(status)}},
                error);
}

std::optional<json> DecodeDeleteOptions(std::string_view raw, std::string* error) {
  json out = {{"apiVersion", "v1"}, {"kind", "DeleteOptions"}};
  WireReader r(raw);
  WireField f;
  while (r.Next(&f)) {
    std::string s;
    switch (f.number) {
      case 1:
        if (Expect(r, f, WireType::kVarint, "DeleteOptions")) {
          out["gracePeriodSeconds"] = static_cast<int64_t>(f.value);
        }
        break;
      case 2: {
        json pre = json::object();
        if (Message(r, f, "Preconditions", [&](WireReader& p, const WireField& g) {
              std::string v;
              if (g.number == 1 && String(p, g, "Preconditions", &v)) pre["uid"] = v;
              if (g.number == 2 && String(p, g, "Preconditions", &v)) pre["resourceVersion"] = v;
            })) {
          out["preconditions"] = std::move(pre);
        }
        break;
      }
      case 3:
        if (Expect(r, f, WireType::kVarint, "DeleteOptions")) out["orphanDependents"] = f.value != 0;
        break;
      case 4:
        if (String(r, f, "DeleteOptions", &s)) SetString(&out, "propagationPolicy", s);
        break;
      case 5:
        if (String(r, f, "DeleteOptions", &s)) out["dryRun"].push_back(s);
        break;
      default: break;
    }
  }
  return Finish(r, std::move(out), error);
}

}  // namespace routestatus::apiserver
