#include "e2e/harness/etcd_server.h"

#include <signal.h>

#include <cstdint>
#include <filesystem>
#include <thread>

#include <nlohmann/json.hpp>

#include "e2e/harness/cluster.h"
#include "e2e/harness/prom_text.h"

namespace routestatus::e2e {

namespace {

// Why above the embedded server's transaction size (1000 ops, about 1 MiB):
// its bulk load of 100,000 routes takes 100 transactions, not 100,000 puts.
constexpr int kMaxTxnOps = 10000;
constexpr int kMaxRequestBytes = 8 << 20;

}  // namespace

std::string EtcdServer::FindBinary() { return FindExecutable("etcd", "E2E_ETCD_BINARY"); }

std::unique_ptr<EtcdServer> EtcdServer::Start(const std::string& dir, std::string* error) {
  const std::string binary = FindBinary();
  if (binary.empty()) {
    *error = "etcd not found (Debian package etcd-server; or E2E_ETCD_BINARY)";
    return nullptr;
  }
  // Why a few attempts: a port picked may be taken before etcd binds it.
  for (int attempt = 0; attempt < 3; ++attempt) {
    std::unique_ptr<EtcdServer> etcd(new EtcdServer());
    etcd->client_port_ = PickFreePort();
    const int peer_port = PickFreePort();
    etcd->data_dir_ = dir + "/etcd-data-" + std::to_string(attempt);
    const std::string client = etcd->endpoint();
    const std::string peer = "http://127.0.0.1:" + std::to_string(peer_port);
    etcd->process_ = std::make_unique<Subprocess>(
        DieWithParent({binary, "--name=e2e", "--data-dir=" + etcd->data_dir_,
                       "--listen-client-urls=" + client, "--advertise-client-urls=" + client,
                       "--listen-peer-urls=" + peer, "--initial-advertise-peer-urls=" + peer,
                       "--initial-cluster=e2e=" + peer, "--initial-cluster-state=new",
                       "--max-txn-ops=" + std::to_string(kMaxTxnOps),
                       "--max-request-bytes=" + std::to_string(kMaxRequestBytes),
                       "--quota-backend-bytes=" + std::to_string(int64_t{8} << 30),
                       "--logger=zap", "--log-level=warn"}),
        dir + "/etcd.log");
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline && etcd->process_->Running()) {
      int code = 0;
      std::string health = HttpGetLocal(etcd->client_port_, "/health", nullptr, &code);
      if (code == 200 && health.find("\"true\"") != std::string::npos) {
        nlohmann::json version = nlohmann::json::parse(
            HttpGetLocal(etcd->client_port_, "/version"), nullptr, /*allow_exceptions=*/false);
        if (version.is_object()) etcd->version_ = version.value("etcdserver", "");
        return etcd;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    const bool exited = !etcd->process_->Running();
    *error = std::string("etcd did not become healthy (") + (exited ? "it exited" : "timeout") +
             "); log " + etcd->log_path() + ":\n" + etcd->process_->ReadLog();
    if (!exited) break;
  }
  return nullptr;
}

EtcdServer::~EtcdServer() { Stop(); }

void EtcdServer::Stop() {
  if (process_ && process_->Running()) {
    process_->Signal(SIGKILL);
    process_->Wait(std::chrono::seconds(10));
  }
  if (!data_dir_.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(data_dir_, ignored);
    data_dir_.clear();
  }
}

}  // namespace routestatus::e2e
