#pragma once

#include <optional>
#include <string>

#include "kubeclient/route.h"

namespace routestatus::controller {

// What the status path needs from the contention tracker (conflict/,
// DESIGN.md section 4). cmd/ adapts the real tracker to it. Implementations
// must be thread-safe: the informer thread calls Changed, workers call the
// rest.
class ContentionGate {
 public:
  virtual ~ContentionGate() = default;
  // A watch update changed our router name's entry of route `uid` (both the
  // old and the new object had one, and they differ) to `entry`. Never
  // called for the initial list.
  virtual void Changed(const std::string& uid, const kubeclient::RouteIngress& entry) = 0;
  // A watch update created our router name's entry of route `uid` (the old
  // object had none) as `entry`: either one of our replicas wrote it, or a
  // differently configured router sharing our name did. Never called for
  // the initial list. The default ignores it.
  virtual void Appeared(const std::string& uid, const kubeclient::RouteIngress& entry) {
    (void)uid;
    (void)entry;
  }
  // True when we must not change our existing entry of `uid` now. Not asked
  // when our entry is absent (creating it is never blocked).
  virtual bool IsChangeContended(const std::string& uid) = 0;
  // After our successful write: `written` is the entry we wrote, or nullopt
  // when we removed it.
  virtual void Clear(const std::string& uid,
                     const std::optional<kubeclient::RouteIngress>& written) = 0;
};

// A gate that never blocks (no tracker). Thread-safe.
class NoContentionGate final : public ContentionGate {
 public:
  void Changed(const std::string&, const kubeclient::RouteIngress&) override {}
  bool IsChangeContended(const std::string&) override { return false; }
  void Clear(const std::string&, const std::optional<kubeclient::RouteIngress>&) override {}
};

}  // namespace routestatus::controller
