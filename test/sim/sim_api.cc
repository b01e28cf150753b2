#include "test/sim/sim_api.h"

#include <glog/logging.h>

namespace routestatus::sim {

using kubeclient::Status;
using kubeclient::StatusCode;
using nlohmann::json;

namespace {

Status Unused() { return Status(StatusCode::kInternal, "not used by the simulated status path"); }

int64_t WallUnix(const SimClock& clock) {
  return std::chrono::duration_cast<std::chrono::seconds>(clock.WallNow().time_since_epoch())
      .count();
}

}  // namespace

bool SimApi::Create(const std::string& ns, const std::string& name, const std::string& host,
                    const std::map<std::string, std::string>& labels) {
  const std::string key = ns + "/" + name;
  if (objects_.count(key) > 0) return false;
  const std::string created = kubeclient::FormatRfc3339(WallUnix(clock_));
  json o = {
      {"apiVersion", "route.openshift.io/v1"},
      {"kind", "Route"},
      {"metadata",
       {{"name", name},
        {"namespace", ns},
        {"uid", "uid-" + std::to_string(next_uid_++)},
        {"creationTimestamp", created},
        {"labels", labels},
        {"annotations", {{"sim.example.com/unknown", "kept"}}}}},
      {"spec", {{"to", {{"kind", "Service"}, {"name", name}}}, {"wildcardPolicy", "None"}}},
      // Why: another router name's entry that every write must keep.
      {"status",
       {{"ingress",
         json::array({{{"routerName", "other"},
                       {"host", name + ".other.example.com"},
                       {"conditions",
                        json::array({{{"type", "Admitted"},
                                      {"status", "True"},
                                      {"lastTransitionTime", created}}})}}})}}},
  };
  if (!host.empty()) o["spec"]["host"] = host;
  Commit(key, std::move(o), EventType::kAdded);
  return true;
}

bool SimApi::SetHost(const std::string& key, const std::string& host) {
  auto it = objects_.find(key);
  if (it == objects_.end()) return false;
  json o = it->second.object;
  if (host.empty()) {
    o["spec"].erase("host");
  } else {
    o["spec"]["host"] = host;
  }
  Commit(key, std::move(o), EventType::kModified);
  return true;
}

bool SimApi::SetLabel(const std::string& key, const std::string& label, const std::string& value) {
  auto it = objects_.find(key);
  if (it == objects_.end()) return false;
  json o = it->second.object;
  if (value.empty()) {
    o["metadata"]["labels"].erase(label);
  } else {
    o["metadata"]["labels"][label] = value;
  }
  Commit(key, std::move(o), EventType::kModified);
  return true;
}

bool SimApi::Delete(const std::string& key) {
  auto it = objects_.find(key);
  if (it == objects_.end()) return false;
  ++rv_;
  ModelEvent event{EventType::kDeleted, rv_, it->second.route};
  objects_.erase(it);
  if (listener_) listener_(event);
  return true;
}

void SimApi::Commit(const std::string& key, json object, EventType type) {
  ++rv_;
  object["metadata"]["resourceVersion"] = std::to_string(rv_);
  auto typed = kubeclient::RouteFromJson(object);
  CHECK(typed.ok()) << "sim model built an undecodable route: " << typed.status().ToString();
  auto route = std::make_shared<const kubeclient::Route>(std::move(*typed));
  objects_[key] = Stored{std::move(object), route};
  if (listener_) listener_(ModelEvent{type, rv_, route});
}

kubeclient::StatusOr<json> SimApi::UpdateStatus(int writer, const json& body) {
  PutCounts& counts = puts_[writer];
  ++counts.attempts;
  const auto& meta = body.at("metadata");
  const std::string key =
      meta.at("namespace").get<std::string>() + "/" + meta.at("name").get<std::string>();
  auto it = objects_.find(key);
  if (it == objects_.end()) {
    ++counts.not_found;
    return Status(StatusCode::kNotFound, "routes \"" + key + "\" not found");
  }
  const json& stored = it->second.object;
  if (meta.value("resourceVersion", "") != stored["metadata"]["resourceVersion"] ||
      meta.value("uid", "") != stored["metadata"]["uid"]) {
    ++counts.conflicts;
    if (conflict_observer_) conflict_observer_(writer, key);
    return Status(StatusCode::kConflict,
                  "Operation cannot be fulfilled on routes \"" + key +
                      "\": the object has been modified; please apply your changes to the "
                      "latest version and try again");
  }
  ++counts.success;
  json updated = stored;
  // Why: the status subresource ignores everything but .status.
  updated["status"] = body.contains("status") ? body["status"] : json::object();
  Commit(key, std::move(updated), EventType::kModified);
  const Stored& now = objects_.at(key);
  if (write_observer_) write_observer_(writer, *now.route);
  return now.object;
}

std::vector<std::shared_ptr<const kubeclient::Route>> SimApi::List() const {
  std::vector<std::shared_ptr<const kubeclient::Route>> out;
  out.reserve(objects_.size());
  for (const auto& [key, stored] : objects_) out.push_back(stored.route);
  return out;
}

std::shared_ptr<const kubeclient::Route> SimApi::Get(const std::string& key) const {
  auto it = objects_.find(key);
  return it == objects_.end() ? nullptr : it->second.route;
}

PutCounts SimApi::TotalPuts() const {
  PutCounts total;
  for (const auto& [writer, c] : puts_) {
    total.attempts += c.attempts;
    total.success += c.success;
    total.conflicts += c.conflicts;
    total.not_found += c.not_found;
  }
  return total;
}

kubeclient::StatusOr<json> ReplicaClient::Get(const kubeclient::ResourceRef&, const std::string&,
                                              const std::string&) {
  return Unused();
}
kubeclient::StatusOr<kubeclient::ListPage> ReplicaClient::List(const kubeclient::ResourceRef&,
                                                               const std::string&,
                                                               const kubeclient::ListOptions&) {
  return Unused();
}
kubeclient::StatusOr<std::unique_ptr<kubeclient::WatchStream>> ReplicaClient::Watch(
    const kubeclient::ResourceRef&, const std::string&, const kubeclient::WatchOptions&) {
  return Unused();
}
kubeclient::StatusOr<json> ReplicaClient::Create(const kubeclient::ResourceRef&,
                                                 const std::string&, const json&) {
  return Unused();
}
kubeclient::StatusOr<json> ReplicaClient::Update(const kubeclient::ResourceRef&, const json&) {
  return Unused();
}
Status ReplicaClient::Delete(const kubeclient::ResourceRef&, const std::string&,
                             const std::string&) {
  return Unused();
}

}  // namespace routestatus::sim
