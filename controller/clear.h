#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "base/clock.h"
#include "base/status.h"
#include "kubeclient/kube_client.h"

namespace routestatus::controller {

// Options of ClearRouterEntries.
struct ClearOptions {
  std::string router_name;      // whose entries to remove (required)
  std::string namespace_name;   // "" = every namespace
  std::string label_selector;   // limit to matching routes
  int64_t page_size = 500;      // list page size
  double qps = 20;              // status PUTs per second (<= 0: unlimited)
  int max_conflict_retries = 5; // re-read + re-PUT attempts per route on 409
  int max_list_restarts = 3;    // relists after an expired continue token
};

// Progress of ClearRouterEntries. Value type.
struct ClearProgress {
  int64_t scanned = 0;    // routes looked at
  int64_t cleared = 0;    // routes whose entry we removed
  int64_t conflicts = 0;  // 409s (each retried after a re-read)
  int64_t failed = 0;     // routes left with our entry (see the log)
  bool done = false;      // the last callback of the run
};

// Removes `options.router_name`'s status.ingress entry from every route
// (decommissioning a router name). Lists routes page by page, and for each
// route that has our entry writes .../status without it (a merge patch of
// status.ingress, kubeclient::IngressStatusPatch), guarded by the listed
// resourceVersion; a 409 re-reads the route and tries again; a 404
// means nothing to do. Other routers' entries and every other field are kept.
// Idempotent and resumable: a re-run skips routes already clear. Calls
// `progress` after each page and once at the end (done = true).
// Returns OK when every route is clear, else the last error (with `failed`
// routes counted); the caller may simply run it again. Blocks; not
// thread-safe with itself.
StatusOr<ClearProgress> ClearRouterEntries(
    kubeclient::KubeClient& client, const Clock& clock, const ClearOptions& options,
    const std::function<void(const ClearProgress&)>& progress);

}  // namespace routestatus::controller
