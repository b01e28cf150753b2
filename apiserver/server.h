#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "apiserver/etcd_storage.h"
#include "apiserver/fault_injector.h"
#include "apiserver/hangup_monitor.h"
#include "apiserver/object_store.h"
#include "apiserver/request_metrics.h"
#include "apiserver/tls_proxy.h"
#include "base/clock.h"
#include "base/status.h"

struct mg_context;
struct mg_connection;

namespace routestatus::apiserver {

// Tunables of the embedded API server.
struct ServerOptions {
  std::string listen = "127.0.0.1:0";  // HOST:PORT; port 0 picks a free one
  bool tls = false;                    // HTTPS with a generated self-signed cert
  // Names the certificate holds besides 127.0.0.1, ::1 and localhost (IPs
  // or DNS names; kube-apiserver's hold the service IP a pod dials).
  std::vector<std::string> tls_hosts;
  std::string token;                   // bearer token required when non-empty
  size_t watch_history = 10000;        // events kept for resume/pagination
  size_t watcher_buffer = 10000;       // events queued per watch before it is closed
  // With allowWatchBookmarks, a watcher's bookmark is due this often and
  // 2 s before the watch times out (kube's watch cache: every minute). As
  // in kube's watch cache, a due bookmark is sent only when its resource's
  // last processed resourceVersion (moved by that resource's events and by
  // progress notifications) is above the version the watch began at: a
  // watch begun after the last change of its resource hears nothing.
  std::chrono::milliseconds bookmark_interval{60000};
  // etcd's watch progress notification interval (etcd's default: 10
  // minutes): each one moves every quiet resource's last processed version
  // to the current global revision. 0 = never.
  std::chrono::milliseconds progress_notify_interval{600000};
  // The old, kinder bookmarks: every due bookmark is sent with the global
  // current revision, whatever the watch's start version. Only for tests
  // that say why they need it; no real kube-apiserver does this.
  bool legacy_bookmarks = false;
  int threads = 128;                   // HTTP worker threads (one per open connection)
  bool create_default_namespace = true;  // "default", like a fresh cluster
  // Watches take sendInitialEvents (KEP-3157) as kube-apiserver 1.27+ with
  // the WatchList feature serves them: the initial state from the watch
  // cache as ADDED events, then a BOOKMARK annotated
  // k8s.io/initial-events-end: "true". false answers as kube 1.26 does: a
  // watch with resourceVersionMatch is 422 (sendInitialEvents is unknown).
  bool watch_list = true;
  // With watch_list: how a watch list is answered, as these real servers
  // answer it (test/apiserver/golden/kube-apiserver-1.32/):
  //   kStreams: the initial events, then the end bookmark (1.27+ with
  //     WatchList: 1.32, 1.34+ by default);
  //   kGateOff: 422 "sendInitialEvents is forbidden for watch unless the
  //     WatchList feature gate is enabled" (1.33, whose gate is off by
  //     default, or any 1.27+ started with WatchList=false);
  //   kNoProgressNotify: 200, then one ERROR event (500 InternalError: "a
  //     watch stream was requested by the client but the required storage
  //     feature RequestWatchProgress is disabled"), then the end of the
  //     stream (1.32 over an etcd before 3.4.31 / 3.5.13).
  enum class WatchListAnswer { kStreams, kGateOff, kNoProgressNotify };
  WatchListAnswer watch_list_answer = WatchListAnswer::kStreams;
  // The end bookmark also carries kubernetes.io/initial-events-list-blueprint
  // (the empty list object, base64), as kube 1.32 and 1.33 send it.
  bool initial_events_blueprint = false;
  // kube-apiserver's --watch-cache: true serves lists with resourceVersion
  // "0" (or a version and no limit) from the watch cache, one page, no
  // storage read; false reads storage for every list, page by page, as a
  // server whose watch cache is off (SetWatchCache changes it at run time).
  bool watch_cache = true;
  // "http://HOST:PORT" of an etcd (3.4+, its v3 JSON gateway) that storage
  // reads go to, as kube-apiserver's do: see Server::UseEtcd. "" = none:
  // storage reads are reads of the server's memory.
  std::string etcd_endpoint;
  const Clock* clock = nullptr;  // nullptr = the real clock
};

// An embedded Kubernetes-compatible API server (routes.route.openshift.io/v1
// with status subresource, v1 namespaces, apiextensions.k8s.io/v1 CRDs) over
// HTTP(S) via civetweb, usable in-process by tests and as the
// local-apiserver binary. Reads honour the Accept header like kube-apiserver:
// application/json;as=Table;g=meta.k8s.io;v=v1 (what kubectl get sends)
// answers a server-side Table whose route columns come from the stored
// CRD's additionalPrinterColumns; as=PartialObjectMetadata[List] is served
// too; nothing acceptable is 406 (responses are never protobuf). Request
// bodies are JSON, or Kubernetes protobuf (application/vnd.kubernetes.protobuf,
// what kubectl's typed clients send) for namespaces and DeleteOptions; routes
// and CRDs answer 415 for protobuf. DELETE on a collection (deletecollection,
// with label/field selectors) is served except for namespaces. Every write
// honours dryRun=All like kube-apiserver (query parameter; for deletes the
// DeleteOptions body's dryRun when a body is sent): the real checks and
// response, nothing stored, no new resourceVersion, no watch event, and
// dry_run="All" on apiserver_request_total; any other value is 422.
// Admin endpoints (token-protected like the rest):
//   POST /admin/faults            body: a FaultRule JSON object or an array
//   DELETE /admin/faults          clear all rules; GET lists them
//   POST /admin/close-watches     end every open watch now
//   POST /admin/compact           forget history (resumes get 410)
//   POST /admin/drop-connections  close every connection (restarts the listener)
//   POST /admin/close-idle-connections  close every keep-alive connection
//                                 that is between requests (as a load
//                                 balancer's idle timeout does)
//   POST /admin/never-read        body {"count":N,"holdMs":M}: the next N
//                                 accepted connections are held M ms unread
//   POST /admin/restart           body {"downMs": N, "startupMs": M}: Restart(N ms, M ms)
//                                 after answering
// Thread-safe: every method may be called from any thread, except that
// Start/Stop/DropConnections/Restart must not be called from a request handler.
class Server {
 public:
  explicit Server(ServerOptions options = {});
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds and starts serving; an error names what failed.
  Status Start();
  // Ends every watch and connection, then stops. Idempotent.
  void Stop();

  int port() const { return port_; }
  // "http://127.0.0.1:PORT" or "https://127.0.0.1:PORT".
  std::string base_url() const;
  // The self-signed certificate (PEM) clients must trust; "" without TLS.
  const std::string& ca_pem() const { return ca_pem_; }
  // Writes a kubeconfig (context "local", namespace default) that points
  // kubectl or our client at this server, with the CA and the token.
  Status WriteKubeconfig(const std::string& path) const;

  // Direct access for seeding and inspection (no HTTP, no metrics).
  ObjectStore& store() { return *store_; }
  FaultInjector& faults() { return faults_; }
  const RequestMetrics& metrics() const { return metrics_; }
  RequestMetrics& metrics() { return metrics_; }

  // Seeding helpers. CreateRoute keeps .status (unlike a POST) and needs
  // metadata.namespace set.
  ApiResult<ObjectPtr> CreateNamespace(const std::string& name,
                                       const std::map<std::string, std::string>& labels = {});
  ApiResult<ObjectPtr> CreateRoute(const nlohmann::json& route);

  // apiserver_request_total summed over series matching verb/resource/
  // subresource/code/scope ("" or -1 = any; subresource "-" = main resource
  // only). Verbs are kube's labels: POST, PUT, PATCH, DELETE (a
  // deletecollection is DELETE with scope namespace or cluster), APPLY, GET,
  // LIST, WATCH.
  uint64_t RequestCount(const std::string& verb, const std::string& resource,
                        const std::string& subresource = "", int code = -1,
                        const std::string& scope = "") const {
    return metrics_.Count(verb, resource, subresource, code, scope);
  }
  void CloseAllWatches() { store_->CloseAllWatches(); }
  // ServerOptions::watch_cache, for lists from now on.
  void SetWatchCache(bool on) { watch_cache_.store(on); }
  // Makes etcd at `endpoint` the server's storage from now on (Start does
  // it for ServerOptions::etcd_endpoint): etcd's /registry/ prefix is
  // replaced by every object stored now (in transactions of
  // EtcdStorage::kTxnOps: start etcd with at least that --max-txn-ops),
  // then every create, update and delete is written to etcd before it is
  // applied (an etcd failure fails it with a 500), and every list served
  // from storage (not from the watch cache) reads etcd page by page. Errors
  // (etcd unreachable, a refused load) leave the server as it was. Once per
  // server; not from a handler.
  Status UseEtcd(const std::string& endpoint);
  // The etcd storage reads go to; nullptr without one.
  const EtcdStorage* etcd() const { return etcd_.load(); }
  void Compact() { store_->Compact(); }
  // Closes every connection (including idle keep-alive ones) by restarting
  // the listener on the same port. Must not be called from a handler.
  Status DropConnections();
  size_t OpenWatches() const { return store_->WatcherCount(); }
  // Closes (shutdown) every connection to the HTTP listener that is not
  // inside a request: idle keep-alive connections. Returns how many. With
  // TLS the front end then closes the client's connection too.
  size_t CloseIdleConnections();
  // A kube-apiserver restart: closes every connection and watch, refuses new
  // connections (nothing listens) for `down`, then serves again on the same
  // port with the same objects and a fresh watch cache
  // (ObjectStore::RestartWatchCache: watches from any older resourceVersion
  // get 410). For `startup` after that it answers as kube-apiserver does
  // while it starts: custom resources (routes) 503 ServiceUnavailable
  // "server is starting" with Retry-After 10 (the CRD informer has not
  // synced), /readyz 500; /version, discovery and built-in resources are
  // served. Blocks for `down` on the clock; Stop() ends the wait (the
  // server then stays down). Not from a handler, not concurrently with Stop.
  Status Restart(std::chrono::milliseconds down,
                 std::chrono::milliseconds startup = std::chrono::milliseconds(0));
  // True while a restart's start-up lasts (see Restart).
  bool Starting() const;

 private:
  class Handler;
  static int HandleRequest(mg_connection* conn, void* self);
  // civetweb's init_connection: holds a never-read connection (before any
  // byte is read) until its hold ends or the server stops.
  static int InitConnection(const mg_connection* conn, void** conn_data);
  // Sleeps `d` on the clock for an injected fault; Stop() ends it early.
  void FaultDelay(std::chrono::milliseconds d);
  // Starts civetweb on `listen` (plain HTTP); sets backend_port_.
  Status StartListener(const std::string& listen);
  void StopListener();
  // DropConnections / Restart on a helper thread (joined by Stop).
  void DropConnectionsAsync();
  void RestartAsync(std::chrono::milliseconds down, std::chrono::milliseconds startup);
  void RunAdminThread(std::function<void()> body);

  const ServerOptions options_;
  std::unique_ptr<Clock> owned_clock_;
  const Clock& clock_;
  // Why before store_: destroyed after it (the store points at it).
  std::mutex etcd_mu_;
  std::unique_ptr<EtcdStorage> etcd_owner_;  // guarded by etcd_mu_
  std::atomic<EtcdStorage*> etcd_{nullptr};  // etcd_owner_, for handlers
  std::unique_ptr<ObjectStore> store_;
  FaultInjector faults_;
  RequestMetrics metrics_;
  std::string ca_pem_;
  std::string key_pem_;    // with TLS: the certificate's key (Restart restarts the proxy)
  TlsProxy tls_proxy_;     // HTTPS front end (civetweb then serves plain HTTP on loopback)
  int backend_port_ = 0;   // civetweb's own port
  std::mutex lifecycle_mu_;
  mg_context* ctx_ = nullptr;  // guarded by lifecycle_mu_
  std::atomic<bool> stopping_{false};
  // Clock time (ns since its epoch) until which the server is starting.
  std::atomic<int64_t> starting_until_ns_{0};
  std::atomic<bool> watch_cache_;
  std::mutex admin_mu_;
  std::condition_variable admin_cv_;
  std::vector<std::thread> admin_threads_;  // guarded by admin_mu_
  bool shut_down_ = false;                  // guarded by admin_mu_: Stop() was called
  int port_ = 0;
  std::string host_ = "127.0.0.1";
  std::mutex conn_mu_;
  std::condition_variable conn_cv_;  // wakes FaultDelay at Stop
  std::multiset<int> busy_ports_;    // guarded by conn_mu_: peers inside a request
  HangupMonitor hangups_{std::chrono::milliseconds(500)};  // ends watches of gone clients
};

}  // namespace routestatus::apiserver
