#include "e2e/harness/route_churn.h"

#include <random>
#include <thread>

#include <glog/logging.h>

namespace routestatus::e2e {

const char* ChangeKindName(ChangeKind kind) {
  switch (kind) {
    case ChangeKind::kCreate:
      return "create";
    case ChangeKind::kHostChange:
      return "host-change";
    case ChangeKind::kLabelChange:
      return "label-change";
    case ChangeKind::kDelete:
      return "delete";
  }
  return "?";
}

std::vector<RouteChange> RandomChanges(const std::string& ns, const std::string& prefix, int count,
                                       uint64_t seed, const ChurnMix& mix,
                                       const std::vector<std::string>& existing) {
  std::mt19937_64 rng(seed);
  struct Model {
    std::string name;
    bool out = false;
    int host_version = 0;
  };
  std::vector<Model> live;
  for (const auto& name : existing) live.push_back({name, false, 0});
  int next = 0;
  auto host_of = [&](const Model& m) {
    return m.name + (m.host_version == 0 ? "" : "-v" + std::to_string(m.host_version)) + "." + ns +
           ".apps.example.com";
  };
  std::vector<RouteChange> out;
  const int total = mix.create + mix.host_change + mix.label_change + mix.del;
  CHECK(total > 0);
  while (static_cast<int>(out.size()) < count) {
    int pick = static_cast<int>(rng() % static_cast<uint64_t>(total));
    RouteChange c;
    c.ns = ns;
    if (live.empty() || pick < mix.create) {
      Model m{prefix + "-" + std::to_string(next++), false, 0};
      c.kind = ChangeKind::kCreate;
      c.name = m.name;
      c.host = host_of(m);
      c.labels = {{"shard", "in"}};
      c.needs_write = true;
      live.push_back(m);
      out.push_back(std::move(c));
      continue;
    }
    size_t i = static_cast<size_t>(rng() % live.size());
    Model& m = live[i];
    c.name = m.name;
    pick -= mix.create;
    if (pick < mix.host_change) {
      m.host_version++;
      c.kind = ChangeKind::kHostChange;
      c.host = host_of(m);
      c.needs_write = !m.out;
    } else if (pick < mix.host_change + mix.label_change) {
      m.out = !m.out;
      c.kind = ChangeKind::kLabelChange;
      c.labels = {{"shard", m.out ? "out" : "in"}};
      c.needs_write = true;
    } else {
      c.kind = ChangeKind::kDelete;
      c.needs_write = false;
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
    }
    out.push_back(std::move(c));
  }
  return out;
}

namespace {

Status ApplyOne(TestCluster& cluster, const RouteChange& c) {
  switch (c.kind) {
    case ChangeKind::kCreate: {
      RouteShape s;
      s.ns = c.ns;
      s.name = c.name;
      s.host = c.host;
      s.labels = c.labels;
      return cluster.CreateRoute(s).status();
    }
    case ChangeKind::kHostChange:
      return cluster.UpdateRoute(c.ns, c.name, [&](nlohmann::json& r) { r["spec"]["host"] = c.host; })
          .status();
    case ChangeKind::kLabelChange:
      return cluster
          .UpdateRoute(c.ns, c.name, [&](nlohmann::json& r) { r["metadata"]["labels"] = c.labels; })
          .status();
    case ChangeKind::kDelete:
      return cluster.DeleteRoute(c.ns, c.name);
  }
  return Status(StatusCode::kInternal, "unknown change kind");
}

}  // namespace

std::vector<AppliedChange> ApplyChanges(TestCluster& cluster, const std::vector<RouteChange>& changes,
                                        double per_second) {
  std::vector<AppliedChange> applied;
  applied.reserve(changes.size());
  auto start = std::chrono::steady_clock::now();
  for (size_t i = 0; i < changes.size(); ++i) {
    if (per_second > 0) {
      auto due = start + std::chrono::microseconds(static_cast<int64_t>(1e6 * i / per_second));
      std::this_thread::sleep_until(due);
    }
    const RouteChange& c = changes[i];
    Status status;
    // Why: retry transport failures and 429/5xx (fault-injection scenarios
    // drop connections); a retried create/delete that had already been
    // applied reads as AlreadyExists/NotFound, which counts as done.
    for (int attempt = 0; attempt < 50; ++attempt) {
      status = ApplyOne(cluster, c);
      if (attempt > 0 && ((c.kind == ChangeKind::kCreate &&
                           status.code() == StatusCode::kAlreadyExists) ||
                          (c.kind == ChangeKind::kDelete &&
                           status.code() == StatusCode::kNotFound))) {
        status = Status::Ok();
      }
      if (status.ok() || !status.IsRetryable() ||
          status.code() == StatusCode::kConflict) {
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (!status.ok()) {
      LOG(WARNING) << "e2e: " << ChangeKindName(c.kind) << " " << c.ns << "/" << c.name << ": "
                   << status.ToString();
    }
    applied.push_back({c, std::chrono::steady_clock::now(), status});
  }
  return applied;
}

bool InDesiredState(const kubeclient::Route& route, const std::string& router) {
  auto it = route.metadata.labels.find("shard");
  const bool out = it != route.metadata.labels.end() && it->second == "out";
  const auto entry = route.FindIngress(router);
  if (out) return !entry;
  return IsAdmittedBy(route, router) && entry->host == route.spec.host;
}

int CountNeedingWrites(const std::vector<RouteChange>& changes) {
  int n = 0;
  for (const auto& c : changes) n += c.needs_write ? 1 : 0;
  return n;
}

}  // namespace routestatus::e2e
