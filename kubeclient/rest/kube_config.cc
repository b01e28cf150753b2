#include "kubeclient/rest/kube_config.h"

#include <cstdlib>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "kubeclient/yaml_documents.h"

namespace routestatus::kubeclient::rest {
namespace {

Status Invalid(std::string message) { return Status(StatusCode::kInvalid, std::move(message)); }


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

  // Reads an optional boolean field.
  Status Bool(const YAML::Node& node, const char* key, const std::string& field, bool* out) const {
    YAML::Node v = node[key];
    if (!v || v.IsNull()) return Status::Ok();
    bool b = false;
    if (!v.IsScalar() || !YAML::convert<bool>::decode(v, b)) {
      return Error(field + "." + key, "not a boolean" + (v.IsScalar() ? ": " + v.Scalar() : ""));
    }
    *out = b;
    return Status::Ok();
  }

  // Reads an optional list of strings.
  Status Strings(const YAML::Node& node, const char* key, const std::string& field,
                 std::vector<std::string>* out) const {
    out->clear();
    YAML::Node v = node[key];
    if (!v || v.IsNull()) return Status::Ok();
    if (!v.IsSequence()) return Error(field + "." + key, "not a list of strings");
    for (const auto& item : v) {
      if (!item.IsScalar()) return Error(field + "." + key, "not a list of strings");
      out->push_back(item.Scalar());
    }
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

// YAML -> JSON for the exec extension: plain (unquoted) scalars that read as
// booleans, null or numbers become those; everything else is a string.
nlohmann::json YamlToJson(const YAML::Node& n) {
  if (!n || n.IsNull()) return nullptr;
  if (n.IsSequence()) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& item : n) a.push_back(YamlToJson(item));
    return a;
  }
  if (n.IsMap()) {
    nlohmann::json o = nlohmann::json::object();
    for (const auto& kv : n) o[kv.first.Scalar()] = YamlToJson(kv.second);
    return o;
  }
  const std::string& text = n.Scalar();
  if (n.Tag() == "?") {
    bool b;
    if (YAML::convert<bool>::decode(n, b)) return b;
    if (text == "null" || text == "~") return nullptr;
    nlohmann::json number = nlohmann::json::parse(text, nullptr, false);
    if (number.is_number()) return number;
  }
  return text;
}

// The cluster fields a credential plugin may be given (provideClusterInfo).
Status ParseClusterInfo(const Walker& w, const YAML::Node& cluster, const std::string& cf,
                        RestConfig* cfg) {
  if (Status s = w.String(cluster, "tls-server-name", cf, &cfg->tls_server_name); !s.ok()) return s;
  if (Status s = w.String(cluster, "proxy-url", cf, &cfg->proxy_url); !s.ok()) return s;
  if (Status s = w.Bool(cluster, "disable-compression", cf, &cfg->disable_compression); !s.ok()) {
    return s;
  }
  YAML::Node ext = cluster["extensions"];
  if (!ext || ext.IsNull()) return Status::Ok();
  if (!ext.IsSequence()) return w.Error(cf + ".extensions", "not a list");
  for (const auto& item : ext) {
    if (item.IsMap() && item["name"] && item["name"].IsScalar() &&
        item["name"].Scalar() == "client.authentication.k8s.io/exec") {
      cfg->exec_extension_json = YamlToJson(item["extension"]).dump();
    }
  }
  return Status::Ok();
}

// users[].user.exec, checked as client-go's kubeconfig validation does.
Status ParseExec(const Walker& w, const YAML::Node& exec, const std::string& ef,
                 const std::string& base_dir, ExecConfig* out) {
  if (!exec.IsMap()) return w.Error(ef, "not a map");
  if (Status s = w.String(exec, "command", ef, &out->command); !s.ok()) return s;
  if (out->command.empty()) return w.Error(ef + ".command", "missing");
  if (out->command.find('/') != std::string::npos) out->command = Resolve(base_dir, out->command);
  if (Status s = w.Strings(exec, "args", ef, &out->args); !s.ok()) return s;
  if (Status s = w.String(exec, "apiVersion", ef, &out->api_version); !s.ok()) return s;
  if (out->api_version.empty()) return w.Error(ef + ".apiVersion", "missing");
  if (out->api_version != "client.authentication.k8s.io/v1" &&
      out->api_version != "client.authentication.k8s.io/v1beta1") {
    return w.Error(ef + ".apiVersion",
                   "\"" + out->api_version +
                       "\" is not supported (client.authentication.k8s.io/v1 or v1beta1)");
  }
  if (Status s = w.String(exec, "installHint", ef, &out->install_hint); !s.ok()) return s;
  if (Status s = w.Bool(exec, "provideClusterInfo", ef, &out->provide_cluster_info); !s.ok()) {
    return s;
  }
  if (Status s = w.String(exec, "interactiveMode", ef, &out->interactive_mode); !s.ok()) return s;
  if (out->interactive_mode.empty()) {
    if (out->api_version == "client.authentication.k8s.io/v1") {
      return w.Error(ef + ".interactiveMode", "missing (required with client.authentication.k8s.io/v1)");
    }
    out->interactive_mode = "IfAvailable";
  }
  if (out->interactive_mode == "Always") {
    return w.Error(ef + ".interactiveMode",
                   "Always needs a terminal, and this controller runs without one "
                   "(use a plugin setup that works with Never or IfAvailable)");
  }
  if (out->interactive_mode != "Never" && out->interactive_mode != "IfAvailable") {
    return w.Error(ef + ".interactiveMode", "\"" + out->interactive_mode +
                                                "\" is not one of Never, IfAvailable, Always");
  }
  YAML::Node env = exec["env"];
  if (env && !env.IsNull()) {
    if (!env.IsSequence()) return w.Error(ef + ".env", "not a list");
    for (const auto& e : env) {
      std::string name, value;
      if (!e.IsMap()) return w.Error(ef + ".env", "entries must be {name, value} maps");
      if (Status s = w.String(e, "name", ef + ".env", &name); !s.ok()) return s;
      if (Status s = w.String(e, "value", ef + ".env", &value); !s.ok()) return s;
      if (name.empty()) return w.Error(ef + ".env", "an entry has no name");
      out->env.emplace_back(std::move(name), std::move(value));
    }
  }
  return Status::Ok();
}

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
  if (Status s = w.Bool(cluster, "insecure-skip-tls-verify", cf, &cfg.insecure_skip_tls_verify);
      !s.ok()) {
    return s;
  }
  if (Status s = ParseClusterInfo(w, cluster, cf, &cfg); !s.ok()) return s;

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
    // Why: as in client-go, a token or client certificate wins over exec.
    if (!has_token && !has_cert && user["exec"] && !user["exec"].IsNull()) {
      ExecConfig exec;
      if (Status s = ParseExec(w, user["exec"], uf + ".exec", base_dir, &exec); !s.ok()) return s;
      cfg.exec = std::move(exec);
    } else if (!has_token && !has_cert && user["auth-provider"]) {
      return w.Error(uf + ".auth-provider",
                     "not supported (use token, tokenFile, a client certificate or exec)");
    }
  }
  cfg.origin = "kubeconfig " + path + " context " + ctx_name;
  return cfg;
}

// Why a node budget: aliases share nodes, so an "anchor bomb" of a few
// KiB would make the walk below visit billions; a real kubeconfig of the
// 4 MiB limit has far fewer nodes.
constexpr size_t kMaxKubeconfigNodes = 1 << 20;

// kInvalid naming the field when a mapping anywhere under `node` has a key
// twice (kubectl's YAML decoder refuses that too; yaml-cpp would keep one
// silently), or when the document has more than *budget nodes.
Status CheckDuplicateKeys(const YAML::Node& node, const std::string& field, size_t* budget) {
  if (*budget == 0) return Invalid("too many YAML nodes (aliases expanding?)");
  --*budget;
  if (node.IsSequence()) {
    size_t i = 0;
    for (const auto& item : node) {
      if (Status s = CheckDuplicateKeys(item, field + "[" + std::to_string(i++) + "]", budget); !s.ok()) {
        return s;
      }
    }
  } else if (node.IsMap()) {
    std::unordered_set<std::string> keys;
    for (const auto& kv : node) {
      std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "";
      std::string child = (field.empty() ? "" : field + ".") + key;
      if (kv.first.IsScalar() && !keys.insert(key).second) {
        return Invalid(child + ": given more than once (keep one)");
      }
      if (Status s = CheckDuplicateKeys(kv.second, child, budget); !s.ok()) return s;
    }
  }
  return Status::Ok();
}

}  // namespace

bool ReadFileText(const std::string& path, std::string* out, std::string* error, size_t max_bytes) {
  StatusOr<std::string> text = ReadBoundedFile(path, max_bytes);
  if (!text.ok()) {
    if (error != nullptr) *error = text.status().message();
    return false;
  }
  *out = std::move(text).value();
  return true;
}

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

std::string EncodeBase64(std::string_view data) {
  static const char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((data.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < data.size(); i += 3) {
    uint32_t v = (static_cast<uint8_t>(data[i]) << 16) | (static_cast<uint8_t>(data[i + 1]) << 8) |
                 static_cast<uint8_t>(data[i + 2]);
    for (int shift = 18; shift >= 0; shift -= 6) out.push_back(kAlphabet[(v >> shift) & 63]);
  }
  size_t rest = data.size() - i;
  if (rest > 0) {
    uint32_t v = static_cast<uint8_t>(data[i]) << 16;
    if (rest == 2) v |= static_cast<uint8_t>(data[i + 1]) << 8;
    out.push_back(kAlphabet[(v >> 18) & 63]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out.push_back(rest == 2 ? kAlphabet[(v >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

StatusOr<RestConfig> ParseKubeconfig(std::string_view yaml, const std::string& path,
                                     const std::string& base_dir, const std::string& context) {
  // Why: yaml-cpp reports everything by exception; none may escape.
  try {
    const std::string text(yaml);
    if (CountYamlDocuments(text) > 1) {
      return Invalid("kubeconfig " + path + ": holds more than one YAML document ('---'); give "
                     "one kubeconfig per file");
    }
    YAML::Node root = YAML::Load(text);
    size_t budget = kMaxKubeconfigNodes;
    if (Status s = CheckDuplicateKeys(root, "", &budget); !s.ok()) {
      return Invalid("kubeconfig " + path + ": " + s.message());
    }
    return ParseNode(root, path, base_dir, context);
  } catch (const std::exception& e) {
    return Invalid("kubeconfig " + path + ": not valid YAML: " + e.what());
  }
}

StatusOr<RestConfig> LoadKubeconfigFile(const std::string& path, const std::string& context) {
  std::string text;
  std::string why;
  if (!ReadFileText(path, &text, &why, kMaxKubeconfigFileBytes)) {
    return Invalid("kubeconfig " + path + ": cannot read the file: " + why);
  }
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
  std::string why;
  if (!ReadFileText(cfg.token_file, &token, &why, kMaxTokenFileBytes)) {
    return Invalid("in-cluster config: " + cfg.token_file + ": cannot read the service-account token: " + why);
  }
  std::string ca;
  if (ReadFileText(env.root + "/ca.crt", &ca, nullptr, kMaxPemFileBytes)) cfg.ca_file = env.root + "/ca.crt";
  std::string ns;
  if (ReadFileText(env.root + "/namespace", &ns, nullptr, kMaxTokenFileBytes)) {
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
