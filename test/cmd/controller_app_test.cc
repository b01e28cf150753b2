// The wiring pieces of cmd/ without processes: the tracker gate adapter on a
// fake clock, and ControllerApp's thread supervision (a crashing internal thread is fatal
// and named; an idle app stops at once) and its metrics per mode.
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <memory>
#include <stdexcept>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <prometheus/metric_family.h>
#include <prometheus/registry.h>

#include "cmd/route-status-controller/component_options.h"
#include "cmd/route-status-controller/controller_app.h"
#include "conflict/contention_tracker.h"
#include "controller/tracker_gate.h"
#include "test/testing/fake_clock.h"

namespace routestatus::cmd {
namespace {

using kubeclient::Route;
using kubeclient::RouteIngress;

RouteIngress Entry(const std::string& host) {
  RouteIngress e;
  e.router_name = "r";
  e.host = host;
  e.wildcard_policy = "None";
  e.conditions.push_back({"Admitted", "True", "", "", ""});
  return e;
}

std::shared_ptr<const Route> RouteWith(const std::string& uid, const RouteIngress& entry) {
  auto r = std::make_shared<Route>();
  r->metadata.namespace_name = "ns";
  r->metadata.name = "a";
  r->metadata.uid = uid;
  r->SetIngress({entry});
  return r;
}

class TrackerGateTest : public ::testing::Test {
 protected:
  TrackerGateTest() : tracker_(clock_, Options()), gate_(tracker_) {}
  static conflict::ContentionTrackerOptions Options() {
    conflict::ContentionTrackerOptions o;
    o.router_name = "r";
    o.interval = std::chrono::seconds(10);
    o.limit = 5;
    return o;
  }
  // After our write of `ours`, the watch changes route u1's entry from host
  // `from` to host `to` while we compute `ours` (as the controller reports it).
  std::shared_ptr<const Route> OurWriteThenChange(const std::string& ours, const std::string& from,
                                                  const std::string& to) {
    gate_.Clear("u1", Entry(ours));  // our write
    auto new_obj = RouteWith("u1", Entry(to));
    gate_.EntryChanged(*new_obj, Entry(from), Entry(to), Entry(ours));
    return new_obj;
  }
  routestatus::testing::FakeClock clock_;
  conflict::ContentionTracker tracker_;
  controller::TrackerGate gate_;
};

TEST_F(TrackerGateTest, ChangeAwayFromOurWriteIsContention) {
  OurWriteThenChange("ours.example.com", "ours.example.com", "theirs.example.com");
  EXPECT_TRUE(gate_.IsChangeContended("u1", false));
  EXPECT_EQ(tracker_.Snapshot().contended_routes, 1u);
  // The window passes: writable again.
  clock_.Advance(std::chrono::seconds(11));
  EXPECT_FALSE(gate_.IsChangeContended("u1", false));
}

TEST_F(TrackerGateTest, ChangeBackToOurValueIsNotContention) {
  OurWriteThenChange("ours.example.com", "stale.example.com", "ours.example.com");
  EXPECT_FALSE(gate_.IsChangeContended("u1", false));
}

TEST_F(TrackerGateTest, DeleteForgetsAndCreatedEntriesAreReported) {
  OurWriteThenChange("ours.example.com", "ours.example.com", "theirs.example.com");
  ASSERT_TRUE(gate_.IsChangeContended("u1", false));
  gate_.Forget("u1");
  EXPECT_FALSE(gate_.IsChangeContended("u1", false));
  // Another writer creates our entry of u2 with a host we do not compute.
  auto u2 = RouteWith("u2", Entry("theirs.example.com"));
  gate_.EntryChanged(*u2, std::nullopt, Entry("theirs.example.com"), Entry("ours.example.com"));
  EXPECT_TRUE(gate_.IsChangeContended("u2", false));
  // Without a desired entry (outside our shard, maybe only in our view of
  // the namespace labels), a created entry is a view difference: Suspect
  // for a short while, never counted.
  auto u3 = RouteWith("u3", Entry("theirs.example.com"));
  gate_.EntryChanged(*u3, std::nullopt, Entry("theirs.example.com"), std::nullopt);
  EXPECT_EQ(tracker_.Snapshot().contentions, 2) << "u1 (until the next flush) and u2";
  EXPECT_EQ(tracker_.Snapshot().suspect_routes, 1u);
  // Another writer removes our entry of u3, as we would: the suspicion ends.
  gate_.EntryChanged(*RouteWith("u3", Entry("x")), Entry("theirs.example.com"), std::nullopt,
                     std::nullopt);
  EXPECT_FALSE(gate_.IsChangeContended("u3", false));
  EXPECT_EQ(tracker_.Snapshot().suspect_routes, 0u);
}

// A KubeClient whose every call throws, standing in for a bug in a library.
class ThrowingClient final : public kubeclient::KubeClient {
 public:
  [[noreturn]] static void Boom() { throw std::runtime_error("boom from the client"); }
  StatusOr<nlohmann::json> Get(const kubeclient::ResourceRef&, const std::string&,
                                           const std::string&) override { Boom(); }
  StatusOr<kubeclient::ListPage> List(const kubeclient::ResourceRef&,
                                                  const std::string&,
                                                  const kubeclient::ListOptions&) override {
    Boom();
  }
  StatusOr<std::unique_ptr<kubeclient::WatchStream>> Watch(
      const kubeclient::ResourceRef&, const std::string&, const kubeclient::WatchOptions&) override {
    Boom();
  }
  StatusOr<nlohmann::json> Create(const kubeclient::ResourceRef&, const std::string&,
                                              const nlohmann::json&) override { Boom(); }
  StatusOr<nlohmann::json> Update(const kubeclient::ResourceRef&,
                                              const nlohmann::json&) override { Boom(); }
  StatusOr<nlohmann::json> UpdateStatus(const kubeclient::ResourceRef&,
                                                    const nlohmann::json&) override { Boom(); }
  StatusOr<nlohmann::json> MergePatchStatus(const kubeclient::ResourceRef&, const std::string&,
                                            const std::string&,
                                            const nlohmann::json&) override { Boom(); }
  Status Delete(const kubeclient::ResourceRef&, const std::string&,
                            const std::string&) override { Boom(); }
};

// A KubeClient whose lists never succeed (the caches never sync).
class UnavailableClient final : public kubeclient::KubeClient {
 public:
  static Status Down() {
    return Status(StatusCode::kUnavailable, "down");
  }
  StatusOr<nlohmann::json> Get(const kubeclient::ResourceRef&, const std::string&,
                                           const std::string&) override { return Down(); }
  StatusOr<kubeclient::ListPage> List(const kubeclient::ResourceRef&,
                                                  const std::string&,
                                                  const kubeclient::ListOptions&) override {
    return Down();
  }
  StatusOr<std::unique_ptr<kubeclient::WatchStream>> Watch(
      const kubeclient::ResourceRef&, const std::string&, const kubeclient::WatchOptions&) override {
    return Down();
  }
  StatusOr<nlohmann::json> Create(const kubeclient::ResourceRef&, const std::string&,
                                              const nlohmann::json&) override { return Down(); }
  StatusOr<nlohmann::json> Update(const kubeclient::ResourceRef&,
                                              const nlohmann::json&) override { return Down(); }
  StatusOr<nlohmann::json> UpdateStatus(const kubeclient::ResourceRef&,
                                                    const nlohmann::json&) override {
    return Down();
  }
  StatusOr<nlohmann::json> MergePatchStatus(const kubeclient::ResourceRef&, const std::string&,
                                            const std::string&,
                                            const nlohmann::json&) override { return Down(); }
  Status Delete(const kubeclient::ResourceRef&, const std::string&,
                            const std::string&) override { return Down(); }
};

// Routes list fine (and their watch stays open, idle); namespaces answer
// 403 (RBAC missing), so the namespace cache never syncs.
class ForbiddenNamespacesClient final : public kubeclient::KubeClient {
 public:
  explicit ForbiddenNamespacesClient(int routes) : routes_(routes) {}
  static Status Forbidden() {
    return Status(StatusCode::kForbidden,
                              "namespaces is forbidden: User \"system:serviceaccount:x:y\" "
                              "cannot list resource \"namespaces\"");
  }
  StatusOr<nlohmann::json> Get(const kubeclient::ResourceRef&, const std::string&,
                                           const std::string&) override { return Forbidden(); }
  StatusOr<kubeclient::ListPage> List(const kubeclient::ResourceRef& res,
                                                  const std::string&,
                                                  const kubeclient::ListOptions&) override {
    if (res.resource == "namespaces") return Forbidden();
    kubeclient::ListPage page;
    page.resource_version = "10";
    for (int i = 0; i < routes_; ++i) {
      const std::string name = "r" + std::to_string(i);
      page.items.push_back({{"apiVersion", "route.openshift.io/v1"},
                            {"kind", "Route"},
                            {"metadata",
                             {{"name", name},
                              {"namespace", "a"},
                              {"uid", "u" + name},
                              {"resourceVersion", "5"},
                              {"creationTimestamp", "2026-01-01T00:00:00Z"}}},
                            {"spec", {{"host", name + ".example.com"}}}});
    }
    return page;
  }
  StatusOr<std::unique_ptr<kubeclient::WatchStream>> Watch(
      const kubeclient::ResourceRef& res, const std::string&,
      const kubeclient::WatchOptions&) override {
    if (res.resource == "namespaces") return Forbidden();
    return std::unique_ptr<kubeclient::WatchStream>(std::make_unique<IdleStream>());
  }
  StatusOr<nlohmann::json> Create(const kubeclient::ResourceRef&, const std::string&,
                                              const nlohmann::json&) override { return Forbidden(); }
  StatusOr<nlohmann::json> Update(const kubeclient::ResourceRef&,
                                              const nlohmann::json&) override { return Forbidden(); }
  StatusOr<nlohmann::json> UpdateStatus(const kubeclient::ResourceRef&,
                                                    const nlohmann::json&) override {
    return Forbidden();
  }
  StatusOr<nlohmann::json> MergePatchStatus(const kubeclient::ResourceRef&, const std::string&,
                                            const std::string&,
                                            const nlohmann::json&) override { return Forbidden(); }
  Status Delete(const kubeclient::ResourceRef&, const std::string&,
                            const std::string&) override { return Forbidden(); }

 private:
  // A watch with no events until cancelled.
  class IdleStream final : public kubeclient::WatchStream {
   public:
    StatusOr<kubeclient::WatchEvent> Next() override {
      std::unique_lock<std::mutex> l(mu_);
      cv_.wait(l, [this] { return cancelled_; });
      return Status(StatusCode::kCancelled, "cancelled");
    }
    void Cancel() override {
      std::lock_guard<std::mutex> l(mu_);
      cancelled_ = true;
      cv_.notify_all();
    }

   private:
    std::mutex mu_;
    std::condition_variable cv_;
    bool cancelled_ = false;
  };
  const int routes_;
};

ComponentOptions Components(const Options& o) { return BuildComponentOptions(o, {}).value(); }

TEST(ControllerAppTest, IdleAppIsNotReadyAndStopsPromptly) {
  Options o;
  o.workers = 2;
  prometheus::Registry registry;
  ControllerApp app(o, Components(o), std::make_unique<UnavailableClient>(), registry);
  app.Start();
  Readiness r = app.Ready();
  EXPECT_FALSE(r.ready);
  EXPECT_THAT(r.reason, ::testing::HasSubstr("routes"));
  auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(app.Stop(std::chrono::seconds(3)));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  EXPECT_TRUE(app.Stop(std::chrono::seconds(1)));  // idempotent
  // The collector still reads after Stop().
  auto families = app.collector()->Collect();
  bool found = false;
  for (const auto& f : families) found = found || f.name == "routestatus_lease_state";
  EXPECT_TRUE(found);
}

// Sum of the values of `name` whose labels include `match`.
double Sum(const std::vector<prometheus::MetricFamily>& families, const std::string& name,
           const std::map<std::string, std::string>& match = {}) {
  double total = 0;
  for (const auto& f : families) {
    if (f.name != name) continue;
    for (const auto& m : f.metric) {
      bool ok = true;
      for (const auto& [k, v] : match) {
        bool has = false;
        for (const auto& l : m.label) has = has || (l.name == k && l.value == v);
        ok = ok && has;
      }
      if (ok) total += m.gauge.value + m.counter.value;
    }
  }
  return total;
}

bool Has(const std::vector<prometheus::MetricFamily>& families, const std::string& name) {
  for (const auto& f : families) {
    if (f.name == name) return true;
  }
  return false;
}

TEST(ControllerAppTest, MetricsTellTheWriteLeaseMode) {
  for (bool write_lease : {true, false}) {
    SCOPED_TRACE(write_lease ? "--write-lease=true" : "--write-lease=false");
    Options o;
    o.workers = 1;
    o.write_lease = write_lease;
    prometheus::Registry registry;
    ControllerApp app(o, Components(o), std::make_unique<UnavailableClient>(), registry);
    app.Start();
    auto families = app.collector()->Collect();
    EXPECT_EQ(Sum(families, "routestatus_lease_state"), 1);  // exactly one state is current
    EXPECT_EQ(Sum(families, "routestatus_lease_state", {{"state", "disabled"}}),
              write_lease ? 0 : 1);
    EXPECT_EQ(Sum(families, "routestatus_lease_state", {{"state", "election"}}),
              write_lease ? 1 : 0);
    EXPECT_EQ(Sum(families, "routestatus_build_info",
                  {{"write_lease", write_lease ? "true" : "false"}}),
              1);
    // Without a lease the tracker is not used: its series are absent.
    EXPECT_EQ(Has(families, "routestatus_contended_routes"), write_lease);
    EXPECT_TRUE(app.Stop(std::chrono::seconds(3)));
  }
}

// Issue 13 item 3: while the namespace cache cannot sync (403), reconcile
// workers wait (no key cycles through the queue), /readyz names the cache
// and the server's answer, and routestatus_informer_synced says which cache.
TEST(ControllerAppTest, UnsyncedCacheKeepsWorkersWaitingAndIsReported) {
  Options o;
  o.workers = 2;
  o.namespace_labels = "team=a";  // the shard needs the namespace cache
  o.watch_list = false;            // Why: the fake client pages lists; it does not stream
  prometheus::Registry registry;
  ControllerApp app(o, Components(o), std::make_unique<ForbiddenNamespacesClient>(3), registry);
  app.Start();
  auto synced = [&](const std::string& resource) {
    return Sum(app.collector()->Collect(), "routestatus_informer_synced",
               {{"resource", resource}});
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (synced("routes") != 1 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(synced("routes"), 1);
  // Why real time: the app runs on the real clock; a worker that requeued
  // keys until the caches synced would add each of the 3 keys 5 times a
  // second.
  std::this_thread::sleep_for(std::chrono::seconds(1));
  auto families = app.collector()->Collect();
  // Why none at all: the first list queues nothing (the start-up report
  // queues what needs a reconcile once the caches have synced).
  EXPECT_EQ(Sum(families, "routestatus_workqueue_adds_total"), 0) << "no key cycles";
  EXPECT_EQ(Sum(families, "routestatus_informer_synced", {{"resource", "namespaces"}}), 0);
  EXPECT_GE(Sum(families, "routestatus_informer_list_failures_total", {{"resource", "namespaces"}}),
            1);
  Readiness r = app.Ready();
  EXPECT_FALSE(r.ready);
  EXPECT_THAT(r.reason, ::testing::HasSubstr("namespaces (last list failed: forbidden"));
  EXPECT_THAT(r.reason, ::testing::Not(::testing::HasSubstr("routes")));
  EXPECT_TRUE(app.Stop(std::chrono::seconds(3)));
}

TEST(ControllerAppDeathTest, CrashOfAnInternalThreadIsFatalAndNamed) {
  ::testing::FLAGS_gtest_death_test_style = "threadsafe";
  EXPECT_DEATH(
      {
        Options o;
        o.workers = 1;
        prometheus::Registry registry;
        ControllerApp app(o, Components(o), std::make_unique<ThrowingClient>(), registry);
        app.Start();
        std::this_thread::sleep_for(std::chrono::seconds(5));  // the crash comes first
      },
      "internal thread informer-(routes|namespaces) crashed: boom from the client");
}

}  // namespace
}  // namespace routestatus::cmd
