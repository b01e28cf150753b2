#include "test/sim/sim_api.h"

#include <algorithm>

#include <glog/logging.h>

#include "test/sim/fiber.h"

namespace routestatus::sim {

using kubeclient::WatchEvent;
using kubeclient::WatchEventType;
using nlohmann::json;

namespace {

Status Unused() { return Status(StatusCode::kInternal, "not used by the simulated controller"); }

Kind KindOf(const kubeclient::ResourceRef& res) {
  return res.resource == "namespaces" ? Kind::kNamespace : Kind::kRoute;
}

const char* KindName(Kind kind) { return kind == Kind::kRoute ? "Route" : "Namespace"; }

int64_t WallUnix(const SimClock& clock) {
  return std::chrono::duration_cast<std::chrono::seconds>(clock.WallNow().time_since_epoch())
      .count();
}

// The Status body of a 410 on a watch (as kube-apiserver sends it).
json GoneStatus() {
  return json{{"kind", "Status"},          {"apiVersion", "v1"},
              {"status", "Failure"},       {"reason", "Expired"},
              {"message", "too old resource version"}, {"code", 410}};
}

// Sets metadata.labels[label] = value in `object`, or removes it for "".
void SetLabel(json& object, const std::string& label, const std::string& value) {
  json& meta = object["metadata"];
  if (!value.empty()) {
    meta["labels"][label] = value;
  } else if (meta.contains("labels")) {
    meta["labels"].erase(label);
  }
}

}  // namespace

SimApi::SimApi(Scheduler& scheduler, std::mt19937_64& rng, SimApiOptions options)
    : scheduler_(scheduler), rng_(rng), options_(options) {}

SimApi::~SimApi() = default;

std::string SimApi::Version(int64_t seq) const {
  // Why scrambled: 48271 is a multiplier of the prime 2^31 - 1, so every seq
  // below it gets a distinct number, in no useful order.
  return options_.opaque_versions ? std::to_string((seq * 48271) % 2147483647)
                                  : std::to_string(seq);
}

std::optional<int64_t> SimApi::SeqOf(const std::string& version) const {
  auto it = seq_of_.find(version);
  if (it == seq_of_.end()) return std::nullopt;
  return it->second;
}

bool SimApi::Forbidden(Kind kind, Status* status) const {
  if (scheduler_.clock().Now() >= forbid_until_[static_cast<int>(kind)]) return false;
  *status = Status(StatusCode::kForbidden,
                   std::string(kind == Kind::kRoute ? "routes" : "namespaces") +
                       " is forbidden: User \"system:serviceaccount:sim:router\" cannot list "
                       "resource");
  return true;
}

void SimApi::Commit(Kind kind, const std::string& key, json object, WatchEventType type) {
  ++seq_;
  const std::string version = Version(seq_);
  seq_of_[version] = seq_;
  object["metadata"]["resourceVersion"] = version;
  auto stored = std::make_shared<StoredObject>();
  stored->key = key;
  stored->text = object.dump();
  stored->committed = scheduler_.clock().Now();
  // Why not a deleted route: only its event's text is served, and that may
  // be undecodable on purpose (DeleteRoute).
  if (kind == Kind::kRoute && type != WatchEventType::kDeleted) {
    auto typed = kubeclient::RouteFromText(stored->text);
    CHECK(typed.ok()) << "the sim built an undecodable route: " << typed.status().ToString();
    stored->route = std::make_shared<const kubeclient::Route>(std::move(*typed));
  }
  stored->json = std::move(object);
  auto& objects = objects_[static_cast<int>(kind)];
  if (type == WatchEventType::kDeleted) {
    objects.erase(key);
  } else {
    objects[key] = stored;
  }
  // Why here: the one place that knows both the version and whether a
  // status write made it (the owners' conflicts and the stalls use it).
  if (committing_status_write_) last_status_write_seq_[key] = seq_;
  HistoryEvent event{seq_, kind, type, stored, committing_status_write_};
  history_.push_back(event);
  Emit(event);
}

void SimApi::Emit(const HistoryEvent& event) {
  for (auto it = watches_.begin(); it != watches_.end();) {
    auto watch = it->lock();
    if (!watch || !watch->open()) {
      it = watches_.erase(it);
      continue;
    }
    const bool lost = options_.drop_event_probability > 0 &&
                      lease::UniformUnit(rng_) < options_.drop_event_probability;
    if (watch->kind() == event.kind && !lost) {
      WatchEvent e;
      e.type = event.type;
      e.object = event.object->json;
      e.object_text = event.object->text;
      watch->Push(std::move(e), event.object->key, event.seq, event.status_write);
    }
    ++it;
  }
}

bool SimApi::CreateNamespace(const std::string& name,
                             const std::map<std::string, std::string>& labels) {
  if (objects_[1].count(name) > 0) return false;
  json meta = {{"name", name},
               {"uid", "ns-uid-" + std::to_string(next_uid_++)},
               {"creationTimestamp", kubeclient::FormatRfc3339(WallUnix(scheduler_.clock()))}};
  if (!labels.empty()) meta["labels"] = labels;
  Commit(Kind::kNamespace, name,
         json{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", meta},
              {"status", {{"phase", "Active"}}}},
         WatchEventType::kAdded);
  return true;
}

bool SimApi::Modify(Kind kind, const std::string& key, const std::function<void(json&)>& change) {
  auto it = objects_[static_cast<int>(kind)].find(key);
  if (it == objects_[static_cast<int>(kind)].end()) return false;
  json o = it->second->json;
  change(o);
  // As kube-apiserver does for a custom resource: a change of anything but
  // metadata and status bumps metadata.generation (a relist's only sign of
  // spec changes it spans).
  if (o["metadata"].contains("generation") && kubeclient::SpecChanged(it->second->json, o)) {
    o["metadata"]["generation"] = o["metadata"]["generation"].get<int64_t>() + 1;
  }
  Commit(kind, key, std::move(o), WatchEventType::kModified);
  return true;
}

bool SimApi::SetNamespaceLabel(const std::string& name, const std::string& label,
                               const std::string& value) {
  return Modify(Kind::kNamespace, name, [&](json& o) { SetLabel(o, label, value); });
}

bool SimApi::CreateRoute(const std::string& ns, const std::string& name, const std::string& host,
                         const std::map<std::string, std::string>& labels) {
  const std::string key = ns + "/" + name;
  if (objects_[0].count(key) > 0) return false;
  const std::string created = kubeclient::FormatRfc3339(WallUnix(scheduler_.clock()));
  json o = {
      {"apiVersion", "route.openshift.io/v1"},
      {"kind", "Route"},
      {"metadata",
       {{"name", name},
        {"namespace", ns},
        {"uid", "uid-" + std::to_string(next_uid_++)},
        {"creationTimestamp", created},
        {"generation", 1},
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
  Commit(Kind::kRoute, key, std::move(o), WatchEventType::kAdded);
  return true;
}

bool SimApi::SetRouteHost(const std::string& key, const std::string& host) {
  return Modify(Kind::kRoute, key, [&](json& o) {
    if (host.empty()) {
      o["spec"].erase("host");
    } else {
      o["spec"]["host"] = host;
    }
  });
}

bool SimApi::SetRouteAnnotation(const std::string& key, const std::string& name,
                                const std::string& value) {
  return Modify(Kind::kRoute, key, [&](json& o) { o["metadata"]["annotations"][name] = value; });
}

bool SimApi::SetOtherRouterHost(const std::string& key, const std::string& host) {
  return Modify(Kind::kRoute, key, [&](json& o) {
    for (json& entry : o["status"]["ingress"]) {
      if (entry.value("routerName", "") == "other") entry["host"] = host;
    }
  });
}

bool SimApi::SetRouteLabel(const std::string& key, const std::string& label,
                           const std::string& value) {
  return Modify(Kind::kRoute, key, [&](json& o) { SetLabel(o, label, value); });
}

bool SimApi::DeleteRoute(const std::string& key, bool undecodable_final_state) {
  auto it = objects_[0].find(key);
  if (it == objects_[0].end()) return false;
  // The DELETED event carries the object with the deletion's version.
  json last = it->second->json;
  if (undecodable_final_state) last["spec"] = "not an object";
  Commit(Kind::kRoute, key, std::move(last), WatchEventType::kDeleted);
  return true;
}

StatusOr<std::vector<ObjectPtr>> SimApi::Page(Kind kind, const kubeclient::ListOptions& o,
                                              std::string* version, std::string* next,
                                              int receiver) {
  Status forbidden;
  if (Forbidden(kind, &forbidden)) return forbidden;
  int64_t id = 0;
  size_t offset = 0;
  if (o.continue_token.empty()) {
    id = next_snapshot_++;
    Snapshot& s = snapshots_[id];
    s.seq = seq_;
    for (const auto& [key, obj] : objects_[static_cast<int>(kind)]) s.items.push_back(obj);
  } else {
    const size_t colon = o.continue_token.find(':');
    id = std::stoll(o.continue_token.substr(0, colon));
    offset = std::stoull(o.continue_token.substr(colon + 1));
  }
  auto it = snapshots_.find(id);
  if (it == snapshots_.end() || it->second.seq < compacted_) {
    if (it != snapshots_.end()) snapshots_.erase(it);
    return Status(StatusCode::kGone,
                  "The provided continue parameter is too old to display a consistent list "
                  "result. You can start a new list without the continue parameter.");
  }
  const Snapshot& s = it->second;
  *version = Version(s.seq);
  seq_of_[*version] = s.seq;
  const size_t limit = o.limit > 0 ? static_cast<size_t>(o.limit) : s.items.size();
  const size_t end = std::min(s.items.size(), offset + limit);
  std::vector<ObjectPtr> items(s.items.begin() + static_cast<std::ptrdiff_t>(offset),
                               s.items.begin() + static_cast<std::ptrdiff_t>(end));
  if (delivery_observer_ && receiver >= 0) {
    // Why the snapshot's sequence: every item is as of then.
    for (const auto& item : items) delivery_observer_(kind, item->key, s.seq, receiver);
  }
  next->clear();
  if (end < s.items.size()) {
    *next = std::to_string(id) + ":" + std::to_string(end);
  } else {
    snapshots_.erase(it);
  }
  return items;
}

StatusOr<kubeclient::ListPage> SimApi::List(Kind kind, const kubeclient::ListOptions& o,
                                            int receiver) {
  kubeclient::ListPage page;
  auto items = Page(kind, o, &page.resource_version, &page.continue_token, receiver);
  if (!items.ok()) return items.status();
  for (const auto& item : *items) page.items.push_back(item->json);
  return page;
}

StatusOr<kubeclient::RawListPage> SimApi::ListRaw(Kind kind, const kubeclient::ListOptions& o,
                                                  int receiver) {
  kubeclient::RawListPage page;
  auto items = Page(kind, o, &page.resource_version, &page.continue_token, receiver);
  if (!items.ok()) return items.status();
  for (const auto& item : *items) {
    page.items.emplace_back(page.body.size(), item->text.size());
    page.body += item->text;
  }
  return page;
}

StatusOr<std::shared_ptr<SimWatch>> SimApi::Watch(Kind kind,
                                                              const kubeclient::WatchOptions& o,
                                                              const Delay& lag, int receiver) {
  Status forbidden;
  if (Forbidden(kind, &forbidden)) return forbidden;
  int64_t from = seq_;
  bool gone = false;
  if (!o.resource_version.empty()) {
    auto seq = SeqOf(o.resource_version);
    gone = !seq || *seq < compacted_;
    if (seq) from = *seq;
  }
  auto watch = std::make_shared<SimWatch>(kind, scheduler_.clock(), lag, rng_, delivery_observer_,
                                          &stalls_, receiver);
  watch->allow_bookmarks = o.allow_bookmarks;
  if (gone) {
    // Why both: kube-apiserver answers an expired version with 410 on the
    // request, or (served from its watch cache) with a 410 ERROR event.
    if (lease::UniformUnit(rng_) < 0.5) {
      return Status(StatusCode::kGone, "too old resource version: " + o.resource_version);
    }
    watch->PushGone();
    return watch;
  }
  for (const auto& event : history_) {
    if (event.seq <= from || event.kind != kind) continue;
    WatchEvent e;
    e.type = event.type;
    e.object = event.object->json;
    e.object_text = event.object->text;
    watch->Push(std::move(e), event.object->key, event.seq, event.status_write);
  }
  watch->End(scheduler_.clock().Now() + o.timeout, Status(StatusCode::kClosed, "watch timeout"));
  watches_.push_back(watch);
  if (watch->allow_bookmarks) ScheduleBookmark(watch);
  return watch;
}

void SimApi::ScheduleBookmark(const std::shared_ptr<SimWatch>& watch) {
  const auto span = options_.bookmark_max - options_.bookmark_min;
  const auto period = options_.bookmark_min +
                      Duration(static_cast<int64_t>(
                          static_cast<double>(span.count()) * lease::UniformUnit(rng_)));
  std::weak_ptr<SimWatch> weak = watch;
  scheduler_.After(period, [this, weak, kind = watch->kind()] {
    auto w = weak.lock();
    if (!w || !w->open()) return;
    WatchEvent bookmark;
    bookmark.type = WatchEventType::kBookmark;
    const std::string version = Version(seq_);
    seq_of_[version] = seq_;
    bookmark.object = {{"kind", KindName(kind)}, {"metadata", {{"resourceVersion", version}}}};
    w->Push(std::move(bookmark));
    ScheduleBookmark(w);
  });
}

StatusOr<json> SimApi::ApplyStatus(int writer, const json& body) {
  const auto& meta = body.at("metadata");
  const std::string key =
      meta.at("namespace").get<std::string>() + "/" + meta.at("name").get<std::string>();
  return WriteStatus(writer, key, meta.value("resourceVersion", ""), meta.value("uid", ""),
                     [&body](const json&) {
                       return body.contains("status") ? body["status"] : json::object();
                     });
}

StatusOr<json> SimApi::ApplyStatusPatch(int writer, const std::string& key, const json& patch) {
  std::optional<std::string> rv;
  if (auto m = patch.find("metadata"); m != patch.end() && m->is_object()) {
    if (auto v = m->find("resourceVersion"); v != m->end() && v->is_string()) {
      rv = v->get<std::string>();
    }
  }
  return WriteStatus(writer, key, rv, std::nullopt, [&patch](const json& stored) {
    json merged = json{{"status", stored.contains("status") ? stored["status"] : json::object()}};
    if (auto st = patch.find("status"); st != patch.end()) merged.merge_patch({{"status", *st}});
    return merged["status"].is_object() ? merged["status"] : json::object();
  });
}

StatusOr<json> SimApi::WriteStatus(int writer, const std::string& key,
                                   const std::optional<std::string>& rv,
                                   const std::optional<std::string>& uid,
                                   const std::function<json(const json&)>& status_of) {
  PutCounts& counts = puts_[writer];
  ++counts.attempts;
  ++puts_by_key_[key];
  auto it = objects_[0].find(key);
  if (it == objects_[0].end()) {
    ++counts.not_found;
    return Status(StatusCode::kNotFound, "routes.route.openshift.io \"" + key + "\" not found");
  }
  if (auto f = fail_status_of.find(key); f != fail_status_of.end()) {
    ++counts.errors;
    return f->second;
  }
  auto current = [&] {
    const json& stored = it->second->json;
    return !(rv && *rv != stored["metadata"]["resourceVersion"]) &&
           !(uid && *uid != stored["metadata"]["uid"]);
  };
  if (current() && race_hook_ && race_hook_(writer, key)) {
    raced_ = true;
    // The racing peer's copy of this request lands first (it read the
    // same, current version).
    PutCounts& peer = puts_[kRacingPeer];
    ++peer.attempts;
    ++peer.success;
    ++puts_by_key_[key];
    const ObjectPtr before = it->second;
    json updated = before->json;
    updated["status"] = status_of(before->json);
    committing_status_write_ = true;
    Commit(Kind::kRoute, key, std::move(updated), WatchEventType::kModified);
    committing_status_write_ = false;
    it = objects_[0].find(key);
    if (write_observer_) write_observer_(writer, *before, *it->second);
  }
  const json& stored = it->second->json;
  if ((rv && *rv != stored["metadata"]["resourceVersion"]) ||
      (uid && *uid != stored["metadata"]["uid"])) {
    ++counts.conflicts;
    if (rv) {
      const std::optional<int64_t> guarded = SeqOf(*rv);
      auto last = last_status_write_seq_.find(key);
      if (guarded && (last == last_status_write_seq_.end() || last->second <= *guarded)) {
        ++counts.owner_conflicts;
      }
    }
    if (conflict_observer_) conflict_observer_(writer, key);
    return Status(StatusCode::kConflict,
                  "Operation cannot be fulfilled on routes.route.openshift.io \"" + key +
                      "\": the object has been modified; please apply your changes to the "
                      "latest version and try again");
  }
  ++counts.success;
  const ObjectPtr before = it->second;
  json updated = stored;
  // Why: the status subresource ignores everything but .status.
  updated["status"] = status_of(stored);
  committing_status_write_ = true;
  Commit(Kind::kRoute, key, std::move(updated), WatchEventType::kModified);
  committing_status_write_ = false;
  const ObjectPtr now = objects_[0].at(key);
  if (write_observer_) write_observer_(writer, *before, *now);
  return now->json;
}

void SimApi::Compact(double end_watches) {
  compacted_ = seq_;
  history_.clear();
  for (auto& weak : watches_) {
    auto watch = weak.lock();
    if (!watch || !watch->open() || lease::UniformUnit(rng_) >= end_watches) continue;
    watch->PushGone();
  }
}

void SimApi::DropWatches(Kind kind, double p) {
  for (auto& weak : watches_) {
    auto watch = weak.lock();
    if (!watch || !watch->open() || watch->kind() != kind) continue;
    if (lease::UniformUnit(rng_) < p) {
      watch->End(scheduler_.clock().Now(),
                 Status(StatusCode::kUnavailable, "connection reset by peer"));
    }
  }
}

std::vector<std::shared_ptr<const kubeclient::Route>> SimApi::Routes() const {
  std::vector<std::shared_ptr<const kubeclient::Route>> out;
  out.reserve(objects_[0].size());
  for (const auto& [key, obj] : objects_[0]) out.push_back(obj->route);
  return out;
}

StatusOr<json> SimApi::Get(Kind kind, const std::string& key) const {
  auto it = objects_[static_cast<int>(kind)].find(key);
  if (it == objects_[static_cast<int>(kind)].end()) {
    return Status(StatusCode::kNotFound, key + " not found");
  }
  return it->second->json;
}

std::shared_ptr<const kubeclient::Route> SimApi::Route(const std::string& key) const {
  auto it = objects_[0].find(key);
  return it == objects_[0].end() ? nullptr : it->second->route;
}

std::map<std::string, std::map<std::string, std::string>> SimApi::Namespaces() const {
  std::map<std::string, std::map<std::string, std::string>> out;
  for (const auto& [name, obj] : objects_[1]) {
    auto& labels = out[name];
    const json& meta = obj->json["metadata"];
    if (meta.contains("labels")) {
      for (const auto& [k, v] : meta["labels"].items()) labels[k] = v.get<std::string>();
    }
  }
  return out;
}

std::map<std::string, std::string> SimApi::Versions(Kind kind) const {
  std::map<std::string, std::string> out;
  for (const auto& [key, obj] : objects_[static_cast<int>(kind)]) {
    out[key] = obj->json["metadata"]["resourceVersion"].get<std::string>();
  }
  return out;
}

PutCounts SimApi::TotalPuts() const {
  PutCounts total;
  for (const auto& [writer, c] : puts_) {
    total.attempts += c.attempts;
    total.success += c.success;
    total.conflicts += c.conflicts;
    total.owner_conflicts += c.owner_conflicts;
    total.not_found += c.not_found;
    total.errors += c.errors;
  }
  return total;
}

size_t SimApi::open_watches() const {
  size_t n = 0;
  for (const auto& weak : watches_) {
    auto w = weak.lock();
    if (w && w->open()) ++n;
  }
  return n;
}

void SimWatch::Push(WatchEvent event, const std::string& key, int64_t seq, bool status_write) {
  if (!open()) return;
  Duration slow;
  const Duration lag = lag_.Sample(rng_, &slow);
  if (stalls_ != nullptr && !key.empty() && Stalls::Stalled(lag, slow)) {
    if (kind_ == Kind::kNamespace) {
      stalls_->namespace_event_seqs.push_back(seq);
    } else {
      ++stalls_->events;
      if (status_write) ++stalls_->write_events;
    }
  }
  const SteadyTime at = std::max(last_, clock_.Now() + lag);
  last_ = at;
  queue_.push_back(Queued{at, std::move(event), key, seq});
}

void SimWatch::PushGone() {
  WatchEvent error;
  error.type = WatchEventType::kError;
  error.object = GoneStatus();
  Push(std::move(error));
  // The server closes the stream after the error; the reflector stops
  // reading at the error anyway.
  End(last_ + std::chrono::milliseconds(1), Status(StatusCode::kClosed, "server closed the watch"));
}

void SimWatch::End(SteadyTime at, Status status) {
  if (end_ && end_->first <= at) return;
  end_ = std::make_pair(at, std::move(status));
}

std::optional<StatusOr<WatchEvent>> SimWatch::Poll() {
  const SteadyTime now = clock_.Now();
  if (cancelled_) return StatusOr<WatchEvent>(Status(StatusCode::kCancelled, "cancelled"));
  if (!queue_.empty() && queue_.front().at <= now &&
      (!end_ || queue_.front().at <= end_->first)) {
    Queued q = std::move(queue_.front());
    queue_.pop_front();
    if (delivered_ && !q.key.empty()) delivered_(kind_, q.key, q.seq, receiver_);
    return StatusOr<WatchEvent>(std::move(q.event));
  }
  if (end_ && end_->first <= now) {
    queue_.clear();
    return StatusOr<WatchEvent>(end_->second);
  }
  return std::nullopt;
}

std::optional<SteadyTime> SimWatch::ReadyAt() const {
  if (cancelled_) return clock_.Now();
  std::optional<SteadyTime> at;
  if (!queue_.empty()) at = queue_.front().at;
  if (end_ && (!at || end_->first < *at)) at = end_->first;
  return at;
}

namespace {

// The client end of a SimWatch: Next() parks the reflector's fiber until an
// event has arrived. NextRaw() gives routes as text (object null), like the
// REST client.
class SimWatchStream final : public kubeclient::WatchStream {
 public:
  SimWatchStream(std::shared_ptr<SimWatch> watch, std::shared_ptr<bool> closed,
                 const SimClock& clock, std::shared_ptr<SteadyTime> cut_until)
      : watch_(std::move(watch)),
        closed_(std::move(closed)),
        clock_(clock),
        cut_until_(std::move(cut_until)) {}
  ~SimWatchStream() override { watch_->Cancel(); }

  StatusOr<WatchEvent> Next() override { return Take(false); }
  StatusOr<WatchEvent> NextRaw() override { return Take(true); }
  void Cancel() override { watch_->Cancel(); }

 private:
  StatusOr<WatchEvent> Take(bool raw) {
    for (;;) {
      if (*closed_) return Status(StatusCode::kUnavailable, "connection closed");
      if (clock_.Now() < *cut_until_) {
        // Partitioned: nothing arrives; the connection is dead at the end.
        Fiber* fiber = Fiber::Current();
        CHECK(fiber != nullptr) << "a simulated watch is read on a fiber";
        fiber->Park([closed = closed_, cut = cut_until_]() -> std::optional<SteadyTime> {
          if (*closed) return SteadyTime{};
          return *cut;
        });
        watch_->Cancel();
        return Status(StatusCode::kUnavailable, "connection reset (partition)");
      }
      if (auto polled = watch_->Poll()) {
        if (!polled->ok()) return *polled;
        WatchEvent e = std::move(polled->value());
        const bool object = e.type == WatchEventType::kAdded ||
                            e.type == WatchEventType::kModified ||
                            e.type == WatchEventType::kDeleted;
        if (raw && object) {
          e.object = json();
        } else {
          e.object_text.clear();
        }
        return e;
      }
      Fiber* fiber = Fiber::Current();
      CHECK(fiber != nullptr) << "a simulated watch is read on a fiber";
      fiber->Park([watch = watch_, closed = closed_, cut = cut_until_,
                   &clock = clock_]() -> std::optional<SteadyTime> {
        if (*closed || clock.Now() < *cut) return SteadyTime{};
        return watch->ReadyAt();
      });
    }
  }

  std::shared_ptr<SimWatch> watch_;
  std::shared_ptr<bool> closed_;
  const SimClock& clock_;
  std::shared_ptr<SteadyTime> cut_until_;
};

}  // namespace

SimClient::SimClient(Scheduler& scheduler, SimApi& api, std::mt19937_64& rng, int writer,
                     ClientDelays delays)
    : scheduler_(scheduler), api_(api), rng_(rng), writer_(writer), delays_(delays) {}

SimClient::~SimClient() { Close(); }

void SimClient::Close() { *closed_ = true; }

void SimClient::ParkUntil(const std::function<std::optional<SteadyTime>()>& ready) {
  Fiber* fiber = Fiber::Current();
  CHECK(fiber != nullptr) << "simulated API calls are made on fibers";
  fiber->Park([closed = closed_, ready]() -> std::optional<SteadyTime> {
    if (*closed) return SteadyTime{};
    return ready();
  });
}

bool SimClient::WaitOutPartition() {
  if (scheduler_.clock().Now() >= *cut_until_) return false;
  while (!*closed_ && scheduler_.clock().Now() < *cut_until_) {
    ParkUntil([cut = cut_until_] { return std::optional<SteadyTime>(*cut); });
  }
  return true;
}

StatusOr<json> SimClient::Get(const kubeclient::ResourceRef& res, const std::string& ns,
                              const std::string& name) {
  // Why the status PUT's delays: a GET of one route is a request of the
  // same size to the same server (the status syncer reads a route after a
  // 409); read when the request arrives, answered after the answer delay.
  const std::string key = ns.empty() ? name : ns + "/" + name;
  return SendOneObjectRequest(key, false, [kind = KindOf(res), key](SimApi& api, int) {
    return api.Get(kind, key);
  });
}

bool SimClient::WaitListPage() {
  if (*closed_) return false;
  const SteadyTime until = scheduler_.clock().Now() + delays_.list_page.Sample(rng_);
  while (!*closed_ && scheduler_.clock().Now() < until) {
    ParkUntil([until] { return std::optional<SteadyTime>(until); });
  }
  return !*closed_;
}

StatusOr<kubeclient::ListPage> SimClient::List(const kubeclient::ResourceRef& res,
                                                           const std::string&,
                                                           const kubeclient::ListOptions& options) {
  if (WaitOutPartition()) return Status(StatusCode::kUnavailable, "no answer (partition)");
  if (!WaitListPage()) return Status(StatusCode::kUnavailable, "connection closed");
  return api_.List(KindOf(res), options, writer_);
}

StatusOr<kubeclient::RawListPage> SimClient::ListRaw(
    const kubeclient::ResourceRef& res, const std::string&, const kubeclient::ListOptions& options) {
  if (WaitOutPartition()) return Status(StatusCode::kUnavailable, "no answer (partition)");
  if (!WaitListPage()) return Status(StatusCode::kUnavailable, "connection closed");
  return api_.ListRaw(KindOf(res), options, writer_);
}

StatusOr<std::unique_ptr<kubeclient::WatchStream>> SimClient::Watch(
    const kubeclient::ResourceRef& res, const std::string&, const kubeclient::WatchOptions& options) {
  if (*closed_) return Status(StatusCode::kUnavailable, "connection closed");
  if (WaitOutPartition()) return Status(StatusCode::kUnavailable, "no answer (partition)");
  auto watch = api_.Watch(KindOf(res), options, delays_.watch, writer_);
  if (!watch.ok()) return watch.status();
  return std::unique_ptr<kubeclient::WatchStream>(std::make_unique<SimWatchStream>(
      std::move(watch).value(), closed_, scheduler_.clock(), cut_until_));
}

StatusOr<json> SimClient::Create(const kubeclient::ResourceRef&, const std::string&,
                                             const json&) {
  return Unused();
}

StatusOr<json> SimClient::Update(const kubeclient::ResourceRef&, const json&) {
  return Unused();
}

StatusOr<json> SimClient::UpdateStatus(const kubeclient::ResourceRef&,
                                                   const json& object) {
  const json& meta = object.contains("metadata") ? object["metadata"] : json::object();
  const std::string key = meta.value("namespace", std::string()) + "/" +
                          meta.value("name", std::string());
  return SendWrite(key,
                   [object](SimApi& api, int writer) { return api.ApplyStatus(writer, object); });
}

StatusOr<json> SimClient::MergePatchStatus(const kubeclient::ResourceRef&, const std::string& ns,
                                           const std::string& name, const json& patch) {
  return SendWrite(ns + "/" + name, [key = ns + "/" + name, patch](SimApi& api, int writer) {
    return api.ApplyStatusPatch(writer, key, patch);
  });
}

StatusOr<json> SimClient::SendWrite(const std::string& key,
                                    std::function<StatusOr<json>(SimApi&, int writer)> apply) {
  StatusOr<json> first = SendOneObjectRequest(key, true, apply);
  if (send_writes_twice_) (void)SendOneObjectRequest(key, true, apply);
  return first;
}

StatusOr<json> SimClient::SendOneObjectRequest(
    const std::string& key, bool write, std::function<StatusOr<json>(SimApi&, int writer)> apply) {
  if (*closed_) return Status(StatusCode::kUnavailable, "connection closed");
  if (WaitOutPartition()) return Status(StatusCode::kUnavailable, "no answer (partition)");
  using Reply = std::optional<StatusOr<json>>;
  auto reply = std::make_shared<Reply>();
  ++in_flight_;
  // Why no `this` in the callbacks: the server applies a write that was
  // sent even when this replica crashes before the answer.
  SimApi& api = api_;
  Scheduler& scheduler = scheduler_;
  std::mt19937_64& rng = rng_;
  const Delay response = delays_.put_response;
  Duration slow;
  const Duration request = delays_.put_request.Sample(rng_, &slow);
  const bool stalled = Stalls::Stalled(request, slow);
  if (stalled) ++api_.stalls().requests;
  const Duration stall = stalled ? slow : Duration::zero();
  // Why the base: the simulator adds it to every request of the scenario
  // (the slow leader's 500 ms); U[0, jitter) is the usual latency.
  const Duration injected = delays_.put_request.base + slow;
  const SteadyTime sent = scheduler_.clock().Now();
  scheduler_.After(request, [&api, &scheduler, &rng, response, writer = writer_, apply, reply,
                             stall, injected, sent, key, write, stalled] {
    api.set_request_delays(stall, injected);
    StatusOr<json> result = apply(api, writer);
    api.set_request_delays(Duration::zero(), Duration::zero());
    const bool raced = api.TakeRaced();
    Duration slow_answer;
    const Duration answer = response.Sample(rng, &slow_answer);
    const bool answer_stalled = Stalls::Stalled(answer, slow_answer);
    if (answer_stalled) ++api.stalls().answers;
    if (write && (stalled || answer_stalled)) ++api.stalls().writes;
    const Duration held = stall + (answer_stalled ? slow_answer : Duration::zero());
    scheduler.After(answer, [&api, reply, result, writer, key, sent, held, raced] {
      *reply = result;
      if (api.answer_observer()) api.answer_observer()(writer, key, sent, held, raced);
    });
  });
  while (!*closed_ && !reply->has_value()) {
    ParkUntil([reply]() -> std::optional<SteadyTime> {
      if (reply->has_value()) return SteadyTime{};
      return std::nullopt;
    });
  }
  --in_flight_;
  if (!reply->has_value()) return Status(StatusCode::kUnavailable, "connection closed");
  return std::move(**reply);
}

Status SimClient::Delete(const kubeclient::ResourceRef&, const std::string&,
                                     const std::string&) {
  return Unused();
}

}  // namespace routestatus::sim
