#include "e2e/harness/callgrind_profile.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <sstream>
#include <unordered_map>

namespace routestatus::e2e {
namespace {

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// The first unsigned number of `s` (leading blanks skipped); 0 if none.
uint64_t FirstNumber(std::string_view s) {
  size_t i = s.find_first_not_of(' ');
  if (i == std::string_view::npos) return 0;
  return std::strtoull(std::string(s.substr(i)).c_str(), nullptr, 10);
}

// A name of a fn=/cfn= line: "(id) name" defines id, "(id)" refers to a
// definition, anything else is the name itself (no compression).
std::string ResolveName(std::string_view value, std::unordered_map<std::string, std::string>* ids) {
  if (value.empty() || value[0] != '(') return std::string(value);
  const size_t close = value.find(')');
  if (close == std::string_view::npos) return std::string(value);
  std::string id(value.substr(1, close - 1));
  std::string_view rest = value.substr(close + 1);
  if (!rest.empty() && rest[0] == ' ') rest.remove_prefix(1);
  if (rest.empty()) return (*ids)[id];
  (*ids)[id] = std::string(rest);
  return std::string(rest);
}

}  // namespace

StatusOr<CallgrindProfile> ParseCallgrindProfile(std::string_view text) {
  CallgrindProfile profile;
  std::unordered_map<std::string, std::string> fn_ids;  // fn= and cfn= share the ids
  std::string fn;
  size_t position_columns = 1;  // "positions: line" unless the header says otherwise
  bool call_cost_next = false;  // the cost line after calls= is the call's (inclusive)
  bool has_totals = false;
  for (std::string_view rest = text; !rest.empty();) {
    const std::string_view line = rest.substr(0, rest.find('\n'));
    rest.remove_prefix(std::min(rest.size(), line.size() + 1));
    if (line.empty() || line[0] == '#') continue;
    const char c = line[0];
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '+' || c == '-' || c == '*') {
      if (call_cost_next) {
        call_cost_next = false;
        continue;
      }
      std::istringstream in{std::string(line)};
      std::string token;
      for (size_t i = 0; i < position_columns && in >> token;) ++i;
      uint64_t cost = 0;
      if (in >> cost) profile.self[fn] += cost;
      continue;
    }
    if (StartsWith(line, "fn=")) {
      fn = ResolveName(line.substr(3), &fn_ids);
    } else if (StartsWith(line, "cfn=")) {
      ResolveName(line.substr(4), &fn_ids);
    } else if (StartsWith(line, "calls=")) {
      call_cost_next = true;
    } else if (StartsWith(line, "positions:")) {
      std::istringstream in{std::string(line.substr(10))};
      std::string word;
      position_columns = 0;
      while (in >> word) ++position_columns;
    } else if (StartsWith(line, "totals:")) {
      profile.instructions = FirstNumber(line.substr(7));
      has_totals = true;
    } else if (StartsWith(line, "desc: Trigger:")) {
      std::string_view t = line.substr(14);
      if (!t.empty() && t[0] == ' ') t.remove_prefix(1);
      profile.trigger = std::string(t);
    }
  }
  if (!has_totals) {
    return Status(StatusCode::kInvalid, "no totals: line (not a callgrind profile, or one "
                                        "still being written)");
  }
  return profile;
}

std::vector<std::pair<std::string, double>> LargestGrowth(const CallgrindProfile& small,
                                                          const CallgrindProfile& large,
                                                          double units, size_t most) {
  std::vector<std::pair<std::string, double>> growth;
  for (const auto& [name, cost] : large.self) {
    auto it = small.self.find(name);
    const double before = it == small.self.end() ? 0 : static_cast<double>(it->second);
    const double grew = static_cast<double>(cost) - before;
    if (grew > 0) growth.emplace_back(name, grew / units);
  }
  std::sort(growth.begin(), growth.end(),
            [](const auto& a, const auto& b) { return a.second > b.second; });
  if (growth.size() > most) growth.resize(most);
  return growth;
}

}  // namespace routestatus::e2e
