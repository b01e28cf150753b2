#include "cmd/route-status-controller/config.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <cstdlib>
#include <sstream>
#include <variant>

#include <unistd.h>  // environ

#include <yaml-cpp/yaml.h>

#include "base/bounded_file.h"
#include "cmd/route-status-controller/config_validate.h"
#include "kubeclient/yaml_documents.h"

namespace routestatus::cmd {
namespace {

using Field = std::variant<std::string Options::*, bool Options::*, int Options::*,
                           double Options::*, Duration Options::*,
                           std::vector<std::string> Options::*>;

// One row of the option table: flag name, environment names (first is the
// canonical ROUTESTATUS_* one, the rest are OpenShift-compatible aliases that
// lose to it), help, and where the value lives.
struct OptionSpec {
  const char* name;
  std::vector<const char*> env;
  const char* help;
  Field field;
  bool secret = false;
};

const std::vector<OptionSpec>& Specs() {
  // Why: a function-local constant, not a mutable global; built once.
  static const std::vector<OptionSpec> specs = {
      {"config", {"ROUTESTATUS_CONFIG"}, "YAML file with options (keys are the flag names)",
       &Options::config_file},
      {"kubeconfig", {"ROUTESTATUS_KUBECONFIG"},
       "kubeconfig file; when empty: in-cluster config, else $KUBECONFIG", &Options::kubeconfig},
      {"context", {"ROUTESTATUS_CONTEXT"}, "kubeconfig context (empty = current-context)",
       &Options::context},
      {"server", {"ROUTESTATUS_SERVER"}, "API server URL, overrides the kubeconfig's",
       &Options::server},
      {"token", {"ROUTESTATUS_TOKEN"}, "bearer token, overrides the kubeconfig's (never logged)",
       &Options::token, true},
      {"router-name", {"ROUTESTATUS_ROUTER_NAME", "ROUTER_SERVICE_NAME"},
       "router (shard) name: the routerName of the status.ingress[] entry we own",
       &Options::router_name},
      {"router-canonical-hostname", {"ROUTESTATUS_ROUTER_CANONICAL_HOSTNAME", "ROUTER_CANONICAL_HOSTNAME"},
       "routerCanonicalHostname written into our entry", &Options::router_canonical_hostname},
      {"router-domain", {"ROUTESTATUS_ROUTER_DOMAIN", "ROUTER_DOMAIN"},
       "domain of routes with spec.subdomain (host <subdomain>.<domain>)",
       &Options::router_domain},
      {"hostname-template", {"ROUTESTATUS_HOSTNAME_TEMPLATE", "ROUTER_SUBDOMAIN"},
       "template for routes without spec.host: $name / ${name} and $namespace / ${namespace}, "
       "quotes around it trimmed (any other key gives no host, as in openshift-router)",
       &Options::hostname_template},
      {"override-hostname", {"ROUTESTATUS_OVERRIDE_HOSTNAME", "ROUTER_OVERRIDE_HOSTNAME"},
       "apply --hostname-template to every route, even with spec.host", &Options::override_hostname},
      {"route-labels", {"ROUTESTATUS_ROUTE_LABELS", "ROUTE_LABELS"},
       "label selector for the routes of this shard (empty = all)", &Options::route_labels},
      {"namespace-labels", {"ROUTESTATUS_NAMESPACE_LABELS", "NAMESPACE_LABELS"},
       "label selector for the namespaces of this shard (empty = all)", &Options::namespace_labels},
      {"namespaces", {"ROUTESTATUS_NAMESPACES", "ROUTER_NAMESPACES"},
       "comma-separated namespaces to watch (empty = all)", &Options::namespaces},
      {"allowed-domains", {"ROUTESTATUS_ALLOWED_DOMAINS", "ROUTER_ALLOWED_DOMAINS"},
       "comma-separated domains route hosts must be in (empty = any)", &Options::allowed_domains},
      {"denied-domains", {"ROUTESTATUS_DENIED_DOMAINS", "ROUTER_DENIED_DOMAINS"},
       "comma-separated domains route hosts must not be in", &Options::denied_domains},
      {"allow-wildcard-routes", {"ROUTESTATUS_ALLOW_WILDCARD_ROUTES", "ROUTER_ALLOW_WILDCARD_ROUTES"},
       "admit routes with wildcardPolicy Subdomain", &Options::allow_wildcard_routes},
      {"disable-namespace-ownership-check",
       {"ROUTESTATUS_DISABLE_NAMESPACE_OWNERSHIP_CHECK", "ROUTER_DISABLE_NAMESPACE_OWNERSHIP_CHECK"},
       "let routes in different namespaces share a host on different paths",
       &Options::disable_namespace_ownership_check},
      {"extended-validation", {"ROUTESTATUS_EXTENDED_VALIDATION", "EXTENDED_VALIDATION"},
       "check spec.tls certificates, keys and CA certificates as openshift-router does; a "
       "route that fails is rejected ExtendedValidationFailed",
       &Options::extended_validation},
      {"update-status", {"ROUTESTATUS_UPDATE_STATUS"},
       "write status; --noupdate-status observes and counts only", &Options::update_status},
      {"write-lease", {"ROUTESTATUS_WRITE_LEASE"},
       "coordinate replicas' writes (write lease + contention tracker); false: every replica "
       "writes whatever differs, like a plain controller (for comparison and small "
       "single-replica installs only)",
       &Options::write_lease},
      {"lease-interval", {"ROUTESTATUS_LEASE_INTERVAL"},
       "write lease interval: leader validity and follower backoff cap", &Options::lease_interval},
      {"lease-retry-interval", {"ROUTESTATUS_LEASE_RETRY_INTERVAL"},
       "delay before a failed status write is retried", &Options::lease_retry_interval},
      {"lease-election-delay", {"ROUTESTATUS_LEASE_ELECTION_DELAY"},
       "until it has seen another replica's write or written itself, a replica waits a "
       "random delay in [0.1 x this, 1.1 x this) after its first change before writing "
       "(0 = none)",
       &Options::lease_election_delay},
      {"lease-preset", {"ROUTESTATUS_LEASE_PRESET"},
       "write lease behaviour: default (this controller's) or openshift (as openshift-router: "
       "no election delay, 40 ms follower floor, leaders never step down, no takeover; also "
       "sets --lease-interval=60s --lease-election-delay=0 --lease-takeover=off unless given)",
       &Options::lease_preset},
      {"lease-takeover", {"ROUTESTATUS_LEASE_TAKEOVER"},
       "how a follower holding work notices a dead leader before its lease expires: progress "
       "(the leader wrote nothing for an adaptive deadline, at least 500 ms) or off (lease "
       "expiry only)",
       &Options::lease_takeover},
      {"lease-rules-off", {"ROUTESTATUS_LEASE_RULES_OFF"},
       "for the lease ablation only (docs/lease.md): comma-separated lease rules to switch "
       "off (lease/lease_rules.h), or all; empty in production",
       &Options::lease_rules_off},
      {"contention-interval", {"ROUTESTATUS_CONTENTION_INTERVAL"},
       "window of the contention tracker", &Options::contention_interval},
      {"contention-limit", {"ROUTESTATUS_CONTENTION_LIMIT"},
       "contentions per window before updates of existing entries stop", &Options::contention_limit},
      {"resync-interval", {"ROUTESTATUS_RESYNC_INTERVAL"},
       "re-reconcile every cached route this often (0 = never)", &Options::resync_interval},
      {"watch-timeout-min", {"ROUTESTATUS_WATCH_TIMEOUT_MIN"},
       "shortest server-side watch timeout (picked at random per watch)", &Options::watch_timeout_min},
      {"watch-timeout-max", {"ROUTESTATUS_WATCH_TIMEOUT_MAX"},
       "longest server-side watch timeout", &Options::watch_timeout_max},
      {"list-page-size", {"ROUTESTATUS_LIST_PAGE_SIZE"}, "items per list page (limit=)",
       &Options::list_page_size},
      {"router-ready-url", {"ROUTESTATUS_ROUTER_READY_URL"},
       "the router's own readiness endpoint (e.g. http://127.0.0.1:1936/healthz/ready, "
       "openshift-router's): while it does not answer 2xx this replica writes no status and "
       "takes over nothing, and /readyz says why; empty: always report",
       &Options::router_ready_url},
      {"router-ready-interval", {"ROUTESTATUS_ROUTER_READY_INTERVAL"},
       "how often the router's readiness endpoint is probed", &Options::router_ready_interval},
      {"router-ready-timeout", {"ROUTESTATUS_ROUTER_READY_TIMEOUT"},
       "a readiness probe without a 2xx answer by then fails (a hung router costs at most this)",
       &Options::router_ready_timeout},
      {"watch-list", {"ROUTESTATUS_WATCH_LIST"},
       "get the initial state by a watch list (sendInitialEvents: the API server streams its "
       "watch cache, no storage read; kube 1.27+ with WatchList), a list where the stream fails "
       "(docs/operations.md#kubernetes-versions); false: lists only",
       &Options::watch_list},
      {"workers", {"ROUTESTATUS_WORKERS"}, "reconcile worker threads", &Options::workers},
      {"qps", {"ROUTESTATUS_QPS"}, "API requests per second (token bucket rate), 0.1 to 100000", &Options::qps},
      {"burst", {"ROUTESTATUS_BURST"}, "API request burst (token bucket size)", &Options::burst},
      {"metrics-address", {"ROUTESTATUS_METRICS_ADDRESS"},
       "host:port for /metrics, /healthz, /readyz (port 0 = any)", &Options::metrics_address},
      {"shutdown-timeout", {"ROUTESTATUS_SHUTDOWN_TIMEOUT"},
       "on SIGTERM/SIGINT, how long in-flight writes may take", &Options::shutdown_timeout},
      {"v", {"ROUTESTATUS_V"}, "log verbosity: 2 lease transitions, 4 per-route decisions",
       &Options::verbosity},
      {"log-level", {"ROUTESTATUS_LOG_LEVEL"}, "least severe logged level: info|warning|error",
       &Options::log_level},
  };
  return specs;
}

const OptionSpec* FindSpec(std::string name) {
  for (char& c : name) {
    if (c == '_') c = '-';
  }
  for (const OptionSpec& spec : Specs()) {
    if (name == spec.name) return &spec;
  }
  return nullptr;
}

bool IsBool(const OptionSpec& spec) { return std::holds_alternative<bool Options::*>(spec.field); }
bool IsList(const OptionSpec& spec) {
  return std::holds_alternative<std::vector<std::string> Options::*>(spec.field);
}

std::string Trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return "";
  size_t e = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(b, e - b + 1));
}

// "a, b" -> {a, b}; "" (or blanks) -> {}. False when an item is empty
// ("a,,b", ","): the list would silently mean something else (an empty
// namespace list is every namespace).
bool SplitList(const std::string& s, std::vector<std::string>* out) {
  out->clear();
  if (Trim(s).empty()) return true;
  size_t start = 0;
  while (true) {
    size_t comma = s.find(',', start);
    std::string item = Trim(std::string_view(s).substr(start, comma == std::string::npos ? s.npos : comma - start));
    if (item.empty()) return false;
    out->push_back(std::move(item));
    if (comma == std::string::npos) return true;
    start = comma + 1;
  }
}

std::optional<bool> ParseBool(std::string v) {
  for (char& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (v == "true" || v == "1" || v == "yes" || v == "t" || v == "y") return true;
  if (v == "false" || v == "0" || v == "no" || v == "f" || v == "n") return false;
  return std::nullopt;
}

// A raw value and where it came from, for error messages.
struct Raw {
  std::string value;
  std::string source;
};
using RawMap = std::map<std::string, Raw>;

// Stores `value` into the field of `spec`; returns an error text or "".
std::string Apply(const OptionSpec& spec, const std::string& value, Options& o) {
  return std::visit(
      [&](auto member) -> std::string {
        using T = std::decay_t<decltype(o.*member)>;
        if constexpr (std::is_same_v<T, std::string>) {
          o.*member = value;
        } else if constexpr (std::is_same_v<T, bool>) {
          std::optional<bool> b = ParseBool(value);
          if (!b) return "not a boolean (use true or false)";
          o.*member = *b;
        } else if constexpr (std::is_same_v<T, int>) {
          std::string t = Trim(value);
          char* end = nullptr;
          errno = 0;
          long n = std::strtol(t.c_str(), &end, 10);
          if (t.empty() || *end != '\0' || errno != 0 || n < INT32_MIN || n > INT32_MAX) {
            return "not an integer";
          }
          o.*member = static_cast<int>(n);
        } else if constexpr (std::is_same_v<T, double>) {
          std::string t = Trim(value);
          char* end = nullptr;
          double d = std::strtod(t.c_str(), &end);
          if (t.empty() || *end != '\0' || !std::isfinite(d)) return "not a number";
          o.*member = d;
        } else if constexpr (std::is_same_v<T, Duration>) {
          std::string err;
          std::optional<Duration> d = ParseDuration(Trim(value), &err);
          if (!d) return err;
          o.*member = *d;
        } else {
          if (!SplitList(value, &(o.*member))) {
            return "empty item in the list (remove the extra ',')";
          }
        }
        return "";
      },
      spec.field);
}

std::string Render(const OptionSpec& spec, const Options& o) {
  return std::visit(
      [&](auto member) -> std::string {
        using T = std::decay_t<decltype(o.*member)>;
        if constexpr (std::is_same_v<T, std::string>) {
          return o.*member;
        } else if constexpr (std::is_same_v<T, bool>) {
          return o.*member ? "true" : "false";
        } else if constexpr (std::is_same_v<T, int>) {
          return std::to_string(o.*member);
        } else if constexpr (std::is_same_v<T, double>) {
          std::ostringstream out;
          out << o.*member;
          return out.str();
        } else if constexpr (std::is_same_v<T, Duration>) {
          return FormatDuration(o.*member);
        } else {
          std::string out;
          for (const std::string& s : o.*member) out += (out.empty() ? "" : ",") + s;
          return out;
        }
      },
      spec.field);
}

void Record(RawMap& raw, const OptionSpec& spec, const std::string& value,
            const std::string& source) {
  auto it = raw.find(spec.name);
  // Why: a repeated list flag (--namespaces=a --namespaces=b) accumulates.
  if (it != raw.end() && IsList(spec) && it->second.source == source) {
    it->second.value += "," + value;
    return;
  }
  raw[spec.name] = Raw{value, source};
}

// --lease-preset=openshift: the lease settings it implies, where the
// flags, environment or file did not set them.
void ApplyLeasePreset(const RawMap& given, Options& o) {
  if (o.lease_preset != "openshift") return;
  if (given.count("lease-interval") == 0) o.lease_interval = std::chrono::seconds(60);
  if (given.count("lease-election-delay") == 0) o.lease_election_delay = Duration::zero();
  if (given.count("lease-takeover") == 0) o.lease_takeover = "off";
}

// Parses argv into `raw` (flags only); sets the command.
void ParseArgs(const std::vector<std::string>& args, RawMap& raw, ParsedConfig& out) {
  bool flags_done = false;
  bool have_command = false;
  bool have_target = false;
  bool have_output = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (!flags_done && a == "--") {
      flags_done = true;
      continue;
    }
    if (flags_done || a.size() < 2 || a[0] != '-') {
      if (have_command && out.command == Command::kExplain && !have_target) {
        out.explain_route = a;
        have_target = true;
      } else if (have_command) {
        out.errors.push_back("unexpected argument \"" + a + "\"");
      } else if (a == "run") {
        out.command = Command::kRun;
      } else if (a == "clear") {
        out.command = Command::kClear;
      } else if (a == "explain") {
        out.command = Command::kExplain;
      } else if (a == "help") {
        out.command = Command::kHelp;
      } else {
        out.errors.push_back("unknown command \"" + a + "\" (commands: run, clear, explain, help)");
      }
      have_command = true;
      continue;
    }
    std::string body = a.substr(a[1] == '-' ? 2 : 1);
    std::optional<std::string> value;
    if (size_t eq = body.find('='); eq != std::string::npos) {
      value = body.substr(eq + 1);
      body = body.substr(0, eq);
    }
    if (body == "help" || body == "h") {
      out.command = Command::kHelp;
      have_command = true;
      continue;
    }
    if (body == "output" || body == "o") {
      // Why not an OptionSpec: it shapes one command's output; it is no
      // setting of the router (no environment variable, no config key).
      if (!value && i + 1 < args.size()) value = args[++i];
      if (!value) {
        out.errors.push_back("flag --output needs a value (text or json)");
      } else {
        out.output = *value;
        have_output = true;
      }
      continue;
    }
    const OptionSpec* spec = FindSpec(body);
    if (spec == nullptr && !value && body.rfind("no", 0) == 0) {
      std::string rest = body.substr(body.rfind("no-", 0) == 0 ? 3 : 2);
      const OptionSpec* negated = FindSpec(rest);
      if (negated != nullptr && IsBool(*negated)) {
        Record(raw, *negated, "false", "flag --no" + rest);
        continue;
      }
    }
    if (spec == nullptr) {
      out.errors.push_back("unknown flag \"" + a + "\" (see --help)");
      continue;
    }
    std::string source = std::string("flag --") + spec->name;
    if (!value) {
      if (IsBool(*spec)) {
        value = "true";
      } else if (i + 1 < args.size()) {
        value = args[++i];
      } else {
        out.errors.push_back(source + " needs a value");
        continue;
      }
    }
    Record(raw, *spec, *value, source);
  }
  if (out.command == Command::kExplain) {
    const size_t slash = out.explain_route.find('/');
    if (!have_target) {
      out.errors.push_back("explain needs a route: explain NAMESPACE/ROUTE");
    } else if (slash == std::string::npos || slash == 0 || slash + 1 == out.explain_route.size() ||
               out.explain_route.find('/', slash + 1) != std::string::npos) {
      out.errors.push_back("explain: \"" + out.explain_route +
                           "\" is not NAMESPACE/ROUTE (e.g. explain shop/web)");
    }
    if (out.output != "text" && out.output != "json") {
      out.errors.push_back("--output: invalid value \"" + out.output + "\": use text or json");
    }
  } else if (have_output) {
    out.errors.push_back("--output applies only to explain");
  }
}

void ParseEnv(const EnvMap& env, RawMap& raw) {
  for (const OptionSpec& spec : Specs()) {
    // Why: the canonical name (first) wins over the compatibility aliases.
    for (const char* name : spec.env) {
      auto it = env.find(name);
      // Why: manifests often carry `value: ""` for unused settings; an empty
      // variable counts as unset rather than as an invalid number or duration.
      if (it != env.end() && !it->second.empty()) {
        raw[spec.name] = Raw{it->second, std::string("env ") + name};
        break;
      }
    }
  }
}

// What a YAML node is, for messages.
const char* ShapeOf(const YAML::Node& n) {
  if (n.IsSequence()) return "a list";
  if (n.IsMap()) return "a mapping";
  if (n.IsNull()) return "empty";
  return "a value";
}

// The items of a YAML list for a list option, joined by ','; "" and an
// error when an item is not a non-empty string without ','.
std::string JoinListItems(const YAML::Node& list, std::string* error) {
  std::string value;
  int index = 0;
  for (const auto& item : list) {
    ++index;
    std::string where = "item " + std::to_string(index);
    if (item.IsSequence() || item.IsMap()) {
      *error = where + " is " + ShapeOf(item) + "; give a list of names, e.g. [a, b]";
      return "";
    }
    std::string text = item.IsScalar() ? Trim(item.Scalar()) : "";
    if (text.empty()) {
      *error = where + " is empty; remove it (an empty list means all)";
      return "";
    }
    if (text.find(',') != std::string::npos) {
      *error = where + " contains ','; give each name as its own item";
      return "";
    }
    value += (value.empty() ? "" : ",") + text;
  }
  return value;
}

void ParseFile(const std::string& path, const FileReader& read_file, RawMap& raw,
               std::vector<std::string>& errors) {
  std::string err;
  std::optional<std::string> text = read_file ? read_file(path, &err) : std::nullopt;
  if (!text) {
    errors.push_back("config file " + path + ": cannot read: " + (err.empty() ? "no reader" : err));
    return;
  }
  YAML::Node root;
  try {
    const int documents = kubeclient::CountYamlDocuments(*text);
    if (documents == 0) return;
    if (documents > 1) {
      errors.push_back("config file " + path + ": holds more than one YAML document ('---'); "
                       "put every option in one mapping");
      return;
    }
    root = YAML::Load(*text);
  } catch (const YAML::Exception& e) {
    errors.push_back("config file " + path + ": " + e.what());
    return;
  }
  if (root.IsNull()) return;
  if (!root.IsMap()) {
    errors.push_back("config file " + path + ": top level must be a mapping of option: value");
    return;
  }
  std::map<std::string, std::string> seen;  // option name -> key as written
  for (const auto& kv : root) {
    if (!kv.first.IsScalar()) {
      errors.push_back("config file " + path + ": a key is not a string but " +
                       ShapeOf(kv.first) + "; keys are option names");
      continue;
    }
    std::string key = kv.first.Scalar();
    const OptionSpec* spec = FindSpec(key);
    std::string source = "config file " + path + " key " + key;
    if (spec == nullptr || std::string(spec->name) == "config") {
      errors.push_back("config file " + path + ": unknown key \"" + key + "\"");
      continue;
    }
    // Why: YAML parsers differ on duplicates (yaml-cpp keeps the last); an
    // option given twice is a mistake whichever one was meant.
    if (auto [it, inserted] = seen.emplace(spec->name, key); !inserted) {
      errors.push_back(source + ": given more than once (keep one)" +
                       (it->second == key ? "" : "; also given as " + it->second));
      continue;
    }
    const YAML::Node& v = kv.second;
    std::string value;
    if (v.IsSequence() && IsList(*spec)) {
      std::string item_error;
      value = JoinListItems(v, &item_error);
      if (!item_error.empty()) {
        errors.push_back(source + ": " + item_error);
        continue;
      }
    } else if (v.IsScalar()) {
      value = v.Scalar();
    } else if (v.IsNull()) {
      value = "";
    } else {
      errors.push_back(source + ": expected a " +
                       std::string(IsList(*spec) ? "list or string" : "single value") + ", not " +
                       ShapeOf(v));
      continue;
    }
    raw[spec->name] = Raw{value, source};
  }
}

}  // namespace

ParsedConfig ParseConfig(const std::vector<std::string>& args, const EnvMap& env,
                         const FileReader& read_file) {
  ParsedConfig out;
  RawMap flags, env_raw, file_raw;
  ParseArgs(args, flags, out);
  if (out.command == Command::kHelp) {
    out.errors.clear();
    return out;
  }
  ParseEnv(env, env_raw);
  std::string config_path;
  if (auto it = flags.find("config"); it != flags.end()) {
    config_path = it->second.value;
  } else if (auto it = env_raw.find("config"); it != env_raw.end()) {
    config_path = it->second.value;
  }
  if (!config_path.empty()) ParseFile(config_path, read_file, file_raw, out.errors);

  // Precedence: flags > env > file > defaults.
  RawMap merged = file_raw;
  for (const auto& [k, v] : env_raw) merged[k] = v;
  for (const auto& [k, v] : flags) merged[k] = v;
  for (const auto& [name, raw] : merged) {
    const OptionSpec* spec = FindSpec(name);
    std::string err = Apply(*spec, raw.value, out.options);
    if (!err.empty()) {
      out.errors.push_back("--" + name + ": invalid value \"" + raw.value + "\" (from " +
                           raw.source + "): " + err);
    }
  }
  ApplyLeasePreset(merged, out.options);
  ValidateOptions(out.options, out.command, merged.count("router-name") > 0, out.errors);
  return out;
}

EnvMap EnvironmentMap() {
  EnvMap env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string entry(*e);
    size_t eq = entry.find('=');
    if (eq != std::string::npos) env[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  return env;
}

std::optional<std::string> ReadWholeFile(const std::string& path, std::string* error) {
  StatusOr<std::string> text = ReadBoundedFile(path, kMaxConfigFileBytes);
  if (!text.ok()) {
    if (error != nullptr) *error = text.status().message();
    return std::nullopt;
  }
  return std::move(text).value();
}

std::vector<OptionReference> OptionReferences() {
  std::vector<OptionReference> rows;
  const Options defaults;
  for (const OptionSpec& spec : Specs()) {
    OptionReference row;
    row.name = spec.name;
    row.flag = IsBool(spec) ? std::string("--[no]") + spec.name : std::string("--") + spec.name;
    row.type = std::visit(
        [](auto member) -> std::string {
          using T = std::decay_t<decltype(Options().*member)>;
          if constexpr (std::is_same_v<T, std::string>) return "=string";
          if constexpr (std::is_same_v<T, bool>) return "";
          if constexpr (std::is_same_v<T, int>) return "=int";
          if constexpr (std::is_same_v<T, double>) return "=float";
          if constexpr (std::is_same_v<T, Duration>) return "=duration";
          return "=a,b,...";
        },
        spec.field);
    row.help = spec.help;
    row.default_value = Render(spec, defaults);
    row.env.assign(spec.env.begin(), spec.env.end());
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string HelpText() {
  std::ostringstream out;
  out << "Usage: route-status-controller [run|clear] [--option=value ...]\n"
         "       route-status-controller explain NAMESPACE/ROUTE [--output=text|json] "
         "[--option=value ...]\n\n"
         "Writes this router's entry of status.ingress[] on route.openshift.io/v1 Routes.\n\n"
         "Commands:\n"
         "  run      run the controller (default)\n"
         "  clear    remove the entries of --router-name (must be set explicitly) from every "
         "route, then exit\n"
         "  explain  read-only: list routes (and namespaces when --namespace-labels is set) as a\n"
         "           replica does, and print for NAMESPACE/ROUTE and this configuration the\n"
         "           decision (admitted, rejection reason, or outside the shard), the rule that\n"
         "           decided it (the route holding the host and since when, the domain or\n"
         "           selector that matched), the entry a replica would write and how the\n"
         "           stored entry differs. Give it the flags, environment and --config of the\n"
         "           router to explain. --output=json (or -o json) prints one JSON object\n"
         "           (docs/explain.md). Exit codes: 0 decided, 1 route not found, 2 invalid\n"
         "           configuration or usage, 3 API server unreachable or a failed request.\n\n"
         "Options (precedence: flags > environment > --config file > defaults; booleans\n"
         "also as --name / --noname; durations like 500ms, 15s, 3m, 1h, 1m30s):\n";
  for (const OptionReference& row : OptionReferences()) {
    out << "  " << row.flag << row.type << "\n      " << row.help << "\n      (default: "
        << (row.default_value.empty() ? "\"\"" : row.default_value) << "; env:";
    for (const std::string& e : row.env) out << " " << e;
    out << ")\n";
  }
  out << "  -h, --help\n      print this text\n\n"
         "Environment: ROUTESTATUS_<OPTION> (upper case, '-' -> '_') for every option; the\n"
         "OpenShift router names listed after it also work and lose to it. Empty variables\n"
         "are ignored.\n"
         "--config file: YAML mapping of option names to values, e.g.\n"
         "  router-name: internal\n"
         "  lease-interval: 15s\n"
         "  namespaces: [team-a, team-b]\n"
         "Exit codes: 0 ok, 1 runtime failure, 2 invalid configuration (explain: see above).\n";
  return out.str();
}

std::string RenderOptions(const Options& options) {
  std::string out;
  for (const OptionSpec& spec : Specs()) {
    std::string v = Render(spec, options);
    if (spec.secret && !v.empty()) {
      v = "<redacted>";
    } else {
      v = RedactUrlCredentials(v);
    }
    if (v.empty() || v.find_first_of(" \t\"") != std::string::npos) {
      std::string quoted = "\"";
      for (char c : v) quoted += (c == '"' ? std::string("\\\"") : std::string(1, c));
      v = quoted + "\"";
    }
    out += (out.empty() ? "" : " ") + std::string(spec.name) + "=" + v;
  }
  return out;
}

}  // namespace routestatus::cmd
