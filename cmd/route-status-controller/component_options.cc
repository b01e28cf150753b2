#include "cmd/route-status-controller/component_options.h"

#include <chrono>

namespace routestatus::cmd {
namespace {

std::string Lookup(const EnvMap& env, const char* name) {
  auto it = env.find(name);
  return it == env.end() ? "" : it->second;
}

std::chrono::seconds WholeSeconds(Duration d) {
  auto s = std::chrono::duration_cast<std::chrono::seconds>(d);
  return s.count() < 1 ? std::chrono::seconds(1) : s;
}

}  // namespace

StatusOr<ComponentOptions> BuildComponentOptions(const Options& o, const EnvMap& env) {
  ComponentOptions c;

  c.config_sources.explicit_kubeconfig = o.kubeconfig;
  c.config_sources.context = o.context;
  c.config_sources.in_cluster.service_host = Lookup(env, "KUBERNETES_SERVICE_HOST");
  c.config_sources.in_cluster.service_port = Lookup(env, "KUBERNETES_SERVICE_PORT");
  c.config_sources.kubeconfig_env = Lookup(env, "KUBECONFIG");
  c.config_sources.home = Lookup(env, "HOME");

  c.rest.qps = o.qps;
  c.rest.burst = o.burst;

  // Why: with exactly one namespace the informers can watch only it; with
  // several, they watch everything and the shard filter drops the rest.
  std::string only_namespace = o.namespaces.size() == 1 ? o.namespaces[0] : "";
  for (auto* informer : {&c.route_informer, &c.namespace_informer}) {
    informer->page_size = o.list_page_size;
    informer->stream_initial_events = o.watch_list;
    informer->watch_timeout_min = WholeSeconds(o.watch_timeout_min);
    informer->watch_timeout_max = WholeSeconds(o.watch_timeout_max);
  }
  c.route_informer.name = "routes";
  c.route_informer.namespace_name = only_namespace;
  // Why: no server-side label selector: a route whose labels stop matching
  // must still be seen, so our entry can be removed from it.
  c.namespace_informer.name = "namespaces";

  c.admission.router_name = o.router_name;
  c.admission.canonical_hostname = o.router_canonical_hostname;
  c.admission.router_domain = o.router_domain;
  c.admission.hostname_template = o.hostname_template;
  c.admission.override_hostname = o.override_hostname;
  c.admission.allow_wildcard_routes = o.allow_wildcard_routes;
  c.admission.allowed_domains = o.allowed_domains;
  c.admission.denied_domains = o.denied_domains;
  c.admission.disable_namespace_ownership_check = o.disable_namespace_ownership_check;
  c.admission.extended_validation = o.extended_validation;

  auto route_selector = kubeclient::LabelSelector::Parse(o.route_labels);
  if (!route_selector.ok()) {
    return Status(StatusCode::kInvalid,
                              "--route-labels: " + route_selector.status().message());
  }
  auto namespace_selector = kubeclient::LabelSelector::Parse(o.namespace_labels);
  if (!namespace_selector.ok()) {
    return Status(StatusCode::kInvalid,
                              "--namespace-labels: " + namespace_selector.status().message());
  }
  c.shard.route_selector = std::move(route_selector).value();
  c.shard.namespace_selector = std::move(namespace_selector).value();
  c.shard.namespaces = o.namespaces;

  // Why the defaults as they are: they are this controller's lease
  // (lease/backoff_write_lease.h); the preset is openshift-router's.
  c.lease = o.lease_preset == "openshift" ? lease::OpenshiftLikeLeaseOptions()
                                          : lease::WriteLeaseOptions();
  c.lease.name = o.router_name;
  c.lease.interval = o.lease_interval;
  c.lease.retry = o.lease_retry_interval;
  c.lease.election_delay = o.lease_election_delay;
  if (auto mode = lease::ParseTakeoverMode(o.lease_takeover)) c.lease.takeover.mode = *mode;
  if (auto rules = lease::LeaseRulesOff(c.lease.takeover.rules, o.lease_rules_off)) {
    c.lease.takeover.rules = *rules;
  }

  c.tracker.router_name = o.router_name;
  c.tracker.interval = o.contention_interval;
  c.tracker.limit = o.contention_limit;

  // Why: decommissioning removes the router name's entries everywhere, not
  // only from routes that match the shard today (labels may have changed).
  c.clear.router_name = o.router_name;
  c.clear.page_size = o.list_page_size;
  // Why: clear shares the client's budget; leave headroom for its lists.
  c.clear.qps = o.qps / 2;
  return c;
}

void ApplyConnectionOverrides(const Options& o, kubeclient::rest::RestConfig& config) {
  if (!o.server.empty()) {
    config.server = o.server;
    config.origin += " (server from --server)";
  }
  if (!o.token.empty()) {
    config.token = o.token;
    config.token_file.clear();
    config.origin += " (token from --token)";
  }
}

}  // namespace routestatus::cmd
