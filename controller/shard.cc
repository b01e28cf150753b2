#include "controller/shard.h"

#include <algorithm>

namespace routestatus::controller {

ShardFilter::ShardFilter(ShardOptions options,
                         const kubeclient::cache::ObjectStore<kubeclient::Namespace>* namespaces)
    : options_(std::move(options)), namespaces_(namespaces) {}

bool ShardFilter::InNamespaceList(const std::string& ns) const {
  return options_.namespaces.empty() ||
         std::find(options_.namespaces.begin(), options_.namespaces.end(), ns) !=
             options_.namespaces.end();
}

ShardRule ShardFilter::Check(const kubeclient::Route& route) const {
  if (!options_.route_selector.Empty() && !options_.route_selector.Matches(route.metadata.labels)) {
    return ShardRule::kRouteLabels;
  }
  const std::string& ns = route.metadata.namespace_name;
  if (!InNamespaceList(ns)) return ShardRule::kNamespaceList;
  if (options_.namespace_selector.Empty()) return ShardRule::kInShard;
  auto namespace_obj = namespaces_ == nullptr ? nullptr : namespaces_->Get(ns);
  if (!namespace_obj) return ShardRule::kNamespaceNotFound;
  return options_.namespace_selector.Matches(namespace_obj->metadata.labels)
             ? ShardRule::kInShard
             : ShardRule::kNamespaceLabels;
}

const char* ShardRuleName(ShardRule rule) {
  switch (rule) {
    case ShardRule::kInShard: return "in-shard";
    case ShardRule::kRouteLabels: return "route-labels";
    case ShardRule::kNamespaceList: return "namespace-list";
    case ShardRule::kNamespaceLabels: return "namespace-labels";
    case ShardRule::kNamespaceNotFound: return "namespace-not-found";
  }
  return "unknown";
}

}  // namespace routestatus::controller
