#include "cmd/route-status-controller/component_options.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace routestatus::cmd {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using namespace std::chrono_literals;

Options Parsed(std::vector<std::string> args) {
  ParsedConfig c = ParseConfig(args, {}, nullptr);
  EXPECT_THAT(c.errors, IsEmpty());
  return c.options;
}

TEST(ComponentOptionsTest, MapsEverySetting) {
  Options o = Parsed({"--router-name=internal", "--router-canonical-hostname=r.apps.example.com",
                      "--router-domain=apps.example.com",
                      "--hostname-template=${name}-${namespace}.apps.example.com",
                      "--override-hostname", "--allow-wildcard-routes",
                      "--disable-namespace-ownership-check", "--allowed-domains=example.com",
                      "--denied-domains=bad.example.com", "--route-labels=shard=internal",
                      "--namespace-labels=env in (prod)", "--namespaces=team-a",
                      "--lease-interval=10s", "--lease-retry-interval=2s",
                      "--lease-election-delay=500ms", "--contention-interval=1m",
                      "--contention-limit=9", "--qps=20", "--burst=40", "--list-page-size=250",
                      "--watch-timeout-min=90s", "--watch-timeout-max=3m", "--kubeconfig=/k",
                      "--context=ctx"});
  auto built = BuildComponentOptions(o, {{"KUBERNETES_SERVICE_HOST", "10.0.0.1"},
                                         {"KUBERNETES_SERVICE_PORT", "443"},
                                         {"KUBECONFIG", "/env/kubeconfig"},
                                         {"HOME", "/home/u"}});
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  const ComponentOptions& c = built.value();
  EXPECT_EQ(c.config_sources.explicit_kubeconfig, "/k");
  EXPECT_EQ(c.config_sources.context, "ctx");
  EXPECT_EQ(c.config_sources.in_cluster.service_host, "10.0.0.1");
  EXPECT_EQ(c.config_sources.in_cluster.service_port, "443");
  EXPECT_EQ(c.config_sources.kubeconfig_env, "/env/kubeconfig");
  EXPECT_EQ(c.config_sources.home, "/home/u");
  EXPECT_DOUBLE_EQ(c.rest.qps, 20);
  EXPECT_EQ(c.rest.burst, 40);

  EXPECT_EQ(c.admission.router_name, "internal");
  EXPECT_EQ(c.admission.canonical_hostname, "r.apps.example.com");
  EXPECT_EQ(c.admission.router_domain, "apps.example.com");
  EXPECT_EQ(c.admission.hostname_template, "${name}-${namespace}.apps.example.com");
  EXPECT_TRUE(c.admission.override_hostname);
  EXPECT_TRUE(c.admission.allow_wildcard_routes);
  EXPECT_TRUE(c.admission.disable_namespace_ownership_check);
  EXPECT_THAT(c.admission.allowed_domains, ElementsAre("example.com"));
  EXPECT_THAT(c.admission.denied_domains, ElementsAre("bad.example.com"));

  EXPECT_TRUE(c.shard.route_selector.Matches(kubeclient::Labels{{"shard", "internal"}}));
  EXPECT_FALSE(c.shard.route_selector.Matches(kubeclient::Labels{{"shard", "public"}}));
  EXPECT_TRUE(c.shard.namespace_selector.Matches(kubeclient::Labels{{"env", "prod"}}));
  EXPECT_FALSE(c.shard.namespace_selector.Matches(kubeclient::Labels{{"env", "dev"}}));
  EXPECT_THAT(c.shard.namespaces, ElementsAre("team-a"));

  EXPECT_EQ(c.route_informer.namespace_name, "team-a");
  EXPECT_EQ(c.route_informer.label_selector, "");  // shard filtering is client-side
  EXPECT_EQ(c.route_informer.page_size, 250);
  EXPECT_EQ(c.route_informer.watch_timeout_min, 90s);
  EXPECT_EQ(c.route_informer.watch_timeout_max, 180s);
  EXPECT_EQ(c.namespace_informer.namespace_name, "");

  EXPECT_EQ(c.lease.name, "internal");
  EXPECT_EQ(c.lease.interval, 10s);
  EXPECT_EQ(c.lease.retry, 2s);
  EXPECT_EQ(c.lease.election_delay, 500ms);
  EXPECT_EQ(c.tracker.router_name, "internal");
  EXPECT_EQ(c.tracker.interval, 1min);
  EXPECT_EQ(c.tracker.limit, 9);

  EXPECT_EQ(c.clear.router_name, "internal");
  EXPECT_EQ(c.clear.namespace_name, "");   // decommissioning covers every route
  EXPECT_EQ(c.clear.label_selector, "");
  EXPECT_EQ(c.clear.page_size, 250);
}

// The lease settings the binary runs with are those of `expected`: cmd/
// overrides nothing but what its flags set.
void ExpectLease(const lease::WriteLeaseOptions& got, const lease::WriteLeaseOptions& expected) {
  EXPECT_EQ(got.interval, expected.interval);
  EXPECT_EQ(got.retry, expected.retry);
  EXPECT_EQ(got.election_delay, expected.election_delay);
  EXPECT_EQ(got.single_probe, expected.single_probe);
  EXPECT_EQ(got.election_follows_extend, expected.election_follows_extend);
  EXPECT_EQ(got.follower_min_delay, expected.follower_min_delay);
  EXPECT_EQ(got.follower_delay_jitter, expected.follower_delay_jitter);
  EXPECT_EQ(got.leader_follows_foreign_extend, expected.leader_follows_foreign_extend);
  EXPECT_EQ(got.backoff.base, expected.backoff.base);
  EXPECT_EQ(got.takeover.mode, expected.takeover.mode);
  EXPECT_EQ(got.takeover.min_deadline, expected.takeover.min_deadline);
  EXPECT_EQ(got.takeover.factor, expected.takeover.factor);
  EXPECT_EQ(got.takeover.quantile, expected.takeover.quantile);
  EXPECT_EQ(got.takeover.window, expected.takeover.window);
  EXPECT_EQ(got.takeover.jitter, expected.takeover.jitter);
  EXPECT_FALSE(got.seed.has_value());
}

TEST(ComponentOptionsTest, DefaultFlagsRunTheLibraryDefaultLease) {
  auto built = BuildComponentOptions(Parsed({}), {});
  ASSERT_TRUE(built.ok());
  ExpectLease(built.value().lease, lease::WriteLeaseOptions());
  EXPECT_EQ(built.value().lease.name, "default");
}

TEST(ComponentOptionsTest, OpenshiftPresetRunsTheOpenshiftLikeLease) {
  auto built = BuildComponentOptions(Parsed({"--lease-preset=openshift"}), {});
  ASSERT_TRUE(built.ok());
  ExpectLease(built.value().lease, lease::OpenshiftLikeLeaseOptions());
  EXPECT_EQ(built.value().lease.interval, 60s);
  EXPECT_EQ(built.value().lease.takeover.mode, lease::TakeoverMode::kOff);
}

TEST(ComponentOptionsTest, TakeoverModeFromTheFlag) {
  auto built = BuildComponentOptions(Parsed({"--lease-takeover=off"}), {});
  ASSERT_TRUE(built.ok());
  EXPECT_EQ(built.value().lease.takeover.mode, lease::TakeoverMode::kOff);
  built = BuildComponentOptions(Parsed({"--lease-preset=openshift", "--lease-takeover=progress"}), {});
  ASSERT_TRUE(built.ok());
  EXPECT_EQ(built.value().lease.takeover.mode, lease::TakeoverMode::kProgress);
  EXPECT_EQ(built.value().lease.follower_min_delay, routestatus::Duration::zero());
}

TEST(ComponentOptionsTest, SeveralNamespacesWatchEverythingAndFilter) {
  auto built = BuildComponentOptions(Parsed({"--namespaces=a,b"}), {});
  ASSERT_TRUE(built.ok());
  EXPECT_EQ(built.value().route_informer.namespace_name, "");
  EXPECT_THAT(built.value().shard.namespaces, ElementsAre("a", "b"));
  EXPECT_TRUE(built.value().shard.route_selector.Empty());
}

TEST(ComponentOptionsTest, ConnectionOverrides) {
  kubeclient::rest::RestConfig config;
  config.server = "https://from-kubeconfig:6443";
  config.token_file = "/var/run/token";
  ApplyConnectionOverrides(Options{}, config);
  EXPECT_EQ(config.server, "https://from-kubeconfig:6443");
  EXPECT_EQ(config.token_file, "/var/run/token");
  Options o;
  o.server = "https://override:6443";
  o.token = "t";
  ApplyConnectionOverrides(o, config);
  EXPECT_EQ(config.server, "https://override:6443");
  EXPECT_EQ(config.token, "t");
  EXPECT_EQ(config.token_file, "");
}

TEST(ComponentOptionsTest, BadSelectorIsInvalid) {
  Options o;
  o.route_labels = "a b";
  auto built = BuildComponentOptions(o, {});
  ASSERT_FALSE(built.ok());
  EXPECT_EQ(built.status().code(), StatusCode::kInvalid);
}

}  // namespace
}  // namespace routestatus::cmd
