#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "base/clock.h"
#include "base/status.h"
#include "kubeclient/cache/backoff.h"
#include "kubeclient/cache/indexed_store.h"
#include "kubeclient/cache/initial_state.h"
#include "kubeclient/kube_client.h"

namespace routestatus::kubeclient::cache {

// Turns one JSON object into a DecodedObject (kInvalid for bad objects).
using DecodeFunc = std::function<StatusOr<DecodedObject>(const nlohmann::json& object)>;

// Turns one object's exact JSON text into a DecodedObject (kInvalid for bad
// text). Optional: when set, lists use KubeClient::ListRaw and decode each
// item's text without a per-page tree.
using TextDecodeFunc = std::function<StatusOr<DecodedObject>(std::string_view text)>;

// Receives type-erased cache changes (see EventHandler<T> in store.h).
class RawEventHandler {
 public:
  virtual ~RawEventHandler() = default;
  virtual void OnAdd(const DecodedObject& obj, bool initial_list) = 0;
  virtual void OnUpdate(const DecodedObject& old_obj, const DecodedObject& new_obj) = 0;
  virtual void OnDelete(const DecodedObject& last) = 0;
};

// Tunables of an informer.
struct InformerOptions {
  std::string name = "informer";  // for logs
  std::string namespace_name;     // "" = all namespaces
  std::string label_selector;
  int64_t page_size = 500;
  // How a full list is obtained. true: a watch list first (the server
  // streams its watch cache's state: no storage read, no page in memory,
  // and the same watch goes on afterwards). Any failure of it that the
  // server answered (a 400/422 refusal, a 5xx, an ERROR event, a bookmark
  // without the end marker, a stream that ends before the end bookmark)
  // falls back to a list at once, as client-go does ("progress over
  // deadlock"), and lists are used until `stream_retry_after` has passed;
  // the first relist after that streams again. A request the server did not
  // answer at all (an outage) is retried, not a fallback.
  // false: lists only.
  // Why false by default: lists are what every server (and every
  // fake KubeClient in the tests) serves; the controller binary turns
  // streaming on with its --watch-list option (default true).
  bool stream_initial_events = false;
  // How long a failed stream makes relists list before streaming is tried
  // again. Why 10 min: relists are rare (a 410 after a long disconnect), so
  // a server that cannot stream costs at most one failed request an informer
  // in that time, and a server upgraded to stream is used within it.
  Duration stream_retry_after = std::chrono::minutes(10);
  // The watch timeoutSeconds is drawn uniformly from [min, max] per watch.
  std::chrono::seconds watch_timeout_min{300};
  std::chrono::seconds watch_timeout_max{600};
  // Failures the server answered (5xx, 429, a watch that ends at once, a
  // relist loop): 200 ms doubling, jitter +[0, 50%), cap 30 s.
  Backoff::Options backoff;
  // ServerAnswersAgain() ends a wait after a failure within a random
  // [0, this): a fleet woken by one recovering server spreads its retries.
  Duration recovery_jitter = std::chrono::milliseconds(250);
  // Failures without an answer (connection refused or reset, timeout) are
  // retried on this schedule instead (200 ms doubling, cap 500 ms), leaving
  // `backoff` as it was: a probe of a server that is down costs it nothing,
  // and an informer finds a restarted API server within `reconnect.max` of
  // its return.
  Backoff::Options reconnect{std::chrono::milliseconds(200), std::chrono::milliseconds(500), 2.0,
                             0.5};
  uint64_t seed = 1;
  Duration decode_error_log_interval = std::chrono::minutes(1);
  // A list failure the server answered is a WARNING when its message is new
  // or the last WARNING is this old; repeats in between are VLOG(1).
  Duration list_failure_log_interval = std::chrono::minutes(1);
  // A watch that ends normally sooner than this without any event counts as
  // a failure (backoff), so a server that closes at once cannot spin us.
  Duration min_healthy_watch = std::chrono::seconds(1);
  // Deleted keys remembered between relists (to ignore a replay of the
  // version we removed); past this many they are all dropped, so a long
  // watch with many deletes cannot grow memory. 0 keeps none.
  size_t max_tombstones = 200000;
};

// Counters of an informer, for metrics. Value type.
struct InformerStats {
  uint64_t events_added = 0;
  uint64_t events_modified = 0;
  uint64_t events_deleted = 0;
  uint64_t events_bookmark = 0;
  uint64_t events_error = 0;
  // Events repeating a version already applied (the cached one, or the
  // one a delete removed), ignored.
  uint64_t stale_events_ignored = 0;
  uint64_t decode_errors = 0;
  uint64_t lists = 0;            // successful full lists (the first included)
  uint64_t streamed_lists = 0;   // ... of them, watch lists (initial events streamed)
  // Successful full lists by how the state came (InitialStateSource).
  std::array<uint64_t, kInitialStateSourceCount> initial_states{};
  // Streamed initial states that failed and were replaced by a list, by
  // reason (StreamFallback).
  std::array<uint64_t, kStreamFallbackCount> stream_fallbacks{};
  // Streaming is off after a failed stream: lists until stream_retry_after.
  bool streaming_paused = false;
  // The server's words for the last failed stream ("" = none yet).
  std::string last_stream_failure;
  uint64_t relists = 0;          // successful full lists after the first
  uint64_t list_failures = 0;
  uint64_t watch_restarts = 0;   // watches opened after the first
  uint64_t watch_failures = 0;   // watch sessions ending in an error
  SystemTime last_sync{};        // wall time of the last successful list
  bool synced = false;           // the first full list is cached
  // Why the last list failed ("" once a list succeeded), e.g. "forbidden:
  // namespaces is forbidden: ..." for /readyz while the cache cannot sync.
  std::string last_list_error;
  std::string resource_version;  // the last resourceVersion received (the resume point)
  size_t objects = 0;
  size_t tombstones = 0;         // deleted keys remembered (<= max_tombstones)
};

// The non-template core of Informer<T>: list+watch into an IndexedStore,
// calling handlers after each cache change. Run()/Step() run on one thread
// (the informer thread); Stop(), Stats() and the store are thread-safe.
class Reflector {
 public:
  Reflector(KubeClient& client, const ResourceRef& resource, const Clock& clock,
            DecodeFunc decode, InformerOptions options, TextDecodeFunc decode_text = nullptr);
  ~Reflector();

  // Before Run/Start only.
  void AddHandler(RawEventHandler* handler);
  IndexedStore& store() { return store_; }
  const IndexedStore& store() const { return store_; }

  // Loops Step() until Stop(), waiting on the Clock between steps.
  void Run();
  // Run() on a thread owned by this object.
  void Start();
  // Makes Run() return promptly: cancels the in-flight watch, wakes any
  // backoff wait, joins the Start() thread. Idempotent; thread-safe.
  void Stop();
  // The API server answers again after an outage (any request of the
  // process succeeded): a wait after a failed list or watch ends within
  // options.recovery_jitter, and the failures' backoff starts over, so a
  // backoff grown during the outage does not delay the cache.
  // Why every wait: Step() waits only after a failure. A running Step()
  // is unaffected.
  // Thread-safe.
  void ServerAnswersAgain();

  // One step of the loop: a full list when one is needed, else one watch
  // session until its stream ends. Returns how long to wait before the
  // next step: zero after a success, a normal close or a 410 Gone (relist at
  // once, with the backoff reset: the server answered), `reconnect` steps
  // while the server does not answer, `backoff` steps for its failures (a
  // successful list ends them), and a guard of its own (`backoff` steps
  // too, ended by a watch that delivers or lasts) for a watch that 410s
  // right after every relist. Failures without an
  // answer are logged at -v=1 only (the binary reports outages once per
  // process); others the server answered a list with are WARNINGs.
  // Informer thread (or a test) only.
  Duration Step();
  // The parts of Step(), exposed for tests. After a streamed list,
  // WatchOnce goes on with that list's watch.
  Status ListAndReplace();
  Status WatchOnce();

  // Test hook: blocks until Run() is in a between-steps wait numbered above
  // *seen (waits are numbered from 1), stores its number in *seen and
  // returns when it ends (Clock time); nullopt once stopped or synced. Lets fake-clock
  // tests advance time exactly to the next attempt.
  std::optional<SteadyTime> AwaitIdleWait(uint64_t* seen);

  bool HasSynced() const { return synced_.load(); }
  // Synced, and no watch has ended 410 Gone since the last full list was
  // stored: false from such a 410 (the changes in between are lost to us)
  // until the relist that follows has replaced the cache (true before the
  // handlers hear of its changes). Any thread.
  bool IsCurrent() const { return synced_.load() && !relisting_.load(); }
  bool NeedsList() const { return need_list_; }
  // Blocks until synced (true) or stopped (false).
  bool WaitForSync();
  InformerStats Stats() const;

 private:
  Status HandleEvent(const WatchEvent& event);
  // A watch list into `buffer`: sets *list_rv to the end bookmark's version
  // and keeps the open stream in pending_stream_. On a failure that calls
  // for a list instead, sets *fallback (see StreamFallback).
  Status StreamInto(ObjectMap* buffer, std::string* list_rv,
                    std::optional<StreamFallback>* fallback);
  // Counts and logs a failed stream, and pauses streaming.
  void NoteStreamFallback(StreamFallback reason, const Status& why);
  // A list (paged, from the watch cache or storage) into the cache.
  Status ListInto(ObjectMap buffer);
  // Logs a list failure the server answered (see list_failure_log_interval).
  void LogListFailure(const Status& s);
  // Swaps `buffer` in as the cache at `list_rv` and tells the handlers.
  void ReplaceWith(ObjectMap buffer, const std::string& list_rv, InitialStateSource source);
  // Makes `stream` the one Stop() cancels; false (stream cancelled) when
  // stopping.
  bool Track(WatchStream* stream);
  void Untrack();
  // Adds a decoded object to a list's `buffer`; counts a decode error.
  void BufferDecoded(StatusOr<DecodedObject> decoded,
                     ObjectMap* buffer);
  // One page of the list into `buffer`; sets *list_rv and *next (continue).
  Status ListPageInto(const ListOptions& lo, ObjectMap* buffer,
                      std::string* list_rv, std::string* next);
  void NoteDecodeError(const Status& s);
  // "namespace/name" (or "name") from raw metadata; "" when absent.
  std::string KeyFromMetadata(const nlohmann::json& object) const;
  void SetResourceVersion(const std::string& rv);
  // Remembers that `key` was deleted while the cache held `version`.
  void AddTombstone(const std::string& key, const std::string& version);
  // The wait before retrying what failed with `s` (see Step()).
  Duration RetryDelay(const Status& s);
  std::chrono::seconds RandomWatchTimeout();

  KubeClient& client_;
  const ResourceRef resource_;
  const Clock& clock_;
  const DecodeFunc decode_;
  const TextDecodeFunc decode_text_;
  const InformerOptions options_;
  IndexedStore store_;
  std::vector<RawEventHandler*> handlers_;

  // Informer-thread state.
  Backoff backoff_;
  Backoff reconnect_;
  // The relist-loop guard's own backoff (a 410 right after each relist):
  // failed lists before it must not lengthen the first wait.
  Backoff relist_guard_;
  std::mt19937_64 rng_;
  bool need_list_ = true;
  // A watch ended 410 Gone after the first sync; the relist has not been
  // stored yet (IsCurrent()).
  std::atomic<bool> relisting_{false};
  // Listed, and no watch since has delivered an event, lasted
  // min_healthy_watch or lost the server: a 410 now is a relist loop.
  bool just_listed_ = false;
  std::string last_rv_;
  // Lists, not streams, until then (after a failed stream).
  SteadyTime stream_paused_until_{};
  bool stream_paused_ = false;
  std::string last_list_warning_;  // the message of the last list WARNING
  SteadyTime last_list_warning_at_{};
  // The watch cache could not serve the last list's version: the next list
  // reads storage (resourceVersion "", paged), as client-go's
  // isLastSyncResourceVersionUnavailable.
  bool list_from_storage_ = false;
  // The server paged a list we asked of its watch cache: its cache is off
  // for this resource, so relists page too.
  bool paginated_ = false;
  std::unique_ptr<WatchStream> pending_stream_;  // a watch list's stream, for WatchOnce
  std::unordered_map<std::string, std::string> tombstones_;  // deleted key -> version it had
  SteadyTime last_decode_log_{};
  uint64_t decode_errors_unlogged_ = 0;

  std::atomic<bool> synced_{false};
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;                // GUARDED_BY(mu_)
  WatchStream* current_stream_ = nullptr;  // GUARDED_BY(mu_)
  std::optional<SteadyTime> waiting_until_;  // GUARDED_BY(mu_)
  bool reset_backoff_ = false;               // GUARDED_BY(mu_): set by ServerAnswersAgain()
  std::mt19937_64 recovery_rng_;             // GUARDED_BY(mu_)
  uint64_t waits_ = 0;                       // GUARDED_BY(mu_)
  InformerStats stats_;                  // GUARDED_BY(mu_)
  uint64_t watches_opened_ = 0;          // GUARDED_BY(mu_)
  std::thread thread_;
};

}  // namespace routestatus::kubeclient::cache
