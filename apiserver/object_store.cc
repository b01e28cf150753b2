#include "apiserver/object_store.h"

#include <algorithm>
#include <cstdio>
#include <random>

#include <glog/logging.h>

#include "apiserver/builtin_crd.h"
#include "apiserver/etcd_storage.h"
#include "apiserver/object_meta_types.h"
#include "kubeclient/kube_client.h"
#include "kubeclient/route.h"

namespace routestatus::apiserver {

namespace {

using nlohmann::json;

std::string MetaString(const json& obj, const char* field) {
  auto m = obj.find("metadata");
  if (m == obj.end() || !m->is_object()) return "";
  auto f = m->find(field);
  if (f == m->end() || !f->is_string()) return "";
  return f->get<std::string>();
}

std::map<std::string, std::string> Labels(const json& obj) {
  std::map<std::string, std::string> out;
  auto m = obj.find("metadata");
  if (m == obj.end() || !m->is_object()) return out;
  auto l = m->find("labels");
  if (l == m->end() || !l->is_object()) return out;
  for (auto it = l->begin(); it != l->end(); ++it) {
    if (it.value().is_string()) out[it.key()] = it.value().get<std::string>();
  }
  return out;
}

std::string FormatUid(uint64_t prefix, uint64_t n) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%08x-%04x-4%03x-8%03x-%012llx",
                static_cast<unsigned>(prefix >> 32), static_cast<unsigned>(prefix >> 16) & 0xffff,
                static_cast<unsigned>(prefix) & 0xfff, static_cast<unsigned>(n >> 48) & 0xfff,
                static_cast<unsigned long long>(n & 0xffffffffffffULL));
  return buf;
}

ApiError ValidateMeta(const ResourceInfo& r, const json& obj) {
  ApiError none;
  none.code = 0;
  if (!obj.is_object()) return BadRequestError("the body must be a JSON object");
  // Why: kube checks the apiVersion before the kind.
  auto api_version = obj.find("apiVersion");
  if (api_version != obj.end() &&
      !(api_version->is_string() && api_version->get<std::string>() == r.ApiVersion())) {
    return BadRequestError("the API version in the data (" +
                           (api_version->is_string() ? api_version->get<std::string>() : "") +
                           ") does not match the expected API version (" + r.ApiVersion() + ")");
  }
  auto kind = obj.find("kind");
  if (kind != obj.end() && !(kind->is_string() && kind->get<std::string>() == r.kind)) {
    return BadRequestError("the API version in the data (" +
                           obj.value("apiVersion", std::string()) +
                           ") does not match the expected API version (" + r.ApiVersion() +
                           ") or kind " + (kind->is_string() ? kind->get<std::string>() : "") +
                           " does not match " + r.kind);
  }
  auto meta = obj.find("metadata");
  if (meta != obj.end() && !meta->is_object()) {
    return BadRequestError("metadata must be an object");
  }
  // Why: the HTTP handler refuses these while decoding (request_body.cc) and
  // patching; this is the same rule for callers of the store itself.
  if (std::optional<std::string> meta_error = ObjectMetaTypeError(obj)) {
    return BadRequestError(CannotBeHandledMessage(obj, r.kind, r.version, *meta_error));
  }
  return none;
}

// kube's storage.StorageError text for an invalid object (a failed
// precondition) at the etcd key of ns/name.
std::string StorageError(const ResourceInfo& r, const std::string& ns, const std::string& name,
                         const std::string& detail) {
  std::string key = "/registry/" + (r.group.empty() ? "" : r.group + "/") + r.resource + "/" +
                    (r.namespaced ? ns + "/" : "") + name;
  return "StorageError: invalid object, Code: 4, Key: " + key +
         ", ResourceVersion: 0, AdditionalErrorMsg: " + detail;
}

// Prunes and defaults *object under `schema`, as kube decodes a custom
// resource. Pruned fields are a 400 under fieldValidation=Strict (returned),
// Warning texts under Warn or "" (kube's default, appended to *warnings).
std::optional<ApiError> ApplySchema(const CrdSchema& schema, const WriteOptions& options,
                                    json* object, std::vector<std::string>* warnings) {
  std::vector<std::string> pruned;
  schema.Normalize(object, &pruned);
  if (pruned.empty() || options.field_validation == "Ignore") return std::nullopt;
  std::string strict = "strict decoding error: ";
  for (size_t i = 0; i < pruned.size(); ++i) {
    std::string unknown = "unknown field \"" + pruned[i] + "\"";
    strict += (i > 0 ? ", " : "") + unknown;
    warnings->push_back(unknown);
  }
  if (options.field_validation == "Strict") return BadRequestError(strict);
  return std::nullopt;
}

}  // namespace

std::optional<uint64_t> ParseRv(const std::string& text) {
  if (text.empty() || text.size() > 19) return std::nullopt;
  uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  return v;
}

ObjectStore::ObjectStore(const Clock& clock, Options options)
    : clock_(clock), options_(options), progress_(clock, options.progress_notify_interval) {
  std::random_device rd;
  uid_counter_ = (static_cast<uint64_t>(rd()) << 32) ^ rd();
}

std::string ObjectStore::Key(const ResourceInfo& r, const std::string& ns,
                             const std::string& name) {
  return r.namespaced ? ns + "/" + name : name;
}

ObjectStore::Table& ObjectStore::TableFor(const ResourceInfo& r) {
  return tables_[r.GroupResource()];
}

const ObjectStore::Table* ObjectStore::FindTable(const ResourceInfo& r) const {
  auto it = tables_.find(r.GroupResource());
  return it == tables_.end() ? nullptr : &it->second;
}

void ObjectStore::Dispatch(Watcher& w, const Event& e) {
  bool now_matches = w.filter().Matches(*e.object);
  bool was_matching = e.prev && w.filter().Matches(*e.prev);
  if (e.deleted) {
    if (was_matching) w.Push({"DELETED", e.object});
  } else if (now_matches && was_matching) {
    w.Push({"MODIFIED", e.object});
  } else if (now_matches) {
    w.Push({"ADDED", e.object});
  } else if (was_matching) {
    w.Push({"DELETED", e.object});
  }
}

ObjectPtr ObjectStore::Freeze(const json& object, uint64_t rv) {
  auto stored = std::make_shared<StoredObject>();
  stored->ns = MetaString(object, "namespace");
  stored->name = MetaString(object, "name");
  stored->uid = MetaString(object, "uid");
  stored->rv = rv;
  stored->labels = Labels(object);
  stored->json = object.dump();
  return stored;
}

const CrdSchema& ObjectStore::SchemaLocked(const ResourceInfo& r) {
  static const CrdSchema kNone(nullptr);
  if (!r.custom_resource) return kNone;
  auto cached = schemas_.find(r.GroupResource());
  if (cached != schemas_.end()) return *cached->second;
  const Table* crds = FindTable(CrdsInfo());
  auto stored = crds == nullptr ? Table::const_iterator() : crds->find(r.GroupResource());
  auto schema = std::make_shared<const CrdSchema>(
      crds != nullptr && stored != crds->end()
          ? CrdSchema::FromCrd(json::parse(stored->second->json), r.version)
          : CrdSchema::FromCrd(BuiltinRouteCrd(), r.version));
  return *(schemas_[r.GroupResource()] = std::move(schema));
}

namespace {

// etcd's default --max-request-bytes (1.5 MiB).
constexpr size_t kEtcdMaxRequestBytes = 1536 * 1024;

}  // namespace

std::optional<ApiError> EtcdRequestTooLarge(const ResourceInfo& r, const std::string& key,
                                            const StoredObject& object) {
  // Why three keys and 64 bytes: kube writes an object in one transaction
  // that compares, puts and (on failure) gets its key; the rest is framing.
  const size_t key_bytes = EtcdStorage::KeyPrefix(r).size() + key.size();
  if (object.json.size() + 3 * key_bytes + 64 <= kEtcdMaxRequestBytes) return std::nullopt;
  ApiError e;
  e.code = 500;
  e.message = "etcdserver: request is too large";
  return e;
}

ApiResult<ObjectPtr> ObjectStore::CommitLocked(const ResourceInfo& r, const std::string& key,
                                               json* object, const ObjectPtr& prev, bool deleted) {
  progress_.CatchUp(rv_);
  const uint64_t rv = rv_ + 1;
  (*object)["metadata"]["resourceVersion"] = std::to_string(rv);
  ObjectPtr ptr = Freeze(*object, rv);
  if (mirror_ == nullptr && !deleted) {
    if (auto too_large = EtcdRequestTooLarge(r, key, *ptr)) {
      return ApiResult<ObjectPtr>::Error(*too_large);
    }
  }
  if (mirror_ != nullptr) {
    if (auto error = mirror_->Commit(r, key, ptr, deleted)) return ApiResult<ObjectPtr>::Error(*error);
  }
  if (&r == &CrdsInfo()) schemas_.clear();
  rv_ = rv;
  Table& table = TableFor(r);
  if (deleted) {
    table.erase(key);
  } else {
    table[key] = ptr;
  }
  Event event{&r, key, rv, ptr, prev, deleted};
  if (options_.history > 0) history_.push_back(event);
  while (history_.size() > options_.history) {
    compacted_rv_ = history_.front().rv;
    history_.pop_front();
  }
  if (options_.history == 0) compacted_rv_ = rv;
  for (auto it = watchers_.begin(); it != watchers_.end();) {
    if ((*it)->closed()) {
      it = watchers_.erase(it);
      continue;
    }
    if (&(*it)->resource() == &r) Dispatch(**it, event);
    ++it;
  }
  progress_.OnEvent(r.GroupResource(), rv);
  dispatched_rv_.store(rv, std::memory_order_release);
  return ApiResult<ObjectPtr>{ptr, std::nullopt};
}

ApiResult<ObjectPtr> ObjectStore::Create(const ResourceInfo& r, const std::string& ns,
                                         json object, bool keep_status,
                                         const WriteOptions& options) {
  using Result = ApiResult<ObjectPtr>;
  std::string name = object.is_object() ? MetaString(object, "name") : "";
  ApiError bad = ValidateMeta(r, object);
  if (bad.code != 0) return Result::Error(bad);
  json& meta = object["metadata"];
  std::string body_ns = MetaString(object, "namespace");
  if (r.namespaced) {
    if (!body_ns.empty() && body_ns != ns) {
      return Result::Error(BadRequestError(
          "the namespace of the provided object does not match the namespace sent on the "
          "request"));
    }
    meta["namespace"] = ns;
  } else {
    meta.erase("namespace");
  }
  if (r.has_status && !keep_status) object.erase("status");
  if (&r == &NamespacesInfo()) {
    // Why: like kube's namespace strategy, keep the client's finalizers and
    // make sure "kubernetes" is one of them.
    json& finalizers = object["spec"]["finalizers"];
    if (!finalizers.is_array()) finalizers = json::array();
    if (std::find(finalizers.begin(), finalizers.end(), "kubernetes") == finalizers.end()) {
      finalizers.push_back("kubernetes");
    }
    object["status"] = {{"phase", "Active"}};
    if (!name.empty()) meta["labels"]["kubernetes.io/metadata.name"] = name;
  }
  meta.erase("resourceVersion");
  meta["creationTimestamp"] = kubeclient::FormatRfc3339(
      std::chrono::duration_cast<std::chrono::seconds>(clock_.WallNow().time_since_epoch())
          .count());
  meta["generation"] = 1;
  if (&r == &NamespacesInfo()) meta.erase("generation");

  std::lock_guard<std::mutex> lock(mu_);
  Result result;
  const CrdSchema& schema = SchemaLocked(r);
  if (std::optional<ApiError> e = ApplySchema(schema, options, &object, &result.warnings)) {
    return Result::Error(*e);
  }
  // Why: kube's order: the namespace must exist (admission) before the
  // object is validated, and validation comes before the name is taken.
  if (r.namespaced) {
    const Table* namespaces = FindTable(NamespacesInfo());
    if (namespaces == nullptr || namespaces->find(ns) == namespaces->end()) {
      return Result::Error(NotFoundError("", "namespaces", ns));
    }
  }
  std::vector<FieldCause> causes;
  if (name.empty()) {
    std::string generate = MetaString(object, "generateName");
    if (generate.empty()) {
      causes.push_back({"metadata.name", "Required value: name or generateName is required",
                        "FieldValueRequired"});
    } else {
      static const char kChars[] = "bcdfghjklmnpqrstvwxz2456789";
      std::mt19937_64 rng(clock_.Now().time_since_epoch().count() ^ uid_counter_);
      name = generate;
      for (int i = 0; i < 5; ++i) name += kChars[rng() % (sizeof(kChars) - 1)];
      meta["name"] = name;
      if (&r == &NamespacesInfo()) meta["labels"]["kubernetes.io/metadata.name"] = name;
    }
  }
  schema.Validate(object, &causes);
  if (!causes.empty()) {
    return Result::Error(InvalidCausesError(r.GroupKind(), r.group, r.kind, name, causes));
  }
  std::string key = Key(r, ns, name);
  Table& table = TableFor(r);
  if (table.find(key) != table.end()) return Result::Error(AlreadyExistsError(r.group, r.resource, name));
  ++uid_counter_;
  meta["uid"] = FormatUid(uid_counter_ >> 12, uid_counter_);
  // Why: like kube, a dry-run create answers the object without a resourceVersion.
  if (options.dry_run) {
    result.value = Freeze(object, 0);
    return result;
  }
  ApiResult<ObjectPtr> committed = CommitLocked(r, key, &object, nullptr, false);
  if (!committed.ok()) return committed;
  result.value = committed.value;
  return result;
}

ApiResult<ObjectPtr> ObjectStore::Mutate(const ResourceInfo& r, const std::string& ns,
                                         const std::string& name, bool status_subresource,
                                         bool require_rv, const Mutation& mutation,
                                         const WriteOptions& options,
                                         const std::string& precondition_uid) {
  using Result = ApiResult<ObjectPtr>;
  std::lock_guard<std::mutex> lock(mu_);
  std::string key = Key(r, ns, name);
  Table& table = TableFor(r);
  auto it = table.find(key);
  // Why: kube's storage checks an update's uid precondition (the body's
  // metadata.uid) first, also against a missing object.
  if (!precondition_uid.empty()) {
    std::string actual = it == table.end() ? "" : it->second->uid;
    if (actual != precondition_uid) {
      ApiError e = ConflictError(r.group, r.resource, name);
      e.message = "Operation cannot be fulfilled on " + r.GroupResource() + " \"" + name +
                  "\": " +
                  StorageError(r, ns, name, "Precondition failed: UID in precondition: " +
                                                precondition_uid + ", UID in object meta: " +
                                                actual);
      return Result::Error(e);
    }
  }
  if (it == table.end()) return Result::Error(NotFoundError(r.group, r.resource, name));
  ObjectPtr prev = it->second;
  json current = json::parse(prev->json);
  ApiResult<json> mutated = mutation(current);
  if (!mutated.ok()) return Result::Error(*mutated.error);
  json& next = mutated.value;
  std::string next_name = next.is_object() ? MetaString(next, "name") : "";
  ApiError bad = ValidateMeta(r, next);
  if (bad.code != 0) return Result::Error(bad);
  if (!next_name.empty() && next_name != name) {
    return Result::Error(BadRequestError("the name of the object (" + next_name +
                                         ") does not match the name on the URL (" + name + ")"));
  }
  std::string next_ns = MetaString(next, "namespace");
  if (r.namespaced && !next_ns.empty() && next_ns != ns) {
    return Result::Error(BadRequestError(
        "the namespace of the provided object does not match the namespace sent on the "
        "request"));
  }
  std::string rv_text = MetaString(next, "resourceVersion");
  if (rv_text.empty()) {
    if (require_rv) {
      return Result::Error(InvalidError(r.GroupKind(), r.group, r.kind, name,
                                        "metadata.resourceVersion",
                                        "Invalid value: 0x0: must be specified for an update",
                                        "FieldValueInvalid"));
    }
  } else {
    std::optional<uint64_t> want = ParseRv(rv_text);
    if (!want) {
      return Result::Error(BadRequestError("invalid resourceVersion: " + rv_text));
    }
    if (*want != prev->rv) return Result::Error(ConflictError(r.group, r.resource, name));
  }
  Result out;
  const CrdSchema& schema = SchemaLocked(r);
  if (std::optional<ApiError> e = ApplySchema(schema, options, &next, &out.warnings)) {
    return Result::Error(*e);
  }
  json result;
  if (status_subresource) {
    result = current;
    if (next.contains("status")) {
      result["status"] = next["status"];
    } else {
      result.erase("status");
    }
  } else {
    result = next;
    json& meta = result["metadata"];
    const json& old_meta = current["metadata"];
    for (const char* f : {"uid", "creationTimestamp", "generation", "name", "namespace"}) {
      if (old_meta.contains(f)) {
        meta[f] = old_meta[f];
      } else {
        meta.erase(f);
      }
    }
    if (r.has_status) {
      if (current.contains("status")) {
        result["status"] = current["status"];
      } else {
        result.erase("status");
      }
    }
    if (&r == &NamespacesInfo()) {
      meta["labels"]["kubernetes.io/metadata.name"] = name;
      // Why: a namespace's finalizers change only through /finalize in kube.
      if (current.contains("spec")) result["spec"] = current["spec"];
    }
    if (meta.contains("generation") && kubeclient::SpecChanged(current, result)) {
      meta["generation"] = meta["generation"].get<int64_t>() + 1;
    }
  }
  result["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"];
  std::vector<FieldCause> causes;
  schema.Validate(result, &causes);
  if (!causes.empty()) {
    return Result::Error(InvalidCausesError(r.GroupKind(), r.group, r.kind, name, causes));
  }
  if (result == current) {
    out.value = prev;
    return out;
  }
  // Why: a dry run answers the new object at the current version (kube's
  // dry-run update bumps nothing).
  if (options.dry_run) {
    out.value = Freeze(result, prev->rv);
    return out;
  }
  ApiResult<ObjectPtr> committed = CommitLocked(r, key, &result, prev, false);
  if (!committed.ok()) return committed;
  out.value = committed.value;
  return out;
}

ApiResult<ObjectPtr> ObjectStore::Update(const ResourceInfo& r, const std::string& ns,
                                         const std::string& name, json object,
                                         bool status_subresource, const WriteOptions& options) {
  std::string uid = object.is_object() ? MetaString(object, "uid") : "";
  return Mutate(
      r, ns, name, status_subresource, r.require_rv_on_update,
      [&object](const json&) { return ApiResult<json>{std::move(object), std::nullopt, {}}; },
      options, uid);
}

ApiResult<ObjectPtr> ObjectStore::DeleteLocked(const ResourceInfo& r, const std::string& ns,
                                               const std::string& name) {
  using Result = ApiResult<ObjectPtr>;
  std::string key = Key(r, ns, name);
  Table& table = TableFor(r);
  auto it = table.find(key);
  if (it == table.end()) return Result::Error(NotFoundError(r.group, r.resource, name));
  ObjectPtr prev = it->second;
  if (&r == &NamespacesInfo()) {
    // Why: the real server deletes a namespace's contents before the namespace.
    Table& routes = TableFor(RoutesInfo());
    std::string prefix = name + "/";
    for (auto rit = routes.lower_bound(prefix);
         rit != routes.end() && rit->first.compare(0, prefix.size(), prefix) == 0;) {
      ObjectPtr route = rit->second;
      std::string route_key = rit->first;
      ++rit;
      json body = json::parse(route->json);
      ApiResult<ObjectPtr> deleted = CommitLocked(RoutesInfo(), route_key, &body, route, true);
      if (!deleted.ok()) return deleted;
    }
  }
  json body = json::parse(prev->json);
  if (&r == &NamespacesInfo()) {
    // Why: kube answers a namespace delete with the namespace marked for
    // deletion; its contents are gone at once here (no namespace controller).
    body["metadata"]["deletionTimestamp"] = kubeclient::FormatRfc3339(
        std::chrono::duration_cast<std::chrono::seconds>(clock_.WallNow().time_since_epoch())
            .count());
    body["status"]["phase"] = "Terminating";
  }
  return CommitLocked(r, key, &body, prev, true);
}

ApiResult<ObjectPtr> ObjectStore::Delete(const ResourceInfo& r, const std::string& ns,
                                         const std::string& name,
                                         const std::optional<std::string>& precondition_rv,
                                         const std::optional<std::string>& precondition_uid,
                                         const WriteOptions& options) {
  using Result = ApiResult<ObjectPtr>;
  std::lock_guard<std::mutex> lock(mu_);
  Table& table = TableFor(r);
  auto it = table.find(Key(r, ns, name));
  if (it == table.end()) return Result::Error(NotFoundError(r.group, r.resource, name));
  // Why: kube's BeforeDelete checks the uid precondition (naming the kind),
  // its storage then the resourceVersion one (a StorageError).
  if (precondition_uid && *precondition_uid != it->second->uid) {
    ApiError e = ConflictError(r.group, r.kind, name);
    e.message = "Operation cannot be fulfilled on " + r.GroupKind() + " \"" + name +
                "\": the UID in the precondition (" + *precondition_uid +
                ") does not match the UID in record (" + it->second->uid +
                "). The object might have been deleted and then recreated";
    return Result::Error(e);
  }
  if (precondition_rv && *precondition_rv != std::to_string(it->second->rv)) {
    ApiError e = ConflictError(r.group, r.resource, name);
    e.message = "Operation cannot be fulfilled on " + r.GroupResource() + " \"" + name +
                "\": " +
                StorageError(r, ns, name,
                             "Precondition failed: ResourceVersion in precondition: " +
                                 *precondition_rv + ", ResourceVersion in object meta: " +
                                 std::to_string(it->second->rv));
    return Result::Error(e);
  }
  if (options.dry_run) return Result{it->second, std::nullopt};
  return DeleteLocked(r, ns, name);
}

ApiResult<ListPage> ObjectStore::DeleteCollection(const ResourceInfo& r,
                                                  const ObjectFilter& filter,
                                                  const WriteOptions& options) {
  ApiResult<ListPage> result;
  std::lock_guard<std::mutex> lock(mu_);
  result.value.rv = rv_;
  Table& table = TableFor(r);
  std::string prefix = r.namespaced && !filter.ns.empty() ? filter.ns + "/" : "";
  for (auto it = table.lower_bound(prefix);
       it != table.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
    if (filter.Matches(*it->second)) result.value.items.push_back(it->second);
  }
  if (options.dry_run) return result;
  for (const ObjectPtr& obj : result.value.items) {
    auto deleted = DeleteLocked(r, obj->ns, obj->name);
    if (!deleted.ok()) return ApiResult<ListPage>::Error(*deleted.error);
  }
  return result;
}

}  // namespace routestatus::apiserver
