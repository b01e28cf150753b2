#include "apiserver/field_selector.h"

namespace routestatus::apiserver {

namespace {

std::string Trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return "";
  size_t e = s.find_last_not_of(" \t");
  return std::string(s.substr(b, e - b + 1));
}

}  // namespace

std::optional<FieldSelector> FieldSelector::Parse(std::string_view text, std::string* error) {
  FieldSelector sel;
  if (Trim(text).empty()) return sel;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string_view part =
        text.substr(start, comma == std::string_view::npos ? std::string_view::npos
                                                           : comma - start);
    Requirement req;
    size_t pos;
    size_t op_len;
    if ((pos = part.find("!=")) != std::string_view::npos) {
      req.equals = false;
      op_len = 2;
    } else if ((pos = part.find("==")) != std::string_view::npos) {
      op_len = 2;
    } else if ((pos = part.find('=')) != std::string_view::npos) {
      op_len = 1;
    } else {
      *error = "invalid selector: '" + std::string(text) + "'; can't understand '" +
               std::string(part) + "'";
      return std::nullopt;
    }
    req.field = Trim(part.substr(0, pos));
    req.value = Trim(part.substr(pos + op_len));
    if (req.field != "metadata.name" && req.field != "metadata.namespace") {
      *error = "field label not supported: " + req.field;
      return std::nullopt;
    }
    sel.requirements_.push_back(std::move(req));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return sel;
}

bool FieldSelector::Matches(const std::string& ns, const std::string& name) const {
  for (const auto& r : requirements_) {
    const std::string& actual = r.field == "metadata.name" ? name : ns;
    if ((actual == r.value) != r.equals) return false;
  }
  return true;
}

std::optional<std::string> FieldSelector::RequiredNamespace() const {
  for (const auto& r : requirements_) {
    if (r.field == "metadata.namespace" && r.equals) return r.value;
  }
  return std::nullopt;
}

}  // namespace routestatus::apiserver
