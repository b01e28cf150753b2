// Structure-aware fuzzing of the two YAML inputs: the --config file and the
// kubeconfig. Each seed builds a document from valid entries (whose meaning
// is known) and, for some seeds, one entry that cannot be represented as the
// option expects (nested lists, mappings where a value belongs, duplicate
// keys, wrong types, huge values, several documents). The property: an
// invalid document is an error with a one-line message; a valid one parses
// to exactly the values it was given (the --config file means what the same
// flags mean). Never a crash, never a silently different meaning.
// Seeds 0..ROUTESTATUS_FUZZ_SEEDS-1 (default 1000 each), all of them.
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cmd/route-status-controller/config.h"
#include "kubeclient/rest/kube_config.h"

namespace routestatus::cmd {
namespace {

using Rng = std::mt19937_64;

int Seeds() {
  const char* v = std::getenv("ROUTESTATUS_FUZZ_SEEDS");
  return v != nullptr && std::atoi(v) > 0 ? std::atoi(v) : 1000;
}

size_t Pick(Rng& rng, size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); }
template <typename T>
const T& PickOf(Rng& rng, const std::vector<T>& v) { return v[Pick(rng, v.size())]; }

// A YAML scalar for `s`: plain when that reads back as the same string,
// else double-quoted.
std::string Scalar(const std::string& s, Rng& rng) {
  bool plain = !s.empty() && s != "~" && s != "null" && s != "Null" && s != "NULL";
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_' || c == '/')) {
      plain = false;
    }
  }
  if (plain && s.front() == '-') plain = false;
  if (plain && Pick(rng, 4) != 0) return s;
  std::string out = "\"";
  for (char c : s) out += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
  return out + "\"";
}

enum class Kind { kString, kBool, kInt, kDouble, kDuration, kList };

// One option with values that are valid whatever else is set.
struct OptionPool {
  std::string name;
  Kind kind;
  std::vector<std::string> valid;  // for lists: items
};

const std::vector<OptionPool>& Pools() {
  static const std::vector<OptionPool> pools = {
      {"kubeconfig", Kind::kString, {"/k/config", "kc.yaml", ""}},
      {"context", Kind::kString, {"ctx-a", "prod", "weird name: x, [y]"}},
      {"server", Kind::kString, {"https://api.example.com:6443", "http://127.0.0.1:8080"}},
      {"token", Kind::kString, {"abc.def", "t0k3n#x", "caf\xc3\xa9"}},
      {"router-name", Kind::kString, {"default", "internal", "shard-a.b"}},
      {"router-canonical-hostname", Kind::kString, {"router.apps.example.com", ""}},
      {"router-domain", Kind::kString, {"apps.example.com"}},
      {"hostname-template", Kind::kString, {"${name}-${namespace}.apps.example.com"}},
      {"route-labels", Kind::kString, {"", "app=web", "tier in (a,b)", "!legacy"}},
      {"namespace-labels", Kind::kString, {"team=x", "env!=prod"}},
      {"namespaces", Kind::kList, {"a", "team-b", "ns1"}},
      {"allowed-domains", Kind::kList, {"example.com", "*.apps.example.com"}},
      {"denied-domains", Kind::kList, {"bad.example.com", ".corp"}},
      {"allow-wildcard-routes", Kind::kBool, {"true", "false", "yes", "no", "1", "0"}},
      {"disable-namespace-ownership-check", Kind::kBool, {"true", "False", "y"}},
      {"update-status", Kind::kBool, {"true", "false"}},
      {"write-lease", Kind::kBool, {"true", "false", "t", "f"}},
      {"lease-interval", Kind::kDuration, {"15s", "1m", "5s", "1h"}},
      {"lease-retry-interval", Kind::kDuration, {"3s", "1.5s"}},
      {"lease-election-delay", Kind::kDuration, {"0", "1s", "0s"}},
      {"lease-preset", Kind::kString, {"default", "openshift"}},
      {"lease-takeover", Kind::kString, {"progress", "off"}},
      {"contention-interval", Kind::kDuration, {"3m", "1h30m"}},
      {"contention-limit", Kind::kInt, {"0", "5", "1000000"}},
      {"resync-interval", Kind::kDuration, {"0", "30m", "168h"}},
      {"watch-timeout-min", Kind::kDuration, {"1s", "5m"}},
      {"watch-timeout-max", Kind::kDuration, {"10m", "1h"}},
      {"list-page-size", Kind::kInt, {"1", "500", "100000"}},
      {"workers", Kind::kInt, {"1", "4", "256"}},
      {"qps", Kind::kDouble, {"0.1", "50", "12.5", "1e3"}},
      {"burst", Kind::kInt, {"1", "100"}},
      {"metrics-address", Kind::kString, {"0.0.0.0:1936", "127.0.0.1:0", "[::1]:9000", ":1936"}},
      {"shutdown-timeout", Kind::kDuration, {"5s", "1h"}},
      {"v", Kind::kInt, {"0", "4", "10"}},
      {"log-level", Kind::kString, {"info", "warning", "error"}},
  };
  return pools;
}

// A value of `pool`'s kind that is not valid for it, with what it is.
std::string InvalidScalar(const OptionPool& pool, Rng& rng) {
  switch (pool.kind) {
    case Kind::kBool: return PickOf(rng, std::vector<std::string>{"maybe", "2", "on please", "[]x"});
    case Kind::kInt: return PickOf(rng, std::vector<std::string>{"abc", "1.5", "99999999999", "0x10", "-0x1"});
    case Kind::kDouble: return PickOf(rng, std::vector<std::string>{"fast", "nan", "inf", "1e-10", "0", "1e400"});
    case Kind::kDuration: return PickOf(rng, std::vector<std::string>{"5", "fast", "-1s", "1y", "1e3s", "200h", "99999999999999h"});
    default: break;
  }
  if (pool.name == "router-name") return "Bad_Name";
  if (pool.name == "lease-takeover") return "sometimes";
  if (pool.name == "metrics-address") return "1936";
  if (pool.name == "log-level") return "debug";
  return "";  // free-form strings have no invalid scalar
}

struct Doc {
  std::string text;
  std::vector<std::string> flags;  // the same valid values as flags
  bool invalid = false;
  std::string what;  // the invalid construction, for failure messages
};

// A list value in one of YAML's spellings (and its flag form).
std::string ListYaml(const std::vector<std::string>& items, Rng& rng, bool block, std::string* flag) {
  *flag = "";
  for (const auto& i : items) *flag += (flag->empty() ? "" : ",") + i;
  switch (Pick(rng, block ? 3 : 2)) {
    case 0: {
      std::string out = "[";
      for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + Scalar(items[i], rng);
      return out + "]";
    }
    case 1: return Scalar(*flag, rng);
    default: {
      if (items.empty()) return "[]";
      std::string out;
      for (const auto& i : items) out += "\n  - " + Scalar(i, rng);
      return out;
    }
  }
}

Doc MakeConfig(uint64_t seed) {
  Rng rng(seed);
  Doc doc;
  bool flow = Pick(rng, 4) == 0;
  std::vector<OptionPool> chosen;
  std::vector<size_t> order(Pools().size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), rng);
  size_t count = 1 + Pick(rng, 8);
  std::vector<std::string> entries;
  for (size_t i = 0; i < count; ++i) {
    const OptionPool& p = Pools()[order[i]];
    std::string key = Pick(rng, 5) == 0 ? [&] {
      std::string k = p.name;
      for (char& c : k) c = c == '-' ? '_' : c;
      return k;
    }() : p.name;
    std::string value, flag_value;
    if (p.kind == Kind::kList) {
      std::vector<std::string> items;
      size_t n = Pick(rng, 4);
      if (Pick(rng, 50) == 0) n = 2000;  // a long list, still valid
      for (size_t k = 0; k < n; ++k) items.push_back(PickOf(rng, p.valid));
      value = ListYaml(items, rng, !flow, &flag_value);
    } else {
      flag_value = PickOf(rng, p.valid);
      value = Scalar(flag_value, rng);
    }
    entries.push_back(Scalar(key, rng) + ": " + value);
    doc.flags.push_back("--" + p.name + "=" + flag_value);
  }
  // One invalid construction in two seeds out of three.
  if (Pick(rng, 3) != 0) {
    const OptionPool& p = Pools()[order[Pick(rng, count)]];
    std::string bad;
    switch (Pick(rng, 11)) {
      case 0:
        if (p.kind == Kind::kList) {
          bad = p.name + ": " + PickOf(rng, std::vector<std::string>{"[[x]]", "[a, [b]]", "[[]]", "[a, {b: c}]"});
          doc.what = "nested list";
        } else {
          bad = p.name + ": [1, 2]";
          doc.what = "list for a single value";
        }
        break;
      case 1: bad = p.name + ": {a: b}"; doc.what = "mapping for a value"; break;
      case 2:
        bad = p.name + ": " + Scalar(PickOf(rng, p.valid.empty() ? std::vector<std::string>{"x"} : p.valid), rng);
        doc.what = "duplicate key";
        break;
      case 3: bad = "no-such-option: 1"; doc.what = "unknown key"; break;
      case 4:
        if (InvalidScalar(p, rng).empty() && p.kind != Kind::kList) {
          bad = "workers: \"0\"";
        } else if (p.kind == Kind::kList) {
          bad = p.name + ": " + PickOf(rng, std::vector<std::string>{"[a, ~]", "[\"\"]", "\"a,,b\"", "\",\"", "[\"a,b\"]"});
        } else {
          bad = p.name + ": " + Scalar(InvalidScalar(p, rng), rng);
        }
        doc.what = "wrong value";
        break;
      case 5:
        bad = Pick(rng, 5) == 0 ? "router-name: \"" + std::string((1 << 20) + 100, 'a') + "\""
                                : "router-canonical-hostname: " + std::string(100 << 10, 'a');
        doc.what = "huge value";
        break;
      case 6: doc.text = "---\n"; bad = "---\nworkers: 3"; doc.what = "second document"; break;
      case 7: bad = "? [a]\n: b"; doc.what = "non-scalar key"; break;
      case 8: bad = "router-name: &x [a]\nnamespaces: *x\nworkers: *x"; doc.what = "alias to a list"; break;
      case 9: bad = "qps: !!binary aGVsbG8="; doc.what = "binary scalar"; break;
      default: bad = p.name + ":\n  nested: {deep: [1, [2, [3]]]}"; doc.what = "nested mapping"; break;
    }
    // Why only in block style: a block construction cannot sit in a flow map.
    if (!flow || bad.find('\n') == std::string::npos) {
      entries.insert(entries.begin() + static_cast<long>(Pick(rng, entries.size() + 1)), bad);
      doc.invalid = true;
    }
  }
  if (flow) {
    doc.text += "{";
    for (size_t i = 0; i < entries.size(); ++i) doc.text += (i ? ", " : "") + entries[i];
    doc.text += "}\n";
  } else {
    for (const auto& e : entries) doc.text += e + "\n";
  }
  return doc;
}

std::string WriteTemp(const std::string& text) {
  char path[] = "/tmp/config_fuzz_XXXXXX";
  int fd = ::mkstemp(path);
  EXPECT_GE(fd, 0);
  size_t off = 0;
  while (off < text.size()) {
    ssize_t n = ::write(fd, text.data() + off, text.size() - off);
    if (n <= 0) break;
    off += static_cast<size_t>(n);
  }
  ::close(fd);
  return path;
}

std::string Joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += s.substr(0, 300) + "\n";
  return out;
}

TEST(ConfigFuzzTest, InvalidIsAnErrorValidMeansWhatItSays) {
  const int seeds = Seeds();
  int invalid = 0;
  auto start = std::chrono::steady_clock::now();
  for (int seed = 0; seed < seeds; ++seed) {
    Doc doc = MakeConfig(static_cast<uint64_t>(seed));
    std::string path = WriteTemp(doc.text);
    auto t0 = std::chrono::steady_clock::now();
    ParsedConfig file = ParseConfig({"--config=" + path}, {}, &ReadWholeFile);
    auto took = std::chrono::steady_clock::now() - t0;
    std::remove(path.c_str());
    std::string shown = doc.text.substr(0, 400);
    EXPECT_LT(took, std::chrono::seconds(2)) << "seed " << seed << "\n" << shown;
    for (const auto& e : file.errors) {
      EXPECT_FALSE(e.empty()) << "seed " << seed;
      EXPECT_EQ(e.find('\n'), std::string::npos) << "seed " << seed << ": " << e.substr(0, 300);
    }
    if (doc.invalid) {
      ++invalid;
      EXPECT_FALSE(file.errors.empty()) << "seed " << seed << ": " << doc.what << " accepted\n" << shown;
      continue;
    }
    ASSERT_TRUE(file.errors.empty()) << "seed " << seed << ": valid document refused\n"
                                     << shown << "\n" << Joined(file.errors);
    // The file means what the same values given as flags mean.
    ParsedConfig flags = ParseConfig(doc.flags, {}, nullptr);
    ASSERT_TRUE(flags.errors.empty()) << "seed " << seed << "\n" << Joined(flags.errors);
    flags.options.config_file = path;
    EXPECT_EQ(RenderOptions(file.options), RenderOptions(flags.options)) << "seed " << seed << "\n" << shown;
    EXPECT_EQ(file.options.token, flags.options.token) << "seed " << seed;
    EXPECT_EQ(file.options.namespaces, flags.options.namespaces) << "seed " << seed;
    if (::testing::Test::HasFailure()) break;
  }
  auto took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
  std::printf("[ figures ] %d config documents (%d invalid) in %ld ms\n", seeds, invalid,
              static_cast<long>(took.count()));
  EXPECT_GT(invalid, seeds / 3);
}

// --- kubeconfig ---

struct KubeDoc {
  std::string text;
  bool invalid = false;
  std::string what;
  std::string server, token, ns;
  bool insecure = false;
};

KubeDoc MakeKubeconfig(uint64_t seed) {
  Rng rng(seed);
  KubeDoc d;
  d.server = PickOf(rng, std::vector<std::string>{"https://127.0.0.1:6443", "http://api:80", "https://[::1]:443"});
  d.token = PickOf(rng, std::vector<std::string>{"abc", "t.o.k", "x#y: z"});
  d.ns = PickOf(rng, std::vector<std::string>{"", "team", "router"});
  d.insecure = Pick(rng, 2) == 0;
  // Fields of the used cluster, user and context; one may be replaced.
  std::vector<std::pair<std::string, std::string>> cluster = {
      {"server", Scalar(d.server, rng)}, {"insecure-skip-tls-verify", d.insecure ? "true" : "false"}};
  std::vector<std::pair<std::string, std::string>> user = {{"token", Scalar(d.token, rng)}};
  std::vector<std::pair<std::string, std::string>> context = {{"cluster", "c1"}, {"user", "u1"}};
  if (!d.ns.empty()) context.push_back({"namespace", Scalar(d.ns, rng)});
  std::string top_extra, tail;
  if (Pick(rng, 3) != 0) {
    d.invalid = true;
    const std::vector<std::string> shapes = {"[a]", "[[a]]", "{a: b}", "{}", "[]"};
    switch (Pick(rng, 9)) {
      case 0: cluster[0].second = PickOf(rng, shapes); d.what = "server not a string"; break;
      case 1: user[0].second = PickOf(rng, shapes); d.what = "token not a string"; break;
      case 2: cluster[1].second = PickOf(rng, std::vector<std::string>{"maybe", "[true]", "{a: b}"}); d.what = "bad bool"; break;
      case 3: user.push_back({"token", "other"}); d.what = "duplicate token"; break;
      case 4: cluster.push_back({"server", "https://other:1"}); d.what = "duplicate server"; break;
      case 5: top_extra = "current-context: other\n"; d.what = "duplicate current-context"; break;
      case 6: tail = "---\nkind: Config\n"; d.what = "second document"; break;
      case 7:
        // Why one in five: writing 4 MiB files dominates the test's time.
        if (Pick(rng, 5) == 0) {
          user[0].second = "\"" + std::string((4 << 20) + 10, 't') + "\"";
          d.what = "huge token";
        } else {
          user[0].second = "\"" + std::string(100 << 10, 't') + "\"\n  token: t";
          d.what = "large token given twice";
        }
        break;
      default: cluster[0].second = Scalar(PickOf(rng, std::vector<std::string>{"ftp://x", "api.example.com", ""}), rng);
        d.what = "server not http(s)"; break;
    }
  }
  auto map = [&](const std::vector<std::pair<std::string, std::string>>& kv) {
    std::string out = "{";
    for (size_t i = 0; i < kv.size(); ++i) out += (i ? ", " : "") + kv[i].first + ": " + kv[i].second;
    return out + "}";
  };
  d.text = "apiVersion: v1\nkind: Config\ncurrent-context: ctx\n" + top_extra +
           "contexts:\n- name: other\n  context: {cluster: c2, user: u2}\n- name: ctx\n  context: " +
           map(context) + "\nclusters:\n- name: c2\n  cluster: {server: \"http://other:80\"}\n- name: c1\n"
           "  cluster: " + map(cluster) + "\nusers:\n- name: u2\n  user: {token: t2}\n- name: u1\n  user: " +
           map(user) + "\n" + tail;
  return d;
}

TEST(KubeconfigFuzzTest, InvalidIsAnErrorValidMeansWhatItSays) {
  const int seeds = Seeds();
  int invalid = 0;
  for (int seed = 0; seed < seeds; ++seed) {
    KubeDoc d = MakeKubeconfig(static_cast<uint64_t>(seed) + 1000000);
    std::string path = WriteTemp(d.text);
    auto t0 = std::chrono::steady_clock::now();
    auto cfg = kubeclient::rest::LoadKubeconfigFile(path);
    auto took = std::chrono::steady_clock::now() - t0;
    std::remove(path.c_str());
    std::string shown = d.text.substr(0, 500);
    EXPECT_LT(took, std::chrono::seconds(2)) << "seed " << seed;
    if (d.invalid) {
      ++invalid;
      ASSERT_FALSE(cfg.ok()) << "seed " << seed << ": " << d.what << " accepted\n" << shown;
      EXPECT_EQ(cfg.status().code(), StatusCode::kInvalid);
      EXPECT_NE(cfg.status().message().find("kubeconfig " + path), std::string::npos)
          << cfg.status().message().substr(0, 300);
      EXPECT_EQ(cfg.status().message().find('\n'), std::string::npos) << "seed " << seed;
      continue;
    }
    ASSERT_TRUE(cfg.ok()) << "seed " << seed << ": " << cfg.status().ToString() << "\n" << shown;
    EXPECT_EQ(cfg->server, d.server) << "seed " << seed;
    EXPECT_EQ(cfg->token, d.token) << "seed " << seed;
    EXPECT_EQ(cfg->namespace_name, d.ns) << "seed " << seed;
    EXPECT_EQ(cfg->insecure_skip_tls_verify, d.insecure) << "seed " << seed;
  }
  EXPECT_GT(invalid, seeds / 3);
}

}  // namespace
}  // namespace routestatus::cmd
