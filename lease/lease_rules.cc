#include "lease/lease_rules.h"

#include <algorithm>
#include <utility>

namespace routestatus::lease {
namespace {

// Each rule's name and its switch, in LeaseRules' order.
const std::pair<const char*, bool LeaseRules::*> kRules[] = {
    {"own-write-samples", &LeaseRules::own_write_samples},
    {"sample-guard", &LeaseRules::sample_guard},
    {"held-key-samples", &LeaseRules::held_key_samples},
    {"stretch-caps", &LeaseRules::stretch_caps},
    {"expiry-waits-for-takeover", &LeaseRules::expiry_waits_for_takeover},
    {"lead-uncontested", &LeaseRules::lead_uncontested},
    {"late-peer-samples", &LeaseRules::late_peer_samples},
};

}  // namespace

std::vector<std::string> LeaseRuleNames() {
  std::vector<std::string> names;
  for (const auto& [name, member] : kRules) names.emplace_back(name);
  return names;
}

std::optional<LeaseRules> LeaseRulesOff(LeaseRules rules, std::string_view off) {
  if (off.empty() || off == "none") return rules;
  while (!off.empty()) {
    const std::string_view name = off.substr(0, off.find(','));
    off.remove_prefix(std::min(off.size(), name.size() + 1));
    bool found = false;
    for (const auto& [rule, member] : kRules) {
      if (name == rule || name == "all") {
        rules.*member = false;
        found = true;
      }
    }
    if (!found) return std::nullopt;
  }
  return rules;
}

}  // namespace routestatus::lease
