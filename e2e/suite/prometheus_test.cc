// Issue 27: the alerts of deploy/monitoring/ evaluated by a real Prometheus
// (Debian's binary, started by the test on loopback) that scrapes every
// replica and the API server each second and evaluates the test copy of the
// rules (every `for:` divided by 30; WriteTestRules()). Alerts are read
// through Prometheus' HTTP API (/api/v1/alerts): the fight alert fires
// during a fight between two configurations, the unreachable alert during
// an API server outage (the restart fault), and nothing fires on a healthy
// fleet under churn. Issue 48: every query of the Grafana dashboard
// (deploy/monitoring/dashboard.json) runs against the same Prometheus.

#include <algorithm>
#include <atomic>
#include <cmath>
#include <fstream>
#include <future>
#include <set>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "e2e/harness/grafana_dashboard.h"
#include "e2e/harness/prometheus_server.h"
#include "e2e/harness/route_churn.h"
#include "e2e/harness/stand_in_router.h"
#include "e2e/suite/e2e_test_base.h"

namespace routestatus::e2e {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using SteadyClock = std::chrono::steady_clock;

double SecondsSince(SteadyClock::time_point t) {
  return std::chrono::duration<double>(SteadyClock::now() - t).count();
}

std::string Describe(const std::vector<PromAlert>& alerts) {
  std::ostringstream out;
  for (const auto& a : alerts) {
    out << "\n  " << a.state << " " << a.name() << " {";
    for (const auto& [k, v] : a.labels) {
      if (k != "alertname") out << k << "=" << v << " ";
    }
    out << "}";
  }
  return out.str();
}

class PrometheusTest : public E2eTest {
 protected:
  void SetUp() override {
    E2eTest::SetUp();
    if (HasFatalFailure()) return;
    if (!cluster().embedded()) {
      GTEST_SKIP() << "needs the embedded API server (the restart fault, plain-HTTP /metrics)";
    }
    ASSERT_FALSE(PrometheusServer::FindBinary().empty())
        << "prometheus not installed: Debian package prometheus (make deps)";
  }

  void TearDown() override {
    if (HasFailure() && prometheus_) {
      std::string log = prometheus_->ReadLog();
      if (log.size() > 3000) log = "..." + log.substr(log.size() - 3000);
      std::cout << "---- Prometheus log ----\n" << log << "\n";
    }
    prometheus_.reset();
    E2eTest::TearDown();
  }

  // Starts Prometheus with the test rules, scraping every replica of `sets`
  // (job route-status-controller) and the API server (job apiserver), and
  // waits (bounded) until every target is up and every rule has been
  // evaluated without error: a silent alert then means a false condition,
  // not a rule that cannot run.
  void StartPrometheus(const std::vector<ReplicaSet*>& sets) {
    PrometheusOptions options;
    options.dir = cluster().temp_dir();
    auto rules = WriteTestRules(cluster().temp_dir());
    ASSERT_TRUE(rules.ok()) << rules.status().ToString();
    rules_file_ = *rules;
    options.rule_files = {rules_file_};
    PrometheusJob replicas{"route-status-controller", {}};
    for (ReplicaSet* set : sets) {
      for (int i = 0; i < set->size(); ++i) {
        replicas.targets.push_back("127.0.0.1:" + std::to_string(set->at(i).metrics_port()));
      }
    }
    options.jobs = {replicas, {"apiserver", {"127.0.0.1:" + std::to_string(cluster().apiserver_port())}}};
    std::string error;
    prometheus_ = PrometheusServer::Start(options, &error);
    ASSERT_NE(prometheus_, nullptr) << error;
    std::cout << "Prometheus " << prometheus_->url() << " (log " << prometheus_->log_path() << ")\n";
    const size_t targets = replicas.targets.size() + 1;
    std::string why;
    bool ready = WaitFor(
        [&] {
          auto up = prometheus_->Query("up == 1");
          if (!up.ok() || up->size() != targets) {
            why = up.ok() ? std::to_string(up->size()) + " of " + std::to_string(targets) + " targets up"
                          : up.status().ToString();
            return false;
          }
          auto rules = prometheus_->Rules();
          if (!rules.ok() || rules->empty()) {
            why = rules.ok() ? "no rules loaded" : rules.status().ToString();
            return false;
          }
          for (const auto& r : *rules) {
            if (r.health != "ok") {
              why = "rule " + r.name + ": health " + r.health + " " + r.last_error;
              return false;
            }
          }
          return true;
        },
        seconds(30), milliseconds(200));
    ASSERT_TRUE(ready) << why;
  }

  // Firing alerts (all, or those named `name`); adds a failure when the API
  // cannot be read.
  std::vector<PromAlert> Firing(const std::string& name = "") {
    std::vector<PromAlert> out;
    auto alerts = prometheus_->Alerts();
    EXPECT_TRUE(alerts.ok()) << alerts.status().ToString();
    if (!alerts.ok()) return out;
    for (const auto& a : *alerts) {
      if (a.state == "firing" && (name.empty() || a.name() == name)) out.push_back(a);
    }
    return out;
  }

  // The value of an instant query that yields one sample; NaN otherwise.
  double QueryOne(const std::string& promql) {
    auto r = prometheus_->Query(promql);
    EXPECT_TRUE(r.ok()) << promql << ": " << r.status().ToString();
    if (!r.ok() || r->size() != 1) return std::nan("");
    return r->front().value;
  }

  std::unique_ptr<PrometheusServer> prometheus_;
  std::string rules_file_;  // the test copy Prometheus evaluates
};

// Two configurations under one router name (two replicas with one hostname
// template, one with another) fight over 20 routes; the contention cut-off
// engages and RouteStatusRouterNameFight fires for that router name, with
// its runbook link, while the API server stays reachable.
TEST_F(PrometheusTest, FightBetweenTwoConfigurationsFiresTheFightAlert) {
  std::string ns = Namespace("fight");
  CreateHostlessRoutes(ns, "r", 20);
  if (HasFatalFailure()) return;
  ReplicaSet& set = Replicas("fight", 0, ReplicaOptions());
  const std::vector<std::pair<std::string, std::string>> replicas = {
      {"fight-a-0", "apps-a"}, {"fight-a-1", "apps-a"}, {"fight-b-0", "apps-b"}};
  for (const auto& [id, domain] : replicas) {
    // A 60 s window: the cut-off stays engaged until the flush at 120 s.
    set.Add(id, TestReplicaOptions("e2e-fight", {{"hostname-template", "${name}-${namespace}." + domain + ".example.com"},
                                                 {"contention-interval", "60s"}}));
  }
  const auto start = SteadyClock::now();
  set.StartAll();
  StartPrometheus({&set});
  if (HasFatalFailure()) return;

  std::vector<PromAlert> fight;
  bool fired = WaitFor(
      [&] {
        fight = Firing("RouteStatusRouterNameFight");
        return !fight.empty();
      },
      seconds(90), milliseconds(500));
  ASSERT_TRUE(fired) << "RouteStatusRouterNameFight did not fire; cut-off on "
                     << set.SumMetric("routestatus_contention_cutoff_active") << " replica(s), "
                     << set.SumMetric("routestatus_contentions") << " contention(s)";
  Figure("fight_alert_after_seconds", SecondsSince(start));
  Figure("cutoff_active_replicas", set.SumMetric("routestatus_contention_cutoff_active"));
  ASSERT_EQ(fight.size(), 1u) << Describe(fight);
  EXPECT_EQ(fight[0].labels["router_name"], "e2e-fight");
  EXPECT_EQ(fight[0].labels["severity"], "critical");
  EXPECT_EQ(fight[0].annotations["runbook_url"], "docs/runbook.md#routestatusrouternamefight");
  std::cout << "alert: " << fight[0].annotations["summary"] << "\n";
  EXPECT_GT(set.SumMetric("routestatus_contention_cutoff_active"), 0);
  EXPECT_TRUE(Firing("RouteStatusApiServerUnreachable").empty());
}

// Three replicas, the API server restarted with 20 s down (the restart
// fault): RouteStatusApiServerUnreachable fires for every replica during the
// outage and resolves once the server answers.
TEST_F(PrometheusTest, ApiServerOutageFiresUnreachableForEveryReplica) {
  std::string ns = Namespace("outage");
  CreateRoutes(ns, "r", 10);
  ReplicaSet& set = Replicas("outage", 3, TestReplicaOptions("e2e-outage"));
  set.StartAll();
  ExpectAllAdmitted({"e2e-outage"}, 10);
  StartPrometheus({&set});
  if (HasFatalFailure()) return;
  std::set<std::string> want;
  for (int i = 0; i < set.size(); ++i) want.insert("127.0.0.1:" + std::to_string(set.at(i).metrics_port()));
  ASSERT_TRUE(Firing().empty()) << "alerts before the outage:" << Describe(Firing());

  const seconds down(20);
  const auto outage_start = SteadyClock::now();
  auto restart = std::async(std::launch::async, [&] { return cluster().RestartServer(down); });
  std::set<std::string> instances;
  bool all = WaitFor(
      [&] {
        for (const auto& a : Firing("RouteStatusApiServerUnreachable")) {
          instances.insert(a.labels.at("instance"));
        }
        return instances == want;
      },
      down - seconds(1), milliseconds(250));
  const double fired_after = SecondsSince(outage_start);
  auto back = restart.get();
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE(all) << "fired for " << instances.size() << " of " << want.size()
                   << " replicas during the " << down.count() << " s outage";
  if (all) Figure("unreachable_fired_after_seconds", fired_after);

  bool resolved = WaitFor([&] { return Firing("RouteStatusApiServerUnreachable").empty(); },
                          seconds(20), milliseconds(250));
  EXPECT_TRUE(resolved) << "still firing after the server came back:" << Describe(Firing());
  Figure("unreachable_resolved_after_back_seconds", SecondsSince(*back));
}

// Three replicas with the product's default flags under 200 random route
// changes at 10/s: no alert fires during the churn nor during the longest
// test `for:` after it, while the recording rules see the fleet (one
// leader, status writes).
TEST_F(PrometheusTest, HealthyFleetUnderChurnFiresNoAlert) {
  std::string ns = Namespace("calm");
  ReplicaOptions defaults;
  defaults.router_name = "e2e-calm";
  defaults.flags = {{"router-canonical-hostname", "router-e2e-calm.apps.example.com"},
                    {"route-labels", "shard!=out"}};
  ReplicaSet& set = Replicas("calm", 3, defaults);
  set.StartAll();
  StartPrometheus({&set});
  if (HasFatalFailure()) return;

  std::map<std::string, int> firing_polls, pending_polls;
  auto poll = [&] {
    auto alerts = prometheus_->Alerts();
    ASSERT_TRUE(alerts.ok()) << alerts.status().ToString();
    for (const auto& a : *alerts) ++(a.state == "firing" ? firing_polls : pending_polls)[a.name()];
  };
  const auto changes = RandomChanges(ns, "r", 200, /*seed=*/27);
  std::atomic<bool> churning{true};
  std::thread churn([&] {
    ApplyChanges(cluster(), changes, 10);
    churning = false;
  });
  while (churning) {
    poll();
    std::this_thread::sleep_for(milliseconds(500));
  }
  churn.join();
  std::string why;
  EXPECT_TRUE(WaitForRoutes(
      cluster(), [](const kubeclient::Route& r) { return InDesiredState(r, "e2e-calm"); },
      seconds(30), -1, &why))
      << why;
  // Every alert's `for:` has passed since the churn ended.
  std::ifstream rules(rules_file_);
  std::stringstream rules_text;
  rules_text << rules.rdbuf();
  const milliseconds settle = LongestFor(rules_text.str()) + seconds(5);
  ASSERT_GT(settle, seconds(5)) << "no for: read from " << rules_file_;
  const auto until = SteadyClock::now() + settle;
  while (SteadyClock::now() < until) {
    poll();
    std::this_thread::sleep_for(milliseconds(500));
  }
  std::ostringstream fired, pending;
  for (const auto& [name, n] : firing_polls) fired << " " << name << " (" << n << " polls)";
  for (const auto& [name, n] : pending_polls) pending << " " << name << " (" << n << " polls)";
  EXPECT_TRUE(firing_polls.empty()) << "fired on a healthy fleet:" << fired.str();
  if (!pending_polls.empty()) std::cout << "pending at times:" << pending.str() << "\n";
  int pending_total = 0;
  for (const auto& [name, n] : pending_polls) pending_total += n;
  Figure("pending_alert_polls", pending_total);

  EXPECT_EQ(QueryOne("router_name:routestatus_lease_leaders:sum{router_name=\"e2e-calm\"}"), 1);
  EXPECT_GT(QueryOne("sum(instance:routestatus_status_writes:rate5m{result=\"success\"})"), 0);
  Figure("status_puts_per_route_change",
         QueryOne(":apiserver_route_status_puts_per_route_change:ratio_rate5m"));
}

// The Grafana dashboard against three replicas with default flags (beside
// a stand-in router that is always ready) under 40
// route changes (some routes rejected: no host): every panel's every query
// (Grafana's $__rate_interval as 1m) runs without error, every metric a
// query names is in the scrape (those METRICS.md says no e2e run exports,
// cAdvisor's, are absent), and every panel whose metrics are all scraped
// shows at least one series. Why not every query: some series exist only
// after their event (a takeover, a failover, a fight); their metric names
// are still checked, so a renamed metric fails here.
TEST_F(PrometheusTest, EveryDashboardQueryRunsOnTheScrapedMetrics) {
  auto panels = ReadDashboard(DashboardFile());
  ASSERT_TRUE(panels.ok()) << panels.status().ToString();
  auto metrics = DashboardMetrics();
  ASSERT_TRUE(metrics.ok()) << metrics.status().ToString();
  ASSERT_GE(panels->size(), 10u) << DashboardFile();

  std::string ns = Namespace("dash");
  CreateRoutes(ns, "r", 10);
  CreateHostlessRoutes(ns, "nohost", 3);
  if (HasFatalFailure()) return;
  // Why beside a stand-in router (always ready): the sidecar panel's
  // metrics exist only with --router-ready-url.
  StandInRouter router;
  ASSERT_TRUE(router.Start().ok());
  ReplicaSet& set = Replicas("dash", 3,
                             TestReplicaOptions("e2e-dash", {{"router-ready-url", router.ReadyUrl()}}));
  set.StartAll();
  StartPrometheus({&set});
  if (HasFatalFailure()) return;
  ApplyChanges(cluster(), RandomChanges(ns, "c", 40, /*seed=*/48), 10);
  // Why wait: rate() over 1m needs two scrapes that differ by a write.
  ASSERT_TRUE(WaitFor(
      [&] {
        auto writes = prometheus_->Query("sum(increase(routestatus_status_writes_total[1m])) > 0");
        return writes.ok() && writes->size() == 1;
      },
      seconds(15), milliseconds(250)))
      << "no status write scraped after the changes";

  for (const auto& [name, metric] : *metrics) {
    auto count = prometheus_->Query("count({__name__=\"" + name + "\"})");
    ASSERT_TRUE(count.ok()) << name << ": " << count.status().ToString();
    const size_t found = count->size();
    const std::string used_by = "used by panel " + metric.panels.front();
    if (metric.in_e2e) {
      EXPECT_EQ(found, 1u) << name << " (" << used_by << ") is not in the scrape: renamed or removed?";
    } else {
      EXPECT_EQ(found, 0u) << name << " (" << used_by << ") is scraped: METRICS.md says no e2e run has it";
    }
  }

  int shown = 0;
  for (const DashboardPanel& panel : *panels) {
    bool all_scraped = true;
    for (const auto& [name, metric] : *metrics) {
      const auto& in = metric.panels;
      if (!metric.in_e2e && std::find(in.begin(), in.end(), panel.title) != in.end()) all_scraped = false;
    }
    size_t series = 0;
    for (const DashboardQuery& q : panel.queries) {
      auto result = prometheus_->Query(WithGrafanaVariables(q.expr, "1m", "5m"));
      EXPECT_TRUE(result.ok()) << panel.title << " " << q.ref_id << ": " << result.status().ToString();
      if (!result.ok()) continue;
      series += result->size();
      if (result->empty()) std::cout << "no series in this run: " << panel.title << " " << q.ref_id << "\n";
    }
    if (all_scraped) {
      EXPECT_GT(series, 0u) << "panel " << panel.title << " shows nothing on a fleet under churn";
    }
    shown += series > 0;
  }
  Figure("dashboard_panels", panels->size());
  Figure("dashboard_panels_with_series", shown);
}

}  // namespace
}  // namespace routestatus::e2e
