#pragma once

#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kubeclient/kube_client.h"

namespace routestatus::kubeclient::cache::testing {

// A route object as the server would send it.
nlohmann::json MakeRouteJson(const std::string& ns, const std::string& name, int64_t rv,
                             const std::string& host = "");
nlohmann::json MakeNamespaceJson(const std::string& name, int64_t rv,
                                 const std::map<std::string, std::string>& labels = {});

// A scripted watch session: events delivered in order, then `end` returned
// by Next() (kClosed for a normal end). An `open_error` makes Watch() fail.
struct WatchScript {
  std::vector<WatchEvent> events;
  Status end = Status(StatusCode::kClosed, "server closed the watch");
  Status open_error;  // ok = the watch opens
};

// A KubeClient whose list answers come from an in-memory object map and
// whose watches follow scripts. When no script is left, Watch() returns a
// stream that blocks in Next() until cancelled. Only List and Watch are
// implemented. Thread-safe.
class FakeKubeClient final : public KubeClient {
 public:
  // Server state served by List (sorted by key), at resourceVersion `rv`.
  void SetObject(const std::string& key, nlohmann::json object);
  void RemoveObject(const std::string& key);
  void SetListResourceVersion(int64_t rv);
  // Versions are opaque strings to clients: tests may use any text.
  void SetListResourceVersion(std::string rv);
  // The next List calls fail with these, in order.
  void FailNextLists(std::vector<Status> errors);
  // The next `n` List calls that carry a continue token fail with 410
  // Expired, as kube-apiserver answers once the token's version was
  // compacted.
  void ExpireNextContinues(int n);
  // The options of every List call, in order.
  std::vector<ListOptions> list_options() const;
  void AddWatch(WatchScript script);

  int list_calls() const;
  std::vector<WatchOptions> watch_calls() const;
  // Blocks until a Next() call is blocked on an unscripted stream.
  void WaitForIdleWatch();

  StatusOr<nlohmann::json> Get(const ResourceRef&, const std::string&, const std::string&) override;
  StatusOr<ListPage> List(const ResourceRef& res, const std::string& ns,
                          const ListOptions& options) override;
  StatusOr<std::unique_ptr<WatchStream>> Watch(const ResourceRef& res, const std::string& ns,
                                               const WatchOptions& options) override;
  StatusOr<nlohmann::json> Create(const ResourceRef&, const std::string&,
                                  const nlohmann::json&) override;
  StatusOr<nlohmann::json> Update(const ResourceRef&, const nlohmann::json&) override;
  StatusOr<nlohmann::json> UpdateStatus(const ResourceRef&, const nlohmann::json&) override;
  StatusOr<nlohmann::json> MergePatchStatus(const ResourceRef&, const std::string&,
                                            const std::string&, const nlohmann::json&) override;
  Status Delete(const ResourceRef&, const std::string&, const std::string&) override;

 private:
  friend class BlockingStream;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, nlohmann::json> objects_;
  std::string list_rv_ = "1";
  std::deque<Status> list_errors_;
  std::deque<WatchScript> watches_;
  int list_calls_ = 0;
  int expire_continues_ = 0;
  std::vector<ListOptions> list_options_;
  std::vector<WatchOptions> watch_calls_;
  int idle_waiters_ = 0;
};

}  // namespace routestatus::kubeclient::cache::testing
