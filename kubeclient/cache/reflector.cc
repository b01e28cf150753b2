#include "kubeclient/cache/reflector.h"

#include <algorithm>
#include <mutex>

#include <glog/logging.h>
#include <nlohmann/json.hpp>

namespace routestatus::kubeclient::cache {

namespace {

// Logs a fallback from a streamed initial state to lists once per process
// at INFO (every informer of a replica meets the same server), and each
// informer's own at VLOG(1). Why INFO: kube 1.26, 1.33 (its WatchList gate
// is off by default) and 1.32 over an etcd before 3.4.31/3.5.13 do not
// stream; the list serves as well, nothing an operator must act on.
void LogStreamFallback(const std::string& name, StreamFallback reason, const Status& why,
                       Duration retry_after) {
  static std::once_flag logged;
  const auto minutes = std::chrono::duration_cast<std::chrono::minutes>(retry_after).count();
  std::call_once(logged, [&] {
    LOG(INFO) << "the API server did not stream the initial state ("
              << StreamFallbackName(reason) << ": " << why.ToString()
              << "); informers list instead (from the API server's watch cache where it has "
              << "one) and try streaming again at the first relist " << minutes
              << " min later; kube 1.26, 1.33, and 1.32 over an etcd without "
              << "RequestWatchProgress do not stream (logged once a process)";
  });
  VLOG(1) << name << ": listing: the streamed initial state failed ("
          << StreamFallbackName(reason) << ": " << why.ToString() << ")";
}

// Failures that mean the server is not there (down, restarting, cut off):
// retried on the reconnect schedule.
bool ServerGone(const Status& s) {
  FailureClass c = FailureClassOf(s);
  return c == FailureClass::kConnectionRefused || c == FailureClass::kConnectionReset ||
         c == FailureClass::kTimeout;
}

// A list failure that means the watch cache cannot serve the version we
// asked for: 410 Gone / Expired, or kube-apiserver's 504 "Too large
// resource version" (the cache has not caught up within 3 s).
bool CacheCannotServe(const Status& s) {
  if (s.code() == StatusCode::kGone) return true;
  return s.code() == StatusCode::kTimeout && s.http_code() == 504 &&
         s.message().find("resource version") != std::string::npos;
}

}  // namespace

Reflector::Reflector(KubeClient& client, const ResourceRef& resource, const Clock& clock,
                     DecodeFunc decode, InformerOptions options, TextDecodeFunc decode_text)
    : client_(client),
      resource_(resource),
      clock_(clock),
      decode_(std::move(decode)),
      decode_text_(std::move(decode_text)),
      options_(std::move(options)),
      backoff_(options_.backoff, options_.seed),
      reconnect_(options_.reconnect, options_.seed ^ 0x5851f42d4c957f2dULL),
      relist_guard_(options_.backoff, options_.seed ^ 0x2545f4914f6cdd1dULL),
      rng_(options_.seed ^ 0x9e3779b97f4a7c15ULL),
      recovery_rng_(options_.seed ^ 0xd1b54a32d192ed03ULL) {}

Reflector::~Reflector() { Stop(); }

void Reflector::AddHandler(RawEventHandler* handler) { handlers_.push_back(handler); }

void Reflector::Start() {
  CHECK(!thread_.joinable()) << options_.name << ": started twice";
  thread_ = std::thread([this] { Run(); });
}

void Reflector::Stop() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stopping_ = true;
    if (current_stream_ != nullptr) current_stream_->Cancel();
    cv_.notify_all();
  }
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

void Reflector::Run() {
  for (;;) {
    {
      std::lock_guard<std::mutex> l(mu_);
      if (stopping_) return;
      if (reset_backoff_) {
        backoff_.Reset();
        reconnect_.Reset();
        reset_backoff_ = false;
      }
    }
    Duration wait = Step();
    std::unique_lock<std::mutex> l(mu_);
    if (wait > Duration::zero()) {
      waiting_until_ = clock_.Now() + wait;
      ++waits_;
      cv_.notify_all();
    }
    // Why waiting_until_ is re-read: ServerAnswersAgain() may bring it forward.
    while (!stopping_ && waiting_until_ && clock_.Now() < *waiting_until_) {
      clock_.WaitUntil(cv_, l, *waiting_until_);
    }
    waiting_until_.reset();
  }
}

void Reflector::ServerAnswersAgain() {
  std::lock_guard<std::mutex> l(mu_);
  reset_backoff_ = true;
  if (!waiting_until_) return;
  const auto jitter_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(options_.recovery_jitter).count();
  std::uniform_int_distribution<int64_t> dist(0, std::max<int64_t>(jitter_ns - 1, 0));
  const SteadyTime soon = clock_.Now() + std::chrono::nanoseconds(dist(recovery_rng_));
  if (soon >= *waiting_until_) return;
  VLOG(1) << options_.name << ": the API server answers again; retrying within "
          << std::chrono::duration_cast<std::chrono::milliseconds>(soon - clock_.Now()).count()
          << " ms instead of "
          << std::chrono::duration_cast<std::chrono::milliseconds>(*waiting_until_ - clock_.Now())
                 .count()
          << " ms";
  waiting_until_ = soon;
  cv_.notify_all();
}

std::optional<SteadyTime> Reflector::AwaitIdleWait(uint64_t* seen) {
  std::unique_lock<std::mutex> l(mu_);
  while (!stopping_ && !synced_.load() && !(waiting_until_ && waits_ > *seen)) cv_.wait(l);
  if (stopping_ || synced_.load()) return std::nullopt;
  *seen = waits_;
  return waiting_until_;
}

bool Reflector::WaitForSync() {
  std::unique_lock<std::mutex> l(mu_);
  while (!stopping_ && !synced_.load()) cv_.wait(l);
  return synced_.load();
}

std::chrono::seconds Reflector::RandomWatchTimeout() {
  int64_t lo = options_.watch_timeout_min.count();
  int64_t hi = std::max(lo, static_cast<int64_t>(options_.watch_timeout_max.count()));
  std::uniform_int_distribution<int64_t> dist(lo, hi);
  return std::chrono::seconds(dist(rng_));
}

Duration Reflector::RetryDelay(const Status& s) {
  if (ServerGone(s)) return reconnect_.Next();
  Duration d = backoff_.Next();
  if (s.retry_after()) d = std::max<Duration>(d, *s.retry_after());
  return d;
}

Duration Reflector::Step() {
  if (need_list_) {
    Status s = ListAndReplace();
    if (s.ok()) {
      need_list_ = false;
      just_listed_ = true;
      reconnect_.Reset();
      // Why: the server answered; the failures' backoff ends here (issue
      // 23: a backoff grown by 30 s of forbidden lists made the next 410
      // wait 20 s with a stale cache).
      backoff_.Reset();
      return Duration::zero();
    }
    if (s.code() == StatusCode::kCancelled) return Duration::zero();
    LogListFailure(s);
    if (ServerGone(s)) just_listed_ = false;
    return RetryDelay(s);
  }
  SteadyTime started = clock_.Now();
  uint64_t events_before;
  {
    std::lock_guard<std::mutex> l(mu_);
    events_before = stats_.events_added + stats_.events_modified + stats_.events_deleted +
                    stats_.events_bookmark;
  }
  Status s = WatchOnce();
  uint64_t events_after;
  {
    std::lock_guard<std::mutex> l(mu_);
    events_after = stats_.events_added + stats_.events_modified + stats_.events_deleted +
                   stats_.events_bookmark;
  }
  bool delivered = events_after > events_before;
  bool lasted = clock_.Now() - started >= options_.min_healthy_watch;
  if (delivered) backoff_.Reset();
  if (delivered || lasted) {
    just_listed_ = false;
    relist_guard_.Reset();
  }
  if (!ServerGone(s)) reconnect_.Reset();
  switch (s.code()) {
    case StatusCode::kCancelled:
      return Duration::zero();
    case StatusCode::kGone:
      need_list_ = true;
      relisting_.store(true);
      // Why: a watch that 410s at once after every relist must not spin.
      if (just_listed_) {
        VLOG(1) << options_.name << ": resourceVersion " << last_rv_
                << " expired right after a relist; relisting after a backoff";
        return relist_guard_.Next();
      }
      // Why: any other 410 is an answer (history compacted, or a restarted
      // API server's fresh watch cache), not a failure: relist now.
      VLOG(2) << options_.name << ": resourceVersion " << last_rv_ << " expired; relisting";
      backoff_.Reset();
      return Duration::zero();
    case StatusCode::kClosed:
    case StatusCode::kOk:
      if (delivered || lasted) return Duration::zero();
      return backoff_.Next();
    default: {
      {
        std::lock_guard<std::mutex> l(mu_);
        ++stats_.watch_failures;
      }
      VLOG(1) << options_.name << ": watch ended: " << s.ToString();
      if (ServerGone(s)) just_listed_ = false;
      return RetryDelay(s);
    }
  }
}

void Reflector::LogListFailure(const Status& s) {
  // Why VLOG for no answer: the binary reports outages once per process.
  // Why not a WARNING per attempt: a server that refuses for minutes would
  // fill the log with one line per backoff step; the first one names it.
  const SteadyTime now = clock_.Now();
  const std::string text = s.ToString();
  if (IsNoAnswer(FailureClassOf(s)) ||
      (text == last_list_warning_ && now - last_list_warning_at_ < options_.list_failure_log_interval)) {
    VLOG(1) << options_.name << ": list failed: " << text;
    return;
  }
  LOG(WARNING) << options_.name << ": list failed: " << text;
  last_list_warning_ = text;
  last_list_warning_at_ = now;
}

Status Reflector::ListAndReplace() {
  ObjectMap buffer;
  // Why: a relist holds about as many objects as the store; growing the
  // buffer from empty rehashes it ~17 times at 100,000 objects.
  buffer.reserve(store_.Size());
  if (options_.stream_initial_events && (!stream_paused_ || clock_.Now() >= stream_paused_until_)) {
    std::string list_rv;
    std::optional<StreamFallback> fallback;
    Status s = StreamInto(&buffer, &list_rv, &fallback);
    if (s.ok()) {
      stream_paused_ = false;
      {
        std::lock_guard<std::mutex> l(mu_);
        stats_.streaming_paused = false;
      }
      ReplaceWith(std::move(buffer), list_rv, InitialStateSource::kStreamed);
      return Status::Ok();
    }
    if (!fallback) {
      std::lock_guard<std::mutex> l(mu_);
      if (s.code() != StatusCode::kCancelled) {
        ++stats_.list_failures;
        stats_.last_list_error = s.ToString();
      }
      return s;
    }
    NoteStreamFallback(*fallback, s);
    buffer.clear();
  }
  return ListInto(std::move(buffer));
}

void Reflector::NoteStreamFallback(StreamFallback reason, const Status& why) {
  stream_paused_ = true;
  stream_paused_until_ = clock_.Now() + options_.stream_retry_after;
  {
    std::lock_guard<std::mutex> l(mu_);
    ++stats_.stream_fallbacks[static_cast<size_t>(reason)];
    stats_.streaming_paused = true;
    stats_.last_stream_failure = why.ToString();
  }
  LogStreamFallback(options_.name, reason, why, options_.stream_retry_after);
}

Status Reflector::ListInto(ObjectMap buffer) {
  // As client-go's reflector lists: the first list from the API server's
  // watch cache (resourceVersion "0": no storage read; kube-apiserver
  // ignores the limit there and answers in one page), a relist at least as
  // new as what we have seen (resourceVersion = the last one, no limit:
  // the cache serves it once it has caught up, so it never goes back in
  // time), and a quorum read of storage, page by page, only when the cache
  // cannot serve (410, or a version too large for it).
  std::string list_rv;
  ListOptions lo;
  lo.label_selector = options_.label_selector;
  lo.resource_version = list_from_storage_ ? "" : (last_rv_.empty() ? "0" : last_rv_);
  lo.limit = lo.resource_version.empty() || lo.resource_version == "0" || paginated_
                 ? options_.page_size
                 : 0;
  bool from_storage = lo.resource_version.empty();
  for (;;) {
    {
      std::lock_guard<std::mutex> l(mu_);
      if (stopping_) return Status(StatusCode::kCancelled, "informer stopped");
    }
    std::string next;
    Status s = ListPageInto(lo, &buffer, &list_rv, &next);
    if (!s.ok() && lo.continue_token.empty() && !lo.resource_version.empty() &&
        CacheCannotServe(s)) {
      VLOG(1) << options_.name << ": the watch cache cannot serve resourceVersion "
              << lo.resource_version << " (" << s.ToString() << "); listing from storage";
      list_from_storage_ = true;
      from_storage = true;
      lo.resource_version.clear();
      lo.limit = options_.page_size;
      buffer.clear();
      continue;
    }
    if (s.code() == StatusCode::kGone && !lo.continue_token.empty()) {
      // Why: the continue token's version was compacted mid-list (a slow
      // list of many pages). Its pages cannot be finished; retrying the
      // same paginated list can expire the same way for ever. client-go's
      // pager falls back to one unpaginated list (FullListIfExpired).
      VLOG(1) << options_.name << ": continue token expired after " << buffer.size()
              << " objects; listing everything in one request";
      buffer.clear();
      list_rv.clear();
      lo.continue_token.clear();
      lo.limit = 0;
      continue;
    }
    if (!s.ok()) {
      std::lock_guard<std::mutex> l(mu_);
      if (s.code() != StatusCode::kCancelled) {
        ++stats_.list_failures;
        stats_.last_list_error = s.ToString();
      }
      return s;
    }
    if (next.empty()) break;
    // Why: a server that pages a cached list has its watch cache off for
    // this resource: keep paging (client-go's paginatedResult).
    if (!lo.resource_version.empty() && lo.continue_token.empty()) paginated_ = true;
    from_storage = true;  // Why: the watch cache answers in one page.
    lo.continue_token = std::move(next);
    // Why: kube-apiserver refuses a continue token with a resourceVersion
    // (the token carries it).
    lo.resource_version.clear();
  }
  list_from_storage_ = false;
  ReplaceWith(std::move(buffer), list_rv,
              from_storage ? InitialStateSource::kStorage : InitialStateSource::kWatchCache);
  return Status::Ok();
}

Status Reflector::StreamInto(ObjectMap* buffer, std::string* list_rv,
                             std::optional<StreamFallback>* fallback) {
  if (pending_stream_) {
    Untrack();
    pending_stream_.reset();
  }
  WatchOptions wo;
  // Why no resourceVersion: the current state, which the watch cache serves
  // once it has caught up (kube's consistent watch list).
  wo.label_selector = options_.label_selector;
  wo.allow_bookmarks = true;
  wo.send_initial_events = true;
  wo.timeout = RandomWatchTimeout();
  {
    std::lock_guard<std::mutex> l(mu_);
    if (stopping_) return Status(StatusCode::kCancelled, "informer stopped");
  }
  auto opened = client_.Watch(resource_, options_.namespace_name, wo);
  if (!opened.ok()) {
    StreamFallback reason;
    if (FallbackForOpenFailure(opened.status(), &reason)) *fallback = reason;
    return opened.status();
  }
  std::unique_ptr<WatchStream> stream = std::move(opened).value();
  if (!Track(stream.get())) return Status(StatusCode::kCancelled, "informer stopped");
  // Why every failure below falls back: the server accepted the request,
  // so it is there; whatever broke the stream, a list may not meet it
  // (client-go: "making progress is better than deadlocking").
  Status result;
  for (;;) {
    auto event = decode_text_ ? stream->NextRaw() : stream->Next();
    if (!event.ok()) {
      result = event.status();
      if (result.code() == StatusCode::kOk || result.code() == StatusCode::kClosed) {
        result = Status(StatusCode::kUnavailable,
                        "the watch list ended before the end of its initial events (" +
                            result.message() + ")");
      }
      *fallback = StreamFallback::kStreamEnded;
      break;
    }
    if (event->type == WatchEventType::kError) {
      {
        std::lock_guard<std::mutex> l(mu_);
        ++stats_.events_error;
      }
      result = event->ErrorStatus();
      if (result.ok()) result = Status(StatusCode::kInternal, "watch ERROR event without a status");
      *fallback = StreamFallback::kErrorEvent;
      break;
    }
    if (event->type == WatchEventType::kBookmark) {
      if (IsInitialEventsEnd(event->object)) {
        *list_rv = event->ResourceVersion();
        pending_stream_ = std::move(stream);  // Why: still tracked; WatchOnce goes on with it.
        return Status::Ok();
      }
      *fallback = StreamFallback::kNoEndBookmark;
      result = Status(StatusCode::kInvalid, "a bookmark without k8s.io/initial-events-end came "
                                            "before the end of the initial events");
      break;
    }
    if (event->type != WatchEventType::kAdded) {
      *fallback = StreamFallback::kNoEndBookmark;
      result = Status(StatusCode::kInvalid, std::string("a ") + WatchEventTypeName(event->type) +
                                                " event among the initial events");
      break;
    }
    BufferDecoded(event->object_text.empty() || !decode_text_ ? decode_(event->object)
                                                              : decode_text_(event->object_text),
                  buffer);
  }
  Untrack();
  stream->Cancel();
  {
    std::lock_guard<std::mutex> l(mu_);
    if (stopping_) {
      fallback->reset();
      return Status(StatusCode::kCancelled, "informer stopped");
    }
  }
  if (result.code() == StatusCode::kCancelled) fallback->reset();
  return result;
}

bool Reflector::Track(WatchStream* stream) {
  std::lock_guard<std::mutex> l(mu_);
  if (stopping_) {
    stream->Cancel();
    return false;
  }
  current_stream_ = stream;
  if (watches_opened_++ > 0) ++stats_.watch_restarts;
  return true;
}

void Reflector::Untrack() {
  std::lock_guard<std::mutex> l(mu_);
  current_stream_ = nullptr;
}

void Reflector::ReplaceWith(ObjectMap buffer, const std::string& list_rv,
                            InitialStateSource source) {
  const bool streamed = source == InitialStateSource::kStreamed;
  ReplaceResult result = store_.Replace(std::move(buffer));
  // Why before the handlers: the work they queue must find the cache current.
  relisting_.store(false);
  bool first = !synced_.load();
  last_rv_ = list_rv;
  tombstones_.clear();
  {
    std::lock_guard<std::mutex> l(mu_);
    stats_.tombstones = 0;
    ++stats_.lists;
    if (streamed) ++stats_.streamed_lists;
    ++stats_.initial_states[static_cast<size_t>(source)];
    if (!first) ++stats_.relists;
    stats_.last_sync = clock_.WallNow();
    stats_.last_list_error.clear();
    stats_.resource_version = last_rv_;
  }
  VLOG(2) << options_.name << ": " << InitialStateSourceName(source) << " at " << list_rv
          << ": " << result.added.size() << " added, " << result.updated.size() << " updated, "
          << result.deleted.size() << " deleted";
  for (RawEventHandler* h : handlers_) {
    for (const auto& d : result.deleted) h->OnDelete(d);
  }
  for (RawEventHandler* h : handlers_) {
    for (const auto& [o, n] : result.updated) h->OnUpdate(o, n);
  }
  // Why only the first list is "initial": objects a relist adds are new to
  // the handlers (e.g. the controller's claim fan-out must see them), as in
  // client-go, where isInInitialList holds for the first list only.
  // Why one DecodedObject at a time: result.added points into the store.
  for (RawEventHandler* h : handlers_) {
    for (const ObjectMap::value_type* entry : result.added) {
      h->OnAdd(DecodedObject{entry->first, entry->second.resource_version, entry->second.object},
               /*initial_list=*/first);
    }
  }
  if (first) {
    std::lock_guard<std::mutex> l(mu_);
    synced_.store(true);
    cv_.notify_all();
  }
}

void Reflector::BufferDecoded(StatusOr<DecodedObject> decoded,
                              ObjectMap* buffer) {
  if (!decoded.ok()) {
    NoteDecodeError(decoded.status());
    return;
  }
  DecodedObject d = std::move(decoded).value();
  buffer->insert_or_assign(std::move(d.key),
                           StoredObject{std::move(d.resource_version), std::move(d.object)});
}

Status Reflector::ListPageInto(const ListOptions& lo,
                                ObjectMap* buffer,
                                std::string* list_rv, std::string* next) {
  if (decode_text_) {
    // Why item by item: a list from the watch cache is one page whatever
    // the limit (100,000 routes: ~150 MB of text, above a replica's memory
    // limit); only the decoded objects are kept.
    auto page = client_.ListEach(resource_, options_.namespace_name, lo,
                                 [&](std::string_view item) {
                                   BufferDecoded(decode_text_(item), buffer);
                                 });
    if (!page.ok()) return page.status();
    *list_rv = std::move(page->resource_version);
    *next = std::move(page->continue_token);
    return Status::Ok();
  }
  auto page = client_.List(resource_, options_.namespace_name, lo);
  if (!page.ok()) return page.status();
  *list_rv = std::move(page->resource_version);
  *next = std::move(page->continue_token);
  for (auto& item : page->items) {
    BufferDecoded(decode_(item), buffer);
    item = nlohmann::json();  // Why: free each page's tree as we go.
  }
  return Status::Ok();
}

Status Reflector::WatchOnce() {
  // Why: a streamed list's watch goes on after its initial events.
  std::unique_ptr<WatchStream> stream = std::move(pending_stream_);
  if (!stream) {
    WatchOptions wo;
    wo.resource_version = last_rv_;
    wo.label_selector = options_.label_selector;
    wo.allow_bookmarks = true;
    wo.timeout = RandomWatchTimeout();
    {
      std::lock_guard<std::mutex> l(mu_);
      if (stopping_) return Status(StatusCode::kCancelled, "informer stopped");
    }
    auto opened = client_.Watch(resource_, options_.namespace_name, wo);
    if (!opened.ok()) return opened.status();
    stream = std::move(opened).value();
    if (!Track(stream.get())) return Status(StatusCode::kCancelled, "informer stopped");
  }
  Status result;
  for (;;) {
    auto event = decode_text_ ? stream->NextRaw() : stream->Next();
    if (!event.ok()) {
      result = event.status();
      break;
    }
    Status s = HandleEvent(*event);
    if (!s.ok()) {
      result = s;
      break;
    }
  }
  {
    std::lock_guard<std::mutex> l(mu_);
    current_stream_ = nullptr;
    if (stopping_) result = Status(StatusCode::kCancelled, "informer stopped");
  }
  stream->Cancel();
  return result;
}

void Reflector::SetResourceVersion(const std::string& rv) {
  // Why no comparison: versions are opaque; a watch delivers in the
  // server's order, so the last one received is the newest.
  if (rv.empty()) return;
  last_rv_ = rv;
  std::lock_guard<std::mutex> l(mu_);
  stats_.resource_version = rv;
}

void Reflector::AddTombstone(const std::string& key, const std::string& version) {
  if (options_.max_tombstones == 0) return;
  if (tombstones_.size() >= options_.max_tombstones && tombstones_.count(key) == 0) {
    tombstones_.clear();
  }
  tombstones_[key] = version;
  std::lock_guard<std::mutex> l(mu_);
  stats_.tombstones = tombstones_.size();
}

void Reflector::NoteDecodeError(const Status& s) {
  SteadyTime now = clock_.Now();
  {
    std::lock_guard<std::mutex> l(mu_);
    ++stats_.decode_errors;
  }
  ++decode_errors_unlogged_;
  if (last_decode_log_ == SteadyTime{} ||
      now - last_decode_log_ >= options_.decode_error_log_interval) {
    LOG(WARNING) << options_.name << ": skipped " << decode_errors_unlogged_
                 << " object(s) that failed to decode; latest: " << s.ToString();
    decode_errors_unlogged_ = 0;
    last_decode_log_ = now;
  }
}

std::string Reflector::KeyFromMetadata(const nlohmann::json& object) const {
  if (!object.is_object()) return "";
  auto m = object.find("metadata");
  if (m == object.end() || !m->is_object()) return "";
  auto n = m->find("name");
  if (n == m->end() || !n->is_string()) return "";
  if (!resource_.namespaced) return n->get<std::string>();
  auto ns = m->find("namespace");
  if (ns == m->end() || !ns->is_string()) return "";
  return ns->get<std::string>() + "/" + n->get<std::string>();
}

Status Reflector::HandleEvent(const WatchEvent& event) {
  // Why: a text event (NextRaw) is decoded once, from its text; its tree is
  // built only when the object does not decode (for its key and version).
  const bool text = !event.object_text.empty() && decode_text_ &&
                    event.type != WatchEventType::kBookmark && event.type != WatchEventType::kError;
  std::optional<StatusOr<DecodedObject>> text_decoded;
  nlohmann::json text_tree;
  const nlohmann::json* object = &event.object;
  std::string rv;
  if (text) {
    text_decoded = decode_text_(event.object_text);
    if (text_decoded->ok()) {
      rv = (*text_decoded)->resource_version;
    } else {
      text_tree = nlohmann::json::parse(event.object_text, nullptr, /*allow_exceptions=*/false);
      object = &text_tree;
      rv = ResourceVersionOf(*object);
    }
  } else {
    rv = event.ResourceVersion();
  }
  auto count = [this](uint64_t InformerStats::*field) {
    std::lock_guard<std::mutex> l(mu_);
    ++(stats_.*field);
  };
  switch (event.type) {
    case WatchEventType::kBookmark:
      count(&InformerStats::events_bookmark);
      SetResourceVersion(rv);
      return Status::Ok();
    case WatchEventType::kError: {
      count(&InformerStats::events_error);
      Status s = event.ErrorStatus();
      if (s.ok()) s = Status(StatusCode::kInternal, "watch ERROR event without a status");
      return s;
    }
    default:
      break;
  }
  StatusOr<DecodedObject> decoded = text ? std::move(*text_decoded) : decode_(event.object);
  if (!decoded.ok()) {
    NoteDecodeError(decoded.status());
    SetResourceVersion(rv);  // Why: the server has sent it; resuming before it would replay it.
    // Why: a delete must not be lost because the final state is malformed.
    std::string key = KeyFromMetadata(*object);
    if (event.type == WatchEventType::kDeleted && !key.empty()) {
      if (auto removed = store_.Remove(key)) {
        count(&InformerStats::events_deleted);
        AddTombstone(key, removed->resource_version);
        for (RawEventHandler* h : handlers_) h->OnDelete(*removed);
      }
    }
    return Status::Ok();
  }
  DecodedObject obj = std::move(decoded).value();
  auto cached = store_.GetEntry(obj.key);
  if (event.type == WatchEventType::kDeleted) {
    count(&InformerStats::events_deleted);
    SetResourceVersion(rv);
    // Why no version check: the delete arrived after everything the cache
    // holds for this key (one watch, in the server's order).
    if (!cached) return Status::Ok();
    auto removed = store_.Remove(obj.key);
    if (removed) {
      AddTombstone(obj.key, removed->resource_version);
      for (RawEventHandler* h : handlers_) h->OnDelete(*removed);
    }
    return Status::Ok();
  }
  count(event.type == WatchEventType::kAdded ? &InformerStats::events_added
                                             : &InformerStats::events_modified);
  SetResourceVersion(rv);
  // The stale-event guard without ordering versions (they are opaque): an
  // event arriving on the watch is newer than what the cache holds, unless
  // it repeats a version we already applied: the cached one (a duplicate)
  // or the one we removed on a delete (a replay of a deleted object).
  bool stale = false;
  if (cached) {
    stale = !obj.resource_version.empty() && obj.resource_version == cached->resource_version;
  } else {
    auto t = tombstones_.find(obj.key);
    stale = t != tombstones_.end() && !obj.resource_version.empty() &&
            obj.resource_version == t->second;
  }
  if (stale) {
    count(&InformerStats::stale_events_ignored);
    return Status::Ok();
  }
  if (tombstones_.erase(obj.key) > 0) {
    std::lock_guard<std::mutex> l(mu_);
    stats_.tombstones = tombstones_.size();
  }
  auto old = store_.Upsert(obj);
  for (RawEventHandler* h : handlers_) {
    if (old) {
      h->OnUpdate(*old, obj);
    } else {
      h->OnAdd(obj, /*initial_list=*/false);
    }
  }
  return Status::Ok();
}

InformerStats Reflector::Stats() const {
  std::lock_guard<std::mutex> l(mu_);
  InformerStats s = stats_;
  s.objects = store_.Size();
  s.synced = synced_.load();
  return s;
}

}  // namespace routestatus::kubeclient::cache
