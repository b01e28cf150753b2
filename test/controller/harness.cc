#include "test/controller/harness.h"

namespace routestatus::controller::testing {

using nlohmann::json;

AdmissionOptions Harness::DefaultOptions() {
  AdmissionOptions o;
  o.router_name = "default";
  o.canonical_hostname = "router-default.apps.example.com";
  o.router_domain = "apps.example.com";
  return o;
}

Harness::Harness(ShardOptions shard_options, AdmissionOptions admission, Duration namespace_settle,
                 ContentionGate* real_gate)
    : shard(std::move(shard_options), &namespaces),
      syncer(admission, shard, routes, api, lease, real_gate ? *real_gate : gate, clock, stats),
      controller(syncer, routes, &namespaces, shard, queue, real_gate ? *real_gate : gate, clock,
                 namespace_settle) {
  routes.AddIndex(kRoutesByHostIndex, RoutesByHostIndexFunc(admission));
}

json Harness::RouteJson(const std::string& ns, const std::string& name, const std::string& host,
                        const std::string& created) {
  return json{{"apiVersion", "route.openshift.io/v1"},
              {"kind", "Route"},
              {"metadata",
               {{"name", name},
                {"namespace", ns},
                {"creationTimestamp", created},
                {"annotations", {{"x", "y"}}}}},
              {"spec",
               {{"host", host},
                {"to", {{"kind", "Service"}, {"name", name}}},
                {"unknownSpecField", {1, 2, 3}}}}};
}

void Harness::Create(const json& route, bool initial_list) {
  json stored = api.Put(route);
  auto typed = kubeclient::RouteFromJson(stored).value();
  std::string key = typed.Key();
  routes.Set(typed);
  controller.route_handler().OnAdd(routes.Get(key), initial_list);
}

void Harness::Deliver(const std::string& ns, const std::string& name) {
  auto old_obj = routes.Get(ns + "/" + name);
  routes.Set(api.Typed(ns, name));
  auto new_obj = routes.Get(ns + "/" + name);
  if (old_obj) {
    controller.route_handler().OnUpdate(old_obj, new_obj);
  } else {
    controller.route_handler().OnAdd(new_obj, false);
  }
}

void Harness::DeliverInFirstList(const std::string& ns, const std::string& name) {
  routes.Set(api.Typed(ns, name));
  controller.route_handler().OnAdd(routes.Get(ns + "/" + name), /*initial_list=*/true);
}

void Harness::DeleteRoute(const std::string& ns, const std::string& name) {
  auto last = routes.Get(ns + "/" + name);
  api.Remove(ns, name);
  routes.Delete(ns + "/" + name);
  if (last) controller.route_handler().OnDelete(last);
}

int Harness::Drain() {
  int n = 0;
  while (!queue.keys.empty() && controller.ProcessNextItem()) ++n;
  return n;
}

std::optional<kubeclient::RouteIngress> Harness::ServerEntry(const std::string& ns,
                                                             const std::string& name,
                                                             const std::string& router) {
  json o = api.Object(ns, name);
  if (o.is_null()) return std::nullopt;
  return kubeclient::RouteFromJson(o).value().FindIngress(router);
}

}  // namespace routestatus::controller::testing
