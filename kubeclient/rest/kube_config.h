#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/bounded_file.h"
#include "base/status.h"

namespace routestatus::kubeclient::rest {

// users[].user.exec of a kubeconfig: a client-go credential plugin
// (ExecCredential, client.authentication.k8s.io/v1 or v1beta1). Value type.
struct ExecConfig {
  // A command with a '/' is resolved against the kubeconfig's folder when
  // relative; without one it is looked up in PATH.
  std::string command;
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;  // added to ours
  std::string api_version;  // client.authentication.k8s.io/v1 or /v1beta1
  std::string install_hint;  // shown when the command is missing
  bool provide_cluster_info = false;
  // Never or IfAvailable (a controller never has a terminal, so the plugin
  // always runs non-interactively); Always is refused when parsing. v1
  // requires it; v1beta1 defaults to IfAvailable.
  std::string interactive_mode;
};

// Where and how to reach the API server: what a kubeconfig context or the
// in-cluster environment resolves to. PEM material is held decoded (the
// *-data fields of a kubeconfig are base64 there, plain PEM here); file
// fields hold absolute (or caller-relative) paths, read when the client is
// built. Value type.
struct RestConfig {
  std::string server;  // "https://10.0.0.1:443"; no trailing slash needed
  // Server trust.
  std::string ca_file;
  std::string ca_data;  // PEM
  bool insecure_skip_tls_verify = false;
  // Client certificate authentication.
  std::string client_cert_file;
  std::string client_cert_data;  // PEM
  std::string client_key_file;
  std::string client_key_data;  // PEM
  // Bearer token: static, or a file re-read when it changes (rotation).
  std::string token;
  std::string token_file;
  // A credential plugin; set only when the user has no token, token file
  // or client certificate (those win, as in client-go).
  std::optional<ExecConfig> exec;
  // Passed to the plugin with provideClusterInfo only (this client does not
  // use them): tls-server-name, proxy-url, disable-compression, and the
  // JSON text of the cluster's "client.authentication.k8s.io/exec"
  // extension.
  std::string tls_server_name;
  std::string proxy_url;
  bool disable_compression = false;
  std::string exec_extension_json;
  // The namespace of the context / service account ("" when unset).
  std::string namespace_name;
  // Where this came from, for messages: "kubeconfig /x/config context y",
  // "in-cluster".
  std::string origin;
};

// Parses kubeconfig YAML text. `path` names the file in messages; relative
// file paths in it resolve against `base_dir`. `context` "" means the
// current-context. Errors are kInvalid with a message naming the file and
// the field ("/x/config: users[name=bob].user.client-key-data: not base64").
StatusOr<RestConfig> ParseKubeconfig(std::string_view yaml, const std::string& path,
                                     const std::string& base_dir, const std::string& context = "");
// Reads and parses a kubeconfig file; relative paths resolve against its
// folder. A missing or unreadable file is kInvalid naming the file.
StatusOr<RestConfig> LoadKubeconfigFile(const std::string& path, const std::string& context = "");

// The in-cluster environment: the service env vars and the service-account
// folder (injectable for tests).
struct InClusterEnv {
  std::string service_host;  // KUBERNETES_SERVICE_HOST
  std::string service_port;  // KUBERNETES_SERVICE_PORT
  std::string root = "/var/run/secrets/kubernetes.io/serviceaccount";
};
// https://HOST:PORT with the service-account token file (re-read on
// rotation), ca.crt and namespace. Missing host/port or token -> kInvalid.
StatusOr<RestConfig> LoadInClusterConfig(const InClusterEnv& env);

// Everything config resolution looks at, so tests need no real environment.
struct ConfigSources {
  std::string explicit_kubeconfig;  // --kubeconfig
  std::string context;              // --context ("" = current-context)
  InClusterEnv in_cluster;          // service_host/port empty = not in a cluster
  std::string kubeconfig_env;       // KUBECONFIG (a ':' list: the first file is used)
  std::string home;                 // HOME (~/.kube/config)
};
// Fills ConfigSources from the process environment. Not thread-safe with
// concurrent setenv (reads getenv).
ConfigSources ConfigSourcesFromEnvironment(const std::string& explicit_kubeconfig,
                                           const std::string& context = "");
// Resolution order: explicit --kubeconfig, else in-cluster when
// KUBERNETES_SERVICE_HOST/PORT are set, else the first file of KUBECONFIG,
// else ~/.kube/config. The error names what was tried.
StatusOr<RestConfig> ResolveConfig(const ConfigSources& sources);

// Reads the whole regular file `path` into *out (base/bounded_file.h): false,
// with the reason in *error when not null, when it cannot be opened, is not
// a regular file (a FIFO never blocks) or is larger than `max_bytes`.
bool ReadFileText(const std::string& path, std::string* out, std::string* error = nullptr,
                  size_t max_bytes = kMaxKubeconfigFileBytes);

// Standard base64 (RFC 4648, padding optional, whitespace ignored).
StatusOr<std::string> DecodeBase64(std::string_view text);
// Standard base64 with padding.
std::string EncodeBase64(std::string_view data);

}  // namespace routestatus::kubeclient::rest
