#include "controller/clear.h"

#include <glog/logging.h>

#include "base/token_bucket.h"
#include "kubeclient/route.h"

namespace routestatus::controller {


namespace {

// Removes our entry from one route (given as listed). Returns OK when the
// route is clear (written, already clear, or gone).
Status ClearOne(kubeclient::KubeClient& client, TokenBucket& limiter, const ClearOptions& options,
                nlohmann::json object, ClearProgress* progress) {
  for (int attempt = 0;; ++attempt) {
    auto route = kubeclient::RouteFromJson(object);
    if (!route.ok()) return route.status();
    if (!route->FindIngress(options.router_name)) return Status::Ok();
    auto body = kubeclient::IngressStatusPatch(*route, options.router_name, std::nullopt);
    if (!body.ok()) return body.status();
    limiter.Acquire();
    auto result = client.MergePatchStatus(kubeclient::RoutesResource(),
                                          route->metadata.namespace_name, route->metadata.name,
                                          *body);
    if (result.ok()) {
      ++progress->cleared;
      return Status::Ok();
    }
    if (result.status().code() == StatusCode::kNotFound) return Status::Ok();
    if (result.status().code() != StatusCode::kConflict) return result.status();
    ++progress->conflicts;
    if (attempt >= options.max_conflict_retries) return result.status();
    auto fresh = client.Get(kubeclient::RoutesResource(), route->metadata.namespace_name,
                            route->metadata.name);
    if (!fresh.ok()) {
      if (fresh.status().code() == StatusCode::kNotFound) return Status::Ok();
      return fresh.status();
    }
    object = std::move(fresh).value();
  }
}

}  // namespace

StatusOr<ClearProgress> ClearRouterEntries(
    kubeclient::KubeClient& client, const Clock& clock, const ClearOptions& options,
    const std::function<void(const ClearProgress&)>& progress) {
  if (options.router_name.empty()) {
    return Status(StatusCode::kInvalid, "clear: a router name is required");
  }
  // Burst 1: evenly spaced PUTs, idle time not banked.
  TokenBucket limiter(clock, options.qps, /*burst=*/1);
  ClearProgress p;
  Status last_error;
  kubeclient::ListOptions list;
  list.label_selector = options.label_selector;
  list.limit = options.page_size;
  int restarts = 0;
  while (true) {
    auto page = client.List(kubeclient::RoutesResource(), options.namespace_name, list);
    if (!page.ok()) {
      // Why restart: an expired continue token (410) leaves no way to resume
      // the same list; starting over is safe because clearing is idempotent.
      if (page.status().code() == StatusCode::kGone && restarts < options.max_list_restarts) {
        ++restarts;
        LOG(WARNING) << "clear: list expired, starting over (" << restarts << ")";
        list.continue_token.clear();
        continue;
      }
      p.done = true;
      if (progress) progress(p);
      return page.status();
    }
    for (auto& item : page->items) {
      ++p.scanned;
      Status s = ClearOne(client, limiter, options, std::move(item), &p);
      if (!s.ok()) {
        ++p.failed;
        last_error = s;
        LOG(WARNING) << "clear: route left with entry " << options.router_name << ": "
                     << s.ToString();
      }
    }
    if (page->continue_token.empty()) break;
    list.continue_token = page->continue_token;
    if (progress) progress(p);
  }
  p.done = true;
  if (progress) progress(p);
  if (p.failed > 0) {
    return Status(last_error.code(), std::to_string(p.failed) + " routes still have entry " +
                                         options.router_name + " (run clear again): " +
                                         last_error.message());
  }
  return p;
}

}  // namespace routestatus::controller
