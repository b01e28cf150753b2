#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "kubeclient/clock.h"
#include "kubeclient/kube_client.h"
#include "kubeclient/rest/kube_config.h"
#include "kubeclient/status.h"

namespace routestatus::kubeclient::rest {

// Tunables of the REST client.
struct RestOptions {
  // Client-side rate limit (token bucket) over every request, watches
  // included. qps <= 0 disables it.
  double qps = 50;
  int burst = 100;
  // Inactivity timeout of a non-watch request (cpprest's timer restarts on
  // every byte received).
  std::chrono::seconds request_timeout{30};
  // A watch's inactivity timeout is its timeoutSeconds plus this margin (or
  // watch_idle_timeout when the watch has no timeoutSeconds).
  std::chrono::seconds watch_timeout_margin{30};
  std::chrono::seconds watch_idle_timeout{600};
  // "" = DefaultUserAgent(version).
  std::string user_agent;
  std::string version = "dev";
  // A single watch event line larger than this is kInvalid.
  size_t max_watch_line_bytes = 16 << 20;
  // 429 (and 5xx with Retry-After): the client waits Retry-After (1 s when
  // absent), capped at max_retry_wait, on the Clock and retries up to
  // max_retries times; after that it returns kTooManyRequests (or
  // kUnavailable) with retry_after set. max_retries 0 = never retry.
  int max_retries = 3;
  std::chrono::milliseconds max_retry_wait{10000};
};

// Builds the cpprestsdk-backed KubeClient for `config`. TLS material (CA,
// client certificate and key, files or data) is loaded and checked here:
// a bad or unreadable one is kInvalid naming it. `clock` must outlive the
// client. The client is thread-safe; every method returns errors as values
// (never throws): transport failures are kUnavailable (or kTimeout), HTTP
// errors are decoded with StatusFromResponse. Watch streams stay valid after
// the client is destroyed.
StatusOr<std::unique_ptr<KubeClient>> NewRestKubeClient(const RestConfig& config, const Clock& clock,
                                                        RestOptions options = {});

}  // namespace routestatus::kubeclient::rest
