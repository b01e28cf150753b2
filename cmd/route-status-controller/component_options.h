#pragma once

#include <string>

#include "base/status.h"
#include "cmd/route-status-controller/config.h"
#include "conflict/contention_tracker.h"
#include "controller/admission.h"
#include "controller/clear.h"
#include "controller/shard.h"
#include "kubeclient/cache/reflector.h"
#include "kubeclient/rest/kube_config.h"
#include "kubeclient/rest/rest_kube_client.h"
#include "lease/backoff_write_lease.h"
#include "lease/lease_presets.h"

namespace routestatus::cmd {

// The option structs of every component, derived from one validated
// Options. Value type. The process-level settings (workers, resync,
// metrics address, shutdown timeout, logging) stay in Options.
struct ComponentOptions {
  kubeclient::rest::ConfigSources config_sources;  // where to find the API server
  kubeclient::rest::RestOptions rest;
  kubeclient::cache::InformerOptions route_informer;
  kubeclient::cache::InformerOptions namespace_informer;
  controller::AdmissionOptions admission;
  controller::ShardOptions shard;
  lease::WriteLeaseOptions lease;
  conflict::ContentionTrackerOptions tracker;
  controller::ClearOptions clear;
};

// Maps `options` (already validated by ParseConfig) onto the components.
// `env` supplies KUBERNETES_SERVICE_HOST/PORT, KUBECONFIG and HOME for the
// kubeconfig resolution. kInvalid if a selector does not parse. Pure;
// thread-safe.
StatusOr<ComponentOptions> BuildComponentOptions(const Options& options,
                                                             const EnvMap& env);

// Applies --server / --token over a resolved configuration (no-op when unset).
void ApplyConnectionOverrides(const Options& options, kubeclient::rest::RestConfig& config);

}  // namespace routestatus::cmd
