#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "controller/controller.h"
#include "controller/status_syncer.h"
#include "test/controller/fakes.h"
#include "test/testing/fake_clock.h"

namespace routestatus::controller::testing {

// One router replica wired with fakes: FakeKubeClient as the API, FakeStore
// as the informer cache (tests "deliver" server objects into it, calling
// the controller's handlers like an informer would).
struct Harness {
  // `real_gate` (optional; must outlive the harness) replaces `gate` as the
  // gate the syncer and controller use.
  explicit Harness(ShardOptions shard_options = {}, AdmissionOptions admission = DefaultOptions(),
                   Duration namespace_settle = Controller::kDefaultNamespaceSettle,
                   ContentionGate* real_gate = nullptr);

  static AdmissionOptions DefaultOptions();
  // A route JSON object with an unknown field in spec and metadata.
  static nlohmann::json RouteJson(const std::string& ns, const std::string& name,
                                  const std::string& host, const std::string& created =
                                      "2026-01-01T00:00:00Z");

  // Creates the route on the server and delivers it (OnAdd).
  void Create(const nlohmann::json& route, bool initial_list = false);
  // Copies the server's object into the cache, calling OnAdd/OnUpdate.
  void Deliver(const std::string& ns, const std::string& name);
  // Copies the server's object into the cache as the first list does
  // (OnAdd with initial_list: the controller's start-up report reconciles it).
  void DeliverInFirstList(const std::string& ns, const std::string& name);
  // Removes the route from server and cache, calling OnDelete.
  void DeleteRoute(const std::string& ns, const std::string& name);
  // Runs Controller::ProcessNextItem until the queue is empty.
  int Drain();
  // `router`'s entry on the server; nullopt when absent.
  std::optional<kubeclient::RouteIngress> ServerEntry(const std::string& ns,
                                                      const std::string& name,
                                                      const std::string& router = "default");

  routestatus::testing::FakeClock clock;
  FakeKubeClient api;
  FakeStore<kubeclient::Route> routes;
  FakeStore<kubeclient::Namespace> namespaces;
  FakeWorkQueue queue;
  PassThroughLease lease;
  FakeGate gate;
  StatusStats stats;
  ShardFilter shard;
  StatusSyncer syncer;
  Controller controller;
};

}  // namespace routestatus::controller::testing
