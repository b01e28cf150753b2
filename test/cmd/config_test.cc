#include "cmd/route-status-controller/config.h"
#include "cmd/route-status-controller/config_validate.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace routestatus::cmd {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using namespace std::chrono_literals;

// A FileReader over an in-memory map.
FileReader Files(std::map<std::string, std::string> files) {
  return [files](const std::string& path, std::string* error) -> std::optional<std::string> {
    auto it = files.find(path);
    if (it == files.end()) {
      *error = "No such file or directory";
      return std::nullopt;
    }
    return it->second;
  };
}

ParsedConfig Parse(std::vector<std::string> args, EnvMap env = {},
                   std::map<std::string, std::string> files = {}) {
  return ParseConfig(args, env, Files(files));
}

std::string Joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += s + "\n";
  return out;
}

TEST(ConfigTest, DefaultsMatchTheIssue) {
  ParsedConfig c = Parse({});
  ASSERT_THAT(c.errors, IsEmpty()) << Joined(c.errors);
  EXPECT_EQ(c.command, Command::kRun);
  EXPECT_EQ(c.options.router_name, "default");
  EXPECT_EQ(c.options.lease_interval, 15s);
  EXPECT_EQ(c.options.lease_retry_interval, 3s);
  EXPECT_EQ(c.options.lease_election_delay, 1s);
  EXPECT_EQ(c.options.contention_interval, 3min);
  EXPECT_EQ(c.options.contention_limit, 5);
  EXPECT_EQ(c.options.resync_interval, 30min);
  EXPECT_EQ(c.options.metrics_address, "0.0.0.0:1936");
  EXPECT_TRUE(c.options.update_status);
  EXPECT_FALSE(c.options.allow_wildcard_routes);
}

TEST(ConfigTest, FlagSyntaxes) {
  ParsedConfig c = Parse({"--router-name=internal", "--router-canonical-hostname",
                          "router.apps.example.com", "--allow-wildcard-routes",
                          "--noupdate-status", "--override-hostname=true",
                          "--router-domain=apps.example.com",
                          "--hostname-template=${name}-${namespace}.apps.example.com", "-v=4", "--workers", "8",
                          "--qps=12.5", "-burst=30", "--namespaces=a,b", "--namespaces", "c"});
  ASSERT_THAT(c.errors, IsEmpty()) << Joined(c.errors);
  const Options& o = c.options;
  EXPECT_EQ(o.router_name, "internal");
  EXPECT_EQ(o.router_canonical_hostname, "router.apps.example.com");
  EXPECT_TRUE(o.allow_wildcard_routes);
  EXPECT_FALSE(o.update_status);
  EXPECT_TRUE(o.override_hostname);
  EXPECT_EQ(o.verbosity, 4);
  EXPECT_EQ(o.workers, 8);
  EXPECT_DOUBLE_EQ(o.qps, 12.5);
  EXPECT_EQ(o.burst, 30);
  EXPECT_THAT(o.namespaces, ElementsAre("a", "b", "c"));
}

TEST(ConfigTest, BooleanForms) {
  EXPECT_FALSE(Parse({"--update-status=false"}).options.update_status);
  EXPECT_FALSE(Parse({"--no-update-status"}).options.update_status);
  EXPECT_TRUE(Parse({"--noupdate-status", "--update-status"}).options.update_status);
  ParsedConfig bad = Parse({"--update-status=maybe"});
  ASSERT_EQ(bad.errors.size(), 1u);
  EXPECT_THAT(bad.errors[0], HasSubstr("--update-status"));
  EXPECT_THAT(bad.errors[0], HasSubstr("maybe"));
}

struct DurationCase {
  const char* text;
  int64_t ms;  // -1 = error
};

TEST(ConfigTest, Durations) {
  const DurationCase cases[] = {
      {"500ms", 500},  {"15s", 15000},   {"3m", 180000},  {"1h", 3600000}, {"1m30s", 90000},
      {"1.5s", 1500},  {"0", 0},         {"2h3m4s5ms", 7384005},
      {"", -1},        {"15", -1},       {"15x", -1},     {"-1s", -1},     {"s", -1},
      {"1.2.3s", -1},
  };
  for (const DurationCase& c : cases) {
    std::string err;
    std::optional<Duration> d = ParseDuration(c.text, &err);
    if (c.ms < 0) {
      EXPECT_FALSE(d.has_value()) << c.text;
      EXPECT_FALSE(err.empty()) << c.text;
    } else {
      ASSERT_TRUE(d.has_value()) << c.text << ": " << err;
      EXPECT_EQ(d->count(), c.ms) << c.text;
    }
  }
  EXPECT_EQ(FormatDuration(1500ms), "1.5s");
  EXPECT_EQ(FormatDuration(90s), "1m30s");
  EXPECT_EQ(FormatDuration(500ms), "500ms");
  EXPECT_EQ(FormatDuration(0ms), "0s");
  EXPECT_EQ(FormatDuration(30min), "30m");
  EXPECT_EQ(FormatDuration(3661s), "1h1m1s");
}

TEST(ConfigTest, PrecedenceFlagsOverEnvOverFileOverDefaults) {
  std::map<std::string, std::string> files = {
      {"/etc/rs.yaml",
       "router-name: from-file\nlease-interval: 20s\nworkers: 3\ncontention_limit: 7\n"
       "namespaces: [x, y]\n"}};
  EnvMap env = {{"ROUTESTATUS_CONFIG", "/etc/rs.yaml"},
                {"ROUTESTATUS_LEASE_INTERVAL", "25s"},
                {"ROUTESTATUS_WORKERS", "6"}};
  ParsedConfig c = Parse({"--workers=9"}, env, files);
  ASSERT_THAT(c.errors, IsEmpty()) << Joined(c.errors);
  EXPECT_EQ(c.options.config_file, "/etc/rs.yaml");
  EXPECT_EQ(c.options.router_name, "from-file");    // file only
  EXPECT_EQ(c.options.lease_interval, 25s);         // env over file
  EXPECT_EQ(c.options.workers, 9);                  // flag over env and file
  EXPECT_EQ(c.options.contention_limit, 7);         // snake_case key
  EXPECT_THAT(c.options.namespaces, ElementsAre("x", "y"));
  EXPECT_EQ(c.options.resync_interval, 30min);      // default
}

TEST(ConfigTest, OpenShiftEnvAliasesLoseToCanonicalNames) {
  EnvMap env = {{"ROUTER_SERVICE_NAME", "public"},
                {"ROUTER_CANONICAL_HOSTNAME", "router.apps.example.com"},
                {"ROUTER_SUBDOMAIN", "${name}-${namespace}.apps.example.com"},
                {"ROUTE_LABELS", "shard=a"},
                {"NAMESPACE_LABELS", "env in (prod,stage)"},
                {"ROUTER_ALLOW_WILDCARD_ROUTES", "true"}};
  ParsedConfig c = Parse({}, env);
  ASSERT_THAT(c.errors, IsEmpty()) << Joined(c.errors);
  EXPECT_EQ(c.options.router_name, "public");
  EXPECT_EQ(c.options.router_canonical_hostname, "router.apps.example.com");
  EXPECT_EQ(c.options.hostname_template, "${name}-${namespace}.apps.example.com");
  EXPECT_EQ(c.options.route_labels, "shard=a");
  EXPECT_EQ(c.options.namespace_labels, "env in (prod,stage)");
  EXPECT_TRUE(c.options.allow_wildcard_routes);
  env["ROUTESTATUS_ROUTER_NAME"] = "canonical";
  EXPECT_EQ(Parse({}, env).options.router_name, "canonical");
  EXPECT_EQ(Parse({"--router-name=flag"}, env).options.router_name, "flag");
}

TEST(ConfigTest, EmptyEnvironmentVariablesAreUnset) {
  ParsedConfig c = Parse({}, {{"ROUTESTATUS_WORKERS", ""}, {"ROUTER_SERVICE_NAME", ""},
                              {"ROUTESTATUS_LEASE_INTERVAL", ""}});
  ASSERT_THAT(c.errors, IsEmpty()) << Joined(c.errors);
  EXPECT_EQ(c.options.router_name, "default");
  EXPECT_EQ(c.options.lease_interval, 15s);
  // An empty canonical name does not hide a set alias.
  EXPECT_EQ(Parse({}, {{"ROUTESTATUS_ROUTER_NAME", ""}, {"ROUTER_SERVICE_NAME", "alias"}})
                .options.router_name,
            "alias");
}

TEST(ConfigTest, CollectsEveryErrorWithItsSource) {
  EnvMap env = {{"ROUTESTATUS_CONTENTION_INTERVAL", "3minutes"}};
  ParsedConfig c = Parse({"--lease-interval=15x", "--workers=0", "--qps=-1", "--router-name=Bad_Name",
                          "--metrics-address=1936", "--bogus", "--namespaces=ok,Not_OK",
                          "--watch-timeout-min=10m", "--watch-timeout-max=1m", "--log-level=debug"},
                         env);
  std::string all = Joined(c.errors);
  EXPECT_EQ(c.errors.size(), 10u) << all;
  EXPECT_THAT(all, HasSubstr("--lease-interval: invalid value \"15x\" (from flag --lease-interval)"));
  EXPECT_THAT(all, HasSubstr("from env ROUTESTATUS_CONTENTION_INTERVAL"));
  EXPECT_THAT(all, HasSubstr("--workers must be between 1 and 256 (got 0)"));
  EXPECT_THAT(all, HasSubstr("--qps"));
  EXPECT_THAT(all, HasSubstr("--router-name: \"Bad_Name\""));
  EXPECT_THAT(all, HasSubstr("--metrics-address"));
  EXPECT_THAT(all, HasSubstr("unknown flag \"--bogus\""));
  EXPECT_THAT(all, HasSubstr("\"Not_OK\" is not a namespace name"));
  EXPECT_THAT(all, HasSubstr("--watch-timeout-max"));
  EXPECT_THAT(all, HasSubstr("--log-level"));
}

TEST(ConfigTest, ValidationOfHostSettings) {
  EXPECT_THAT(Parse({"--hostname-template=${name}.apps.example.com"}).errors, IsEmpty());
  // openshift-router accepts any template: $name without braces, quotes
  // around it, even an unknown key (its routes get no host; a start-up
  // warning says so, see controller::AdmissionOptionWarnings).
  EXPECT_THAT(Parse({"--hostname-template=$name-$namespace.apps.example.com"}).errors, IsEmpty());
  EXPECT_THAT(Parse({"--hostname-template=\"${name}.apps.example.com\""}).errors, IsEmpty());
  EXPECT_THAT(Parse({"--hostname-template=${nam}.apps.example.com"}).errors, IsEmpty());
  EXPECT_EQ(Parse({"--override-hostname"}).errors.size(), 1u);
  EXPECT_EQ(Parse({"--override-hostname", "--router-domain=a.com"}).errors.size(), 1u);
  EXPECT_THAT(Parse({"--override-hostname", "--hostname-template=${name}.b.com"}).errors, IsEmpty());
  EXPECT_THAT(Parse({"--router-domain=a.com", "--hostname-template=${name}.b.com"}).errors, IsEmpty());
  EXPECT_THAT(Parse({"--allowed-domains=example.com,*.apps.io", "--denied-domains=.bad.io"}).errors,
              IsEmpty());
  EXPECT_EQ(Parse({"--denied-domains=bad domain"}).errors.size(), 1u);
  // openshift-router starts with an upper-case entry (it matches no valid
  // host; controller::AdmissionOptionWarnings says so), so we start too.
  EXPECT_THAT(Parse({"--denied-domains=X.EXAMPLE.COM", "--allowed-domains=*.Apps.example.com"}).errors,
              IsEmpty());
  EXPECT_THAT(Parse({}, {{"ROUTER_ALLOWED_DOMAINS", " X.Example.com, y.example.com"}}).errors,
              IsEmpty());
  EXPECT_EQ(Parse({"--allowed-domains=Bad_Domain.com"}).errors.size(), 1u);
  // openshift-router refuses a canonical hostname that is an IP address.
  EXPECT_THAT(Joined(Parse({}, {{"ROUTER_CANONICAL_HOSTNAME", "10.0.0.5"}}).errors),
              HasSubstr("--router-canonical-hostname: \"10.0.0.5\" is an IP address"));
  EXPECT_THAT(Parse({"--router-canonical-hostname=10.0.0.5.nip.io"}).errors, IsEmpty());
  EXPECT_THAT(Parse({"--router-canonical-hostname=router-default.apps.example.com"}).errors,
              IsEmpty());
  EXPECT_EQ(Parse({"--route-labels=a=b,,c"}).errors.size(), 1u);
  EXPECT_EQ(Parse({"--route-labels=env in (a,b"}).errors.size(), 1u);
  EXPECT_THAT(Parse({"--route-labels=shard=a,!legacy,tier notin (x,y)"}).errors, IsEmpty());
  EXPECT_THAT(Joined(Parse({"--namespace-labels=a b"}).errors),
              HasSubstr("--namespace-labels: \"a b\" is not a label selector: "));
  EXPECT_THAT(Parse({"--metrics-address=[::]:1936"}).errors, IsEmpty());
  EXPECT_THAT(Parse({"--metrics-address=:0"}).errors, IsEmpty());
  EXPECT_EQ(Parse({"--metrics-address=127.0.0.1:70000"}).errors.size(), 1u);
  EXPECT_EQ(Parse({"--watch-timeout-min=500ms"}).errors.size(), 1u);
}

TEST(ConfigTest, FlagNeedingAValueAtTheEnd) {
  ParsedConfig c = Parse({"--router-name"});
  ASSERT_EQ(c.errors.size(), 1u);
  EXPECT_THAT(c.errors[0], HasSubstr("needs a value"));
}

TEST(ConfigTest, ClearRequiresAnExplicitRouterName) {
  ParsedConfig c = Parse({"clear", "--router-name=old-shard"});
  ASSERT_THAT(c.errors, IsEmpty()) << Joined(c.errors);
  EXPECT_EQ(c.command, Command::kClear);
  EXPECT_EQ(c.options.router_name, "old-shard");
  ParsedConfig implicit = Parse({"clear"});
  ASSERT_EQ(implicit.errors.size(), 1u);
  EXPECT_THAT(implicit.errors[0], HasSubstr("clear: --router-name must be given"));
  EXPECT_THAT(Parse({"clear"}, {{"ROUTER_SERVICE_NAME", "x"}}).errors, IsEmpty());
  EXPECT_EQ(Parse({"clear", "extra"}).errors.size(), 2u);  // extra arg + missing name
  EXPECT_EQ(Parse({"frobnicate"}).errors.size(), 1u);
}

TEST(ConfigTest, ExplainTakesARouteAndAnOutput) {
  ParsedConfig c = Parse({"--router-name=internal", "explain", "shop/web", "-o", "json"},
                         {{"ROUTESTATUS_ALLOW_WILDCARD_ROUTES", "true"}});
  ASSERT_THAT(c.errors, IsEmpty()) << Joined(c.errors);
  EXPECT_EQ(c.command, Command::kExplain);
  EXPECT_EQ(c.explain_route, "shop/web");
  EXPECT_EQ(c.output, "json");
  // The router's configuration comes from the same flags, environment and file.
  EXPECT_EQ(c.options.router_name, "internal");
  EXPECT_TRUE(c.options.allow_wildcard_routes);
  ParsedConfig text = Parse({"explain", "--output=text", "shop/web"});
  ASSERT_THAT(text.errors, IsEmpty()) << Joined(text.errors);
  EXPECT_EQ(text.output, "text");
  EXPECT_EQ(Parse({"explain", "shop/web"}).output, "text");

  for (const char* bad : {"shop", "/web", "shop/", "a/b/c"}) {
    ParsedConfig b = Parse({"explain", bad});
    ASSERT_EQ(b.errors.size(), 1u) << bad;
    EXPECT_THAT(b.errors[0], HasSubstr("is not NAMESPACE/ROUTE")) << bad;
  }
  EXPECT_THAT(Joined(Parse({"explain"}).errors), HasSubstr("explain needs a route"));
  EXPECT_THAT(Joined(Parse({"explain", "a/b", "--output=yaml"}).errors),
              HasSubstr("use text or json"));
  EXPECT_THAT(Joined(Parse({"explain", "a/b", "--output"}).errors), HasSubstr("needs a value"));
  EXPECT_THAT(Joined(Parse({"explain", "a/b", "c/d"}).errors),
              HasSubstr("unexpected argument \"c/d\""));
  EXPECT_THAT(Joined(Parse({"--output=json"}).errors), HasSubstr("--output applies only to explain"));
  EXPECT_THAT(Joined(Parse({"clear", "--router-name=x", "-o", "json"}).errors),
              HasSubstr("--output applies only to explain"));
  EXPECT_THAT(HelpText(), HasSubstr("explain NAMESPACE/ROUTE"));
}

TEST(ConfigTest, WriteLeaseFromFlagEnvAndFile) {
  EXPECT_TRUE(Parse({}).options.write_lease);
  EXPECT_FALSE(Parse({"--write-lease=false"}).options.write_lease);
  EXPECT_FALSE(Parse({"--nowrite-lease"}).options.write_lease);
  EXPECT_FALSE(Parse({}, {{"ROUTESTATUS_WRITE_LEASE", "false"}}).options.write_lease);
  EXPECT_FALSE(
      Parse({"--config=/c.yaml"}, {}, {{"/c.yaml", "write-lease: false\n"}}).options.write_lease);
  // Flags win over the environment.
  EXPECT_TRUE(Parse({"--write-lease"}, {{"ROUTESTATUS_WRITE_LEASE", "false"}}).options.write_lease);
  ParsedConfig bad = Parse({}, {{"ROUTESTATUS_WRITE_LEASE", "sometimes"}});
  ASSERT_EQ(bad.errors.size(), 1u);
  EXPECT_THAT(bad.errors[0], HasSubstr("--write-lease: invalid value \"sometimes\""));
  EXPECT_THAT(bad.errors[0], HasSubstr("env ROUTESTATUS_WRITE_LEASE"));
  EXPECT_THAT(RenderOptions(Parse({"--write-lease=false"}).options), HasSubstr("write-lease=false"));
  EXPECT_THAT(HelpText(), HasSubstr("for comparison and small single-replica installs only"));
}

TEST(ConfigTest, LeasePresetOpenshiftSetsWhatWasNotGiven) {
  ParsedConfig d = Parse({});
  EXPECT_EQ(d.options.lease_preset, "default");
  EXPECT_EQ(d.options.lease_takeover, "progress");
  ParsedConfig o = Parse({"--lease-preset=openshift"});
  EXPECT_THAT(o.errors, IsEmpty());
  EXPECT_EQ(o.options.lease_interval, 60s);
  EXPECT_EQ(o.options.lease_election_delay, 0ms);
  EXPECT_EQ(o.options.lease_takeover, "off");
  EXPECT_EQ(o.options.lease_retry_interval, 3s);
  // What was given (flag, environment or file) wins over the preset.
  ParsedConfig g = Parse({"--config=/c.yaml", "--lease-interval=20s"},
                         {{"ROUTESTATUS_LEASE_PRESET", "openshift"},
                          {"ROUTESTATUS_LEASE_TAKEOVER", "progress"}},
                         {{"/c.yaml", "lease-election-delay: 2s\n"}});
  EXPECT_THAT(g.errors, IsEmpty());
  EXPECT_EQ(g.options.lease_preset, "openshift");
  EXPECT_EQ(g.options.lease_interval, 20s);
  EXPECT_EQ(g.options.lease_election_delay, 2s);
  EXPECT_EQ(g.options.lease_takeover, "progress");
  EXPECT_THAT(RenderOptions(o.options), HasSubstr("lease-preset=openshift"));
  EXPECT_THAT(Parse({"--lease-takeover=off"}).errors, IsEmpty());
  ParsedConfig bad = Parse({"--lease-preset=fast", "--lease-takeover=sometimes"});
  ASSERT_EQ(bad.errors.size(), 2u);
  EXPECT_THAT(bad.errors[0], HasSubstr("--lease-preset: \"fast\" is not one of default, openshift"));
  EXPECT_THAT(bad.errors[1],
              HasSubstr("--lease-takeover: \"sometimes\" is not one of progress, off"));
}

TEST(ConfigTest, HelpWinsAndListsEveryOption) {
  EXPECT_EQ(Parse({"--workers=0", "--help"}).command, Command::kHelp);
  EXPECT_THAT(Parse({"-h"}).errors, IsEmpty());
  std::string help = HelpText();
  for (const char* flag :
       {"--kubeconfig", "--router-name", "--router-canonical-hostname", "--router-domain",
        "--hostname-template", "--[no]override-hostname", "--route-labels", "--namespace-labels",
        "--namespaces", "--allowed-domains", "--denied-domains", "--[no]allow-wildcard-routes",
        "--[no]disable-namespace-ownership-check", "--[no]update-status", "--[no]write-lease",
        "ROUTESTATUS_WRITE_LEASE", "--lease-interval",
        "--lease-retry-interval", "--contention-interval", "--contention-limit",
        "--resync-interval", "--workers", "--qps", "--burst", "--metrics-address", "--v=",
        "--config", "ROUTER_SERVICE_NAME", "ROUTESTATUS_LEASE_INTERVAL", "(default: 15s;",
        "(default: 0.0.0.0:1936;", "(default: 3m;", "(default: 30m;"}) {
    EXPECT_THAT(help, HasSubstr(flag));
  }
}

TEST(ConfigTest, ConfigFileErrors) {
  EXPECT_THAT(Joined(Parse({"--config=/missing.yaml"}).errors),
              HasSubstr("config file /missing.yaml: cannot read: No such file"));
  EXPECT_THAT(Joined(Parse({"--config=/a.yaml"}, {}, {{"/a.yaml", "nope: 1\n"}}).errors),
              HasSubstr("unknown key \"nope\""));
  EXPECT_THAT(Joined(Parse({"--config=/a.yaml"}, {}, {{"/a.yaml", "- a\n- b\n"}}).errors),
              HasSubstr("top level must be a mapping"));
  EXPECT_THAT(Joined(Parse({"--config=/a.yaml"}, {}, {{"/a.yaml", "workers: [1, 2]\n"}}).errors),
              HasSubstr("expected a single value"));
  EXPECT_THAT(Joined(Parse({"--config=/a.yaml"}, {}, {{"/a.yaml", "a: [\n"}}).errors),
              HasSubstr("config file /a.yaml"));
  EXPECT_THAT(Parse({"--config=/a.yaml"}, {}, {{"/a.yaml", ""}}).errors, IsEmpty());
}

// The shipped example sets every option to its default: it documents them all
// and cannot drift from the code.
TEST(ConfigTest, ExampleConfigFileListsEveryOptionWithItsDefault) {
  const std::string path = std::string(ROUTESTATUS_SOURCE_DIR) +
                           "/cmd/route-status-controller/example-config.yaml";
  ParsedConfig c = ParseConfig({"--config=" + path}, {}, &ReadWholeFile);
  ASSERT_THAT(c.errors, IsEmpty()) << Joined(c.errors);
  Options expected;
  expected.config_file = path;
  EXPECT_EQ(RenderOptions(c.options), RenderOptions(expected));
  std::string text = *ReadWholeFile(path, nullptr);
  std::string help = HelpText();
  for (size_t p = 0; (p = help.find("\n  --", p)) != std::string::npos; ++p) {
    size_t start = p + 5;
    if (help.compare(start, 4, "[no]") == 0) start += 4;
    std::string name = help.substr(start, help.find_first_of("=\n", start) - start);
    if (name == "config") continue;
    EXPECT_THAT(text, HasSubstr("\n" + name + ":")) << "example-config.yaml lacks " << name;
  }
}

TEST(ConfigTest, RenderRedactsSecrets) {
  Options o;
  o.token = "s3cr3t-token";
  o.server = "https://admin:hunter2@api.example.com:6443";
  o.namespaces = {"a", "b"};
  std::string line = RenderOptions(o);
  EXPECT_EQ(line.find("s3cr3t"), std::string::npos) << line;
  EXPECT_EQ(line.find("hunter2"), std::string::npos) << line;
  EXPECT_THAT(line, HasSubstr("token=<redacted>"));
  EXPECT_THAT(line, HasSubstr("server=https://<redacted>@api.example.com:6443"));
  EXPECT_THAT(line, HasSubstr("router-name=default"));
  EXPECT_THAT(line, HasSubstr("lease-interval=15s"));
  EXPECT_THAT(line, HasSubstr("namespaces=a,b"));
  EXPECT_THAT(line, HasSubstr("kubeconfig=\"\""));
  EXPECT_EQ(line.find('\n'), std::string::npos);
}

namespace hardening {

std::string FileErrors(const std::string& yaml) {
  return Joined(Parse({"--config=/a.yaml"}, {}, {{"/a.yaml", yaml}}).errors);
}

// A nested list used to become "" (every namespace) with exit 0; every value
// a list option cannot hold is an error naming the key and the item.
TEST(ConfigHardeningTest, ListItemsMustBeNonEmptyStrings) {
  EXPECT_THAT(FileErrors("namespaces: [[x]]\n"),
              HasSubstr("key namespaces: item 1 is a list; give a list of names"));
  EXPECT_THAT(FileErrors("namespaces:\n- [x]\n"), HasSubstr("item 1 is a list"));
  EXPECT_THAT(FileErrors("namespaces:\n- a\n- {b: c}\n"), HasSubstr("item 2 is a mapping"));
  EXPECT_THAT(FileErrors("allowed-domains: [a.com, [b.com]]\n"),
              HasSubstr("key allowed-domains: item 2 is a list"));
  EXPECT_THAT(FileErrors("denied-domains: [[]]\n"), HasSubstr("item 1 is a list"));
  EXPECT_THAT(FileErrors("namespaces: [~]\n"), HasSubstr("item 1 is empty"));
  EXPECT_THAT(FileErrors("namespaces: [a, \"\"]\n"), HasSubstr("item 2 is empty"));
  EXPECT_THAT(FileErrors("namespaces: [\"a,b\"]\n"), HasSubstr("item 1 contains ','"));
  // A comma list whose items are all empty is not "every namespace".
  EXPECT_THAT(Joined(Parse({"--namespaces=,"}).errors), HasSubstr("empty item"));
  EXPECT_THAT(Joined(Parse({"--namespaces=a,,b"}).errors), HasSubstr("empty item"));
  // What is meant stays accepted.
  ParsedConfig ok = Parse({"--config=/a.yaml"}, {}, {{"/a.yaml", "namespaces: [a, b]\n"}});
  ASSERT_THAT(ok.errors, IsEmpty()) << Joined(ok.errors);
  EXPECT_THAT(ok.options.namespaces, ElementsAre("a", "b"));
  EXPECT_THAT(Parse({"--config=/a.yaml"}, {}, {{"/a.yaml", "namespaces: []\n"}}).errors, IsEmpty());
  EXPECT_THAT(Parse({"--config=/a.yaml"}, {}, {{"/a.yaml", "namespaces: \"\"\n"}}).errors, IsEmpty());
}

TEST(ConfigHardeningTest, DuplicateKeysAndOtherShapesAreErrors) {
  EXPECT_THAT(FileErrors("workers: 2\nworkers: 3\n"),
              HasSubstr("key workers: given more than once (keep one)"));
  EXPECT_THAT(FileErrors("router-name: a\nrouter_name: b\n"), HasSubstr("given more than once"));
  EXPECT_THAT(FileErrors("? [a]\n: b\n"), HasSubstr("a key is not a string"));
  // Only the first document was read; the rest was dropped silently.
  EXPECT_THAT(FileErrors("workers: 2\n---\nworkers: 3\n"), HasSubstr("more than one YAML document"));
  EXPECT_THAT(FileErrors("router-name: {a: b}\n"), HasSubstr("expected a single value"));
}

// The real reader: a directory, a FIFO and a device are refused at once
// (a directory read as an empty config; a FIFO blocked forever).
TEST(ConfigHardeningTest, ReaderRefusesWhatIsNotARegularFile) {
  char dir_template[] = "/tmp/config_test_XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template), nullptr);
  std::string dir = dir_template;
  std::string fifo = dir + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const auto& [path, what] : std::vector<std::pair<std::string, std::string>>{
           {dir, "is a directory"}, {fifo, "is a FIFO"}, {"/dev/zero", "is a character device"}}) {
    ParsedConfig c = ParseConfig({"--config=" + path}, {}, &ReadWholeFile);
    EXPECT_THAT(Joined(c.errors), HasSubstr("config file " + path + ": cannot read: " + what)) << path;
  }
  std::string big = dir + "/big.yaml";
  {
    std::string text = "namespaces:\n";
    while (text.size() <= (1u << 20)) text += "- a\n";
    FILE* f = std::fopen(big.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
  }
  EXPECT_THAT(Joined(ParseConfig({"--config=" + big}, {}, &ReadWholeFile).errors),
              HasSubstr("larger than the limit of 1 MiB"));
  std::remove(big.c_str());
  std::remove(fifo.c_str());
  ::rmdir(dir.c_str());
}

// --qps=1e-9 never became ready and logged nothing; 1e-10 overflowed the
// token bucket's wait. Rates and durations have ranges that mean something.
TEST(ConfigHardeningTest, RatesAndDurationsHaveSensibleRanges) {
  struct Case {
    std::string flag;
    std::string message;  // "" = accepted
  } cases[] = {
      {"--qps=1e-9", "--qps must be at least 0.1 and at most 100000 (got 1e-09)"},
      {"--qps=1e-300", "(got 1e-300)"},
      {"--qps=0.05", "(got 0.05)"},
      {"--qps=0", "(got 0)"},
      {"--qps=1e6", "(got 1e+06)"},
      {"--qps=0.1", ""},
      {"--qps=100000", ""},
      {"--lease-interval=2h", "--lease-interval must be at most 1h (got 2h)"},
      {"--lease-retry-interval=90m", "--lease-retry-interval must be at most 1h"},
      {"--lease-election-delay=61m", "--lease-election-delay must be at most 1h"},
      {"--contention-interval=25h", "--contention-interval must be at most 24h"},
      {"--resync-interval=169h", "--resync-interval must be at most 168h"},
      {"--watch-timeout-max=25h", "--watch-timeout-max must be at most 24h"},
      {"--watch-timeout-min=25h", "--watch-timeout-min must be at most 24h"},
      {"--shutdown-timeout=2h", "--shutdown-timeout must be at most 1h"},
      {"--lease-interval=1h", ""},
      {"--resync-interval=168h", ""},
  };
  for (const Case& c : cases) {
    ParsedConfig parsed = Parse({c.flag});
    if (c.message.empty()) {
      EXPECT_THAT(parsed.errors, IsEmpty()) << c.flag << ": " << Joined(parsed.errors);
    } else {
      EXPECT_THAT(Joined(parsed.errors), HasSubstr(c.message)) << c.flag;
    }
  }
}

// The lease's timing relations are checked against each other, as
// client-go's leader elector checks its durations: a retry or an election
// delay longer than the interval was accepted and outlasted it.
TEST(ConfigHardeningTest, LeaseDurationsMustFitInTheInterval) {
  ParsedConfig bad = Parse({"--lease-interval=1s", "--lease-retry-interval=1h"});
  EXPECT_THAT(Joined(bad.errors),
              HasSubstr("--lease-retry-interval (1h) must not exceed --lease-interval (1s)"));
  bad = Parse({"--lease-election-delay=20s"});
  EXPECT_THAT(Joined(bad.errors),
              HasSubstr("--lease-election-delay (20s) must not exceed --lease-interval (15s)"));
  EXPECT_THAT(Parse({"--lease-interval=3s", "--lease-retry-interval=3s"}).errors, IsEmpty());
  EXPECT_THAT(Parse({"--lease-rules-off=stretch-caps,bogus"}).errors,
              ElementsAre(HasSubstr("--lease-rules-off")));
  EXPECT_THAT(Parse({"--lease-rules-off=all"}).errors, IsEmpty());
}

// Values echoed in messages: non-UTF-8 bytes went raw to stderr.
TEST(ConfigHardeningTest, EscapeForTerminal) {
  struct Case {
    std::string in, want;
  } cases[] = {
      {"plain", "plain"},
      {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"},
      {"bad\xff", "bad\\xff"},
      {"\x01\n\t\x7f", "\\x01\\x0a\\x09\\x7f"},
      {"\xc3", "\\xc3"},                  // truncated sequence
      {"\xc0\xaf", "\\xc0\\xaf"},        // overlong '/'
      {"\xed\xa0\x80", "\\xed\\xa0\\x80"},  // a surrogate
      {"\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"},  // past U+10FFFF
  };
  for (const Case& c : cases) EXPECT_EQ(EscapeForTerminal(c.in), c.want) << c.want;
}

}  // namespace hardening

}  // namespace
}  // namespace routestatus::cmd
