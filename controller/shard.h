#pragma once

#include <string>
#include <vector>

#include "kubeclient/cache/store.h"
#include "kubeclient/label_selector.h"
#include "kubeclient/route.h"

namespace routestatus::controller {

// Which routes a router name serves. Value type. Empty selectors and an
// empty namespace list select everything.
struct ShardOptions {
  kubeclient::LabelSelector route_selector;
  kubeclient::LabelSelector namespace_selector;
  std::vector<std::string> namespaces;  // empty = every namespace
};

// Why a route is in or out of a shard (ShardFilter::Check). Names are
// stable (ShardRuleName).
enum class ShardRule {
  kInShard,            // "in-shard"
  kRouteLabels,        // "route-labels": the route selector does not match its labels
  kNamespaceList,      // "namespace-list": its namespace is not in the namespace list
  kNamespaceLabels,    // "namespace-labels": the namespace selector does not match
  kNamespaceNotFound,  // "namespace-not-found": a namespace selector is set and the
                       // namespace is not in the namespace cache
};
const char* ShardRuleName(ShardRule rule);

// Decides shard membership of a route. With a non-empty namespace selector it
// reads namespace labels from `namespaces` (the namespace informer's cache,
// which must outlive the filter); a namespace missing from that cache is
// outside the shard. Thread-safe (read-only after construction).
class ShardFilter {
 public:
  ShardFilter(ShardOptions options,
              const kubeclient::cache::ObjectStore<kubeclient::Namespace>* namespaces);

  // True when `route` belongs to this shard (our entry belongs on it).
  bool InShard(const kubeclient::Route& route) const { return Check(route) == ShardRule::kInShard; }
  // InShard, saying which selector excluded the route (the first that does,
  // in the order route labels, namespace list, namespace labels).
  ShardRule Check(const kubeclient::Route& route) const;
  const ShardOptions& options() const { return options_; }
  // True when namespace labels matter (the controller then needs the
  // namespace informer).
  bool NeedsNamespaces() const { return !options_.namespace_selector.Empty(); }
  // False while namespace labels matter and the namespace cache misses
  // changes (ObjectStore::IsCurrent: relisting after a 410 Gone).
  bool NamespacesCurrent() const {
    return !NeedsNamespaces() || (namespaces_ != nullptr && namespaces_->IsCurrent());
  }

 private:
  bool InNamespaceList(const std::string& ns) const;

  ShardOptions options_;
  const kubeclient::cache::ObjectStore<kubeclient::Namespace>* namespaces_;
};

}  // namespace routestatus::controller
