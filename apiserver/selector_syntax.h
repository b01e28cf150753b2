#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace routestatus::apiserver {

// The syntax error kube-apiserver reports for a label selector, in its
// words ("unable to parse requirement: found '=', expected: identifier"),
// or nullopt if kube's lexer and parser accept its structure. Only the
// structure is checked (keys and values are checked by
// kubeclient::LabelSelector, whose words are used for those). Pure; thread-safe.
std::optional<std::string> LabelSelectorSyntaxError(std::string_view selector);

}  // namespace routestatus::apiserver
