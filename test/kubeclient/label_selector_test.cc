#include "kubeclient/label_selector.h"

#include <gtest/gtest.h>

namespace routestatus::kubeclient {
namespace {

// The selector accepts the cached objects' Labels and a std::map (the
// embedded API server's); every case runs with both.
using MapLabels = std::map<std::string, std::string>;

struct MatchCase {
  const char* selector;
  Labels labels;
  bool matches;
};

class LabelSelectorMatchTest : public ::testing::TestWithParam<MatchCase> {};

TEST_P(LabelSelectorMatchTest, Matches) {
  const auto& c = GetParam();
  auto sel = LabelSelector::Parse(c.selector);
  ASSERT_TRUE(sel.ok()) << sel.status().ToString();
  EXPECT_EQ(sel->Matches(c.labels), c.matches) << c.selector;
  EXPECT_EQ(sel->Matches(MapLabels(c.labels.begin(), c.labels.end())), c.matches) << c.selector;
}

INSTANTIATE_TEST_SUITE_P(
    Table, LabelSelectorMatchTest,
    ::testing::Values(
        MatchCase{"", {}, true},
        MatchCase{"", {{"a", "b"}}, true},
        MatchCase{"a=b", {{"a", "b"}}, true},
        MatchCase{"a==b", {{"a", "b"}}, true},
        MatchCase{"a=b", {{"a", "c"}}, false},
        MatchCase{"a=b", {}, false},
        MatchCase{"a!=b", {}, true},
        MatchCase{"a!=b", {{"a", "b"}}, false},
        MatchCase{"a!=b", {{"a", "c"}}, true},
        MatchCase{"a in (x, y)", {{"a", "y"}}, true},
        MatchCase{"a in (x,y)", {{"a", "z"}}, false},
        MatchCase{"a in (x)", {}, false},
        MatchCase{"a notin (x,y)", {}, true},
        MatchCase{"a notin (x,y)", {{"a", "x"}}, false},
        MatchCase{"a", {{"a", ""}}, true},
        MatchCase{"a", {}, false},
        MatchCase{"!a", {}, true},
        MatchCase{"!a", {{"a", "1"}}, false},
        MatchCase{"shard=internal,env in (prod,stage),!legacy",
                  {{"shard", "internal"}, {"env", "prod"}}, true},
        MatchCase{"shard=internal,env in (prod,stage),!legacy",
                  {{"shard", "internal"}, {"env", "prod"}, {"legacy", "y"}}, false},
        MatchCase{"example.com/tier=web", {{"example.com/tier", "web"}}, true},
        MatchCase{"a=", {{"a", ""}}, true}));

TEST(LabelSelectorTest, RejectsMalformed) {
  for (const char* bad : {"=b", "a in x", "a in (x", "a=b,", "a=b c", "!", "a=(b)",
                          "a=b!"}) {
    auto sel = LabelSelector::Parse(bad);
    EXPECT_FALSE(sel.ok()) << "accepted: " << bad;
    if (!sel.ok()) {
      EXPECT_EQ(sel.status().code(), StatusCode::kInvalid);
      EXPECT_NE(sel.status().message().find(bad), std::string::npos);
    }
  }
}

TEST(LabelSelectorTest, CanonicalString) {
  auto sel = LabelSelector::Parse(" b in (y, x) , a==1,!c, d ,e!=2 ");
  ASSERT_TRUE(sel.ok());
  EXPECT_EQ(sel->ToString(), "b in (x,y),a=1,!c,d,e!=2");
  auto again = LabelSelector::Parse(sel->ToString());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->ToString(), sel->ToString());
}

TEST(LabelsTest, BehavesLikeASortedMap) {
  Labels labels{{"b", "2"}, {"a", "1"}, {"b", "3"}};  // later duplicates win
  ASSERT_EQ(labels.size(), 2u);
  EXPECT_EQ(labels.begin()->first, "a") << "iteration is sorted by key";
  EXPECT_EQ(labels.at("b"), "3");
  EXPECT_THROW(labels.at("c"), std::out_of_range);
  EXPECT_EQ(labels.find("c"), labels.end());
  EXPECT_EQ(labels.count("a"), 1u);
  labels["c"] = "4";
  labels.insert_or_assign("a", "5");
  EXPECT_EQ(labels, (Labels{{"a", "5"}, {"b", "3"}, {"c", "4"}}));
  EXPECT_EQ(labels.erase("b"), 1u);
  EXPECT_EQ(labels.erase("b"), 0u);
  EXPECT_NE(labels, (Labels{{"a", "5"}, {"b", "3"}, {"c", "4"}}));
  EXPECT_EQ(labels.size(), 2u);
  labels.clear();
  EXPECT_TRUE(labels.empty());
}

}  // namespace
}  // namespace routestatus::kubeclient
