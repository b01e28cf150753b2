// Issue 43: a quiet cluster is healthy. kube-apiserver's watch cache sends
// a watch nothing, bookmarks included, until its resource changes past the
// watch's start (or etcd's progress notification moves the cache, every
// 10 minutes by default); the embedded server models that by default. 3
// replicas with the product's default flags start after the last change
// of their routes (a first replica admitted them and was stopped), so their
// watches begin at the current version and hear nothing. After a quiet
// spell longer than the 75 s after which we used to end a silent watch as
// "presumed dead" (real time, no flag scaled): 0 watches ended by us (no
// watch request since the start), 0 crashes, no WARNING, and a route created
// afterwards is admitted within 2 s.
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "e2e/suite/e2e_test_base.h"

namespace routestatus::e2e {
namespace {

using std::chrono::seconds;

// 80 s by default; E2E_QUIET_CLUSTER_SECONDS sets another (`make
// quiet-soak`: 10 minutes, past etcd's progress-notify interval and the
// replicas' watch timeouts of 5-10 min).
seconds QuietSpell() {
  const char* v = std::getenv("E2E_QUIET_CLUSTER_SECONDS");
  return seconds(v != nullptr && std::atoi(v) > 0 ? std::atoi(v) : 80);
}

// The replicas' shortest watch timeout (--watch-timeout-min's default): the
// server ends each watch after at least that long, and it is re-opened.
constexpr auto kWatchTimeoutMin = seconds(300);

class QuietClusterTest : public E2eTest {};

TEST_F(QuietClusterTest, QuietWatchesStayOpenAndTheFleetStillAnswers) {
  const std::string router = "e2e-quiet";
  const std::string ns = Namespace("quiet");
  CreateRoutes(ns, "r", 5);
  ReplicaOptions options;  // the product's defaults
  options.router_name = router;
  {
    ReplicaSet& first = Replicas("quiet-first", 1, options);
    first.StartAll();
    ExpectAllAdmitted({router}, 5);
    first.StopAll();
  }
  ReplicaSet& set = Replicas("quiet", 3, options);
  set.StartAll();
  ASSERT_TRUE(set.WaitReady(seconds(30))) << set.LogTails();
  const double watches_at_start =
      set.SumMetric("routestatus_api_requests_total", {{"verb", "watch"}});
  const double writes_at_start = set.SumMetric("routestatus_status_writes_total");
  ASSERT_GT(watches_at_start, 0);

  const seconds quiet = QuietSpell();
  std::this_thread::sleep_for(quiet);

  for (int i = 0; i < set.size(); ++i) {
    EXPECT_TRUE(set.at(i).Running()) << set.at(i).id() << " exited\n" << set.LogTails();
  }
  EXPECT_TRUE(set.GrepLogs("SIGSEGV").empty()) << set.LogTails();
  const double watches_after = set.SumMetric("routestatus_api_requests_total", {{"verb", "watch"}});
  // Why an allowance: only the server's timeoutSeconds may end a watch.
  const double timed_out = static_cast<double>(quiet / kWatchTimeoutMin) * watches_at_start;
  EXPECT_LE(watches_after - watches_at_start, timed_out)
      << "watches were re-opened that the server's timeoutSeconds does not explain\n"
      << set.LogTails();
  Figure("quiet_seconds", static_cast<double>(quiet.count()));
  Figure("watches_reopened", watches_after - watches_at_start);
  EXPECT_EQ(set.SumMetric("routestatus_status_writes_total"), writes_at_start);
  Figure("liveness_probes_answered",
         set.SumMetric("routestatus_api_liveness_probes_total", {{"result", "answered"}}));
  EXPECT_EQ(set.SumMetric("routestatus_api_liveness_probes_total", {{"result", "unanswered"}}), 0);
  // GrepLogs prefixes "<replica id>: "; glog's WARNING lines begin "W<date>".
  for (const std::string& line : set.GrepLogs("] ")) {
    const size_t text = line.find(": ") + 2;
    const bool warning = line.size() > text + 1 && line[text] == 'W' &&
                         std::isdigit(static_cast<unsigned char>(line[text + 1]));
    EXPECT_FALSE(warning) << "a WARNING on a healthy quiet cluster: " << line;
  }

  const auto created = std::chrono::steady_clock::now();
  RouteShape shape;
  shape.ns = ns;
  shape.name = "after-quiet";
  shape.host = "after-quiet." + ns + ".apps.example.com";
  ASSERT_TRUE(cluster().CreateRoute(shape).ok());
  ExpectAllAdmitted({router}, 6, seconds(2));
  Figure("quiet_create_to_admitted_ms",
         std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - created)
             .count());
}

}  // namespace
}  // namespace routestatus::e2e
