// Live changes through the controller (handlers, queue, StatusSyncer): when
// the route holding a host goes or moves, the next route in line is
// admitted as openshift-router would decide it, including routes linked
// only through other routes' claims. The corpus test covers start-up.
#include <string>

#include <gtest/gtest.h>

#include "test/controller/harness.h"

namespace routestatus::controller::testing {
namespace {

using nlohmann::json;

json RouteAt(const std::string& ns, const std::string& name, const std::string& host, int second,
             const std::string& path = "", const std::string& policy = "None") {
  json r = Harness::RouteJson(ns, name, host,
                              "2026-01-01T00:00:" + std::string(second < 10 ? "0" : "") +
                                  std::to_string(second) + "Z");
  r["spec"]["path"] = path;
  r["spec"]["wildcardPolicy"] = policy;
  return r;
}

// Reconciles until quiet, delivering every write's echo (the cache then
// holds what the server holds, as an informer's would).
void Settle(Harness& h) {
  for (int round = 0; round < 10; ++round) {
    h.Drain();
    for (const auto& r : h.routes.List()) {
      const std::string ns(r->metadata.namespace_name), name(r->metadata.name);
      if (h.api.Object(ns, name)["metadata"]["resourceVersion"] != r->metadata.resource_version) {
        h.Deliver(ns, name);
      }
    }
    if (h.queue.keys.empty()) return;
  }
  ADD_FAILURE() << "the controller did not settle";
}

// "admitted" or the rejection reason of `router`'s entry on the server.
std::string Outcome(Harness& h, const std::string& ns, const std::string& name) {
  auto entry = h.ServerEntry(ns, name);
  if (!entry || entry->conditions.empty()) return "no entry";
  const auto& c = entry->conditions[0];
  return c.status == "True" ? "admitted" : c.reason;
}

// ns1/a holds www.example.com; ns2/b is rejected for it; ns1/c, same
// namespace as the owner and a path of its own, is admitted (b, rejected,
// holds nothing).
void StartOwnerAndTwoClaimants(Harness& h) {
  h.Create(RouteAt("ns1", "a", "www.example.com", 1, "/"));
  h.Create(RouteAt("ns2", "b", "www.example.com", 2, "/x"));
  h.Create(RouteAt("ns1", "c", "www.example.com", 3, "/x"));
  Settle(h);
  ASSERT_EQ(Outcome(h, "ns1", "a"), "admitted");
  ASSERT_EQ(Outcome(h, "ns2", "b"), kReasonHostAlreadyClaimed);
  ASSERT_EQ(Outcome(h, "ns1", "c"), "admitted");
}

TEST(AdmissionLiveTest, OwnerDeletedNextOldestNamespaceTakesTheHost) {
  Harness h;
  StartOwnerAndTwoClaimants(h);
  h.DeleteRoute("ns1", "a");
  Settle(h);
  // openshift-router's host index: b is now the oldest route for the host,
  // so ns2 owns it and c (ns1) is displaced.
  EXPECT_EQ(Outcome(h, "ns2", "b"), "admitted");
  EXPECT_EQ(Outcome(h, "ns1", "c"), kReasonHostAlreadyClaimed);
}

TEST(AdmissionLiveTest, OwnerMovesToAnotherHost) {
  Harness h;
  StartOwnerAndTwoClaimants(h);
  json a = h.api.Object("ns1", "a");
  a["spec"]["host"] = "other.example.com";
  h.api.Put(a);
  h.Deliver("ns1", "a");
  Settle(h);
  EXPECT_EQ(Outcome(h, "ns1", "a"), "admitted");
  EXPECT_EQ(h.ServerEntry("ns1", "a")->host, "other.example.com");
  EXPECT_EQ(Outcome(h, "ns2", "b"), "admitted");
  EXPECT_EQ(Outcome(h, "ns1", "c"), kReasonHostAlreadyClaimed);
}

TEST(AdmissionLiveTest, RejectedRouteDeletedChangesNothingElse) {
  Harness h;
  StartOwnerAndTwoClaimants(h);
  const int puts = h.api.successful_puts;
  h.DeleteRoute("ns2", "b");
  Settle(h);
  EXPECT_EQ(Outcome(h, "ns1", "a"), "admitted");
  EXPECT_EQ(Outcome(h, "ns1", "c"), "admitted");
  EXPECT_EQ(h.api.successful_puts, puts);
}

// ns1/p holds foo.example.com; ns2/w's wildcard *.example.com is rejected
// for it, so it claims nothing and ns3/q (bar.example.com) is admitted.
// When p goes, w takes the subdomain and q, which shares no key with p,
// must be re-decided too.
TEST(AdmissionLiveTest, DeletionReachesRoutesLinkedThroughAWildcard) {
  AdmissionOptions o = Harness::DefaultOptions();
  o.allow_wildcard_routes = true;
  Harness h({}, o);
  h.Create(RouteAt("ns1", "p", "foo.example.com", 1));
  h.Create(RouteAt("ns2", "w", "www.example.com", 2, "", "Subdomain"));
  h.Create(RouteAt("ns3", "q", "bar.example.com", 3));
  Settle(h);
  ASSERT_EQ(Outcome(h, "ns1", "p"), "admitted");
  ASSERT_EQ(Outcome(h, "ns2", "w"), kReasonHostAlreadyClaimed);
  ASSERT_EQ(Outcome(h, "ns3", "q"), "admitted");
  h.DeleteRoute("ns1", "p");
  Settle(h);
  EXPECT_EQ(Outcome(h, "ns2", "w"), "admitted");
  EXPECT_EQ(Outcome(h, "ns3", "q"), kReasonHostAlreadyClaimed);
}

// A younger route created first in event order (a replica that saw it
// first) does not keep the host: the older one, delivered later, wins.
TEST(AdmissionLiveTest, OlderRouteArrivingLaterDisplacesTheYounger) {
  Harness h;
  h.Create(RouteAt("ns2", "young", "www.example.com", 5));
  Settle(h);
  ASSERT_EQ(Outcome(h, "ns2", "young"), "admitted");
  h.Create(RouteAt("ns1", "old", "www.example.com", 1));
  Settle(h);
  EXPECT_EQ(Outcome(h, "ns1", "old"), "admitted");
  EXPECT_EQ(Outcome(h, "ns2", "young"), kReasonHostAlreadyClaimed);
}

}  // namespace
}  // namespace routestatus::controller::testing
