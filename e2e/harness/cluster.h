#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/clock.h"
#include "base/status.h"
#include "e2e/harness/prom_text.h"
#include "e2e/harness/route_factory.h"
#include "e2e/harness/subprocess.h"
#include "kubeclient/kube_client.h"
#include "kubeclient/rest/kube_config.h"
#include "kubeclient/route.h"

namespace routestatus::e2e {

// The knobs the suite reads from the environment. Value type.
struct E2eEnv {
  std::string kubeconfig;         // E2E_KUBECONFIG: "" = start local-apiserver
  std::string namespace_prefix;   // E2E_NAMESPACE_PREFIX (default "e2e-")
  std::string controller_binary;  // E2E_CONTROLLER_BINARY (default: the built one)
  std::string apiserver_binary;   // E2E_APISERVER_BINARY (default: the built one)
  std::string kubectl;            // E2E_KUBECTL (default "kubectl"), real clusters only
  int quiet_seconds = 5;          // E2E_QUIET_SECONDS (the figure is 15)
  bool full = false;              // E2E_FULL=1: full-size scale and stress runs
  bool keep_logs = false;         // E2E_KEEP_LOGS=1: keep the temp dir
  // Set by a test, not from the environment: local-apiserver serves HTTPS
  // (--tls). Its admin endpoints and /metrics are then out of the
  // harness's reach (they are read over plain HTTP): no faults, no
  // server-side write counts.
  bool apiserver_tls = false;
  // Set by a test: more local-apiserver flags (e.g. "--watch-list=gate-off").
  std::vector<std::string> apiserver_args;
};

// Reads E2eEnv from the process environment (defaults as documented above).
E2eEnv E2eEnvFromProcess();

// `argv` prefixed with `setpriv --pdeathsig KILL --` when setpriv exists, so
// that children die with the test process even when it is killed (e.g. by a
// ctest timeout) instead of leaking servers and controllers.
std::vector<std::string> DieWithParent(std::vector<std::string> argv);

// Status writes (PUT routes/status) as the API server counts them in
// apiserver_request_total, by result. Value type.
struct WriteCounts {
  double success = 0;   // 2xx
  double conflict = 0;  // 409
  double other = 0;     // every other code (faults included)
  double total() const { return success + conflict + other; }
  WriteCounts operator-(const WriteCounts& o) const {
    return {success - o.success, conflict - o.conflict, other - o.other};
  }
};

// Writes counted by the API server's apiserver_request_total. Value type.
struct ServerWrites {
  double status_ok = 0;        // PUT/PATCH routes/status 2xx
  double status_conflict = 0;  // ... 409
  double status_other = 0;     // ... other codes
  double other_writes = 0;     // every other write verb (POST/PUT/PATCH/DELETE/APPLY of anything)
  double status_attempts() const { return status_ok + status_conflict + status_other; }
};
ServerWrites ServerWritesFromSamples(const std::vector<PromSample>& samples);

// `local-apiserver` as a child process (dying with this process) on a free
// loopback port, writing its kubeconfig to `dir`/kubeconfig and its log to
// `dir`/local-apiserver.log. Not thread-safe: one owner; the destructor
// kills it if still running.
class LocalApiServer {
 public:
  // Starts `binary` (default: E2eEnvFromProcess().apiserver_binary), over
  // HTTPS with a self-signed certificate when `tls`.
  explicit LocalApiServer(const std::string& dir, const std::string& binary = "",
                          bool tls = false, const std::vector<std::string>& args = {});
  // False (with the log in *error) if it did not print its URL in time.
  bool WaitStarted(std::chrono::milliseconds timeout, std::string* error);
  const std::string& url() const { return url_; }
  int port() const { return port_; }
  const std::string& kubeconfig() const { return kubeconfig_; }
  pid_t pid() const { return process_->pid(); }
  std::string ReadLog() const { return process_->ReadLog(); }
  // Writes so far, from its /metrics (zeros when unreachable).
  ServerWrites Writes() const;
  // SIGTERM, then SIGKILL after `grace`; the exit code.
  int Stop(std::chrono::milliseconds grace = std::chrono::seconds(5)) {
    return process_->Stop(grace);
  }

 private:
  std::string kubeconfig_;
  std::string url_;
  int port_ = 0;
  std::unique_ptr<Subprocess> process_;
};

// Reads route `ns`/`name`, applies `mutate` to its JSON and PUTs it (the
// status subresource when `status`); retries on 409 (bounded). Thread-safe.
StatusOr<nlohmann::json> UpdateRouteWith(
    kubeclient::KubeClient& client, const std::string& ns, const std::string& name,
    const std::function<void(nlohmann::json&)>& mutate, bool status = false);

// An API server for one test: by default a fresh `local-apiserver` process on
// 127.0.0.1 (port picked at run time), or with E2E_KUBECONFIG any cluster,
// used unchanged (the test's objects live in namespaces it creates and deletes).
// Gives a KubeClient, counts requests from the server's own
// apiserver_request_total, and (embedded only) injects faults through the
// server's admin endpoints. Not thread-safe except where noted.
class TestCluster {
 public:
  // Starts (or connects to) the cluster. On failure returns nullptr and sets
  // *error.
  static std::unique_ptr<TestCluster> Start(const E2eEnv& env, std::string* error);
  ~TestCluster();
  TestCluster(const TestCluster&) = delete;
  TestCluster& operator=(const TestCluster&) = delete;

  bool embedded() const { return apiserver_ != nullptr; }
  // The embedded server's loopback port (its /metrics is plain HTTP); 0 on
  // a real cluster.
  int apiserver_port() const { return apiserver_port_; }
  const E2eEnv& env() const { return env_; }
  const std::string& kubeconfig() const { return kubeconfig_; }
  // A temp dir for logs and files of this test (removed unless kept).
  const std::string& temp_dir() const { return temp_dir_; }
  // Keeps the temp dir (logs) after the test, e.g. when it failed.
  void KeepTempDir() { env_.keep_logs = true; }
  // Thread-safe (the client is).
  kubeclient::KubeClient& client() { return *client_; }
  const Clock& clock() const { return clock_; }

  // Creates a namespace named prefix + `base` (+ a random suffix on a real
  // cluster), labelled routestatus-e2e=true (so a controller deployed on the
  // same cluster can exclude it with --namespace-labels='!routestatus-e2e');
  // returns its name, "" on failure (logged). Deleted at teardown on a real
  // cluster.
  std::string CreateNamespace(const std::string& base,
                              const std::map<std::string, std::string>& labels = {});
  // Route CRUD through the client. Thread-safe.
  StatusOr<nlohmann::json> CreateRoute(const RouteShape& shape);
  // Reads the route, applies `mutate` to its JSON and PUTs it; retries on 409.
  StatusOr<nlohmann::json> UpdateRoute(const std::string& ns, const std::string& name,
                                                   const std::function<void(nlohmann::json&)>& mutate);
  // Same for the status subresource (as "another process" would).
  StatusOr<nlohmann::json> UpdateRouteStatus(
      const std::string& ns, const std::string& name,
      const std::function<void(nlohmann::json&)>& mutate);
  Status DeleteRoute(const std::string& ns, const std::string& name);
  // Every route of the namespaces this cluster object created. Thread-safe.
  StatusOr<std::vector<kubeclient::Route>> ListRoutes();
  const std::vector<std::string>& namespaces() const { return namespaces_; }

  // The server's /metrics (embedded: plain HTTP GET; real: a GET with the
  // kubeconfig's credentials, else `kubectl get --raw /metrics`).
  StatusOr<std::vector<PromSample>> ScrapeServerMetrics();
  // Status PUTs by result so far; CHECK-fails if the metrics cannot be read.
  WriteCounts StatusWrites();
  // Every write verb (create, update, patch, delete) on routes/status so far.
  double StatusWriteVerbs();

  // Embedded only (kInvalid on a real cluster): fault injection
  // through the admin endpoints. `rule` is a FaultRule JSON object.
  Status AddFault(const nlohmann::json& rule);
  Status ClearFaults();
  Status CloseWatches();
  Status Compact();
  Status DropConnections();
  // A kube-apiserver restart (POST /admin/restart): every connection closed,
  // new ones refused for `down`, then the same objects with a fresh watch
  // history (older resourceVersions get 410), starting for `startup` (routes
  // 503 "server is starting" with Retry-After 10, /readyz 500, as a real
  // kube-apiserver answers until its CRD informer has synced). Blocks until
  // the server is ready again; returns when it first was (/readyz polled
  // every 10 ms).
  StatusOr<std::chrono::steady_clock::time_point> RestartServer(
      std::chrono::milliseconds down,
      std::chrono::milliseconds startup = kRestartStartup);
  // A kube-apiserver's start-up as RestartServer models it by default: a
  // real one is ready a second or more after it listens again.
  static constexpr std::chrono::milliseconds kRestartStartup{1500};

  // The server's log (embedded), for failure reports.
  std::string ServerLog() const;

 private:
  TestCluster() = default;
  Status AdminPost(const std::string& path, const std::string& body,
                               const std::string& method = "POST");

  E2eEnv env_;
  RealClock clock_;
  std::string temp_dir_;
  std::string kubeconfig_;
  kubeclient::rest::RestConfig rest_config_;
  std::unique_ptr<LocalApiServer> apiserver_;
  int apiserver_port_ = 0;
  std::unique_ptr<kubeclient::KubeClient> client_;
  std::vector<std::string> namespaces_;
};

// Polls `done` every `poll` until it returns true or `timeout` passes.
// Returns whether it became true.
bool WaitFor(const std::function<bool()>& done, std::chrono::milliseconds timeout,
             std::chrono::milliseconds poll = std::chrono::milliseconds(100));

// True for an entry of `router_name` whose Admitted condition is True.
bool IsAdmittedBy(const kubeclient::Route& route, const std::string& router_name);

// Waits until `check` holds for every route of the cluster's namespaces
// (and there are `expected_routes` of them, unless -1). On timeout returns
// false and describes the first few routes that fail in *why.
bool WaitForRoutes(TestCluster& cluster, const std::function<bool(const kubeclient::Route&)>& check,
                   std::chrono::milliseconds timeout, int expected_routes, std::string* why);

// Waits until the server's status-PUT count stops moving for `settle`
// (bounded by `timeout`). Returns whether it settled.
bool WaitForWritesToSettle(TestCluster& cluster, std::chrono::milliseconds settle,
                           std::chrono::milliseconds timeout);

// Status PUTs (all results) during `period` of quiet.
double WritesDuring(TestCluster& cluster, std::chrono::milliseconds period);

}  // namespace routestatus::e2e
