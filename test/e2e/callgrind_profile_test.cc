#include "e2e/harness/callgrind_profile.h"

#include <gtest/gtest.h>

namespace routestatus::e2e {
namespace {

// Shaped as callgrind 3.19 writes a dump (--dump-after, name compression):
// a call's cost line (after calls=) is the callee's inclusive cost, not the
// caller's own.
constexpr const char* kDump =
    "# callgrind format\n"
    "version: 1\n"
    "creator: callgrind-3.19.0\n"
    "pid: 21766\n"
    "part: 1\n"
    "\n"
    "desc: Trigger: --dump-after=routestatus::controller::Controller::ReportListedEntries()\n"
    "\n"
    "positions: line\n"
    "events: Ir\n"
    "summary: 1160\n"
    "\n"
    "ob=(1) /bin/controller\n"
    "fl=(1) controller.cc\n"
    "fn=(1) main\n"
    "10 100\n"
    "+2 50\n"
    "cfl=(2) json.cc\n"
    "cfn=(2) Decode(std::string_view)\n"
    "calls=3 0\n"
    "+1 900\n"
    "-3 10\n"
    "\n"
    "fl=(2)\n"
    "fn=(2)\n"
    "5 400\n"
    "fi=(3) inline.h\n"
    "7 500\n"
    "\n"
    "ob=(2) /lib/libc.so.6\n"
    "fl=(4) memcpy.S\n"
    "fn=(3) memcpy\n"
    "* 100\n"
    "\n"
    "totals: 1160\n";

TEST(CallgrindProfileTest, ReadsTotalsTriggerAndExclusiveCosts) {
  auto profile = ParseCallgrindProfile(kDump);
  ASSERT_TRUE(profile.ok()) << profile.status().ToString();
  EXPECT_EQ(profile->instructions, 1160u);
  EXPECT_EQ(profile->trigger,
            "--dump-after=routestatus::controller::Controller::ReportListedEntries()");
  ASSERT_EQ(profile->self.size(), 3u);
  EXPECT_EQ(profile->self.at("main"), 160u);  // not the 900 of its call
  EXPECT_EQ(profile->self.at("Decode(std::string_view)"), 900u);  // its inlined code included
  EXPECT_EQ(profile->self.at("memcpy"), 100u);
  uint64_t sum = 0;
  for (const auto& [name, cost] : profile->self) sum += cost;
  EXPECT_EQ(sum, profile->instructions);
}

TEST(CallgrindProfileTest, AFileWithoutTotalsIsIncomplete) {
  std::string partial(kDump);
  partial.resize(partial.find("totals:"));
  EXPECT_FALSE(ParseCallgrindProfile(partial).ok());
  EXPECT_FALSE(ParseCallgrindProfile("").ok());
}

TEST(CallgrindProfileTest, LargestGrowthIsPerUnitAndSorted) {
  CallgrindProfile small, large;
  small.self = {{"decode", 1000}, {"startup", 500}, {"report", 200}};
  large.self = {{"decode", 5000}, {"startup", 500}, {"report", 1200}, {"new", 100}};
  auto growth = LargestGrowth(small, large, /*units=*/100, /*most=*/2);
  ASSERT_EQ(growth.size(), 2u);
  EXPECT_EQ(growth[0].first, "decode");
  EXPECT_DOUBLE_EQ(growth[0].second, 40);
  EXPECT_EQ(growth[1].first, "report");
  EXPECT_DOUBLE_EQ(growth[1].second, 10);
}

}  // namespace
}  // namespace routestatus::e2e
