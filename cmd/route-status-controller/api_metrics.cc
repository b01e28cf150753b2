#include "cmd/route-status-controller/api_metrics.h"

#include <chrono>

namespace routestatus::cmd {

using kubeclient::ResourceRef;

namespace {

// "namespace/name" of `object`, for ApiReachability::Record.
std::string ObjectKey(const nlohmann::json& object) {
  const auto m = object.find("metadata");
  if (m == object.end() || !m->is_object()) return "";
  return m->value("namespace", "") + "/" + m->value("name", "");
}

}  // namespace

// Measures one request from construction to Finish().
class InstrumentedKubeClient::Timer {
 public:
  Timer(InstrumentedKubeClient& c, const char* verb, const ResourceRef& res,
        const char* subresource = "")
      : c_(c), verb_(verb), res_(res), subresource_(subresource),
        start_(std::chrono::steady_clock::now()),
        sent_(c.reachability_ != nullptr ? c.reachability_->clock().Now() : SteadyTime{}) {}

  // `object`: "namespace/name" of the one object the request concerned.
  void Finish(const Status& status, std::string_view object = {}) {
    std::chrono::duration<double> took = std::chrono::steady_clock::now() - start_;
    if (c_.reachability_ != nullptr) c_.reachability_->Record(status, object, sent_);
    c_.requests_
        .Add({{"verb", verb_},
              {"resource", res_.resource},
              {"subresource", subresource_},
              {"result", StatusCodeName(status.code())}})
        .Increment();
    c_.latency_
        .Add({{"verb", verb_}, {"resource", res_.resource}},
             prometheus::Histogram::BucketBoundaries{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
                                                     2.5, 5, 10, 30})
        .Observe(took.count());
  }

 private:
  InstrumentedKubeClient& c_;
  const char* verb_;
  const ResourceRef& res_;
  const char* subresource_;
  std::chrono::steady_clock::time_point start_;
  SteadyTime sent_;  // on the reachability's Clock
};

// Forwards a watch stream, recording what each read brought.
class InstrumentedKubeClient::RecordingStream final : public kubeclient::WatchStream {
 public:
  RecordingStream(std::unique_ptr<kubeclient::WatchStream> inner, ApiReachability& reachability)
      : inner_(std::move(inner)), reachability_(reachability) {}

  StatusOr<kubeclient::WatchEvent> Next() override { return Noted(inner_->Next()); }
  StatusOr<kubeclient::WatchEvent> NextRaw() override {
    return Noted(inner_->NextRaw());
  }
  void Cancel() override { inner_->Cancel(); }

 private:
  StatusOr<kubeclient::WatchEvent> Noted(
      StatusOr<kubeclient::WatchEvent> event) {
    reachability_.Record(event.status());
    return event;
  }

  std::unique_ptr<kubeclient::WatchStream> inner_;
  ApiReachability& reachability_;
};

InstrumentedKubeClient::InstrumentedKubeClient(std::unique_ptr<kubeclient::KubeClient> inner,
                                               prometheus::Registry& registry,
                                               ApiReachability* reachability)
    : inner_(std::move(inner)),
      reachability_(reachability),
      requests_(prometheus::BuildCounter()
                    .Name("routestatus_api_requests_total")
                    .Help("Kubernetes API requests made by this process, by verb, resource, "
                          "subresource and result (ok, conflict, not_found, unavailable, ...).")
                    .Register(registry)),
      latency_(prometheus::BuildHistogram()
                   .Name("routestatus_api_request_duration_seconds")
                   .Help("Latency of Kubernetes API requests by verb and resource, in seconds "
                         "(for watch: until the stream is open).")
                   .Register(registry)) {}

StatusOr<nlohmann::json> InstrumentedKubeClient::Get(const ResourceRef& res,
                                                                 const std::string& ns,
                                                                 const std::string& name) {
  Timer t(*this, "get", res);
  auto r = inner_->Get(res, ns, name);
  t.Finish(r.status(), ns + "/" + name);
  return r;
}

StatusOr<kubeclient::ListPage> InstrumentedKubeClient::List(
    const ResourceRef& res, const std::string& ns, const kubeclient::ListOptions& options) {
  Timer t(*this, "list", res);
  auto r = inner_->List(res, ns, options);
  t.Finish(r.status());
  return r;
}

StatusOr<kubeclient::RawListPage> InstrumentedKubeClient::ListRaw(
    const ResourceRef& res, const std::string& ns, const kubeclient::ListOptions& options) {
  Timer t(*this, "list", res);
  auto r = inner_->ListRaw(res, ns, options);
  t.Finish(r.status());
  return r;
}

StatusOr<kubeclient::ListPage> InstrumentedKubeClient::ListEach(
    const ResourceRef& res, const std::string& ns, const kubeclient::ListOptions& options,
    const std::function<void(std::string_view item)>& each) {
  Timer t(*this, "list", res);
  auto r = inner_->ListEach(res, ns, options, each);
  t.Finish(r.status());
  return r;
}

StatusOr<std::unique_ptr<kubeclient::WatchStream>> InstrumentedKubeClient::Watch(
    const ResourceRef& res, const std::string& ns, const kubeclient::WatchOptions& options) {
  Timer t(*this, "watch", res);
  auto r = inner_->Watch(res, ns, options);
  t.Finish(r.status());
  if (!r.ok() || reachability_ == nullptr) return r;
  return std::unique_ptr<kubeclient::WatchStream>(
      std::make_unique<RecordingStream>(std::move(r).value(), *reachability_));
}

StatusOr<nlohmann::json> InstrumentedKubeClient::Create(const ResourceRef& res,
                                                                    const std::string& ns,
                                                                    const nlohmann::json& object) {
  Timer t(*this, "create", res);
  auto r = inner_->Create(res, ns, object);
  t.Finish(r.status());
  return r;
}

StatusOr<nlohmann::json> InstrumentedKubeClient::Update(const ResourceRef& res,
                                                                    const nlohmann::json& object) {
  Timer t(*this, "update", res);
  auto r = inner_->Update(res, object);
  t.Finish(r.status(), ObjectKey(object));
  return r;
}

StatusOr<nlohmann::json> InstrumentedKubeClient::UpdateStatus(
    const ResourceRef& res, const nlohmann::json& object) {
  Timer t(*this, "update", res, "status");
  auto r = inner_->UpdateStatus(res, object);
  t.Finish(r.status(), ObjectKey(object));
  return r;
}

StatusOr<nlohmann::json> InstrumentedKubeClient::MergePatchStatus(const ResourceRef& res,
                                                                  const std::string& ns,
                                                                  const std::string& name,
                                                                  const nlohmann::json& patch) {
  Timer t(*this, "patch", res, "status");
  auto r = inner_->MergePatchStatus(res, ns, name, patch);
  t.Finish(r.status(), ns + "/" + name);
  return r;
}

Status InstrumentedKubeClient::Delete(const ResourceRef& res, const std::string& ns,
                                      const std::string& name) {
  Timer t(*this, "delete", res);
  Status s = inner_->Delete(res, ns, name);
  t.Finish(s, ns + "/" + name);
  return s;
}

RestClientMetrics::RestClientMetrics(prometheus::Registry& registry,
                                     ApiReachability* reachability)
    : reachability_(reachability),
      retries_(prometheus::BuildCounter()
                   .Name("routestatus_api_connection_retries_total")
                   .Help("API requests sent again on another connection, by reason: "
                         "stale_connection (a pooled keep-alive connection the API server had "
                         "closed, found before sending), connection_failure (a read or "
                         "resourceVersion-guarded write whose connection failed before any "
                         "response), unauthorized (a 401 with exec plugin credentials: the "
                         "plugin ran again).")
                   .Register(registry)),
      exec_runs_(prometheus::BuildCounter()
                     .Name("routestatus_exec_plugin_runs_total")
                     .Help("Runs of the kubeconfig's exec credential plugin, by result (ok, "
                           "error, not_found).")
                     .Register(registry)),
      probes_(prometheus::BuildCounter()
                  .Name("routestatus_api_liveness_probes_total")
                  .Help("GET /version requests a watch sent on a new connection after 30 s in "
                        "which this process heard nothing from the API server, by result: "
                        "answered (the server is there; the quiet watch stays open) or "
                        "unanswered (the watch ends and the server counts as unreachable).")
                  .Register(registry)),
      readiness_(prometheus::BuildCounter()
                     .Name("routestatus_api_readiness_probes_total")
                     .Help("GET /readyz requests sent while waiting out a 503's Retry-After (an "
                           "API server starting: it answers custom resources 503 until its CRD "
                           "informer has synced), about every 0.5 s; a ready answer (200) ends "
                           "the wait at once. By result: ready, not_ready.")
                     .Register(registry)) {
  for (const char* result : {"ready", "not_ready"}) readiness_.Add({{"result", result}});
  for (const char* result : {"answered", "unanswered"}) probes_.Add({{"result", result}});
  for (const char* reason : {"stale_connection", "connection_failure", "unauthorized"}) {
    retries_.Add({{"reason", reason}});
  }
}

void RestClientMetrics::OnConnectionRetry(std::string_view reason) {
  retries_.Add({{"reason", std::string(reason)}}).Increment();
}

void RestClientMetrics::OnExecPlugin(std::string_view result) {
  exec_runs_.Add({{"result", std::string(result)}}).Increment();
}

void RestClientMetrics::OnReadinessProbe(bool ready) {
  readiness_.Add({{"result", ready ? "ready" : "not_ready"}}).Increment();
}

void RestClientMetrics::OnLivenessProbe(const Status& outcome, SteadyTime sent) {
  probes_.Add({{"result", outcome.ok() ? "answered" : "unanswered"}}).Increment();
  if (reachability_ != nullptr) reachability_->Record(outcome, {}, sent);
}

}  // namespace routestatus::cmd
