// The only translation unit that includes cpprestsdk (each include of
// http_client.h costs ~6 s and ~550 MB of compiler memory). Every cpprest
// and boost exception is caught here and turned into a Status.
#include "kubeclient/rest/rest_kube_client.h"

#include <poll.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <random>
#include <stdexcept>
#include <utility>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <cpprest/http_client.h>
#include <glog/logging.h>
#include <nlohmann/json.hpp>

#include "base/cancellation.h"
#include "base/token_bucket.h"
#include "kubeclient/list_stream.h"
#include "kubeclient/rest/exec_credential.h"
#include "kubeclient/rest/proxy.h"
#include "kubeclient/rest/rest_paths.h"
#include "kubeclient/rest/socket_watch.h"
#include "kubeclient/rest/tls_material.h"
#include "kubeclient/rest/token_source.h"

namespace routestatus::kubeclient::rest {
namespace {

namespace http = web::http;
namespace client = web::http::client;
using nlohmann::json;

Status Invalid(std::string m) { return Status(StatusCode::kInvalid, std::move(m)); }

std::string Millis(Duration d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(d).count()) + " ms";
}

// The most of an error response's body (a Status object) that is read.
constexpr size_t kMaxErrorBody = 1 << 20;

// object[key] when it is a string, else "" (json::value() would throw on
// other types).
std::string StringField(const json& object, const char* key) {
  if (!object.is_object()) return "";
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

// Thrown by the pre-send check when the pooled connection cpprest is about
// to reuse was closed by the server while idle. Nothing has been written
// yet, so any request may be sent again (on another connection).
class StaleConnection : public std::runtime_error {
 public:
  StaleConnection() : std::runtime_error("pooled connection closed by the server while idle") {}
};

// cpprest calls this (http_client_config::set_nativehandle_options) right
// before it writes a request, with the connection's socket; for a new
// connection the socket is not open yet. An idle keep-alive connection has
// nothing to read: end-of-stream (POLLRDHUP: the server's FIN), an error or,
// on plain HTTP, unexpected bytes mean it is dead. On TLS a readable socket
// without FIN may hold a late session ticket, which is harmless.
// Why: cpprest reuses pooled connections blindly; a request with a body on
// one the server closed fails with "Failed to write request body" and is
// not retried (its own reconnect covers only failures reading the status
// line).
void CheckPooledConnection(client::native_handle handle, bool tls) {
  int fd = tls ? static_cast<boost::asio::ssl::stream<boost::asio::ip::tcp::socket&>*>(handle)
                     ->next_layer()
                     .native_handle()
               : static_cast<boost::asio::ip::tcp::socket*>(handle)->native_handle();
  if (fd < 0) return;
  pollfd p{fd, static_cast<short>(POLLIN | POLLRDHUP), 0};
  if (poll(&p, 1, 0) <= 0) return;
  bool closed = (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) != 0;
  if (closed || !tls) throw StaleConnection();
}

bool IsStaleConnection(std::exception_ptr ep) {
  try {
    std::rethrow_exception(ep);
  } catch (const StaleConnection&) {
    return true;
  } catch (...) {
    return false;
  }
}

// Maps a transport exception to a Status.
Status TransportError(const std::string& what, std::exception_ptr ep) {
  try {
    std::rethrow_exception(ep);
  } catch (const http::http_exception& e) {
    if (e.error_code() == std::errc::timed_out) {
      return Status(StatusCode::kTimeout, what + ": timed out: " + e.what());
    }
    if (e.error_code() == std::errc::operation_canceled) {
      return Status(StatusCode::kCancelled, what + ": cancelled");
    }
    return Status(StatusCode::kUnavailable, what + ": " + e.what());
  } catch (const pplx::task_canceled&) {
    return Status(StatusCode::kCancelled, what + ": cancelled");
  } catch (const std::exception& e) {
    return Status(StatusCode::kUnavailable, what + ": " + e.what());
  } catch (...) {
    return Status(StatusCode::kUnavailable, what + ": unknown error");
  }
}

// How far one attempt got, shared with cpprest's callbacks (which may run
// after the attempt was abandoned).
struct AttemptProgress {
  std::mutex mu;
  std::condition_variable cv;
  bool written = false;  // GUARDED_BY(mu): connected, and the request headers written
  bool done = false;     // GUARDED_BY(mu): the response headers (or an error) arrived
};

// The cpprest-backed KubeClient. Thread-safe (http_client is).
class RestKubeClient final : public KubeClient {
 public:
  RestKubeClient(const RestConfig& config, const Clock& clock, RestOptions options,
                 TlsMaterial tls, ProxyChoice proxy, SocketTarget target)
      : config_(config),
        proxy_(std::move(proxy)),
        clock_(clock),
        options_(std::move(options)),
        tls_(std::move(tls)),
        https_(config.server.rfind("https://", 0) == 0),
        bucket_(clock, options_.qps, options_.burst),
        token_(config.token, config.token_file),
        user_agent_(options_.user_agent.empty() ? DefaultUserAgent(options_.version)
                                                : options_.user_agent),
        target_(std::move(target)),
        host_header_(https_ && !config.tls_server_name.empty()
                         ? config.tls_server_name
                         : target_.server.Authority(!target_.server.default_port)),
        heard_(std::make_shared<std::atomic<int64_t>>(0)) {
    target_.tls = tls_;
    if (config.exec) {
      ExecCredentialProvider::Options eo;
      eo.exec = *config.exec;
      eo.cluster_json = ClusterInfoJson(config, tls_.ca);
      eo.timeout = options_.exec_timeout;
      eo.cancel = &shutdown_;
      if (options_.observer != nullptr) {
        RestObserver* observer = options_.observer;
        eo.on_run = [observer](std::string_view result) { observer->OnExecPlugin(result); };
      }
      exec_ = std::make_unique<ExecCredentialProvider>(std::move(eo), clock);
    }
    shutdown_registration_ = shutdown_.OnCancel([this] { FireWakes(); });
  }

  StatusOr<json> Get(const ResourceRef& res, const std::string& ns,
                     const std::string& name) override {
    return DoJson(http::methods::GET, ResourcePath(res, ns, name), nullptr, kSafe);
  }

  StatusOr<ListPage> List(const ResourceRef& res, const std::string& ns,
                          const ListOptions& options) override {
    auto doc = DoJson(http::methods::GET, ResourcePath(res, ns) + ListQuery(options), nullptr, kSafe);
    if (!doc.ok()) return doc.status();
    const json& d = doc.value();
    ListPage page;
    auto items = d.find("items");
    if (items != d.end() && !items->is_null()) {
      if (!items->is_array()) return Invalid("list " + res.resource + ": items is not an array");
      page.items.reserve(items->size());
      for (auto& it : *items) page.items.push_back(std::move(it));
    }
    auto meta = d.find("metadata");
    if (meta != d.end() && meta->is_object()) {
      page.resource_version = StringField(*meta, "resourceVersion");
      page.continue_token = StringField(*meta, "continue");
    }
    return page;
  }

  StatusOr<RawListPage> ListRaw(const ResourceRef& res, const std::string& ns,
                                const ListOptions& options) override {
    const std::string path = ResourcePath(res, ns) + ListQuery(options);
    auto text = DoText(http::methods::GET, path, nullptr, kSafe);
    if (!text.ok()) return text.status();
    size_t size = text->size();
    auto page = RawListPageFromText(std::move(text).value());
    if (!page.ok()) {
      LOG(WARNING) << "GET " << path << ": " << page.status().message() << " (" << size
                   << " bytes)";
      return Invalid("GET " + path + ": " + page.status().message());
    }
    return page;
  }

  StatusOr<std::unique_ptr<WatchStream>> Watch(const ResourceRef& res, const std::string& ns,
                                               const WatchOptions& options) override {
    const std::string path = ResourcePath(res, ns) + WatchQuery(options);
    const std::string what = "watch " + path;
    auto opened = OpenOwned(path, what);
    if (!opened.ok()) return opened.status();
    const SteadyTime end = options.timeout.count() > 0
                               ? opened->start + options.timeout + options_.watch_timeout_margin
                               : SteadyTime::max();
    return std::unique_ptr<WatchStream>(std::make_unique<SocketWatchStream>(
        std::move(opened->response), clock_, std::move(opened->wake), what,
        options_.max_watch_line_bytes, end, Liveness()));
  }

  // A list's page read from an owned socket and split into its items as it
  // arrives (ListStreamScanner): a list from the watch cache comes whole,
  // 100,000 routes in ~150 MB, and must never be held at once. Each read
  // waits at most request_timeout (the inactivity timeout cpprest gives the
  // other requests); Shutdown() ends it at once.
  StatusOr<ListPage> ListEach(const ResourceRef& res, const std::string& ns,
                              const ListOptions& options,
                              const std::function<void(std::string_view item)>& each) override {
    const std::string path = ResourcePath(res, ns) + ListQuery(options);
    const std::string what = "GET " + path;
    auto opened = OpenOwned(path, what);
    if (!opened.ok()) return opened.status();
    SocketResponse& response = opened->response;
    BodyDecoder decoder(response.head);
    ListStreamScanner scanner(each, options_.max_watch_line_bytes);
    std::string decoded, error;
    auto feed = [&](std::string_view bytes) {
      decoded.clear();
      return decoder.Feed(bytes, &decoded, &error) && scanner.Feed(decoded);
    };
    bool ok = feed(response.buffered);
    response.buffered.clear();
    std::vector<char> buf(64 * 1024);
    while (ok && !decoder.done()) {
      auto got = response.conn->ReadSome(buf.data(), buf.size(),
                                         clock_.Now() + options_.request_timeout);
      if (!got.ok()) {
        if (shutdown_.cancelled() || got.status().code() == StatusCode::kCancelled) {
          return Cancelled(what);
        }
        const Status& s = got.status();
        return s.code() == StatusCode::kTimeout
                   ? Status(StatusCode::kTimeout, what + ": timed out: nothing received for " +
                                                      std::to_string(options_.request_timeout.count()) +
                                                      " s mid-list")
                   : Status(s.code(), what + ": " + s.message());
      }
      if (*got == 0) {
        if (decoder.EndsAtClose()) break;
        return Status(StatusCode::kUnavailable, what + ": connection closed mid-list");
      }
      NoteHeard();
      ok = feed(std::string_view(buf.data(), *got));
    }
    if (!ok || !scanner.Finish()) {
      const std::string why = !error.empty() ? error : scanner.error();
      LOG(WARNING) << what << ": " << why;
      return Invalid(what + ": " + why);
    }
    ListPage page;
    page.resource_version = scanner.resource_version();
    page.continue_token = scanner.continue_token();
    return page;
  }

  StatusOr<json> Create(const ResourceRef& res, const std::string& ns,
                        const json& object) override {
    return DoJson(http::methods::POST, ResourcePath(res, ns), &object, kUnsafe);
  }

  StatusOr<json> Update(const ResourceRef& res, const json& object) override {
    auto path = ObjectPath(res, object, "");
    if (!path.ok()) return path.status();
    return DoJson(http::methods::PUT, path.value(), &object, GuardedBy(object));
  }

  StatusOr<json> UpdateStatus(const ResourceRef& res, const json& object) override {
    auto path = ObjectPath(res, object, "status");
    if (!path.ok()) return path.status();
    return DoJson(http::methods::PUT, path.value(), &object, GuardedBy(object));
  }

  StatusOr<json> MergePatchStatus(const ResourceRef& res, const std::string& ns,
                                  const std::string& name, const json& patch) override {
    if (name.empty()) return Invalid("merge patch: no name");
    if (res.namespaced && ns.empty()) return Invalid("merge patch: no namespace");
    return DoJson(http::methods::PATCH, ResourcePath(res, ns, name, "status"), &patch,
                  GuardedBy(patch), kMergePatchType);
  }

  Status Delete(const ResourceRef& res, const std::string& ns, const std::string& name) override {
    auto doc = DoJson(http::methods::DEL, ResourcePath(res, ns, name), nullptr, kUnsafe);
    return doc.ok() ? Status::Ok() : doc.status();
  }

  void Shutdown() override { shutdown_.Cancel(); }

 private:
  // Whether a request that may have reached the server can be sent again
  // after a connection failure: reads, and writes guarded by a
  // resourceVersion (a second copy of a write that did land gets 409). A
  // kUnsafe request is sent once: neither we nor cpprest send it again
  // once it may have been written (a pooled connection found closed before
  // sending is no such case).
  enum Replay { kSafe, kUnsafe };
  static constexpr const char* kJsonType = "application/json";
  static constexpr const char* kMergePatchType = "application/merge-patch+json";
  static Replay GuardedBy(const json& object) {
    return ResourceVersionOf(object).empty() ? kUnsafe : kSafe;
  }

  // A sent request: its response (body unread) and the client that
  // carries it.
  struct Sent {
    http::http_response response;
    std::shared_ptr<client::http_client> http;
  };

  // The credentials of one attempt.
  struct Credentials {
    std::string token;
    std::shared_ptr<const ExecCredential> exec;  // null without exec
  };

  StatusOr<Credentials> CurrentCredentials() {
    Credentials c;
    if (exec_) {
      auto cred = exec_->Get();
      if (!cred.ok()) return cred.status();
      c.exec = std::move(cred).value();
      c.token = c.exec->token;
      return c;
    }
    auto token = token_.Token();
    if (!token.ok()) return token.status();
    c.token = std::move(token).value();
    return c;
  }

  // The TLS material with the exec plugin's client certificate, if any.
  TlsMaterial TlsFor(const Credentials& c) const {
    TlsMaterial tls = tls_;
    if (c.exec && !c.exec->cert_pem.empty()) {
      tls.cert = c.exec->cert_pem;
      tls.key = c.exec->key_pem;
    }
    return tls;
  }

  std::shared_ptr<client::http_client> NewHttpClient(std::chrono::seconds timeout,
                                                     TlsMaterial tls) const {
    client::http_client_config cfg;
    cfg.set_timeout(timeout);
    cfg.set_validate_certificates(!config_.insecure_skip_tls_verify);
    auto material = std::make_shared<const TlsMaterial>(std::move(tls));
    cfg.set_ssl_context_callback([material](boost::asio::ssl::context& ctx) {
      Status s = ApplyTlsMaterial(*material, ctx.native_handle());
      if (!s.ok()) throw std::runtime_error(s.message());
    });
    if (!proxy_.url.empty()) {
      web::web_proxy proxy{web::uri(proxy_.url)};
      if (!proxy_.user.empty()) proxy.set_credentials(web::credentials(proxy_.user, proxy_.password));
      cfg.set_proxy(proxy);
      // Why no pooled-connection check: through a proxy cpprest hands over
      // a new https connection as a plain socket and a reused one as a TLS
      // stream; the two cannot be told apart here. cpprest's own reconnect
      // still covers reads on a connection closed while idle.
      return std::make_shared<client::http_client>(web::uri(config_.server), cfg);
    }
    const bool https = https_;
    cfg.set_nativehandle_options(
        [https](client::native_handle h) { CheckPooledConnection(h, https); });
    return std::make_shared<client::http_client>(web::uri(config_.server), cfg);
  }

  // The shared client (and its connection pool) for `c`: rebuilt when the
  // exec plugin hands out another client certificate, so that new
  // connections present it (client-go closes its connections then too).
  std::shared_ptr<client::http_client> SharedClient(const Credentials& c) {
    const std::string cert = c.exec ? c.exec->cert_pem : std::string();
    std::lock_guard<std::mutex> l(http_mu_);
    if (!http_ || cert != http_cert_) {
      http_ = NewHttpClient(options_.request_timeout, TlsFor(c));
      http_cert_ = cert;
    }
    return http_;
  }

  static StatusOr<std::string> ObjectPath(const ResourceRef& res, const json& object,
                                          const std::string& sub) {
    if (!object.is_object() || !object.contains("metadata") || !object["metadata"].is_object()) {
      return Invalid("object has no metadata");
    }
    const json& m = object["metadata"];
    std::string name = StringField(m, "name");
    std::string ns = StringField(m, "namespace");
    if (name.empty()) return Invalid("object has no metadata.name");
    if (res.namespaced && ns.empty()) return Invalid("object has no metadata.namespace");
    return ResourcePath(res, ns, name, sub);
  }

  static Status Cancelled(const std::string& what) {
    return Status(StatusCode::kCancelled, what + ": cancelled (client shut down)");
  }

  // One request; the 2xx response body as text.
  StatusOr<std::string> DoText(const http::method& method, const std::string& path,
                               const json* body, Replay replay,
                               const char* content_type = kJsonType) {
    auto sent = Send(method, path, body, replay, content_type);
    if (!sent.ok()) return sent.status();
    try {
      auto text = sent->response.extract_utf8string(true);
      if (!AwaitUnlessShutdown(text)) return Cancelled(method + " " + path);
      return text.get();
    } catch (...) {
      if (shutdown_.cancelled()) return Cancelled(method + " " + path);
      return TransportError(method + " " + path, std::current_exception());
    }
  }

  // One request, decoded as JSON.
  StatusOr<json> DoJson(const http::method& method, const std::string& path, const json* body,
                        Replay replay, const char* content_type = kJsonType) {
    auto got = DoText(method, path, body, replay, content_type);
    if (!got.ok()) return got.status();
    const std::string& text = got.value();
    json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded() || !doc.is_object()) {
      LOG(WARNING) << method << " " << path << ": response is not a JSON object ("
                   << text.size() << " bytes)";
      return Invalid(method + " " + path + ": response is not a JSON object");
    }
    return doc;
  }

  // A GET over an owned socket whose 2xx response head has arrived.
  struct Owned {
    SocketResponse response;
    std::shared_ptr<Wake> wake;  // fired by Shutdown()
    SteadyTime start;            // when the request was sent
  };

  // Sends `path` on a new owned connection until a 2xx head arrives, with
  // Send()'s rules: rate-limited and authenticated, a connection failure
  // retried once, a 401 with exec credentials re-runs the plugin, 429 and
  // 5xx with Retry-After wait and retry; no connection within
  // connect_timeout or no head within request_timeout: kTimeout.
  StatusOr<Owned> OpenOwned(const std::string& path, const std::string& what) {
    bool reconnected = false, reauthenticated = false;
    for (int attempt = 0;;) {
      if (!bucket_.Acquire(&shutdown_)) return Cancelled(what);
      auto creds = CurrentCredentials();
      if (!creds.ok()) return creds.status();
      Owned owned;
      owned.wake = NewWake();
      if (shutdown_.cancelled()) return Cancelled(what);
      owned.start = clock_.Now();
      SocketGetRequest req;
      req.path = path;
      req.headers = RequestHeaders(creds->token);
      if (options_.connect_timeout.count() > 0) {
        req.connect_deadline = owned.start + options_.connect_timeout;
      }
      req.head_deadline = owned.start + options_.request_timeout;
      SocketTarget target = target_;
      target.tls = TlsFor(*creds);
      SocketGetStage stage;
      auto got = SocketGet(target, clock_, req, owned.wake, &stage);
      if (!got.ok()) {
        const Status& s = got.status();
        if (shutdown_.cancelled() || s.code() == StatusCode::kCancelled) return Cancelled(what);
        Status failed = s.code() == StatusCode::kTimeout ? StageTimeout(what, stage)
                                                          : Status(s.code(), what + ": " + s.message());
        if (failed.code() == StatusCode::kUnavailable && !reconnected) {
          reconnected = true;
          VLOG(1) << failed.message() << "; retrying once on a new connection";
          NoteRetry("connection_failure");
          continue;
        }
        VLOG(1) << failed.message();
        return failed;
      }
      NoteHeard();
      const int code = got->head.status;
      if (code >= 200 && code < 300) {
        owned.response = std::move(got).value();
        return owned;
      }
      auto text = ReadBody(*got, kMaxErrorBody, owned.start + options_.request_timeout);
      if (!text.ok()) {
        if (shutdown_.cancelled()) return Cancelled(what);
        return Status(text.status().code(), what + ": " + text.status().message());
      }
      std::optional<std::chrono::milliseconds> retry_after;
      if (!got->head.retry_after.empty()) retry_after = ParseRetryAfter(got->head.retry_after);
      Status error = StatusFromResponse(code, *text, retry_after);
      Status final_status;
      if (!RetryAfterError(what, code, error, *creds, &reauthenticated, &attempt, &final_status)) {
        return final_status;
      }
    }
  }

  // The kTimeout of a SocketGet that ran out of time at `stage`.
  Status StageTimeout(const std::string& what, SocketGetStage stage) const {
    if (stage == SocketGetStage::kConnect) return ConnectTimeout(what);
    return Status(StatusCode::kTimeout,
                  what + ": timed out: the response did not start within " +
                      std::to_string(options_.request_timeout.count()) + " s");
  }

  Status ConnectTimeout(const std::string& what) const {
    return Status(StatusCode::kTimeout,
                  what + ": timed out: no connection to " + config_.server + " within " +
                      std::to_string(options_.connect_timeout.count()) +
                      " ms (TCP connect, TLS handshake or proxy CONNECT)");
  }

  // Waits until the attempt's response headers (or its failure) arrive.
  // kTimeout when no connection was made within connect_timeout (after
  // that, cpprest's own inactivity timeout bounds the request); kCancelled
  // at Shutdown(). Either way the attempt is abandoned, not cancelled: see
  // Send().
  Status AwaitResponseHeaders(AttemptProgress& p, const std::string& what) {
    const SteadyTime start = clock_.Now();
    auto wake = shutdown_.OnCancel([&p] {
      std::lock_guard<std::mutex> l(p.mu);
      p.cv.notify_all();
    });
    std::unique_lock<std::mutex> l(p.mu);
    while (!p.done) {
      if (shutdown_.cancelled()) return Cancelled(what);
      if (p.written || options_.connect_timeout.count() <= 0) {
        p.cv.wait(l);
        continue;
      }
      const SteadyTime deadline = start + options_.connect_timeout;
      if (clock_.Now() >= deadline) return ConnectTimeout(what);
      clock_.WaitUntil(p.cv, l, deadline);
    }
    return Status::Ok();
  }

  // Waits for `task` to finish: false when Shutdown() came first (the task
  // is abandoned; it ends on its own, within cpprest's inactivity timeout).
  template <typename T>
  bool AwaitUnlessShutdown(const pplx::task<T>& task) {
    auto p = std::make_shared<AttemptProgress>();
    task.then([p](pplx::task<T> t) {
      try {
        t.wait();  // observed: pplx traps on an unobserved failed task
      } catch (...) {
      }
      {
        std::lock_guard<std::mutex> l(p->mu);
        p->done = true;
      }
      p->cv.notify_all();
    });
    auto wake = shutdown_.OnCancel([p] {
      std::lock_guard<std::mutex> l(p->mu);
      p->cv.notify_all();
    });
    std::unique_lock<std::mutex> l(p->mu);
    p->cv.wait(l, [&] { return p->done || shutdown_.cancelled(); });
    return p->done;
  }

  // A new Wake that Shutdown() fires.
  std::shared_ptr<Wake> NewWake() {
    auto wake = std::make_shared<Wake>();
    std::lock_guard<std::mutex> l(wakes_mu_);
    wakes_.erase(std::remove_if(wakes_.begin(), wakes_.end(),
                                [](const std::weak_ptr<Wake>& w) { return w.expired(); }),
                 wakes_.end());
    wakes_.push_back(wake);
    if (shutdown_.cancelled()) wake->Fire();
    return wake;
  }

  void FireWakes() {
    std::lock_guard<std::mutex> l(wakes_mu_);
    for (auto& w : wakes_) {
      if (auto wake = w.lock()) wake->Fire();
    }
  }

  // The header lines of a GET over an owned socket.
  std::string RequestHeaders(const std::string& token) const {
    std::string h = "Host: " + host_header_ + "\r\nAccept: application/json\r\nUser-Agent: " +
                    user_agent_ + "\r\n";
    if (!token.empty()) h += "Authorization: Bearer " + token + "\r\n";
    return h;
  }

  void NoteHeard() {
    heard_->store(std::chrono::duration_cast<std::chrono::nanoseconds>(
                      clock_.Now().time_since_epoch())
                      .count(),
                  std::memory_order_relaxed);
  }

  // How a watch of this client checks the server when it goes quiet: a
  // GET /version on a new connection, without credentials (any answer, a
  // 401 included, proves the server is there). The stream skips it while
  // this client heard the server on any connection within probe_after.
  WatchLiveness Liveness() const {
    WatchLiveness l;
    l.probe_after = options_.watch_probe_after;
    l.heard = heard_;
    if (l.probe_after <= Duration::zero()) return l;
    SocketTarget target = target_;
    std::string headers = RequestHeaders("");
    const Clock* clock = &clock_;
    const Duration connect_timeout = options_.connect_timeout.count() > 0
                                         ? Duration(options_.connect_timeout)
                                         : Duration(options_.watch_probe_timeout);
    const Duration probe_timeout = options_.watch_probe_timeout;
    RestObserver* observer = options_.observer;
    std::shared_ptr<std::atomic<int64_t>> heard = heard_;
    std::shared_ptr<std::mutex> probing = probing_;
    l.probe = [target, headers, clock, connect_timeout, probe_timeout, observer, heard,
               probing](const std::shared_ptr<Wake>& wake) -> Status {
      // Why: the watches of one client go quiet together; one probe answers
      // for all of them (its answer refreshes `heard`, and a failure is
      // reported by the watch that sent it).
      std::unique_lock<std::mutex> one(*probing, std::try_to_lock);
      if (!one.owns_lock()) return Status::Ok();
      const SteadyTime now = clock->Now();
      SocketGetRequest req;
      req.path = "/version";
      req.headers = headers;
      req.connect_deadline = now + std::min(connect_timeout, probe_timeout);
      req.head_deadline = now + probe_timeout;
      SocketGetStage stage;
      auto got = SocketGet(target, *clock, req, wake, &stage);
      Status outcome = Status::Ok();
      if (!got.ok() && got.status().code() == StatusCode::kTimeout) {
        outcome = Status(StatusCode::kTimeout,
                         stage == SocketGetStage::kConnect
                             ? "GET /version: no connection within " + Millis(req.connect_deadline - now)
                             : "GET /version: no answer within " + Millis(req.head_deadline - now));
      } else if (!got.ok()) {
        outcome = Status(got.status().code(), "GET /version: " + got.status().message());
      }
      if (got.ok()) {
        heard->store(std::chrono::duration_cast<std::chrono::nanoseconds>(
                         clock->Now().time_since_epoch())
                         .count(),
                     std::memory_order_relaxed);
      }
      if (observer != nullptr && outcome.code() != StatusCode::kCancelled) {
        observer->OnLivenessProbe(outcome, now);
      }
      return outcome;
    };
    return l;
  }

  // After an error answer: re-runs the exec plugin once after a 401, and
  // waits and retries 429 (and 5xx with Retry-After) up to max_retries
  // times. true: send again; false: *result is the request's outcome.
  bool RetryAfterError(const std::string& what, int code, const Status& error,
                       const Credentials& creds, bool* reauthenticated, int* attempt,
                       Status* result) {
    if (code == 401 && exec_ && !*reauthenticated) {
      *reauthenticated = true;
      VLOG(1) << what << ": 401 with the exec plugin's credential; running the plugin again";
      NoteRetry("unauthorized");
      if (auto fresh = exec_->Refresh(creds.exec); !fresh.ok()) {
        *result = fresh.status();
        return false;
      }
      return true;
    }
    const bool retryable = code == 429 || (code >= 500 && error.retry_after().has_value());
    if (!retryable || *attempt >= options_.max_retries) {
      VLOG(2) << what << ": " << error.ToString();
      *result = error;
      return false;
    }
    ++*attempt;
    std::chrono::milliseconds wait =
        std::min(error.retry_after().value_or(std::chrono::seconds(1)), options_.max_retry_wait);
    VLOG(2) << what << ": HTTP " << code << ", retrying in " << wait.count() << " ms";
    if (!WaitToRetry(code, wait, creds)) {
      *result = Cancelled(what);
      return false;
    }
    return true;
  }

  // Waits `wait` before a retry the server asked for; for a 503, until the
  // server's /readyz answers 200 if that comes first (readiness_probe_interval).
  // false once shut down.
  bool WaitToRetry(int code, std::chrono::milliseconds wait, const Credentials& creds) {
    const std::chrono::milliseconds step = options_.readiness_probe_interval;
    if (code != 503 || step.count() <= 0 || wait <= step) return clock_.SleepFor(wait, &shutdown_);
    const SteadyTime until = clock_.Now() + wait;
    for (;;) {
      const SteadyTime next = std::min(until, clock_.Now() + JitteredProbeStep());
      if (!clock_.SleepUntil(next, &shutdown_)) return false;
      if (next >= until) return true;
      if (ServerSaysReady(creds)) {
        VLOG(1) << "the API server's /readyz answers 200: retrying before its Retry-After ends";
        return true;
      }
    }
  }

  Duration JitteredProbeStep() {
    std::lock_guard<std::mutex> l(rng_mu_);
    std::uniform_real_distribution<double> stretch(0.5, 1.5);
    return std::chrono::duration_cast<Duration>(options_.readiness_probe_interval *
                                                stretch(rng_));
  }

  // GET /readyz on a new connection: true for a 200.
  bool ServerSaysReady(const Credentials& creds) {
    const SteadyTime now = clock_.Now();
    SocketGetRequest req;
    req.path = "/readyz";
    req.headers = RequestHeaders(creds.token);
    req.connect_deadline = now + std::min<Duration>(options_.connect_timeout.count() > 0
                                                        ? Duration(options_.connect_timeout)
                                                        : Duration(std::chrono::seconds(2)),
                                                    std::chrono::seconds(2));
    req.head_deadline = now + std::chrono::seconds(2);
    SocketTarget target = target_;
    target.tls = TlsFor(creds);
    SocketGetStage stage;
    auto got = SocketGet(target, clock_, req, NewWake(), &stage);
    if (got.ok()) NoteHeard();
    const bool ready = got.ok() && got->head.status == 200;
    if (options_.observer != nullptr) options_.observer->OnReadinessProbe(ready);
    return ready;
  }

  void NoteRetry(std::string_view reason) {
    if (options_.observer != nullptr) options_.observer->OnConnectionRetry(reason);
  }

  // Sends a request (rate-limited, authenticated) and returns the 2xx
  // response with its body unread, or the decoded error. On the way:
  //   - a pooled connection found dead before sending is dropped and the
  //     request goes out on another one (nothing was sent: any method);
  //   - a connection failure before any response is retried once, at
  //     once, when `replay` is kSafe;
  //   - a 401 with exec credentials re-runs the plugin and retries once (a
  //     401 means the server did not act on the request);
  //   - 429 and 5xx with Retry-After wait and retry as RestOptions says;
  //   - Shutdown() ends every wait (kCancelled);
  //   - no connection within connect_timeout: kTimeout, not retried.
  // A request we stop waiting for is abandoned, never cancelled: cpprest
  // cancels by closing the socket from the cancelling thread, which races
  // with a TLS read in flight on its I/O thread (a SIGSEGV in asio's
  // reactor). An abandoned request ends on its own: its answer arrives, or
  // cpprest's inactivity timer (request_timeout) closes it when nothing
  // has moved for that long. `content_type` is the body's media type.
  StatusOr<Sent> Send(const http::method& method, const std::string& path, const json* body,
                      Replay replay, const char* content_type = kJsonType) {
    const std::string what = method + " " + path;
    // Why: dump() throws on invalid UTF-8 unless told to replace it.
    std::string payload =
        body ? body->dump(-1, ' ', false, json::error_handler_t::replace) : std::string();
    constexpr int kMaxStaleConnections = 64;  // more than a pool ever holds here
    int stale = 0;
    bool reconnected = false, reauthenticated = false, have_token = false;
    for (int attempt = 0;;) {
      // Why have_token: a request that was never sent keeps its QPS token.
      if (!have_token && !bucket_.Acquire(&shutdown_)) return Cancelled(what);
      have_token = true;
      if (shutdown_.cancelled()) return Cancelled(what);
      auto creds = CurrentCredentials();
      if (!creds.ok()) return creds.status();
      Sent sent;
      try {
        if (replay == kUnsafe) {
          // Why a connection of its own: cpprest re-sends a request whose
          // reused keep-alive connection fails before the status line, when
          // the server may have acted on it already. A POST or DELETE must
          // fail instead of running twice (Go's net/http re-sends only
          // idempotent requests); on a new connection cpprest never
          // re-sends. Controllers rarely POST or DELETE.
          sent.http = NewHttpClient(options_.request_timeout, TlsFor(*creds));
        } else {
          sent.http = SharedClient(*creds);
        }
        http::http_request req(method);
        req.set_request_uri(web::uri(path));
        req.headers().add("Accept", "application/json");
        req.headers().add("User-Agent", user_agent_);
        // Why the Host header: cpprest takes both the TLS SNI and the name it
        // verifies the certificate against from it (client-go's ServerName
        // sets only those two; the Host header is a difference).
        if (https_ && !config_.tls_server_name.empty()) {
          req.headers().add("Host", config_.tls_server_name);
        }
        if (!creds->token.empty()) req.headers().add("Authorization", "Bearer " + creds->token);
        if (body) {
          // Why: set_body(std::string) reinterprets a char buffer as uint8_t
          // (UBSan flags it); hand cpprest a uint8_t stream instead.
          std::vector<uint8_t> bytes(payload.begin(), payload.end());
          req.set_body(concurrency::streams::bytestream::open_istream(std::move(bytes)),
                       payload.size(), content_type);
        }
        auto progress = std::make_shared<AttemptProgress>();
        // Why: cpprest reports upload progress first once the request
        // headers are written, i.e. after TCP connect, TLS handshake and a
        // proxy's CONNECT: the one sign that the connection was made.
        req.set_progress_handler(
            [progress](http::message_direction::direction d, utility::size64_t) {
              if (d != http::message_direction::upload) return;
              {
                std::lock_guard<std::mutex> l(progress->mu);
                if (progress->written) return;
                progress->written = true;
              }
              progress->cv.notify_all();
            });
        pplx::task<http::http_response> task = sent.http->request(req);
        task.then([progress](pplx::task<http::http_response> t) {
          // Why: pplx traps (SIGTRAP) on a failed task that nobody
          // observed, and an abandoned attempt's task is never got.
          try {
            t.wait();
          } catch (...) {
          }
          {
            std::lock_guard<std::mutex> l(progress->mu);
            progress->done = true;
          }
          progress->cv.notify_all();
        });
        if (Status stalled = AwaitResponseHeaders(*progress, what); !stalled.ok()) {
          if (shutdown_.cancelled()) return Cancelled(what);
          VLOG(1) << stalled.message();
          return stalled;
        }
        sent.response = task.get();
        NoteHeard();
      } catch (...) {
        std::exception_ptr ep = std::current_exception();
        if (shutdown_.cancelled()) return Cancelled(what);
        if (IsStaleConnection(ep) && ++stale <= kMaxStaleConnections) {
          VLOG(2) << what << ": pooled connection was closed by the server; using another";
          NoteRetry("stale_connection");
          continue;
        }
        Status s = TransportError(what, ep);
        if (replay == kSafe && !reconnected && s.code() == StatusCode::kUnavailable) {
          reconnected = true;
          have_token = false;
          VLOG(1) << s.message() << "; retrying once on a new connection";
          NoteRetry("connection_failure");
          continue;
        }
        return s;
      }
      have_token = false;
      int code = sent.response.status_code();
      if (code >= 200 && code < 300) return sent;
      Status error;
      try {
        std::optional<std::chrono::milliseconds> retry_after;
        auto h = sent.response.headers().find("Retry-After");
        if (h != sent.response.headers().end()) retry_after = ParseRetryAfter(h->second);
        auto text = sent.response.extract_utf8string(true);
        if (!AwaitUnlessShutdown(text)) return Cancelled(what);
        error = StatusFromResponse(code, text.get(), retry_after);
      } catch (...) {
        if (shutdown_.cancelled()) return Cancelled(what);
        return TransportError(what, std::current_exception());
      }
      Status final_status;
      if (!RetryAfterError(what, code, error, *creds, &reauthenticated, &attempt, &final_status)) {
        return final_status;
      }
    }
  }

  const RestConfig config_;
  const ProxyChoice proxy_;  // url "" = direct
  const Clock& clock_;
  const RestOptions options_;
  const TlsMaterial tls_;
  const bool https_;
  TokenBucket bucket_;
  TokenSource token_;
  const std::string user_agent_;
  std::unique_ptr<ExecCredentialProvider> exec_;  // null without users[].user.exec
  std::mutex http_mu_;
  std::shared_ptr<client::http_client> http_;  // GUARDED_BY(http_mu_)
  std::string http_cert_;                       // GUARDED_BY(http_mu_): its client certificate
  SocketTarget target_;             // watches and probes: where and how to connect
  const std::string host_header_;  // of watches and probes
  // When this client last heard the server (Clock::Now() in nanoseconds):
  // a quiet watch's probe is skipped while it is recent.
  std::shared_ptr<std::atomic<int64_t>> heard_;
  // Held while a watch's liveness probe is out (shared with the streams).
  std::shared_ptr<std::mutex> probing_ = std::make_shared<std::mutex>();
  std::mutex wakes_mu_;
  std::vector<std::weak_ptr<Wake>> wakes_;  // GUARDED_BY(wakes_mu_): fired by Shutdown()
  std::mutex rng_mu_;
  std::mt19937_64 rng_{options_.seed != 0 ? options_.seed : std::random_device{}()};  // GUARDED_BY(rng_mu_): probe jitter
  // Shutdown() trips shutdown_, which fires every open watch's Wake. In
  // this order so that the registration is destroyed first.
  Cancellation shutdown_;
  Cancellation::Registration shutdown_registration_;
};

}  // namespace

StatusOr<std::unique_ptr<KubeClient>> NewRestKubeClient(const RestConfig& config, const Clock& clock,
                                                        RestOptions options) {
  if (config.server.rfind("http://", 0) != 0 && config.server.rfind("https://", 0) != 0) {
    return Invalid(config.origin + ": server \"" + config.server + "\" is not an http(s) URL");
  }
  auto tls = LoadTlsMaterial(config);
  if (!tls.ok()) return tls.status();
  if (config.insecure_skip_tls_verify && !tls->ca.empty()) {
    // Why: client-go refuses this combination too: which one was meant?
    return Invalid(config.origin +
                   ": certificate-authority and insecure-skip-tls-verify are mutually exclusive");
  }
  if (config.insecure_skip_tls_verify && config.server.rfind("https://", 0) == 0) {
    LOG(WARNING) << config.origin << ": insecure-skip-tls-verify is set: the API server's "
                 << "certificate is not verified, so anyone on the network path to "
                 << config.server << " can impersonate it and receive our credentials";
  }
  auto proxy = ChooseProxy(config.server, config.proxy_url, [](const char* name) {
    const char* v = std::getenv(name);
    return std::string(v == nullptr ? "" : v);
  });
  if (!proxy.ok()) return Invalid(config.origin + ": " + proxy.status().message());
  if (!proxy->url.empty()) {
    LOG(INFO) << "reaching " << config.server << " through the HTTP proxy " << proxy->url << " ("
              << proxy->source << ")";
  }
  try {
    web::uri check(config.server);
    (void)check;
    if (!proxy->url.empty()) web::uri proxy_check(proxy->url);
    auto server = ParseServerUrl(config.server);
    if (!server.ok()) return Invalid(config.origin + ": server " + server.status().message());
    SocketTarget target;
    target.server = std::move(server).value();
    target.tls_server_name = config.tls_server_name;
    target.verify = !config.insecure_skip_tls_verify;
    target.proxy = *proxy;
    target.keepalive = options.keepalive;
    if (!proxy->url.empty()) {
      auto proxy_url = ParseServerUrl(proxy->url);
      if (!proxy_url.ok()) return Invalid(config.origin + ": proxy " + proxy_url.status().message());
      target.proxy_url = std::move(proxy_url).value();
    }
    return std::unique_ptr<KubeClient>(std::make_unique<RestKubeClient>(
        config, clock, std::move(options), std::move(tls).value(), std::move(proxy).value(),
        std::move(target)));
  } catch (const std::exception& e) {
    return Invalid(config.origin + ": server \"" + config.server + "\": " + e.what());
  }
}

}  // namespace routestatus::kubeclient::rest
