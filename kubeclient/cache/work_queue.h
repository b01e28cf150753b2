#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include "base/clock.h"

namespace routestatus::kubeclient::cache {

// The contract of the controller's work queue of string keys (the
// implementation lives beside this file). Thread-safe. Promises:
// - a key is queued at most once (dedupe);
// - a key is never handed to two workers at once: a key added while it is
//   being processed is queued again when Done() is called;
// - delayed adds become ready when the Clock passes their time;
// - after ShutDown(), Get() returns false once the queue is drained (or at
//   once with ShutDownNow()).
class WorkQueueInterface {
 public:
  virtual ~WorkQueueInterface() = default;
  virtual void Add(const std::string& key) = 0;
  virtual void AddAfter(const std::string& key, Duration delay) = 0;
  // Per-key exponential backoff (plus an overall token bucket).
  virtual void AddRateLimited(const std::string& key) = 0;
  // Resets the key's backoff after it was processed successfully.
  virtual void Forget(const std::string& key) = 0;
  virtual int NumRequeues(const std::string& key) const = 0;
  // Blocks until a key is ready (true) or the queue is shut down (false).
  virtual bool Get(std::string* key) = 0;
  // Marks the key as no longer processing.
  virtual void Done(const std::string& key) = 0;
  virtual size_t Len() const = 0;
  virtual void ShutDown() = 0;
};

}  // namespace routestatus::kubeclient::cache
