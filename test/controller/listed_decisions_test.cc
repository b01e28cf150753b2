#include "controller/listed_decisions.h"

#include <memory>

#include <gtest/gtest.h>

namespace routestatus::controller {
namespace {

std::shared_ptr<const kubeclient::Route> MakeRoute(const std::string& name) {
  kubeclient::Route r;
  r.metadata.namespace_name = "ns";
  r.metadata.name = name;
  return std::make_shared<const kubeclient::Route>(std::move(r));
}

TEST(ListedDecisionsTest, EachDecisionIsTakenOnceForItsObject) {
  ListedDecisions d;
  auto a = MakeRoute("a"), b = MakeRoute("b"), a2 = MakeRoute("a");
  ListedDecisions::Batch batch;
  batch.Add(a, true, "");
  batch.Add(b, false, "HostAlreadyClaimed");
  d.Install(d.generation(), std::move(batch));
  EXPECT_EQ(d.size(), 2u);
  EXPECT_FALSE(d.Take(a2.get()).has_value()) << "another object of the same key";
  EXPECT_FALSE(d.Take(nullptr).has_value());
  auto tb = d.Take(b.get());
  ASSERT_TRUE(tb.has_value());
  EXPECT_FALSE(tb->admitted);
  EXPECT_EQ(tb->reason, "HostAlreadyClaimed");
  EXPECT_FALSE(d.Take(b.get()).has_value()) << "taken once";
  auto ta = d.Take(a.get());
  ASSERT_TRUE(ta.has_value());
  EXPECT_TRUE(ta->admitted);
  EXPECT_EQ(d.size(), 0u);
}

TEST(ListedDecisionsTest, AnEventForgetsEverything) {
  ListedDecisions d;
  auto a = MakeRoute("a");
  ListedDecisions::Batch batch;
  batch.Add(a, true, "");
  d.Install(d.generation(), std::move(batch));
  d.Invalidate();
  EXPECT_EQ(d.size(), 0u);
  EXPECT_FALSE(d.Take(a.get()).has_value());
}

TEST(ListedDecisionsTest, AReportThatRacedWithAnEventKeepsNothing) {
  ListedDecisions d;
  auto a = MakeRoute("a");
  const uint64_t before = d.generation();
  d.Invalidate();  // an event while the report read the caches
  ListedDecisions::Batch batch;
  batch.Add(a, true, "");
  d.Install(before, std::move(batch));
  EXPECT_EQ(d.size(), 0u);
  EXPECT_FALSE(d.Take(a.get()).has_value());
}

}  // namespace
}  // namespace routestatus::controller
