#pragma once

#include <cstddef>

#include "base/status.h"

namespace routestatus::kubeclient::cache {

// How an informer got a full initial state (the `source` label of
// routestatus_informer_initial_states_total).
enum class InitialStateSource {
  kStreamed = 0,  // a watch list: the server streamed its watch cache (kube 1.27+ with WatchList)
  kWatchCache,    // one list the watch cache answered (resourceVersion "0" or a version, one page)
  kStorage,       // a list read from storage (resourceVersion "", or more than one page)
};
inline constexpr size_t kInitialStateSourceCount = 3;
// "streamed", "watch_cache", "storage".
const char* InitialStateSourceName(InitialStateSource source);

// Why a streamed initial state failed and the informer listed instead (the
// `reason` label of routestatus_informer_stream_fallbacks_total).
enum class StreamFallback {
  // 400/422: the server does not take sendInitialEvents (kube 1.26; 1.33,
  // whose WatchList gate is off by default; a 1.27+ server without it).
  kRefused = 0,
  // An ERROR event before the end bookmark: kube 1.32+ over an etcd without
  // RequestWatchProgress answers 200, then a 500 InternalError event.
  kErrorEvent,
  // Any other answered failure of the request: 5xx, 429, 403, 410, ...
  kServerError,
  // A bookmark without k8s.io/initial-events-end, or a change event, before
  // the end bookmark: the server ignored sendInitialEvents.
  kNoEndBookmark,
  // The stream closed, was cut (mid-object included) or timed out before
  // the end bookmark.
  kStreamEnded,
};
inline constexpr size_t kStreamFallbackCount = 5;
// "refused", "error_event", "server_error", "no_end_bookmark", "stream_ended".
const char* StreamFallbackName(StreamFallback reason);

// The fallback a failed watch-list request calls for: `opened` is the
// outcome of opening it (not OK: the request failed). False when the
// failure is not the stream's: the server did not answer (an outage a list
// would meet too: retried, no fallback) or the informer is stopping. Pure.
bool FallbackForOpenFailure(const Status& opened, StreamFallback* reason);

}  // namespace routestatus::kubeclient::cache
