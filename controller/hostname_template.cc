#include "controller/hostname_template.h"

#include <functional>

namespace routestatus::controller {
namespace {

bool IsShellSpecial(char c) {
  return c == '*' || c == '#' || c == '$' || c == '@' || c == '!' || c == '?' || c == '-' ||
         (c >= '0' && c <= '9');
}

bool IsNameChar(char c) {
  return c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// The key that follows a '$' at the start of `s` and how many characters it
// spans, as Go's os.Expand reads it: "{key}", a single special character,
// or a run of name characters. A key of "" with a width means bad syntax
// ("${}" or an unclosed "${"), whose characters are dropped; "" with width
// 0 means the '$' is kept as text.
std::pair<std::string_view, size_t> ShellKey(std::string_view s) {
  if (s.empty()) return {"", 0};
  if (s[0] == '{') {
    if (s.size() > 2 && IsShellSpecial(s[1]) && s[2] == '}') return {s.substr(1, 1), 3};
    size_t close = s.find('}', 1);
    if (close == std::string_view::npos) return {"", 1};
    if (close == 1) return {"", 2};
    return {s.substr(1, close - 1), close + 1};
  }
  if (IsShellSpecial(s[0])) return {s.substr(0, 1), 1};
  size_t n = 0;
  while (n < s.size() && IsNameChar(s[n])) ++n;
  return {s.substr(0, n), n};
}

// Calls `on_key` for every key of `tmpl` and returns the expansion with the
// values it gives.
std::string Expand(std::string_view tmpl,
                   const std::function<std::string(std::string_view)>& on_key) {
  std::string out;
  for (size_t i = 0; i < tmpl.size(); ++i) {
    if (tmpl[i] != '$' || i + 1 >= tmpl.size()) {
      out += tmpl[i];
      continue;
    }
    auto [key, width] = ShellKey(tmpl.substr(i + 1));
    if (!key.empty()) {
      out += on_key(key);
    } else if (width == 0) {
      out += '$';
    }
    i += width;
  }
  return out;
}

std::string TrimQuotes(std::string s) {
  size_t begin = s.find_first_not_of("\"'");
  if (begin == std::string::npos) return "";
  size_t end = s.find_last_not_of("\"'");
  return s.substr(begin, end - begin + 1);
}

}  // namespace

std::optional<std::string> ExpandHostnameTemplate(std::string_view tmpl,
                                                  const kubeclient::ObjectMeta& meta) {
  bool unknown = false;
  std::string out = Expand(tmpl, [&](std::string_view key) -> std::string {
    if (key == "name") return std::string(meta.name);
    if (key == "namespace") return std::string(meta.namespace_name);
    unknown = true;
    return "";
  });
  if (unknown) return std::nullopt;
  return TrimQuotes(std::move(out));
}

std::vector<std::string> UnknownTemplateKeys(std::string_view tmpl) {
  std::vector<std::string> keys;
  Expand(tmpl, [&](std::string_view key) -> std::string {
    if (key != "name" && key != "namespace") keys.emplace_back(key);
    return "";
  });
  return keys;
}

}  // namespace routestatus::controller
