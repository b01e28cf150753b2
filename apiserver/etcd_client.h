#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "kubeclient/rest/http_wire.h"

namespace routestatus::apiserver {

// One key-value pair as etcd's range returns it (key and value decoded).
struct EtcdKv {
  std::string key;
  std::string value;
  int64_t mod_revision = 0;
};

// The answer of one range request. Value type.
struct EtcdRange {
  std::vector<EtcdKv> kvs;
  bool more = false;     // keys beyond `limit` remain in the range
  int64_t count = 0;     // keys in the whole range at `revision`
  int64_t revision = 0;  // the store revision the read saw (header.revision)
};

// One operation of a transaction: a put, or (value nullopt) a delete.
struct EtcdOp {
  std::string key;
  std::optional<std::string> value;
};

// A client of etcd's v3 JSON gateway (what etcd 3.4 serves under /v3/:
// POST /v3/kv/put, /v3/kv/range, /v3/kv/deleterange, /v3/kv/txn; keys and
// values base64, 64-bit integers as strings), over plain HTTP with
// keep-alive connections that it opens itself. Every call either returns
// etcd's answer or an error (kUnavailable: connection or timeout; kInternal:
// etcd refused the request, with etcd's message); it never throws.
// Thread-safe: calls may run concurrently, each on a pooled connection.
class EtcdClient {
 public:
  struct Options {
    std::chrono::milliseconds timeout{10000};  // per request: connect, send, answer
  };
  // `endpoint`: "http://HOST:PORT" (https is not served). Connects lazily:
  // an unreachable etcd fails the first call, not this one.
  static StatusOr<std::unique_ptr<EtcdClient>> Create(const std::string& endpoint,
                                                      Options options);
  ~EtcdClient();
  EtcdClient(const EtcdClient&) = delete;
  EtcdClient& operator=(const EtcdClient&) = delete;

  const std::string& endpoint() const { return endpoint_; }

  // Every op in one transaction (no compare: the success branch always
  // runs). Returns the revision after it. etcd refuses more ops than its
  // --max-txn-ops and bodies over --max-request-bytes.
  StatusOr<int64_t> Txn(const std::vector<EtcdOp>& ops);
  // Deletes [key, range_end) (range_end "" = just `key`); the revision after.
  StatusOr<int64_t> DeleteRange(const std::string& key, const std::string& range_end);
  // Reads [key, range_end), at most `limit` keys (0 = all), at `revision`
  // (0 = the latest, a linearizable read: etcd confirms its leadership with
  // a quorum first, as kube-apiserver's reads without a resourceVersion do).
  StatusOr<EtcdRange> Range(const std::string& key, const std::string& range_end, int64_t limit,
                            int64_t revision);
  // The end of the range of every key that starts with `prefix` (its last
  // byte below 0xff incremented), as clientv3.GetPrefixRangeEnd.
  static std::string PrefixEnd(const std::string& prefix);

 private:
  EtcdClient(std::string endpoint, kubeclient::rest::ServerUrl url, Options options);
  // POSTs `body` to `path`; the parsed JSON answer of a 200, else an error.
  StatusOr<nlohmann::json> Call(const std::string& path, const nlohmann::json& body);
  // One exchange on `fd`; *reusable says whether the connection may serve
  // another request.
  StatusOr<nlohmann::json> Exchange(int fd, const std::string& request, bool* reusable);
  int TakeConnection();  // a pooled connection, or -1
  void ReturnConnection(int fd);
  StatusOr<int> Connect();

  const std::string endpoint_;
  const kubeclient::rest::ServerUrl url_;
  const Options options_;
  std::mutex mu_;
  std::vector<int> idle_;  // guarded by mu_: open keep-alive connections
};

}  // namespace routestatus::apiserver
