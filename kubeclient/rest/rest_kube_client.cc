// The only translation unit that includes cpprestsdk (each include of
// http_client.h costs ~6 s and ~550 MB of compiler memory). Every cpprest
// and boost exception is caught here and turned into a Status.
#include "kubeclient/rest/rest_kube_client.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <fstream>
#include <mutex>
#include <sstream>
#include <utility>

#include <cpprest/http_client.h>
#include <glog/logging.h>
#include <nlohmann/json.hpp>

#include "kubeclient/rest/line_splitter.h"
#include "kubeclient/rest/rest_paths.h"
#include "kubeclient/rest/token_bucket.h"
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

// PEM material resolved from data or files, shared with the TLS callback.
struct TlsMaterial {
  std::string ca;
  std::string cert;
  std::string key;
};

bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return true;
}

// Applies the material to an OpenSSL context; throws (boost::system) on bad PEM.
void ApplyTls(const TlsMaterial& tls, boost::asio::ssl::context& ctx) {
  if (!tls.ca.empty()) ctx.add_certificate_authority(boost::asio::buffer(tls.ca));
  if (!tls.cert.empty()) ctx.use_certificate_chain(boost::asio::buffer(tls.cert));
  if (!tls.key.empty()) {
    ctx.use_private_key(boost::asio::buffer(tls.key), boost::asio::ssl::context::pem);
  }
}

// Loads and checks the TLS material of `cfg`; messages name the source.
StatusOr<std::shared_ptr<TlsMaterial>> LoadTls(const RestConfig& cfg) {
  auto tls = std::make_shared<TlsMaterial>();
  struct Item {
    const std::string& data;
    const std::string& file;
    std::string* out;
    const char* what;
  };
  Item items[] = {{cfg.ca_data, cfg.ca_file, &tls->ca, "certificate-authority"},
                  {cfg.client_cert_data, cfg.client_cert_file, &tls->cert, "client-certificate"},
                  {cfg.client_key_data, cfg.client_key_file, &tls->key, "client-key"}};
  for (const Item& it : items) {
    if (!it.data.empty()) {
      *it.out = it.data;
    } else if (!it.file.empty() && !ReadFile(it.file, it.out)) {
      return Invalid(cfg.origin + ": " + it.what + " " + it.file + ": cannot read the file");
    }
  }
  // Why: check each piece alone so the message says which one is bad.
  const std::pair<TlsMaterial, const char*> checks[] = {
      {TlsMaterial{tls->ca, "", ""}, "certificate-authority"},
      {TlsMaterial{"", tls->cert, ""}, "client-certificate"},
      {TlsMaterial{"", "", tls->key}, "client-key"}};
  for (const auto& [m, what] : checks) {
    try {
      boost::asio::ssl::context ctx(boost::asio::ssl::context::tls_client);
      ApplyTls(m, ctx);
    } catch (const std::exception& e) {
      return Invalid(cfg.origin + ": " + what + ": not usable PEM (" + e.what() + ")");
    }
  }
  if (!tls->cert.empty()) {
    try {
      boost::asio::ssl::context ctx(boost::asio::ssl::context::tls_client);
      ApplyTls(*tls, ctx);
    } catch (const std::exception& e) {
      return Invalid(cfg.origin + ": client-key does not match client-certificate (" +
                     std::string(e.what()) + ")");
    }
  }
  return tls;
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

// An open watch over a streaming response body. See WatchStream.
class RestWatchStream final : public WatchStream {
 public:
  RestWatchStream(std::shared_ptr<client::http_client> http,
                  std::shared_ptr<pplx::cancellation_token_source> cts, http::http_response response,
                  size_t max_line, std::string what)
      : http_(std::move(http)),
        cts_(std::move(cts)),
        response_(std::move(response)),
        body_(response_.body().streambuf()),
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

  // Waits for at least one byte, then takes everything already buffered.
  // Why: getn(64K) blocks until 64 KiB arrive and read_line is slow; one
  // byte then in_avail() bytes is both prompt and fast.
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
      state->cv.wait(l, [&] { return state->done || state->cancelled; });
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
    try {
      size_t avail = body_.in_avail();
      while (avail > 0) {
        size_t n = std::min(avail, buf_.size());
        size_t got = body_.getn(reinterpret_cast<uint8_t*>(buf_.data()), n).get();
        if (got == 0) break;
        splitter_.Feed(std::string_view(buf_.data(), got));
        avail -= std::min(avail, got);
      }
    } catch (...) {
      return TransportError(what_, std::current_exception());
    }
    return Status::Ok();
  }

  std::shared_ptr<client::http_client> http_;  // keeps the connection's client alive
  std::shared_ptr<pplx::cancellation_token_source> cts_;
  http::http_response response_;
  concurrency::streams::streambuf<uint8_t> body_;
  LineSplitter splitter_;
  const size_t max_line_;
  const std::string what_;
  std::shared_ptr<ReadState> state_;
  std::array<char, 64 * 1024> buf_;
  Status final_;  // sticky: once failed or closed, Next() repeats it
};

// The cpprestsdk-backed KubeClient. Thread-safe (http_client is).
class RestKubeClient final : public KubeClient {
 public:
  RestKubeClient(const RestConfig& config, const Clock& clock, RestOptions options,
                 std::shared_ptr<TlsMaterial> tls)
      : config_(config),
        clock_(clock),
        options_(std::move(options)),
        tls_(std::move(tls)),
        bucket_(clock, options_.qps, options_.burst),
        token_(config.token, config.token_file),
        user_agent_(options_.user_agent.empty() ? DefaultUserAgent(options_.version)
                                                : options_.user_agent) {
    http_ = NewHttpClient(options_.request_timeout);
  }

  StatusOr<json> Get(const ResourceRef& res, const std::string& ns,
                     const std::string& name) override {
    return DoJson(http::methods::GET, ResourcePath(res, ns, name), nullptr);
  }

  StatusOr<ListPage> List(const ResourceRef& res, const std::string& ns,
                          const ListOptions& options) override {
    auto doc = DoJson(http::methods::GET, ResourcePath(res, ns) + ListQuery(options), nullptr);
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
    auto text = DoText(http::methods::GET, path, nullptr);
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
    std::shared_ptr<client::http_client> http;
    try {
      http = NewHttpClient(idle);
    } catch (...) {
      return TransportError("watch " + path, std::current_exception());
    }
    auto cts = std::make_shared<pplx::cancellation_token_source>();
    auto resp = Send(*http, http::methods::GET, path, nullptr, cts.get());
    if (!resp.ok()) return resp.status();
    return std::unique_ptr<WatchStream>(std::make_unique<RestWatchStream>(
        std::move(http), std::move(cts), std::move(resp).value(), options_.max_watch_line_bytes,
        "watch " + path));
  }

  StatusOr<json> Create(const ResourceRef& res, const std::string& ns,
                        const json& object) override {
    return DoJson(http::methods::POST, ResourcePath(res, ns), &object);
  }

  StatusOr<json> Update(const ResourceRef& res, const json& object) override {
    auto path = ObjectPath(res, object, "");
    if (!path.ok()) return path.status();
    return DoJson(http::methods::PUT, path.value(), &object);
  }

  StatusOr<json> UpdateStatus(const ResourceRef& res, const json& object) override {
    auto path = ObjectPath(res, object, "status");
    if (!path.ok()) return path.status();
    return DoJson(http::methods::PUT, path.value(), &object);
  }

  Status Delete(const ResourceRef& res, const std::string& ns, const std::string& name) override {
    auto doc = DoJson(http::methods::DEL, ResourcePath(res, ns, name), nullptr);
    return doc.ok() ? Status::Ok() : doc.status();
  }

 private:
  std::shared_ptr<client::http_client> NewHttpClient(std::chrono::seconds timeout) {
    client::http_client_config cfg;
    cfg.set_timeout(timeout);
    cfg.set_validate_certificates(!config_.insecure_skip_tls_verify);
    auto tls = tls_;
    if (!tls->ca.empty() || !tls->cert.empty()) {
      cfg.set_ssl_context_callback([tls](boost::asio::ssl::context& ctx) { ApplyTls(*tls, ctx); });
    }
    return std::make_shared<client::http_client>(web::uri(config_.server), cfg);
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

  // One request; the 2xx response body as text.
  StatusOr<std::string> DoText(const http::method& method, const std::string& path,
                               const json* body) {
    StatusOr<http::http_response> resp = Send(*http_, method, path, body, nullptr);
    if (!resp.ok()) return resp.status();
    try {
      return resp.value().extract_utf8string(true).get();
    } catch (...) {
      return TransportError(method + " " + path, std::current_exception());
    }
  }

  // One request, decoded as JSON.
  StatusOr<json> DoJson(const http::method& method, const std::string& path, const json* body) {
    auto got = DoText(method, path, body);
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

  // Sends a request (rate-limited, authenticated), retrying 429 and 5xx with
  // Retry-After as RestOptions says. Returns the 2xx response with its body
  // unread, or the decoded error.
  StatusOr<http::http_response> Send(client::http_client& http, const http::method& method,
                                     const std::string& path, const json* body,
                                     pplx::cancellation_token_source* cts) {
    const std::string what = method + " " + path;
    // Why: dump() throws on invalid UTF-8 unless told to replace it.
    std::string payload =
        body ? body->dump(-1, ' ', false, json::error_handler_t::replace) : std::string();
    for (int attempt = 0;; ++attempt) {
      bucket_.Acquire();
      auto token = token_.Token();
      if (!token.ok()) return token.status();
      Status error;
      try {
        http::http_request req(method);
        req.set_request_uri(web::uri(path));
        req.headers().add("Accept", "application/json");
        req.headers().add("User-Agent", user_agent_);
        if (!token.value().empty()) req.headers().add("Authorization", "Bearer " + token.value());
        if (body) {
          // Why: set_body(std::string) reinterprets a char buffer as uint8_t
          // (UBSan flags it); hand cpprest a uint8_t stream instead.
          std::vector<uint8_t> bytes(payload.begin(), payload.end());
          req.set_body(concurrency::streams::bytestream::open_istream(std::move(bytes)),
                       payload.size(), "application/json");
        }
        http::http_response resp =
            (cts ? http.request(req, cts->get_token()) : http.request(req)).get();
        int code = resp.status_code();
        if (code >= 200 && code < 300) return resp;
        std::optional<std::chrono::milliseconds> retry_after;
        auto h = resp.headers().find("Retry-After");
        if (h != resp.headers().end()) retry_after = ParseRetryAfter(h->second);
        std::string text = resp.extract_utf8string(true).get();
        error = StatusFromResponse(code, text, retry_after);
        bool retryable = code == 429 || (code >= 500 && retry_after.has_value());
        if (!retryable || attempt >= options_.max_retries) {
          VLOG(2) << what << ": " << error.ToString();
          return error;
        }
        std::chrono::milliseconds wait =
            std::min(error.retry_after().value_or(std::chrono::seconds(1)), options_.max_retry_wait);
        VLOG(2) << what << ": HTTP " << code << ", retrying in " << wait.count() << " ms";
        WaitFor(wait);
      } catch (...) {
        return TransportError(what, std::current_exception());
      }
    }
  }

  void WaitFor(std::chrono::milliseconds d) {
    std::mutex mu;
    std::condition_variable cv;
    std::unique_lock<std::mutex> l(mu);
    SteadyTime deadline = clock_.Now() + d;
    while (clock_.Now() < deadline) clock_.WaitUntil(cv, l, deadline);
  }

  const RestConfig config_;
  const Clock& clock_;
  const RestOptions options_;
  const std::shared_ptr<TlsMaterial> tls_;
  TokenBucket bucket_;
  TokenSource token_;
  const std::string user_agent_;
  std::shared_ptr<client::http_client> http_;
};

}  // namespace

StatusOr<std::unique_ptr<KubeClient>> NewRestKubeClient(const RestConfig& config, const Clock& clock,
                                                        RestOptions options) {
  if (config.server.rfind("http://", 0) != 0 && config.server.rfind("https://", 0) != 0) {
    return Invalid(config.origin + ": server \"" + config.server + "\" is not an http(s) URL");
  }
  auto tls = LoadTls(config);
  if (!tls.ok()) return tls.status();
  try {
    web::uri check(config.server);
    (void)check;
    return std::unique_ptr<KubeClient>(
        std::make_unique<RestKubeClient>(config, clock, std::move(options), std::move(tls).value()));
  } catch (const std::exception& e) {
    return Invalid(config.origin + ": server \"" + config.server + "\": " + e.what());
  }
}

}  // namespace routestatus::kubeclient::rest
