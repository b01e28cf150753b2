#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "base/cancellation.h"
#include "base/clock.h"
#include "base/status.h"
#include "kubeclient/rest/kube_config.h"

namespace routestatus::kubeclient::rest {

// What a credential plugin returned (ExecCredential status). Value type.
struct ExecCredential {
  std::string token;     // bearer token ("" with a client certificate only)
  std::string cert_pem;  // client certificate chain and key, or both ""
  std::string key_pem;
  std::optional<SystemTime> expiry;  // expirationTimestamp; none = no expiry
};

// Runs a client-go credential plugin (kubeconfig users[].user.exec) the way
// client-go does, and caches its credential:
//   - the plugin gets our environment plus exec.env, and KUBERNETES_EXEC_INFO
//     = an ExecCredential of the configured apiVersion whose spec says
//     interactive: false (a controller has no terminal: stdin is /dev/null)
//     and, with provideClusterInfo, carries spec.cluster (server, CA data,
//     ...);
//   - its stdout must be an ExecCredential of the same apiVersion with a
//     status holding a token and/or a client certificate and key;
//   - the credential is kept until its expirationTimestamp (none: forever),
//     or until Refresh() after the API server answered 401;
//   - a missing command is an error naming it, with the installHint.
// A plugin that runs longer than `timeout`, runs while `cancel` is
// cancelled, or prints more than 1 MiB is killed with its process group
// (a shell wrapper's children too), and Get() returns at once, whoever
// still holds its pipes. Its stdout is never logged or quoted in errors
// (it holds the token): errors say what was wrong with it. A token with
// CR, LF or NUL is refused. One plugin runs at a time. Thread-safe.
class ExecCredentialProvider {
 public:
  struct Options {
    ExecConfig exec;
    // spec.cluster when exec.provide_cluster_info (built by ClusterInfoJson).
    std::string cluster_json;
    std::chrono::milliseconds timeout{60000};
    const Cancellation* cancel = nullptr;  // must outlive the provider
    // Called after every run with "ok", "error" or "not_found" (metrics).
    std::function<void(std::string_view result)> on_run;
  };
  ExecCredentialProvider(Options options, const Clock& clock);

  // The cached credential, or a fresh one when there is none or it expired.
  // kUnauthorized with the plugin's error (kCancelled when cancelled).
  StatusOr<std::shared_ptr<const ExecCredential>> Get();
  // After a 401 for a request sent with `used`: runs the plugin again unless
  // another caller already replaced `used`; returns the current credential.
  StatusOr<std::shared_ptr<const ExecCredential>> Refresh(
      const std::shared_ptr<const ExecCredential>& used);

 private:
  StatusOr<std::shared_ptr<const ExecCredential>> RunLocked();

  const Options options_;
  const Clock& clock_;
  std::mutex mu_;  // also serialises plugin runs
  std::shared_ptr<const ExecCredential> cached_;  // GUARDED_BY(mu_)
};

// spec.cluster of KUBERNETES_EXEC_INFO for `cfg` (server, certificate-
// authority-data as base64 of `ca_pem`, insecure-skip-tls-verify,
// tls-server-name, proxy-url, disable-compression, config = the cluster's
// client.authentication.k8s.io/exec extension), as JSON text. Pure.
std::string ClusterInfoJson(const RestConfig& cfg, const std::string& ca_pem);

// Parses a plugin's stdout (an ExecCredential of `api_version`). Pure;
// kInvalid with client-go's wording for each mistake.
StatusOr<ExecCredential> ParseExecCredential(std::string_view text, const std::string& api_version);

}  // namespace routestatus::kubeclient::rest
