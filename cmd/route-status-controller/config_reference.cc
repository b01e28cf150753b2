#include "cmd/route-status-controller/config_reference.h"

#include <sstream>
#include <string_view>

#include "cmd/route-status-controller/config.h"

namespace routestatus::cmd {
namespace {

// Table cell text: `|` would end the cell and a newline the row; outside a
// code span, `<...>` would be read as an HTML tag ("<subdomain>.<domain>").
std::string Escape(std::string_view text, bool in_code) {
  std::string out;
  for (char c : text) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n') {
      out += ' ';
    } else if (!in_code && c == '<') {
      out += "&lt;";
    } else if (!in_code && c == '>') {
      out += "&gt;";
    } else {
      out += c;
    }
  }
  return out;
}

std::string Cell(std::string_view text) { return Escape(text, false); }
std::string Code(std::string_view text) { return "`" + Escape(text, true) + "`"; }

}  // namespace

std::string ConfigurationReferenceMarkdown() {
  std::ostringstream out;
  out << "| flag | YAML key | environment | default | what it does |\n"
      << "|---|---|---|---|---|\n";
  for (const OptionReference& row : OptionReferences()) {
    std::string env;
    for (const std::string& e : row.env) env += (env.empty() ? "" : ", ") + Code(e);
    std::string type = row.type.empty() ? "" : row.type.substr(1);  // "=string" -> "string"
    out << "| " << Code(row.flag) << (type.empty() ? "" : " " + Cell(type)) << " | "
        << Code(row.name) << " | " << env << " | "
        << (row.default_value.empty() ? std::string("\"\"") : Code(row.default_value)) << " | "
        << Cell(row.help) << " |\n";
  }
  return out.str();
}

std::optional<std::string> ReplaceGeneratedOptions(const std::string& document,
                                                   const std::string& table) {
  size_t begin = document.find(kOptionsBeginMarker);
  if (begin == std::string::npos) return std::nullopt;
  size_t body = begin + std::string_view(kOptionsBeginMarker).size();
  size_t end = document.find(kOptionsEndMarker, body);
  if (end == std::string::npos) return std::nullopt;
  return document.substr(0, body) + "\n" + table + document.substr(end);
}

}  // namespace routestatus::cmd
