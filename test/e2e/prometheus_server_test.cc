#include "e2e/harness/prometheus_server.h"

#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace routestatus::e2e {
namespace {

using ::testing::HasSubstr;
using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(PrometheusServerTest, ShortenForDurationsDividesEveryForLineOnly) {
  const std::string rules =
      "groups:\n"
      "  - name: a\n"
      "    rules:\n"
      "      - alert: Ten\n"
      "        expr: x[10m] > 0\n"
      "        for: 10m\n"
      "      - alert: Mixed\n"
      "        for: 1h30m\n"
      "      - alert: Short\n"
      "        for: 15s\n"
      "      - alert: Odd\n"
      "        for: 1m1s\n"
      "        annotations:\n"
      "          description: >-\n"
      "            for: 10m in a description is no for\n";
  auto out = ShortenForDurations(rules, 30, seconds(1));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out,
            "groups:\n"
            "  - name: a\n"
            "    rules:\n"
            "      - alert: Ten\n"
            "        expr: x[10m] > 0\n"
            "        for: 20s\n"
            "      - alert: Mixed\n"
            "        for: 180s\n"
            "      - alert: Short\n"
            "        for: 1s\n"
            "      - alert: Odd\n"
            "        for: 2033ms\n"
            "        annotations:\n"
            "          description: >-\n"
            "            for: 10m in a description is no for\n");
  EXPECT_EQ(LongestFor(rules), seconds(5400));
  EXPECT_EQ(LongestFor(*out), seconds(180));
  EXPECT_EQ(LongestFor("groups: []\n"), milliseconds(0));
}

TEST(PrometheusServerTest, ShortenForDurationsRejectsWhatIsNoDuration) {
  for (const char* bad : {"soon", "10", "5x", "m5", "10m "}) {
    auto out = ShortenForDurations(std::string("    for: ") + bad + "\n", 30, seconds(1));
    // Why "10m ": trailing blanks are allowed (the value is 10m).
    if (std::string(bad) == "10m ") {
      EXPECT_TRUE(out.ok()) << bad;
      continue;
    }
    EXPECT_FALSE(out.ok()) << bad;
    if (!out.ok()) {
      EXPECT_THAT(out.status().ToString(), HasSubstr("line 1"));
    }
  }
}

TEST(PrometheusServerTest, TestRulesOfTheShippedFileAreShortAndOtherwiseEqual) {
  std::ifstream in(ProductionRulesFile());
  std::stringstream text;
  text << in.rdbuf();
  ASSERT_TRUE(in) << ProductionRulesFile();
  const std::string dir = ::testing::TempDir();
  auto path = WriteTestRules(dir);
  ASSERT_TRUE(path.ok()) << path.status().ToString();
  std::ifstream copy(*path);
  std::stringstream copied;
  copied << copy.rdbuf();
  EXPECT_GE(LongestFor(text.str()), std::chrono::minutes(5));
  EXPECT_LE(LongestFor(copied.str()), LongestFor(text.str()) / 30 + milliseconds(1));
  // Line for line the same apart from for: values (and the header line).
  std::istringstream a(text.str()), b(copied.str());
  std::string la, lb;
  std::getline(b, lb);
  int fors = 0;
  while (std::getline(a, la)) {
    ASSERT_TRUE(std::getline(b, lb));
    if (la.find("for: ") != std::string::npos && la.find("for: ") == la.find_first_not_of(' ')) {
      ++fors;
      EXPECT_NE(la, lb);
    } else {
      EXPECT_EQ(la, lb);
    }
  }
  EXPECT_GE(fors, 8);
}

TEST(PrometheusServerTest, ConfigHasIntervalsRulesAndJobs) {
  PrometheusOptions options;
  options.scrape_interval = milliseconds(1000);
  options.evaluation_interval = milliseconds(500);
  options.rule_files = {"/tmp/a b.yaml"};
  options.jobs = {{"route-status-controller", {"127.0.0.1:1", "127.0.0.1:2"}}, {"apiserver", {"127.0.0.1:3"}}};
  EXPECT_EQ(PrometheusConfig(options),
            "# Written by the e2e harness (e2e/harness/prometheus_server.cc).\n"
            "global:\n"
            "  scrape_interval: 1s\n"
            "  scrape_timeout: 1s\n"
            "  evaluation_interval: 500ms\n"
            "rule_files:\n"
            "  - \"/tmp/a b.yaml\"\n"
            "scrape_configs:\n"
            "  - job_name: \"route-status-controller\"\n"
            "    static_configs:\n"
            "      - targets: [\"127.0.0.1:1\", \"127.0.0.1:2\"]\n"
            "  - job_name: \"apiserver\"\n"
            "    static_configs:\n"
            "      - targets: [\"127.0.0.1:3\"]\n");
}

TEST(PrometheusServerTest, UrlQueryEscapeEncodesPromQl) {
  EXPECT_EQ(UrlQueryEscape("up == 1"), "up%20%3D%3D%201");
  EXPECT_EQ(UrlQueryEscape("x{a=\"b\"}[5m]"), "x%7Ba%3D%22b%22%7D%5B5m%5D");
  EXPECT_EQ(UrlQueryEscape("a_b-c.d~"), "a_b-c.d~");
}

}  // namespace
}  // namespace routestatus::e2e
