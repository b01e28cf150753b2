#pragma once

#include <memory>
#include <string>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "cmd/route-status-controller/api_reachability.h"
#include "kubeclient/kube_client.h"
#include "kubeclient/rest/rest_kube_client.h"

namespace routestatus::cmd {

// A KubeClient decorator that counts every API request by verb, resource and
// result and observes its latency, into `registry`:
//   routestatus_api_requests_total{verb,resource,subresource,result}
//   routestatus_api_request_duration_seconds{verb,resource} (histogram)
// Verbs follow kube-apiserver: get, list, watch, create, update, patch,
// delete;
// `result` is StatusCodeName ("ok", "conflict", ...). For a
// watch the latency is the time to open the stream. With `reachability`,
// every outcome (and every watch event read) is also recorded there.
// Thread-safe as the wrapped client is; `inner` is owned, `registry` and
// `reachability` must outlive this.
class InstrumentedKubeClient final : public kubeclient::KubeClient {
 public:
  InstrumentedKubeClient(std::unique_ptr<kubeclient::KubeClient> inner,
                         prometheus::Registry& registry,
                         ApiReachability* reachability = nullptr);

  StatusOr<nlohmann::json> Get(const kubeclient::ResourceRef& res,
                                           const std::string& ns,
                                           const std::string& name) override;
  StatusOr<kubeclient::ListPage> List(const kubeclient::ResourceRef& res,
                                                  const std::string& ns,
                                                  const kubeclient::ListOptions& options) override;
  // Forwarded (not the base class's List()-based default) so the wrapped
  // client's tree-free list decoding is kept. Counted as verb "list".
  StatusOr<kubeclient::RawListPage> ListRaw(
      const kubeclient::ResourceRef& res, const std::string& ns,
      const kubeclient::ListOptions& options) override;
  StatusOr<kubeclient::ListPage> ListEach(
      const kubeclient::ResourceRef& res, const std::string& ns,
      const kubeclient::ListOptions& options,
      const std::function<void(std::string_view item)>& each) override;
  // The stream is the wrapped client's own (its NextRaw() included),
  // wrapped to record its events when `reachability` is set.
  StatusOr<std::unique_ptr<kubeclient::WatchStream>> Watch(
      const kubeclient::ResourceRef& res, const std::string& ns,
      const kubeclient::WatchOptions& options) override;
  StatusOr<nlohmann::json> Create(const kubeclient::ResourceRef& res,
                                              const std::string& ns,
                                              const nlohmann::json& object) override;
  StatusOr<nlohmann::json> Update(const kubeclient::ResourceRef& res,
                                              const nlohmann::json& object) override;
  StatusOr<nlohmann::json> UpdateStatus(const kubeclient::ResourceRef& res,
                                                    const nlohmann::json& object) override;
  // Counted as verb "patch", subresource "status".
  StatusOr<nlohmann::json> MergePatchStatus(const kubeclient::ResourceRef& res,
                                            const std::string& ns, const std::string& name,
                                            const nlohmann::json& patch) override;
  Status Delete(const kubeclient::ResourceRef& res, const std::string& ns,
                            const std::string& name) override;
  void Shutdown() override { inner_->Shutdown(); }

 private:
  class Timer;
  class RecordingStream;

  std::unique_ptr<kubeclient::KubeClient> inner_;
  ApiReachability* const reachability_;
  prometheus::Family<prometheus::Counter>& requests_;
  prometheus::Family<prometheus::Histogram>& latency_;
};

// The REST client's connection retries, exec plugin runs and liveness
// probes, into `registry`:
//   routestatus_api_connection_retries_total{reason}
//   routestatus_exec_plugin_runs_total{result}
//   routestatus_api_liveness_probes_total{result}
//   routestatus_api_readiness_probes_total{result}
// and each probe's outcome into `reachability` (when not null): a quiet
// watch's unanswered probe is how a replica cut off from the API server by
// a silent partition learns it. Thread-safe; `registry` and `reachability`
// must outlive this.
class RestClientMetrics final : public kubeclient::rest::RestObserver {
 public:
  explicit RestClientMetrics(prometheus::Registry& registry,
                             ApiReachability* reachability = nullptr);
  void OnConnectionRetry(std::string_view reason) override;
  void OnExecPlugin(std::string_view result) override;
  void OnLivenessProbe(const Status& outcome, SteadyTime sent) override;
  void OnReadinessProbe(bool ready) override;

 private:
  ApiReachability* const reachability_;
  prometheus::Family<prometheus::Counter>& retries_;
  prometheus::Family<prometheus::Counter>& exec_runs_;
  prometheus::Family<prometheus::Counter>& probes_;
  prometheus::Family<prometheus::Counter>& readiness_;
};

}  // namespace routestatus::cmd
