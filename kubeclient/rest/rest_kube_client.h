#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "base/status.h"
#include "kubeclient/kube_client.h"
#include "kubeclient/rest/kube_config.h"
#include "kubeclient/rest/socket_connection.h"

namespace routestatus::kubeclient::rest {

// Receives the REST client's events, for metrics. Called from request
// threads; implementations must be thread-safe and quick.
class RestObserver {
 public:
  virtual ~RestObserver() = default;
  // A request went out again on another connection: "stale_connection" (a
  // pooled connection the server had closed, found before sending),
  // "connection_failure" (a safe request whose connection failed before a
  // response), "unauthorized" (401 with exec credentials: plugin re-run).
  virtual void OnConnectionRetry(std::string_view reason) = 0;
  // An exec credential plugin ran: "ok", "error" or "not_found".
  virtual void OnExecPlugin(std::string_view result) = 0;
  // A quiet watch asked the server whether it is there (RestOptions::
  // watch_probe_after), at `sent`: Ok when it answered, else the failure.
  virtual void OnLivenessProbe(const Status& outcome, SteadyTime sent) {
    (void)outcome;
    (void)sent;
  }
  // A 503's Retry-After wait asked the server's /readyz whether it is ready
  // (RestOptions::readiness_probe_interval): `ready` when it answered 200.
  virtual void OnReadinessProbe(bool ready) { (void)ready; }
};

// Tunables of the REST client.
struct RestOptions {
  // Client-side rate limit (token bucket) over every request, watches
  // included. qps <= 0 disables it.
  double qps = 50;
  int burst = 100;
  // Inactivity timeout of a non-watch request (cpprest's timer restarts on
  // every byte received).
  std::chrono::seconds request_timeout{30};
  // A watch the server has not ended by its timeoutSeconds plus this margin
  // ends kTimeout (kube-apiserver ends every watch at its timeoutSeconds).
  std::chrono::seconds watch_timeout_margin{30};
  // A new connection must be established (TCP connect, TLS handshake, an
  // HTTPS proxy's CONNECT) and the request written within this long, or the
  // attempt ends kTimeout. Why 2 s: a server that accepts TCP and never
  // completes TLS, or a blackholed path, is reported about a second after
  // that instead of after request_timeout; a loaded kube-apiserver still
  // completes a handshake well within it (client-go allows 10 s, but its
  // HTTP/2 pings find dead connections; we have only this and the watch
  // silence below). 0 disables it.
  std::chrono::milliseconds connect_timeout{2000};
  // A quiet watch is healthy: kube-apiserver's watch cache sends a watcher
  // nothing, bookmarks included, until its resource changes or etcd's
  // progress notification moves the cache past the watch's start (every
  // 10 minutes by default). So silence never ends a watch. Instead, after
  // watch_probe_after of silence, when this client has heard nothing from
  // the server on any connection either, the watch asks the server
  // something cheap on a new connection (GET /version, no credentials:
  // any answer will do), as client-go's HTTP/2 transport pings a
  // connection after 30 s without reading. Answered: the watch stays open.
  // No answer within watch_probe_timeout: the watch ends kTimeout (the
  // server is unreachable; the caller re-opens it). A dead connection to a
  // reachable server is found by TCP keepalive below. See docs/design.md
  // section 6. Zero disables the probe.
  std::chrono::seconds watch_probe_after{30};
  std::chrono::seconds watch_probe_timeout{10};
  // TCP keepalive of the watch and probe connections: a connection whose
  // peer stopped answering fails within idle + interval x count (60 s).
  KeepAlive keepalive;
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
  // During the wait before retrying a 503 (a server starting or stopping:
  // kube-apiserver answers a custom resource 503 "server is starting" with
  // Retry-After 10 until its CRD informer has synced, about a second after
  // it listens again), the client asks the server's /readyz about this
  // often (jittered x[0.5, 1.5)) and retries as soon as it answers 200.
  // 0 = wait out the Retry-After.
  std::chrono::milliseconds readiness_probe_interval{500};
  // Seeds that jitter (tests); 0 = a random seed, so replicas differ.
  uint64_t seed = 0;
  // An exec credential plugin running longer than this is killed (its
  // request fails kUnauthorized).
  std::chrono::milliseconds exec_timeout{60000};
  RestObserver* observer = nullptr;  // not owned; must outlive the client
};

// Builds the cpprestsdk-backed KubeClient for `config`. TLS material (CA,
// client certificate and key, files or data) is loaded and checked here:
// a bad or unreadable one is kInvalid naming it. When the config names a
// CA, only that CA is trusted (never the system's roots); without one the
// system's roots are. insecure-skip-tls-verify logs a warning, and with a
// CA it is kInvalid (as in client-go). tls-server-name is the name sent as
// SNI and verified in the certificate (and the Host header). The proxy is
// chosen as client-go does (ChooseProxy: proxy-url, else HTTPS_PROXY /
// HTTP_PROXY and NO_PROXY; HTTP CONNECT for https servers). Credentials: token, token file
// (re-read on rotation), client certificate, or an exec plugin
// (ExecCredentialProvider). `clock` must outlive the client. The client is
// thread-safe; every method returns errors as values (never throws):
// transport failures are kUnavailable (or kTimeout), HTTP errors are
// decoded with StatusFromResponse, and after Shutdown() everything is
// kCancelled. A pooled connection the server closed while idle is detected
// before use and replaced; a connection failure is retried once, at once,
// for reads and resourceVersion-guarded writes. Watches run on sockets the
// client owns (SocketWatchStream), so cancelling one at any moment is safe;
// other requests are abandoned, never cancelled mid-read, when the client
// stops waiting for them. Watch streams stay valid after the client is
// destroyed (`clock` and the observer must outlive them too). A new
// connection that is not established within connect_timeout and a watch
// whose response does not start within request_timeout end kTimeout; a
// quiet watch ends kTimeout only when the server does not answer a probe
// either (watch_probe_after).
StatusOr<std::unique_ptr<KubeClient>> NewRestKubeClient(const RestConfig& config, const Clock& clock,
                                                        RestOptions options = {});

}  // namespace routestatus::kubeclient::rest
