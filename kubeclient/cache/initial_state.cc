#include "kubeclient/cache/initial_state.h"

namespace routestatus::kubeclient::cache {

const char* InitialStateSourceName(InitialStateSource source) {
  switch (source) {
    case InitialStateSource::kStreamed:
      return "streamed";
    case InitialStateSource::kWatchCache:
      return "watch_cache";
    case InitialStateSource::kStorage:
      return "storage";
  }
  return "unknown";
}

const char* StreamFallbackName(StreamFallback reason) {
  switch (reason) {
    case StreamFallback::kRefused:
      return "refused";
    case StreamFallback::kErrorEvent:
      return "error_event";
    case StreamFallback::kServerError:
      return "server_error";
    case StreamFallback::kNoEndBookmark:
      return "no_end_bookmark";
    case StreamFallback::kStreamEnded:
      return "stream_ended";
  }
  return "unknown";
}

bool FallbackForOpenFailure(const Status& opened, StreamFallback* reason) {
  if (opened.ok() || opened.code() == StatusCode::kCancelled) return false;
  if (IsNoAnswer(FailureClassOf(opened))) return false;
  // Why kInvalid alone is "refused": 400 and 422 are how kube-apiserver
  // says it does not take the parameters; anything else it answered is a
  // failure of this request, which a list may not meet.
  *reason = opened.code() == StatusCode::kInvalid ? StreamFallback::kRefused
                                                  : StreamFallback::kServerError;
  return true;
}

}  // namespace routestatus::kubeclient::cache
