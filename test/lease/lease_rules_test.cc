// The ablation's switches (lease/lease_rules.h): names parse, unknown ones
// are refused, and a rule switched off changes what it names.
#include "lease/lease_rules.h"

#include <gtest/gtest.h>

#include "lease/takeover.h"

namespace routestatus::lease {
namespace {

TEST(LeaseRulesTest, NamesSwitchTheirRuleOffAndNoOther) {
  const auto rules = LeaseRulesOff(LeaseRules{}, "held-key-samples,stretch-caps");
  ASSERT_TRUE(rules.has_value());
  EXPECT_FALSE(rules->held_key_samples);
  EXPECT_FALSE(rules->stretch_caps);
  EXPECT_TRUE(rules->own_write_samples);
  EXPECT_TRUE(rules->sample_guard);
}

TEST(LeaseRulesTest, AllAndNoneAndUnknown) {
  const auto all = LeaseRulesOff(LeaseRules{}, "all");
  ASSERT_TRUE(all.has_value());
  for (const std::string& name : LeaseRuleNames()) {
    const auto one = LeaseRulesOff(LeaseRules{}, name);
    ASSERT_TRUE(one.has_value()) << name;
    EXPECT_TRUE(LeaseRulesOff(*all, name).has_value()) << name;
  }
  EXPECT_FALSE(all->own_write_samples);
  EXPECT_FALSE(all->expiry_waits_for_takeover);
  EXPECT_TRUE(LeaseRulesOff(LeaseRules{}, "none")->sample_guard);
  EXPECT_FALSE(LeaseRulesOff(LeaseRules{}, "stretch-caps,bogus").has_value());
}

// One slow sample among none: guarded, it counts as the minimum deadline;
// unguarded, it sets D alone.
TEST(LeaseRulesTest, SampleGuardOffLetsOneSlowSampleSetTheDeadline) {
  TakeoverOptions options;
  DeadlineEstimator guarded(options, std::chrono::seconds(15));
  guarded.Add(std::chrono::milliseconds(1400));
  EXPECT_EQ(guarded.Deadline(), std::chrono::milliseconds(1000));
  options.rules.sample_guard = false;
  DeadlineEstimator plain(options, std::chrono::seconds(15));
  plain.Add(std::chrono::milliseconds(1400));
  EXPECT_EQ(plain.Deadline(), std::chrono::milliseconds(2800));
}

// Without the caps the stretch is jitter x D: with D = 1.5 s the longest
// wait is 3 s, not 2 s.
TEST(LeaseRulesTest, StretchCapsOffStretchesByJitterTimesD) {
  TakeoverOptions options;
  for (bool caps : {true, false}) {
    options.rules.stretch_caps = caps;
    TakeoverTimer timer(options, std::chrono::seconds(15), 1);
    for (int i = 0; i < 20; ++i) timer.ProbeAnswered(std::chrono::milliseconds(750));
    ASSERT_EQ(timer.estimator().Deadline(), std::chrono::milliseconds(1500));
    EXPECT_EQ(timer.LongestWait(), caps ? std::chrono::milliseconds(2000)
                                        : std::chrono::milliseconds(3000));
  }
}

}  // namespace
}  // namespace routestatus::lease
