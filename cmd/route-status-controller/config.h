#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace routestatus::cmd {

// Durations are kept in milliseconds (the finest unit the controller uses).
using Duration = std::chrono::milliseconds;

// Every tunable of route-status-controller. The member initialisers are the
// documented defaults (`--help` prints them). Value type; thread-compatible.
struct Options {
  std::string config_file;  // --config: optional YAML file
  // Where the API server is: --kubeconfig, else in-cluster, else $KUBECONFIG
  // (the loader resolves the last two; only the flag/env/file value is here).
  std::string kubeconfig;
  std::string context;  // --context: kubeconfig context ("" = current-context)
  std::string server;  // --server: overrides the kubeconfig's API server URL
  std::string token;   // --token: overrides the kubeconfig's bearer token (redacted)

  // Which router shard we are and how its hosts look.
  std::string router_name = "default";
  std::string router_canonical_hostname;
  std::string router_domain;      // host of a route with spec.subdomain: <subdomain>.<domain>
  std::string hostname_template;  // e.g. ${name}-${namespace}.apps.example.com
  bool override_hostname = false;

  // Which routes belong to this shard.
  std::string route_labels;      // label selector, empty = all
  std::string namespace_labels;  // label selector, empty = all
  std::vector<std::string> namespaces;  // empty = all namespaces

  // Admission.
  std::vector<std::string> allowed_domains;
  std::vector<std::string> denied_domains;
  bool allow_wildcard_routes = false;
  bool disable_namespace_ownership_check = false;
  bool extended_validation = true;  // openshift-router's EXTENDED_VALIDATION (spec.tls checks)
  bool update_status = true;  // false = observe only, write nothing
  // The router's own readiness endpoint (a sidecar beside it): the replica
  // writes status and takes over only while it answers 2xx. "" = always.
  std::string router_ready_url;
  Duration router_ready_interval = std::chrono::seconds(1);
  Duration router_ready_timeout = std::chrono::seconds(1);

  // Write lease and contention tracker.
  // false = no lease and no contention tracker: every replica writes
  // whenever its own view differs (a plain controller; for measuring the
  // naive baseline and for small single-replica installs). The lease-* and
  // contention-* options are then unused.
  bool write_lease = true;
  Duration lease_interval = std::chrono::seconds(15);
  Duration lease_retry_interval = std::chrono::seconds(3);
  // Election (start-up, or joining a fleet): no write before delay x (0.1 +
  // U[0, 1)) after the first change, so replicas started together do not
  // all write the same routes and a joining one does not race the leader;
  // 0 disables.
  Duration lease_election_delay = std::chrono::seconds(1);
  // "default" (this controller's lease) or "openshift" (openshift-router's:
  // lease::OpenshiftLikeLeaseOptions(); it also makes lease-interval 60s,
  // lease-election-delay 0 and lease-takeover off unless they are given).
  std::string lease_preset = "default";
  // How a follower holding work notices a dead leader before its lease
  // expires: "progress" or "off" (lease/takeover.h).
  std::string lease_takeover = "progress";
  // Lease rules switched off, for the ablation only (lease/lease_rules.h).
  std::string lease_rules_off;
  Duration contention_interval = std::chrono::minutes(3);
  int contention_limit = 5;

  // Informer and workers.
  Duration resync_interval = std::chrono::minutes(30);  // 0 = never
  Duration watch_timeout_min = std::chrono::minutes(5);
  Duration watch_timeout_max = std::chrono::minutes(10);
  int list_page_size = 500;
  bool watch_list = true;
  int workers = 4;

  // API client rate limits.
  double qps = 50;
  int burst = 100;

  // Process.
  std::string metrics_address = "0.0.0.0:1936";
  Duration shutdown_timeout = std::chrono::seconds(5);
  int verbosity = 0;               // -v / --v, glog VLOG level
  std::string log_level = "info";  // info | warning | error (glog minloglevel)
};

// What the command line asks for.
enum class Command {
  kRun,    // run the controller (default)
  kClear,  // `clear`: remove this router name's entries from every route
  kExplain,  // `explain NAMESPACE/ROUTE`: print what a replica decides for it
  kHelp,   // --help / -h / `help`: print HelpText() and exit 0
};

// The result of ParseConfig. `errors` holds one human-readable line per bad
// value (all of them, not just the first); non-empty errors mean "exit 2".
struct ParsedConfig {
  Command command = Command::kRun;
  Options options;
  std::vector<std::string> errors;
  // `explain` only: the route ("NAMESPACE/ROUTE") and --output / -o
  // ("text" or "json").
  std::string explain_route;
  std::string output = "text";
};

// Reads a whole file; returns nullopt and sets *error when it cannot.
using FileReader = std::function<std::optional<std::string>(const std::string& path, std::string* error)>;

// Environment as a map (tests pass a literal one; main uses EnvironmentMap()).
using EnvMap = std::map<std::string, std::string>;

// Parses argv (without argv[0]), the environment and the optional YAML file
// named by --config / ROUTESTATUS_CONFIG. Precedence: flags > environment >
// file > defaults. Then validates. Pure function: no I/O except `read_file`.
// Thread-safe.
ParsedConfig ParseConfig(const std::vector<std::string>& args, const EnvMap& env,
                         const FileReader& read_file);

// The process environment as an EnvMap.
EnvMap EnvironmentMap();

// A FileReader over the real file system: regular files of at most
// kMaxConfigFileBytes (1 MiB); a directory, FIFO or device is refused at once.
std::optional<std::string> ReadWholeFile(const std::string& path, std::string* error);

// One option as `--help` and docs/configuration.md describe it: the flag
// ("--name" or "--[no]name" for booleans), its value type ("=string",
// "=duration", ...; "" for booleans), help, default as a flag value, and the
// environment variables that set it (the canonical one first). Value type.
struct OptionReference {
  std::string name;
  std::string flag;
  std::string type;
  std::string help;
  std::string default_value;
  std::vector<std::string> env;
};

// Every option, in `--help` order: the one table both `--help` and the
// generated reference (docs/configuration.md) are made from. Thread-safe.
std::vector<OptionReference> OptionReferences();

// Usage text: subcommands, then every option with its type, default, and the
// environment variables that set it.
std::string HelpText();

// One line "key=value key=value ..." of the effective configuration with
// secrets (token, credentials in URLs) redacted, for the start-up log.
std::string RenderOptions(const Options& options);

// "500ms", "15s", "3m", "1h", "1m30s", "1.5s", "0" -> Duration. Units: ms, s,
// m, h; fractions allowed; a bare number other than 0 is an error.
std::optional<Duration> ParseDuration(std::string_view text, std::string* error);

// Inverse of ParseDuration: 1500ms -> "1.5s", 90s -> "1m30s", 0 -> "0s".
std::string FormatDuration(Duration d);

}  // namespace routestatus::cmd
