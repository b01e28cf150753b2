#include "apiserver/media_type.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <vector>

namespace routestatus::apiserver {

namespace {

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t at = s.find(sep, start);
    out.push_back(s.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (at == std::string::npos) break;
    start = at + 1;
  }
  return out;
}

struct MediaRange {
  std::string type;
  std::map<std::string, std::string> params;
  double q = 1.0;
};

// The conversion a range asks for; nullopt if it asks for one we cannot do.
std::optional<ResponseFormat> FormatFor(const MediaRange& m) {
  if (m.type != "application/json" && m.type != "application/*" && m.type != "*/*") {
    return std::nullopt;
  }
  ResponseFormat f;
  auto as = m.params.find("as");
  if (as == m.params.end()) return f;
  auto g = m.params.find("g");
  auto v = m.params.find("v");
  if (g == m.params.end() || g->second != "meta.k8s.io" || v == m.params.end() ||
      (v->second != "v1" && v->second != "v1beta1")) {
    return std::nullopt;
  }
  if (as->second == "Table") {
    f.kind = ResponseFormat::Kind::kTable;
  } else if (as->second == "PartialObjectMetadata") {
    f.kind = ResponseFormat::Kind::kPartialObjectMetadata;
  } else if (as->second == "PartialObjectMetadataList") {
    f.kind = ResponseFormat::Kind::kPartialObjectMetadataList;
  } else {
    return std::nullopt;
  }
  f.api_version = "meta.k8s.io/" + v->second;
  return f;
}

}  // namespace

std::string ResponseFormat::ContentType() const {
  // Why: kube-apiserver names only the serializer's media type, also for
  // Table and PartialObjectMetadata answers (recorded in the golden files).
  return "application/json";
}

std::optional<ResponseFormat> NegotiateResponseFormat(const std::string& accept) {
  if (Trim(accept).empty()) return ResponseFormat{};
  std::vector<MediaRange> ranges;
  for (const std::string& clause : Split(accept, ',')) {
    std::vector<std::string> parts = Split(clause, ';');
    MediaRange m;
    m.type = Lower(Trim(parts[0]));
    if (m.type.empty()) continue;
    for (size_t i = 1; i < parts.size(); ++i) {
      std::string p = Trim(parts[i]);
      size_t eq = p.find('=');
      if (eq == std::string::npos) continue;
      std::string key = Lower(Trim(p.substr(0, eq)));
      std::string value = Trim(p.substr(eq + 1));
      if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
        value = value.substr(1, value.size() - 2);
      }
      if (key == "q") {
        m.q = std::strtod(value.c_str(), nullptr);
      } else {
        m.params[key] = value;
      }
    }
    if (m.q > 0) ranges.push_back(std::move(m));
  }
  std::stable_sort(ranges.begin(), ranges.end(),
                   [](const MediaRange& a, const MediaRange& b) { return a.q > b.q; });
  for (const auto& m : ranges) {
    std::optional<ResponseFormat> f = FormatFor(m);
    if (f) return f;
  }
  return std::nullopt;
}

const char* AcceptableMediaTypes() {
  return "application/json, application/json;as=Table;v=v1;g=meta.k8s.io, "
         "application/json;as=Table;v=v1beta1;g=meta.k8s.io, "
         "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io, "
         "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io";
}

}  // namespace routestatus::apiserver
