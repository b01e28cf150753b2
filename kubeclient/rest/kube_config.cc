#include "kubeclient/rest/kube_config.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <yaml-cpp/yaml.h>

namespace routestatus::kubeclient::rest {
namespace {

Status Invalid(std::string message) { return Status(StatusCode::kInvalid, std::move(message)); }

// Reads a whole file; false when it cannot be opened.
bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return true;
}

std::string Resolve(const std::string& base_dir, const std::string& p) {
  if (p.empty() || p[0] == '/' || base_dir.empty()) return p;
  return base_dir + "/" + p;
}

// Walks a parsed kubeconfig, naming fields "<path>: <field>" in errors.
class Walker {
 public:
  explicit Walker(const std::string& path) : path_(path) {}

  Status Error(const std::string& field, const std::string& what) const {
    return Invalid("kubeconfig " + path_ + ": " + field + ": " + what);
  }

  // Reads an optional scalar string field; non-scalars are an error.
  Status String(const YAML::Node& node, const char* key, const std::string& field,
                std::string* out) const {
    out->clear();
    YAML::Node v = node[key];
    if (!v || v.IsNull()) return Status::Ok();
    if (!v.IsScalar()) return Error(field + "." + key, "not a string");
    *out = v.Scalar();
    return Status::Ok();
  }

  // Finds the entry named `name` in the list `list_key` ("clusters") and
  // returns its `item_key` ("cluster") map.
  Status Named(const YAML::Node& root, const char* list_key, const char* item_key,
               const std::string& name, YAML::Node* out, std::string* field) const {
    *field = std::string(list_key) + "[name=" + name + "]";
    YAML::Node list = root[list_key];
    if (list && !list.IsNull() && !list.IsSequence()) return Error(list_key, "not a list");
    if (list && list.IsSequence()) {
      for (const auto& item : list) {
        if (!item.IsMap()) continue;
        YAML::Node n = item["name"];
        if (n && n.IsScalar() && n.Scalar() == name) {
          YAML::Node v = item[item_key];
          if (!v || !v.IsMap()) return Error(*field + "." + item_key, "missing or not a map");
          *out = v;
          *field += std::string(".") + item_key;
          return Status::Ok();
        }
      }
    }
    return Error(*field, "no entry named \"" + name + "\"");
  }

  // A base64 "-data" field decoded into PEM.
  Status Data(const YAML::Node& node, const char* key, const std::string& field,
              std::string* out) const {
    std::string b64;
    if (Status s = String(node, key, field, &b64); !s.ok()) return s;
    if (b64.empty()) return Status::Ok();
    auto decoded = DecodeBase64(b64);
    if (!decoded.ok()) return Error(field + "." + key, "not valid base64");
    *out = std::move(decoded).value();
    return Status::Ok();
  }

 private:
  const std::string& path_;
};

StatusOr<RestConfig> ParseNode(const YAML::Node& root, const std::string& path,
                               const std::string& base_dir, const std::string& context_name) {
  Walker w(path);
  if (!root.IsMap()) return w.Error("(document)", "not a YAML map");
  RestConfig cfg;
  std::string ctx_name = context_name;
  if (ctx_name.empty()) {
    if (Status s = w.String(root, "current-context", "", &ctx_name); !s.ok()) return s;
    if (ctx_name.empty()) return w.Error("current-context", "not set (and no --context given)");
  }
  YAML::Node ctx;
  std::string ctx_field;
  if (Status s = w.Named(root, "contexts", "context", ctx_name, &ctx, &ctx_field); !s.ok()) return s;
  std::string cluster_name, user_name;
  if (Status s = w.String(ctx, "cluster", ctx_field, &cluster_name); !s.ok()) return s;
  if (cluster_name.empty()) return w.Error(ctx_field + ".cluster", "missing");
  if (Status s = w.String(ctx, "user", ctx_field, &user_name); !s.ok()) return s;
  if (Status s = w.String(ctx, "namespace", ctx_field, &cfg.namespace_name); !s.ok()) return s;

  YAML::Node cluster;
  std::string cf;
  if (Status s = w.Named(root, "clusters", "cluster", cluster_name, &cluster, &cf); !s.ok()) return s;
  if (Status s = w.String(cluster, "server", cf, &cfg.server); !s.ok()) return s;
  if (cfg.server.empty()) return w.Error(cf + ".server", "missing");
  if (cfg.server.rfind("http://", 0) != 0 && cfg.server.rfind("https://", 0) != 0) {
    return w.Error(cf + ".server", "not an http(s) URL: " + cfg.server);
  }
  while (cfg.server.size() > 1 && cfg.server.back() == '/') cfg.server.pop_back();
  if (Status s = w.String(cluster, "certificate-authority", cf, &cfg.ca_file); !s.ok()) return s;
  cfg.ca_file = Resolve(base_dir, cfg.ca_file);
  if (Status s = w.Data(cluster, "certificate-authority-data", cf, &cfg.ca_data); !s.ok()) return s;
  if (YAML::Node v = cluster["insecure-skip-tls-verify"]; v && !v.IsNull()) {
    if (!v.IsScalar()) return w.Error(cf + ".insecure-skip-tls-verify", "not a boolean");
    bool b = false;
    if (!YAML::convert<bool>::decode(v, b)) {
      return w.Error(cf + ".insecure-skip-tls-verify", "not a boolean: " + v.Scalar());
    }
    cfg.insecure_skip_tls_verify = b;
  }

  if (!user_name.empty()) {
    YAML::Node user;
    std::string uf;
    if (Status s = w.Named(root, "users", "user", user_name, &user, &uf); !s.ok()) return s;
    if (Status s = w.String(user, "token", uf, &cfg.token); !s.ok()) return s;
    if (Status s = w.String(user, "tokenFile", uf, &cfg.token_file); !s.ok()) return s;
    cfg.token_file = Resolve(base_dir, cfg.token_file);
    if (Status s = w.String(user, "client-certificate", uf, &cfg.client_cert_file); !s.ok()) return s;
    cfg.client_cert_file = Resolve(base_dir, cfg.client_cert_file);
    if (Status s = w.Data(user, "client-certificate-data", uf, &cfg.client_cert_data); !s.ok()) {
      return s;
    }
    if (Status s = w.String(user, "client-key", uf, &cfg.client_key_file); !s.ok()) return s;
    cfg.client_key_file = Resolve(base_dir, cfg.client_key_file);
    if (Status s = w.Data(user, "client-key-data", uf, &cfg.client_key_data); !s.ok()) return s;
    bool has_cert = !cfg.client_cert_file.empty() || !cfg.client_cert_data.empty();
    bool has_key = !cfg.client_key_file.empty() || !cfg.client_key_data.empty();
    if (has_cert != has_key) {
      return w.Error(uf + (has_cert ? ".client-key" : ".client-certificate"),
                     "missing (client certificate and key come together)");
    }
    bool has_token = !cfg.token.empty() || !cfg.token_file.empty();
    if (!has_token && !has_cert && (user["exec"] || user["auth-provider"])) {
      return w.Error(uf + (user["exec"] ? ".exec" : ".auth-provider"),
                     "not supported (use token, tokenFile or a client certificate)");
    }
  }
  cfg.origin = "kubeconfig " + path + " context " + ctx_name;
  return cfg;
}

}  // namespace

StatusOr<std::string> DecodeBase64(std::string_view text) {
  std::string out;
  out.reserve(text.size() * 3 / 4);
  uint32_t acc = 0;
  int bits = 0;
  bool padding = false;
  for (char c : text) {
    int v;
    if (c >= 'A' && c <= 'Z') v = c - 'A';
    else if (c >= 'a' && c <= 'z') v = c - 'a' + 26;
    else if (c >= '0' && c <= '9') v = c - '0' + 52;
    else if (c == '+') v = 62;
    else if (c == '/') v = 63;
    else if (c == '=') { padding = true; continue; }
    else if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    else return Invalid("invalid base64 character");
    if (padding) return Invalid("base64 data after padding");
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  if (bits >= 6) return Invalid("truncated base64");
  return out;
}

StatusOr<RestConfig> ParseKubeconfig(std::string_view yaml, const std::string& path,
                                     const std::string& base_dir, const std::string& context) {
  // Why: yaml-cpp reports everything by exception; none may escape.
  try {
    YAML::Node root = YAML::Load(std::string(yaml));
    return ParseNode(root, path, base_dir, context);
  } catch (const std::exception& e) {
    return Invalid("kubeconfig " + path + ": not valid YAML: " + e.what());
  }
}

StatusOr<RestConfig> LoadKubeconfigFile(const std::string& path, const std::string& context) {
  std::string text;
  if (!ReadFile(path, &text)) return Invalid("kubeconfig " + path + ": cannot read the file");
  std::string dir = ".";
  size_t slash = path.rfind('/');
  if (slash != std::string::npos) dir = slash == 0 ? "/" : path.substr(0, slash);
  return ParseKubeconfig(text, path, dir == "/" ? "" : dir, context);
}

StatusOr<RestConfig> LoadInClusterConfig(const InClusterEnv& env) {
  if (env.service_host.empty() || env.service_port.empty()) {
    return Invalid("in-cluster config: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set");
  }
  RestConfig cfg;
  std::string host = env.service_host;
  if (host.find(':') != std::string::npos) host = "[" + host + "]";  // IPv6
  cfg.server = "https://" + host + ":" + env.service_port;
  cfg.token_file = env.root + "/token";
  std::string token;
  if (!ReadFile(cfg.token_file, &token)) {
    return Invalid("in-cluster config: " + cfg.token_file + ": cannot read the service-account token");
  }
  std::string ca;
  if (ReadFile(env.root + "/ca.crt", &ca)) cfg.ca_file = env.root + "/ca.crt";
  std::string ns;
  if (ReadFile(env.root + "/namespace", &ns)) {
    while (!ns.empty() && (ns.back() == '\n' || ns.back() == ' ')) ns.pop_back();
    cfg.namespace_name = ns;
  }
  cfg.origin = "in-cluster (" + env.root + ")";
  return cfg;
}

ConfigSources ConfigSourcesFromEnvironment(const std::string& explicit_kubeconfig,
                                           const std::string& context) {
  auto env = [](const char* name) {
    const char* v = std::getenv(name);
    return std::string(v ? v : "");
  };
  ConfigSources s;
  s.explicit_kubeconfig = explicit_kubeconfig;
  s.context = context;
  s.in_cluster.service_host = env("KUBERNETES_SERVICE_HOST");
  s.in_cluster.service_port = env("KUBERNETES_SERVICE_PORT");
  s.kubeconfig_env = env("KUBECONFIG");
  s.home = env("HOME");
  return s;
}

StatusOr<RestConfig> ResolveConfig(const ConfigSources& s) {
  if (!s.explicit_kubeconfig.empty()) return LoadKubeconfigFile(s.explicit_kubeconfig, s.context);
  if (!s.in_cluster.service_host.empty() && !s.in_cluster.service_port.empty()) {
    return LoadInClusterConfig(s.in_cluster);
  }
  if (!s.kubeconfig_env.empty()) {
    // Why: kubectl merges every file of the list; we use the first
    // non-empty entry, which covers the common single-file case.
    std::string first = s.kubeconfig_env.substr(0, s.kubeconfig_env.find(':'));
    if (!first.empty()) return LoadKubeconfigFile(first, s.context);
  }
  if (!s.home.empty()) return LoadKubeconfigFile(s.home + "/.kube/config", s.context);
  return Invalid(
      "no Kubernetes config: pass --kubeconfig, run in a cluster, or set KUBECONFIG or HOME");
}

}  // namespace routestatus::kubeclient::rest
