#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "e2e/harness/subprocess.h"

namespace routestatus::e2e {

// A real etcd (Debian's etcd-server, 3.4) as a child process: one member on
// loopback client and peer ports picked at start, its data in a folder
// under `dir` (removed by Stop) and its log in dir/etcd.log, dying with this
// process. Started
// with --max-txn-ops at apiserver::EtcdStorage::kTxnOps or more, so the
// embedded server's bulk load fits. Not thread-safe: one owner; the
// destructor stops it.
class EtcdServer {
 public:
  // The etcd binary: $E2E_ETCD_BINARY, else "etcd" in PATH; "" when none.
  static std::string FindBinary();
  // Starts etcd and waits (bounded) until /health answers healthy.
  // nullptr with *error (naming the log) when it does not.
  static std::unique_ptr<EtcdServer> Start(const std::string& dir, std::string* error);
  ~EtcdServer();
  EtcdServer(const EtcdServer&) = delete;
  EtcdServer& operator=(const EtcdServer&) = delete;

  // "http://127.0.0.1:PORT", what ServerOptions::etcd_endpoint takes.
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(client_port_); }
  // etcd's version ("3.4.23"), from /version.
  const std::string& version() const { return version_; }
  const std::string& log_path() const { return process_->log_path(); }
  // Kills it (SIGKILL) and removes its data folder. Idempotent.
  void Stop();

 private:
  EtcdServer() = default;
  int client_port_ = 0;
  std::string data_dir_;
  std::string version_;
  std::unique_ptr<Subprocess> process_;
};

}  // namespace routestatus::e2e
