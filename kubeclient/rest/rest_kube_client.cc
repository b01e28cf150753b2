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
#include <stdexcept>
#include <utility>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <cpprest/http_client.h>
#include <glog/logging.h>
#include <nlohmann/json.hpp>

#include "base/cancellation.h"
#include "base/token_bucket.h"
#include "kubeclient/rest/bounded_body_buffer.h"
#include "kubeclient/rest/exec_credential.h"
#include "kubeclient/rest/line_splitter.h"
#include "kubeclient/rest/proxy.h"
#include "kubeclient/rest/rest_paths.h"
#include "kubeclient/rest/tls_material.h"
#include "kubeclient/rest/token_source.h"

namespace routestatus::kubeclient::rest {
namespace {

namespace http = web::http;
namespace client = web::http::client;
using nlohmann::json;

Status Invalid(std::string m) { return Status(StatusCode::kInvalid, std::move(m)); }

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

// Cancels `cts` when `parent` is cancelled, for as long as it lives.
// Why not create_linked_source: pplx never deregisters that callback, so
// one per request would pile up on the client's token for ever.
class LinkedCancel {
 public:
  LinkedCancel(pplx::cancellation_token parent,
               std::shared_ptr<pplx::cancellation_token_source> cts)
      : parent_(std::move(parent)),
        registration_(parent_.register_callback([cts] { cts->cancel(); })) {}
  ~LinkedCancel() {
    try {
      parent_.deregister_callback(registration_);
    } catch (...) {  // already cancelled: nothing registered
    }
  }
  LinkedCancel(const LinkedCancel&) = delete;
  LinkedCancel& operator=(const LinkedCancel&) = delete;

 private:
  pplx::cancellation_token parent_;
  pplx::cancellation_token_registration registration_;
};

// How far one attempt got, shared with cpprest's callbacks (which may run
// after the attempt was abandoned).
struct AttemptProgress {
  std::mutex mu;
  std::condition_variable cv;
  bool written = false;  // GUARDED_BY(mu): connected, and the request headers written
  bool done = false;     // GUARDED_BY(mu): the response headers (or an error) arrived
};

// An open watch over a streaming response body. See WatchStream.
// Unread bytes of a watch that its connection may buffer before it stops
// reading the socket (BoundedBodyBuffer): about 700 routes' events.
constexpr size_t kWatchBufferBytes = 1 << 20;

// Closes `buffer` for writing once `response`'s body has all arrived (cpprest
// never closes a stream set on a request), with the connection's error if
// the body failed midway: its reader then sees the end, or the error.
void CloseWhenComplete(const http::http_response& response,
                       const std::shared_ptr<BoundedBodyBuffer>& buffer) {
  response.content_ready().then([buffer](pplx::task<http::http_response> done) {
    std::exception_ptr failure;
    try {
      done.wait();
    } catch (...) {
      failure = std::current_exception();
    }
    // Why no wait(): this runs on cpprest's thread pool, and a pool thread
    // blocked on a task never ran again once the pool stopped at exit (the
    // process hung in its exit handlers).
    auto closing =
        failure ? buffer->close(std::ios_base::out, failure) : buffer->close(std::ios_base::out);
    closing.then([](pplx::task<void> closed) {
      try {
        closed.get();  // observed: pplx traps on an unobserved failed task
      } catch (...) {
      }
    });
  });
}

// The text of an error response's body (a Status object), read from the
// buffer it was written into; at most 1 MiB.
std::string ReadErrorBody(const std::shared_ptr<BoundedBodyBuffer>& buffer) {
  constexpr size_t kMaxErrorBody = 1 << 20;
  std::string text;
  std::array<uint8_t, 16 * 1024> chunk;
  while (text.size() < kMaxErrorBody) {
    const size_t got = buffer->getn(chunk.data(), chunk.size()).get();
    if (got == 0) break;
    buffer->Consumed(got);
    text.append(reinterpret_cast<const char*>(chunk.data()), got);
  }
  buffer->Release();
  return text;
}

class RestWatchStream final : public WatchStream {
 public:
  // `silence` > 0: Next() ends kTimeout once nothing arrived for that long
  // (on `clock`, which must outlive the stream).
  RestWatchStream(std::shared_ptr<client::http_client> http,
                  std::shared_ptr<pplx::cancellation_token_source> cts,
                  std::shared_ptr<LinkedCancel> link, http::http_response response,
                  std::shared_ptr<BoundedBodyBuffer> buffer, size_t max_line, std::string what,
                  const Clock& clock, Duration silence)
      : clock_(clock),
        silence_(silence),
        http_(std::move(http)),
        cts_(std::move(cts)),
        link_(std::move(link)),
        response_(std::move(response)),
        buffer_(std::move(buffer)),
        body_(buffer_),
        splitter_(max_line),
        max_line_(max_line),
        what_(std::move(what)),
        state_(std::make_shared<ReadState>()) {}

  ~RestWatchStream() override { Cancel(); }

  StatusOr<WatchEvent> Next() override { return NextEvent(/*raw=*/false); }
  StatusOr<WatchEvent> NextRaw() override { return NextEvent(/*raw=*/true); }

 private:
  StatusOr<WatchEvent> NextEvent(bool raw) {
    if (!final_.ok()) return final_;
    for (;;) {
      std::string_view line;
      switch (splitter_.Next(&line)) {
        case LineSplitter::Result::kLine: {
          if (line.empty()) continue;
          auto ev = raw ? DecodeWatchEventText(line) : DecodeWatchEvent(line);
          if (!ev.ok()) {
            LOG(WARNING) << what_ << ": undecodable watch event (" << ev.status().message()
                         << "), " << line.size() << " bytes";
            return Finish(Invalid(what_ + ": bad watch event: " + ev.status().message()));
          }
          return ev;
        }
        case LineSplitter::Result::kTooLong:
          return Finish(Invalid(what_ + ": watch event larger than " + std::to_string(max_line_) +
                                " bytes"));
        case LineSplitter::Result::kNeedMore:
          break;
      }
      if (Status s = ReadMore(); !s.ok()) return Finish(s);
    }
  }


 public:
  void Cancel() override {
    {
      std::lock_guard<std::mutex> l(state_->mu);
      if (state_->cancelled) return;
      state_->cancelled = true;
    }
    state_->cv.notify_all();
    // Why first: a write held for room would keep the connection from
    // noticing the cancellation.
    buffer_->Release();
    // Why: without this the connection keeps reading in the background.
    try {
      cts_->cancel();
    } catch (...) {
    }
  }

 private:
  // Result of one pending single-byte read, shared with its continuation
  // (which may run after this stream is gone).
  struct ReadState {
    std::mutex mu;
    std::condition_variable cv;
    bool cancelled = false;  // GUARDED_BY(mu)
    bool done = false;       // GUARDED_BY(mu)
    int value = 0;           // GUARDED_BY(mu)
    std::exception_ptr error;  // GUARDED_BY(mu)
  };

  Status Finish(Status s) {
    final_ = s;
    Cancel();
    return s;
  }

  // Waits for at least one byte, then takes what is already buffered, up to
  // 64 KiB. Why: getn(64K) blocks until 64 KiB arrive and read_line is slow;
  // one byte then in_avail() bytes is both prompt and fast.
  Status ReadMore() {
    auto state = state_;
    {
      std::lock_guard<std::mutex> l(state->mu);
      if (state->cancelled) return Status(StatusCode::kCancelled, what_ + ": cancelled");
      state->done = false;
      state->error = nullptr;
    }
    try {
      body_.bumpc().then([state](pplx::task<int> t) {
        int v = 0;
        std::exception_ptr err;
        try {
          v = t.get();
        } catch (...) {
          err = std::current_exception();
        }
        {
          std::lock_guard<std::mutex> l(state->mu);
          state->value = v;
          state->error = err;
          state->done = true;
        }
        state->cv.notify_all();
      });
    } catch (...) {
      return TransportError(what_, std::current_exception());
    }
    int value;
    {
      std::unique_lock<std::mutex> l(state->mu);
      const SteadyTime deadline =
          silence_ > Duration::zero() ? clock_.Now() + silence_ : SteadyTime::max();
      while (!state->done && !state->cancelled) {
        if (deadline == SteadyTime::max()) {
          state->cv.wait(l);
          continue;
        }
        if (clock_.Now() >= deadline) {
          // Why: a blackholed path (no FIN, no RST) leaves the socket open
          // for ever; the server's bookmarks are our only heartbeat.
          return Status(StatusCode::kTimeout,
                        what_ + ": timed out: nothing received for " +
                            std::to_string(std::chrono::duration_cast<std::chrono::seconds>(
                                               silence_).count()) +
                            " s (no event, no bookmark); the connection is presumed dead");
        }
        clock_.WaitUntil(state->cv, l, deadline);
      }
      if (state->cancelled) return Status(StatusCode::kCancelled, what_ + ": cancelled");
      if (state->error) return TransportError(what_, state->error);
      value = state->value;
    }
    if (value == concurrency::streams::streambuf<uint8_t>::traits::eof()) {
      if (splitter_.pending() > 0) {
        return Status(StatusCode::kUnavailable, what_ + ": watch stream truncated mid-event (" +
                                                    std::to_string(splitter_.pending()) + " bytes)");
      }
      return Status(StatusCode::kClosed, what_ + ": watch closed by the server");
    }
    char first = static_cast<char>(value);
    splitter_.Feed(std::string_view(&first, 1));
    buffer_->Consumed(1);
    // Why at most one buffer's worth: a stream that arrives faster than it
    // is decoded (a watch-list's initial events: tens of MB) was drained
    // whole into the splitter at each call, which then held a second copy
    // of everything cpprest had buffered and grew by reallocation (12% of a
    // 50,000-route restart's CPU went to copying it).
    try {
      const size_t n = std::min(body_.in_avail(), buf_.size());
      if (n > 0) {
        const size_t got = body_.getn(reinterpret_cast<uint8_t*>(buf_.data()), n).get();
        splitter_.Feed(std::string_view(buf_.data(), got));
        buffer_->Consumed(got);
      }
    } catch (...) {
      return TransportError(what_, std::current_exception());
    }
    return Status::Ok();
  }

  const Clock& clock_;
  const Duration silence_;
  std::shared_ptr<client::http_client> http_;  // keeps the connection's client alive
  std::shared_ptr<pplx::cancellation_token_source> cts_;
  std::shared_ptr<LinkedCancel> link_;  // Shutdown() of the client cancels cts_
  http::http_response response_;
  std::shared_ptr<BoundedBodyBuffer> buffer_;  // the body, as cpprest writes it
  concurrency::streams::streambuf<uint8_t> body_;  // reads buffer_
  LineSplitter splitter_;
  const size_t max_line_;
  const std::string what_;
  std::shared_ptr<ReadState> state_;
  std::array<char, 64 * 1024> buf_;
  Status final_;  // sticky: once failed or closed, Next() repeats it
};

// The cpprest-backed KubeClient. Thread-safe (http_client is).
class RestKubeClient final : public KubeClient {
 public:
  RestKubeClient(const RestConfig& config, const Clock& clock, RestOptions options,
                 TlsMaterial tls, ProxyChoice proxy)
      : config_(config),
        proxy_(std::move(proxy)),
        clock_(clock),
        options_(std::move(options)),
        tls_(std::move(tls)),
        https_(config.server.rfind("https://", 0) == 0),
        bucket_(clock, options_.qps, options_.burst),
        token_(config.token, config.token_file),
        user_agent_(options_.user_agent.empty() ? DefaultUserAgent(options_.version)
                                                : options_.user_agent) {
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
    shutdown_registration_ = shutdown_.OnCancel([this] { shutdown_cts_.cancel(); });
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
    std::string path = ResourcePath(res, ns) + WatchQuery(options);
    std::chrono::seconds idle = options.timeout.count() > 0
                                    ? options.timeout + options_.watch_timeout_margin
                                    : options_.watch_idle_timeout;
    auto sent = Send(http::methods::GET, path, nullptr, kSafe, idle, kJsonType,
                     /*bounded_body=*/true);
    if (!sent.ok()) return sent.status();
    Sent s = std::move(sent).value();
    const Duration silence = options.allow_bookmarks
                                 ? Duration(options_.watch_silence_timeout)
                                 : Duration::zero();
    return std::unique_ptr<WatchStream>(std::make_unique<RestWatchStream>(
        std::move(s.http), std::move(s.cts), std::move(s.link), std::move(s.response),
        std::move(s.body), options_.max_watch_line_bytes, "watch " + path, clock_, silence));
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

  // A sent request: its response (body unread), the client that carries
  // it and its own cancellation source (a watch's stream keeps it).
  struct Sent {
    http::http_response response;
    std::shared_ptr<client::http_client> http;
    std::shared_ptr<pplx::cancellation_token_source> cts;
    std::shared_ptr<LinkedCancel> link;  // until the body is read
    std::shared_ptr<BoundedBodyBuffer> body;  // with bounded_body: the body goes here
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
    auto sent = Send(method, path, body, replay, std::chrono::seconds(0), content_type);
    if (!sent.ok()) return sent.status();
    try {
      return sent->response.extract_utf8string(true).get();
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

  // Waits until the attempt's response headers (or its failure) arrive.
  // kTimeout when no connection was made within connect_timeout or, for a
  // watch (`watch`), no response started within request_timeout (other
  // requests have cpprest's own inactivity timeout for that).
  Status AwaitResponseHeaders(AttemptProgress& p, const std::string& what, bool watch) {
    const SteadyTime start = clock_.Now();
    std::unique_lock<std::mutex> l(p.mu);
    while (!p.done) {
      SteadyTime deadline = SteadyTime::max();
      if (!p.written && options_.connect_timeout.count() > 0) {
        deadline = start + options_.connect_timeout;
      } else if (p.written && watch) {
        deadline = start + options_.request_timeout;
      }
      if (deadline == SteadyTime::max()) {
        p.cv.wait(l);
        continue;
      }
      if (clock_.Now() >= deadline) {
        if (!p.written) {
          return Status(StatusCode::kTimeout,
                        what + ": timed out: no connection to " + config_.server + " within " +
                            std::to_string(options_.connect_timeout.count()) +
                            " ms (TCP connect, TLS handshake or proxy CONNECT)");
        }
        return Status(StatusCode::kTimeout,
                      what + ": timed out: the watch's response did not start within " +
                          std::to_string(options_.request_timeout.count()) + " s");
      }
      clock_.WaitUntil(p.cv, l, deadline);
    }
    return Status::Ok();
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
  //   - Shutdown() ends every wait and the request in flight (kCancelled);
  //   - no connection within connect_timeout, or a watch whose response
  //     does not start within request_timeout: kTimeout, not retried.
  // `watch_idle` > 0: a watch, on its own client with that inactivity
  // timeout. `content_type` is the body's media type. With `bounded_body`
  // (watches), the response body is written into Sent::body, which holds
  // the connection while kWatchBufferBytes are unread (closed for reading
  // when the body ends); else it is cpprest's own unbounded buffer
  // (response.body()).
  StatusOr<Sent> Send(const http::method& method, const std::string& path, const json* body,
                      Replay replay, std::chrono::seconds watch_idle = std::chrono::seconds(0),
                      const char* content_type = kJsonType, bool bounded_body = false) {
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
        // Why a source per attempt: the connect and watch-start deadlines
        // below end one attempt without touching the others.
        sent.cts = std::make_shared<pplx::cancellation_token_source>();
        sent.link = std::make_shared<LinkedCancel>(shutdown_cts_.get_token(), sent.cts);
        if (watch_idle.count() > 0) {
          sent.http = NewHttpClient(watch_idle, TlsFor(*creds));
        } else if (replay == kUnsafe) {
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
        if (bounded_body) {
          sent.body = std::make_shared<BoundedBodyBuffer>(kWatchBufferBytes);
          req.set_response_stream(
              concurrency::streams::streambuf<uint8_t>(sent.body).create_ostream());
        }
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
        pplx::task<http::http_response> task = sent.http->request(req, sent.cts->get_token());
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
        if (Status stalled = AwaitResponseHeaders(*progress, what, watch_idle.count() > 0);
            !stalled.ok()) {
          // Why not wait for the task: cpprest closes the socket on cancel
          // except inside a proxy's CONNECT, where only its own timer ends it.
          sent.cts->cancel();
          if (shutdown_.cancelled()) return Cancelled(what);
          VLOG(1) << stalled.message();
          return stalled;
        }
        sent.response = task.get();
        if (sent.body) CloseWhenComplete(sent.response, sent.body);
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
        std::string text = sent.body ? ReadErrorBody(sent.body)
                                     : sent.response.extract_utf8string(true).get();
        error = StatusFromResponse(code, text, retry_after);
      } catch (...) {
        if (shutdown_.cancelled()) return Cancelled(what);
        return TransportError(what, std::current_exception());
      }
      if (code == 401 && exec_ && !reauthenticated) {
        reauthenticated = true;
        VLOG(1) << what << ": 401 with the exec plugin's credential; running the plugin again";
        NoteRetry("unauthorized");
        if (auto fresh = exec_->Refresh(creds->exec); !fresh.ok()) return fresh.status();
        continue;
      }
      bool retryable = code == 429 || (code >= 500 && error.retry_after().has_value());
      if (!retryable || attempt >= options_.max_retries) {
        VLOG(2) << what << ": " << error.ToString();
        return error;
      }
      ++attempt;
      std::chrono::milliseconds wait =
          std::min(error.retry_after().value_or(std::chrono::seconds(1)), options_.max_retry_wait);
      VLOG(2) << what << ": HTTP " << code << ", retrying in " << wait.count() << " ms";
      if (!clock_.SleepFor(wait, &shutdown_)) return Cancelled(what);
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
  // Shutdown() trips shutdown_, which cancels shutdown_cts_: every request's
  // token is, or is linked to, its token. In this order so that the
  // registration is destroyed first.
  Cancellation shutdown_;
  pplx::cancellation_token_source shutdown_cts_;
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
    return std::unique_ptr<KubeClient>(std::make_unique<RestKubeClient>(
        config, clock, std::move(options), std::move(tls).value(), std::move(proxy).value()));
  } catch (const std::exception& e) {
    return Invalid(config.origin + ": server \"" + config.server + "\": " + e.what());
  }
}

}  // namespace routestatus::kubeclient::rest
