#include "controller/shard.h"

#include <algorithm>

namespace routestatus::controller {

ShardFilter::ShardFilter(ShardOptions options,
                         const kubeclient::cache::ObjectStore<kubeclient::Namespace>* namespaces)
    : options_(std::move(options)), namespaces_(namespaces) {}

bool ShardFilter::NamespaceSelected(const std::string& ns,
                                    const kubeclient::Labels& labels) const {
  if (!options_.namespaces.empty() &&
      std::find(options_.namespaces.begin(), options_.namespaces.end(), ns) ==
          options_.namespaces.end()) {
    return false;
  }
  return options_.namespace_selector.Empty() || options_.namespace_selector.Matches(labels);
}

bool ShardFilter::InShard(const kubeclient::Route& route) const {
  if (!options_.route_selector.Empty() && !options_.route_selector.Matches(route.metadata.labels)) {
    return false;
  }
  const std::string& ns = route.metadata.namespace_name;
  if (options_.namespace_selector.Empty()) return NamespaceSelected(ns, {});
  if (namespaces_ == nullptr) return false;
  auto namespace_obj = namespaces_->Get(ns);
  if (!namespace_obj) return false;
  return NamespaceSelected(ns, namespace_obj->metadata.labels);
}

}  // namespace routestatus::controller
