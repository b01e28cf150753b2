#include "e2e/harness/prom_text.h"

#include <gtest/gtest.h>

namespace routestatus::e2e {
namespace {

TEST(PromTextTest, ParsesSamplesLabelsAndSums) {
  const char* text =
      "# HELP apiserver_request_total Counter of apiserver requests\n"
      "# TYPE apiserver_request_total counter\n"
      "apiserver_request_total{verb=\"PUT\",resource=\"routes\",subresource=\"status\",code=\"200\"} 7\n"
      "apiserver_request_total{verb=\"PUT\",resource=\"routes\",subresource=\"status\",code=\"409\"} 2\n"
      "apiserver_request_total{verb=\"LIST\",resource=\"routes\",subresource=\"\",code=\"200\"} 1 1700000000\n"
      "process_cpu_seconds 1.5e+00\n"
      "broken{a=\"b\" 3\n"
      "escaped{msg=\"a\\\"b\"} 4\n";
  auto samples = ParsePromText(text);
  ASSERT_EQ(samples.size(), 5u);
  EXPECT_EQ(SumSamples(samples, "apiserver_request_total",
                       {{"verb", "PUT"}, {"subresource", "status"}}),
            9);
  EXPECT_EQ(SumSamples(samples, "apiserver_request_total",
                       {{"verb", "PUT"}, {"code", "200"}}),
            7);
  EXPECT_EQ(SumSamples(samples, "apiserver_request_total", {{"verb", "LIST"}}), 1);
  EXPECT_EQ(SumSamples(samples, "process_cpu_seconds"), 1.5);
  EXPECT_EQ(SumSamples(samples, "escaped", {{"msg", "a\"b"}}), 4);
  EXPECT_EQ(SumSamples(samples, "missing"), 0);
}

}  // namespace
}  // namespace routestatus::e2e
