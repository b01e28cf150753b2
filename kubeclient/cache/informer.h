#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/clock.h"
#include "kubeclient/cache/reflector.h"
#include "kubeclient/cache/store.h"
#include "kubeclient/kube_client.h"
#include "kubeclient/route.h"

namespace routestatus::kubeclient::cache {

// A list+watch cache of T (kubeclient::Route or kubeclient::Namespace; the
// only instantiations, compiled once in informer.cc). Lists in pages, then
// watches from the list's resourceVersion with bookmarks; resumes a dropped
// watch from the last version received without relisting (versions are
// opaque: never compared, only matched; a watch delivers in the server's
// order, so what arrives later is newer); on 410 Gone relists
// and replaces the cache, reporting deletes/updates/adds. Objects that fail
// to decode are logged, counted and skipped.
//
// Usage: construct, AddIndex()/AddEventHandler(), Start(); read through the
// ObjectStore<T> methods from any thread; Stop() (or the destructor) ends
// the informer thread promptly. Thread-safe except that AddIndex and
// AddEventHandler must precede Start().
template <typename T>
class Informer final : public ObjectStore<T> {
 public:
  using Ptr = std::shared_ptr<const T>;

  Informer(KubeClient& client, const Clock& clock, InformerOptions options = {});
  ~Informer() override;

  // A named index, e.g. "host" -> {route.spec.host}. Before Start().
  void AddIndex(const std::string& name, IndexFunc<T> fn);
  // `handler` must outlive the informer. Before Start().
  void AddEventHandler(EventHandler<T>* handler);

  // Runs the informer on its own thread / on the caller's thread until Stop().
  void Start();
  void Run();
  // Cancels the in-flight watch and returns once the thread has ended.
  void Stop();
  // Blocks until the first full list is cached (true) or Stop() (false).
  bool WaitForSync();

  Ptr Get(const std::string& key) const override;
  std::vector<Ptr> List() const override;
  std::vector<Ptr> ByIndex(const std::string& index, const std::string& value) const override;
  bool HasSynced() const override;
  bool IsCurrent() const override;
  // Every cached key (for resyncs).
  std::vector<std::string> Keys() const;
  InformerStats Stats() const;

  // The untyped core, for tests that drive Step()/WatchOnce() directly.
  Reflector& reflector() { return *reflector_; }

 private:
  class HandlerAdapter;
  std::vector<std::unique_ptr<HandlerAdapter>> adapters_;
  std::unique_ptr<Reflector> reflector_;
};

extern template class Informer<Route>;
extern template class Informer<Namespace>;

using RouteInformer = Informer<Route>;
using NamespaceInformer = Informer<Namespace>;

}  // namespace routestatus::kubeclient::cache
