// Unit tests of ObjectStore (no HTTP): versions, generation, history window,
// snapshot pagination, watcher fan-out and overflow.

#include "apiserver/object_store.h"

#include <gtest/gtest.h>

#include "apiserver/continue_token.h"
#include "test/testing/fake_clock.h"

namespace routestatus::apiserver {
namespace {

using nlohmann::json;

json Route(const std::string& name, const std::string& host) {
  return {{"apiVersion", "route.openshift.io/v1"},
          {"kind", "Route"},
          {"metadata", {{"name", name}}},
          {"spec", {{"host", host}, {"to", {{"kind", "Service"}, {"name", "svc"}}}}}};
}

class ObjectStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(store_.Create(NamespacesInfo(), "", {{"metadata", {{"name", "ns"}}}}).ok());
  }
  ObjectPtr Create(const std::string& name) {
    auto r = store_.Create(RoutesInfo(), "ns", Route(name, name + ".example.com"));
    EXPECT_TRUE(r.ok());
    return r.value;
  }
  testing::FakeClock clock_;
  ObjectStore store_{clock_, ObjectStore::Options{8, 4}};
};

TEST_F(ObjectStoreTest, GenerationBumpsOnSpecChangesOnly) {
  ObjectPtr a = Create("a");
  json obj = json::parse(a->json);
  obj["metadata"]["labels"] = {{"x", "y"}};
  auto labelled = store_.Update(RoutesInfo(), "ns", "a", obj, false);
  ASSERT_TRUE(labelled.ok());
  EXPECT_EQ(json::parse(labelled.value->json)["metadata"]["generation"], 1);
  obj = json::parse(labelled.value->json);
  obj["spec"]["host"] = "b";
  auto changed = store_.Update(RoutesInfo(), "ns", "a", obj, false);
  ASSERT_TRUE(changed.ok());
  EXPECT_EQ(json::parse(changed.value->json)["metadata"]["generation"], 2);
  EXPECT_EQ(changed.value->rv, labelled.value->rv + 1);
}

// The store keeps the handler's rule for labels and annotations (one rule,
// object_meta_types.h) for callers that write to it directly.
TEST_F(ObjectStoreTest, LabelsThatAreNotStringsAreRefused) {
  json route = Route("typed", "typed.example.com");
  route["metadata"]["labels"] = {{"tier", 3}};
  auto refused = store_.Create(RoutesInfo(), "ns", route);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error->code, 400);
  EXPECT_EQ(refused.error->message,
            "Route in version \"v1\" cannot be handled as a Route: json: cannot unmarshal number "
            "into Go struct field ObjectMeta.metadata.labels of type string");
}

// An object too big for etcd (default --max-request-bytes, 1.5 MiB) is
// refused as kube-apiserver passes etcd's error on: a 500 with no reason,
// and nothing stored. A status write that makes a route too big fails the
// same way and leaves the route as it was.
TEST_F(ObjectStoreTest, ObjectsTooBigForEtcdAreRefusedAsKubeDoes) {
  json big = Route("big", "big.example.com");
  big["metadata"]["annotations"] = {{"note", std::string(1600 * 1024, 'x')}};
  const uint64_t before = store_.CurrentRv();
  auto refused = store_.Create(RoutesInfo(), "ns", big);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error->code, 500);
  EXPECT_EQ(refused.error->reason, "");
  EXPECT_EQ(refused.error->message, "etcdserver: request is too large");
  EXPECT_EQ(store_.CurrentRv(), before);
  WriteOptions dry;
  dry.dry_run = true;
  EXPECT_TRUE(store_.Create(RoutesInfo(), "ns", big, false, dry).ok()) << "a dry run reaches no etcd";

  big["metadata"]["annotations"]["note"] = std::string(1530 * 1024, 'x');
  auto near = store_.Create(RoutesInfo(), "ns", big);
  ASSERT_TRUE(near.ok());
  json status = json::parse(near.value->json);
  status["status"]["ingress"] = {{{"routerName", "default"}, {"host", std::string(10 * 1024, 'h')}}};
  auto grown = store_.Update(RoutesInfo(), "ns", "big", status, true);
  ASSERT_FALSE(grown.ok());
  EXPECT_EQ(grown.error->code, 500);
  EXPECT_EQ(store_.CurrentRv(), near.value->rv);
  EXPECT_EQ(store_.Get(RoutesInfo(), "ns", "big").value->json, near.value->json);
}

TEST_F(ObjectStoreTest, StaleVersionIsConflict) {
  ObjectPtr a = Create("a");
  json obj = json::parse(a->json);
  obj["spec"]["host"] = "b";
  ASSERT_TRUE(store_.Update(RoutesInfo(), "ns", "a", obj, false).ok());
  auto stale = store_.Update(RoutesInfo(), "ns", "a", obj, false);
  ASSERT_FALSE(stale.ok());
  EXPECT_EQ(stale.error->code, 409);
  EXPECT_EQ(stale.error->reason, "Conflict");
}

TEST_F(ObjectStoreTest, WatchOlderThanHistoryIsGone) {
  ObjectPtr first = Create("a");
  for (int i = 0; i < 10; ++i) Create("r" + std::to_string(i));
  auto w = store_.Watch(RoutesInfo(), {}, first->rv);
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.error->code, 410);
  EXPECT_EQ(w.error->reason, "Expired");
  auto recent = store_.Watch(RoutesInfo(), {}, store_.CurrentRv() - 2);
  ASSERT_TRUE(recent.ok());
  std::deque<WatchRecord> records;
  EXPECT_TRUE(recent.value->Wait(clock_.Now(), &records));
  EXPECT_EQ(records.size(), 2u);
}

TEST_F(ObjectStoreTest, SlowWatcherIsClosedOnOverflow) {
  auto w = store_.Watch(RoutesInfo(), {}, store_.CurrentRv());
  ASSERT_TRUE(w.ok());
  for (int i = 0; i < 5; ++i) Create("r" + std::to_string(i));
  EXPECT_TRUE(w.value->closed());
  std::deque<WatchRecord> records;
  EXPECT_FALSE(w.value->Wait(clock_.Now(), &records));
}

TEST_F(ObjectStoreTest, PagesComeFromOneSnapshot) {
  for (int i = 0; i < 4; ++i) Create("r" + std::to_string(i));
  auto page1 = store_.List(RoutesInfo(), {}, 2, "");
  ASSERT_TRUE(page1.ok());
  ASSERT_EQ(page1.value.items.size(), 2u);
  ASSERT_FALSE(page1.value.continue_token.empty());
  ASSERT_TRUE(store_.Delete(RoutesInfo(), "ns", "r3").ok());
  Create("r5");
  auto page2 = store_.List(RoutesInfo(), {}, 2, page1.value.continue_token);
  ASSERT_TRUE(page2.ok());
  ASSERT_EQ(page2.value.items.size(), 2u);
  EXPECT_EQ(page2.value.items[0]->name, "r2");
  EXPECT_EQ(page2.value.items[1]->name, "r3");
  EXPECT_TRUE(page2.value.continue_token.empty());
  EXPECT_EQ(page2.value.rv, page1.value.rv);
}

// remainingItemCount counts the snapshot's objects after the page, within
// the listed namespace: objects created after the snapshot do not count,
// ones deleted since still do (they are in the snapshot).
TEST_F(ObjectStoreTest, RemainingItemCountIsTheRestOfTheSnapshot) {
  ASSERT_TRUE(store_.Create(NamespacesInfo(), "", {{"metadata", {{"name", "ns2"}}}}).ok());
  ASSERT_TRUE(store_.Create(NamespacesInfo(), "", {{"metadata", {{"name", "a"}}}}).ok());
  for (int i = 0; i < 6; ++i) Create("r" + std::to_string(i));
  for (const char* ns : {"ns2", "a"}) {
    for (int i = 0; i < 3; ++i) {
      ASSERT_TRUE(store_.Create(RoutesInfo(), ns, Route("q" + std::to_string(i), "q.example.com")).ok());
    }
  }
  ObjectFilter all;
  auto first = store_.List(RoutesInfo(), all, 2, "");
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first.value.remaining, 10);  // a/q0 a/q1 listed; a/q2, 6 in ns, 3 in ns2 left
  ObjectFilter in_ns;
  in_ns.ns = "ns";
  auto ns_first = store_.List(RoutesInfo(), in_ns, 2, "");
  ASSERT_TRUE(ns_first.ok());
  EXPECT_EQ(ns_first.value.remaining, 4);  // ns/r2..r5; ns2 is not in the range
  ASSERT_TRUE(store_.Delete(RoutesInfo(), "ns", "r4").ok());
  Create("r9");
  auto ns_second = store_.List(RoutesInfo(), in_ns, 2, ns_first.value.continue_token);
  ASSERT_TRUE(ns_second.ok());
  EXPECT_EQ(ns_second.value.items[0]->name, "r2");
  EXPECT_EQ(ns_second.value.remaining, 2);  // r4 (deleted since) and r5; not r9
  auto all_second = store_.List(RoutesInfo(), all, 5, first.value.continue_token);
  ASSERT_TRUE(all_second.ok());
  EXPECT_EQ(all_second.value.items.back()->name, "r3");
  EXPECT_EQ(all_second.value.remaining, 5);  // ns/r4 ns/r5 ns2/q0..q2
  auto newest = store_.List(RoutesInfo(), in_ns, 6, "");
  ASSERT_TRUE(newest.ok());
  EXPECT_FALSE(newest.value.remaining.has_value());  // r0 r1 r2 r3 r5 r9: nothing left
  EXPECT_TRUE(newest.value.continue_token.empty());
}

TEST_F(ObjectStoreTest, ContinueTokenRoundTrips) {
  std::string error;
  std::string token = EncodeContinueToken({42, "ns/a"});
  auto decoded = DecodeContinueToken(token, &error);
  ASSERT_TRUE(decoded.has_value()) << error;
  EXPECT_EQ(decoded->rv, 42);
  EXPECT_EQ(decoded->last_key, "ns/a");
  // kube-apiserver's own token for {"v":"meta.k8s.io/v1","rv":5068,"start":"r0\u0000"}.
  EXPECT_EQ(EncodeContinueToken({5068, "r0"}),
            "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6NTA2OCwic3RhcnQiOiJyMFx1MDAwMCJ9");
  decoded = DecodeContinueToken(EncodeContinueToken({-1, "r0"}), &error);
  ASSERT_TRUE(decoded.has_value()) << error;
  EXPECT_EQ(decoded->rv, -1);
}

TEST_F(ObjectStoreTest, BadContinueTokensAreRejectedInKubesWords) {
  std::string error;
  EXPECT_FALSE(DecodeContinueToken("garbage", &error).has_value());
  EXPECT_EQ(error, "continue key is not valid: invalid character '\\u0081' looking for beginning "
                   "of value");
  EXPECT_FALSE(DecodeContinueToken("!!!", &error).has_value());
  EXPECT_EQ(error, "continue key is not valid: illegal base64 data at input byte 0");
  EXPECT_FALSE(DecodeContinueToken("e30", &error).has_value());  // {}
  EXPECT_EQ(error, "continue key is not valid: server does not recognize this encoded version \"\"");
  // {"v":"meta.k8s.io/v1","rv":0,"start":"a"}
  EXPECT_FALSE(DecodeContinueToken("eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MCwic3RhcnQiOiJhIn0",
                                   &error).has_value());
  EXPECT_EQ(error, "continue key is not valid: incorrect encoded start resourceVersion "
                   "(version meta.k8s.io/v1)");
}

TEST_F(ObjectStoreTest, CreateRequiresNamespaceAndName) {
  auto missing_ns = store_.Create(RoutesInfo(), "other", Route("a", "h"));
  ASSERT_FALSE(missing_ns.ok());
  EXPECT_EQ(missing_ns.error->code, 404);
  json unnamed = Route("", "h");
  unnamed["metadata"].erase("name");
  auto r = store_.Create(RoutesInfo(), "ns", unnamed);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error->code, 422);
  unnamed["metadata"]["generateName"] = "web-";
  auto generated = store_.Create(RoutesInfo(), "ns", unnamed);
  ASSERT_TRUE(generated.ok());
  EXPECT_EQ(generated.value->name.rfind("web-", 0), 0u);
  EXPECT_EQ(generated.value->name.size(), 9u);
}

TEST_F(ObjectStoreTest, DryRunWritesStoreNothing) {
  ObjectPtr a = Create("a");
  ObjectFilter all;
  auto watcher = store_.Watch(RoutesInfo(), all, store_.CurrentRv());
  ASSERT_TRUE(watcher.ok());
  const uint64_t rv = store_.CurrentRv();
  const WriteOptions dry{true};

  auto created = store_.Create(RoutesInfo(), "ns", Route("b", "b"), false, dry);
  ASSERT_TRUE(created.ok());
  EXPECT_EQ(created.value->rv, 0u);
  EXPECT_EQ(created.value->name, "b");
  EXPECT_FALSE(created.value->uid.empty());
  EXPECT_FALSE(json::parse(created.value->json)["metadata"].contains("resourceVersion"));
  auto again = store_.Create(RoutesInfo(), "ns", Route("a", "a"), false, dry);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error->reason, "AlreadyExists");

  json obj = json::parse(a->json);
  obj["spec"]["host"] = "changed";
  auto updated = store_.Update(RoutesInfo(), "ns", "a", obj, false, dry);
  ASSERT_TRUE(updated.ok());
  EXPECT_EQ(updated.value->rv, a->rv);
  EXPECT_EQ(json::parse(updated.value->json)["spec"]["host"], "changed");
  EXPECT_EQ(json::parse(updated.value->json)["metadata"]["resourceVersion"], std::to_string(a->rv));

  auto deleted = store_.Delete(RoutesInfo(), "ns", "a", std::nullopt, std::nullopt, dry);
  ASSERT_TRUE(deleted.ok());
  EXPECT_EQ(deleted.value, a);
  auto ns_deleted = store_.Delete(NamespacesInfo(), "", "ns", std::nullopt, std::nullopt, dry);
  ASSERT_TRUE(ns_deleted.ok());
  auto collection = store_.DeleteCollection(RoutesInfo(), all, dry);
  ASSERT_TRUE(collection.ok());
  EXPECT_EQ(collection.value.items.size(), 1u);

  EXPECT_EQ(store_.CurrentRv(), rv);
  EXPECT_EQ(store_.Count(RoutesInfo()), 1u);
  EXPECT_EQ(store_.Count(NamespacesInfo()), 1u);
  auto got = store_.Get(RoutesInfo(), "ns", "a");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got.value, a);
  EXPECT_TRUE(watcher.value->Empty());
  // A real write does reach the watcher.
  ASSERT_TRUE(store_.Delete(RoutesInfo(), "ns", "a").ok());
  EXPECT_FALSE(watcher.value->Empty());
}

}  // namespace
}  // namespace routestatus::apiserver
