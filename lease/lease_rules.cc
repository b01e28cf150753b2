#include "lease/lease_rules.h"

#include <utility>

namespace routestatus::lease {
namespace {

// Each rule's name and its switch, in LeaseRules' order.
std::vector<std::pair<const char*, bool LeaseRules::*>> RuleTable() {
  return {
      {"own-write-samples", &LeaseRules::own_write_samples},
      {"sample-guard", &LeaseRules::sample_guard},
      {"held-key-samples", &LeaseRules::held_key_samples},
      {"stretch-caps", &LeaseRules::stretch_caps},
      {"expiry-waits-for-takeover", &LeaseRules::expiry_waits_for_takeover},
      {"lead-uncontested", &LeaseRules::lead_uncontested},
  };
}

}  // namespace

std::vector<std::string> LeaseRuleNames() {
  std::vector<std::string> names;
  for (const auto& [name, member] : RuleTable()) names.emplace_back(name);
  return names;
}

std::optional<LeaseRules> LeaseRulesOff(LeaseRules rules, std::string_view off) {
  if (off.empty() || off == "none") return rules;
  const auto table = RuleTable();
  if (off == "all") {
    for (const auto& [name, member] : table) rules.*member = false;
    return rules;
  }
  while (!off.empty()) {
    const size_t comma = off.find(',');
    const std::string_view name = off.substr(0, comma);
    bool found = false;
    for (const auto& [rule, member] : table) {
      if (name == rule) {
        rules.*member = false;
        found = true;
      }
    }
    if (!found) return std::nullopt;
    off = comma == std::string_view::npos ? std::string_view() : off.substr(comma + 1);
  }
  return rules;
}

}  // namespace routestatus::lease
