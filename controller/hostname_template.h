#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kubeclient/route.h"

namespace routestatus::controller {

// Expands a router's hostname template (--hostname-template, openshift-router's
// ROUTER_SUBDOMAIN) for one route as openshift-router does: shell-style
// `$key` and `${key}` (Go's os.Expand syntax), keys `name` and `namespace`,
// then the quotes (" and ') around the result trimmed. nullopt when the
// template names any other key: openshift-router then leaves the route's
// host as it was (so a route without a host gets NoHostValue). Pure.
std::optional<std::string> ExpandHostnameTemplate(std::string_view tmpl,
                                                  const kubeclient::ObjectMeta& meta);

// The keys of `tmpl` that ExpandHostnameTemplate does not know, in order
// (for a start-up warning: with any of them no route gets a host from the
// template). Pure.
std::vector<std::string> UnknownTemplateKeys(std::string_view tmpl);

}  // namespace routestatus::controller
