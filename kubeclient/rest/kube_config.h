#pragma once

#include <string>
#include <string_view>

#include "kubeclient/status.h"

namespace routestatus::kubeclient::rest {

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

// Standard base64 (RFC 4648, padding optional, whitespace ignored).
StatusOr<std::string> DecodeBase64(std::string_view text);

}  // namespace routestatus::kubeclient::rest
