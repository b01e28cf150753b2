// openshift-router's TLS corpus sets (test/controller/testdata/
// openshift_router_admission) through the whole stack: each set's routes,
// certificates and all, created with the real kubectl (`apply -f`) in
// their corpus order, one replica per set with the set's options as
// flags, and the entry each replica writes compared with the outcome
// openshift-router records. The decision is the corpus test's; what this
// adds is spec.tls as kubectl sends it, the API server stores it and the
// informer decodes it from JSON.

#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "e2e/suite/e2e_test_base.h"
#include "test/testing/admission_corpus.h"

namespace routestatus::e2e {
namespace {

namespace corpus = ::routestatus::testing;
using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

// The first kSets TLS sets of the corpus, in its order (not the ones that
// pass): each has its own router name, replica and namespaces.
constexpr int kSets = 8;

// The controller flags for a set's options. Keys that name no setting of
// openshift-router (the corpus's operator mistakes) are left out.
std::map<std::string, std::string> FlagsOf(const json& options) {
  static const std::map<std::string, std::string> kFlag = {
      {"allowWildcardRoutes", "allow-wildcard-routes"},
      {"disableNamespaceOwnershipCheck", "disable-namespace-ownership-check"},
      {"allowedDomains", "allowed-domains"},
      {"deniedDomains", "denied-domains"},
      {"routerDomain", "router-domain"},
      {"hostnameTemplate", "hostname-template"},
      {"overrideHostname", "override-hostname"},
      {"extendedValidation", "extended-validation"},
  };
  std::map<std::string, std::string> flags;
  for (const auto& [key, value] : options.items()) {
    auto it = kFlag.find(key);
    if (it == kFlag.end()) continue;
    if (value.is_boolean()) {
      flags[it->second] = value.get<bool>() ? "true" : "false";
    } else if (value.is_array()) {
      std::string joined;
      for (const auto& item : value) joined += (joined.empty() ? "" : ",") + item.get<std::string>();
      if (!joined.empty()) flags[it->second] = joined;
    } else {
      flags[it->second] = value.get<std::string>();
    }
  }
  return flags;
}

// Runs `kubectl --kubeconfig <kubeconfig> <args>`; its output in *out.
int Kubectl(const std::string& kubectl, const std::string& kubeconfig, const std::string& args,
            std::string* out) {
  const std::string cmd = "timeout 60 " + kubectl + " --kubeconfig '" + kubeconfig + "' " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return -1;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out->append(buf, n);
  const int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// "admitted" / "rejected/<reason>" of the entry `router` wrote; "" when
// there is none yet.
std::string EntryOutcome(const kubeclient::Route& route, const std::string& router) {
  const auto entry = route.FindIngress(router);
  if (!entry) return "";
  for (const auto& c : entry->conditions) {
    if (c.type == "Admitted") return c.status == "True" ? "admitted" : "rejected/" + c.reason;
  }
  return "";
}

// One corpus set as this test runs it.
struct TlsSet {
  json corpus;
  std::string router;                          // its router name
  std::map<std::string, std::string> ns;       // corpus namespace -> ours
  std::map<std::string, std::string> want;     // our "ns/name" -> outcome
  std::vector<std::string> keys;               // our "ns/name", oldest first
};

class AdmissionTlsTest : public E2eTest {};

TEST_F(AdmissionTlsTest, TlsCorpusSetsThroughKubectlDecideAsOpenshiftRouter) {
  std::string version;
  if (Kubectl(env().kubectl, cluster().kubeconfig(), "version --client", &version) != 0) {
    GTEST_SKIP() << "kubectl (" << env().kubectl << ") does not run: " << version;
  }
  std::vector<TlsSet> sets;
  for (const json& c : corpus::ReadAdmissionCorpus()) {
    if (static_cast<int>(sets.size()) == kSets) break;
    if (c.at("id").get<std::string>().rfind("tls-", 0) != 0) continue;
    TlsSet s;
    s.corpus = c;
    s.router = "e2e-tls-" + std::to_string(sets.size());
    for (const auto& r : c.at("routes")) {
      const std::string corpus_ns = r.at("namespace").get<std::string>();
      if (s.ns.count(corpus_ns) == 0) s.ns[corpus_ns] = Namespace(corpus_ns);
      const std::string key = s.ns[corpus_ns] + "/" + r.at("name").get<std::string>();
      s.keys.push_back(key);
      s.want[key] = corpus::CorpusOutcome(
          c.at("expected").at(corpus_ns + "/" + r.at("name").get<std::string>()));
    }
    sets.push_back(std::move(s));
  }
  ASSERT_EQ(static_cast<int>(sets.size()), kSets) << "the corpus has too few TLS sets";

  // Round i creates the i-th route of every set, one kubectl apply of a
  // file of JSON documents (YAML's "---" between them); the
  // next round waits for the next second, so each set's routes are created
  // in its order, one second apart at least, as in the corpus (the API
  // server stamps creationTimestamp in whole seconds).
  size_t rounds = 0;
  for (const TlsSet& s : sets) rounds = std::max(rounds, s.corpus.at("routes").size());
  const std::string file = cluster().temp_dir() + "/tls-round.yaml";
  for (size_t i = 0; i < rounds; ++i) {
    std::string documents;
    for (const TlsSet& s : sets) {
      const json& routes = s.corpus.at("routes");
      if (i >= routes.size()) continue;
      const json& r = routes[i];
      documents += "---\n" +
                   corpus::CorpusRouteObject(r, s.ns.at(r.at("namespace").get<std::string>())).dump() +
                   "\n";
    }
    std::ofstream(file, std::ios::trunc) << documents;
    std::string out;
    ASSERT_EQ(Kubectl(env().kubectl, cluster().kubeconfig(), "apply -f '" + file + "'", &out), 0)
        << "round " << i << ": " << out;
    const auto second = [&] {
      return std::chrono::duration_cast<seconds>(cluster().clock().WallNow().time_since_epoch());
    };
    const seconds applied = second();
    while (second() <= applied) std::this_thread::sleep_for(milliseconds(20));
  }

  // Why checked: the corpus's outcomes depend on the age order.
  auto listed = cluster().ListRoutes();
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  std::map<std::string, int64_t> created;
  for (const auto& r : *listed) created[r.Key()] = r.metadata.creation_unix;
  for (const TlsSet& s : sets) {
    for (size_t i = 1; i < s.keys.size(); ++i) {
      ASSERT_LT(created[s.keys[i - 1]], created[s.keys[i]])
          << s.corpus.at("id") << ": " << s.keys[i] << " is not younger than " << s.keys[i - 1];
    }
  }

  const auto start = std::chrono::steady_clock::now();
  for (const TlsSet& s : sets) {
    std::map<std::string, std::string> flags = FlagsOf(s.corpus.at("options"));
    std::string namespaces;
    for (const auto& [corpus_ns, ours] : s.ns) namespaces += (namespaces.empty() ? "" : ",") + ours;
    flags["namespaces"] = namespaces;
    Replicas(s.router, 1, TestReplicaOptions(s.router, flags)).StartAll();
  }
  std::map<std::string, std::string> got;  // "ns/name" -> outcome its set's replica wrote
  std::map<std::string, const TlsSet*> set_of;
  for (const TlsSet& s : sets) {
    for (const std::string& key : s.keys) set_of[key] = &s;
  }
  const bool done = WaitFor(
      [&] {
        auto routes = cluster().ListRoutes();
        if (!routes.ok()) return false;
        got.clear();
        for (const auto& r : *routes) {
          auto it = set_of.find(r.Key());
          if (it != set_of.end()) got[r.Key()] = EntryOutcome(r, it->second->router);
        }
        for (const auto& [key, s] : set_of) {
          if (got[key] != s->want.at(key)) return false;
        }
        return true;
      },
      seconds(90), milliseconds(250));
  Figure("sets", kSets);
  Figure("routes", static_cast<double>(set_of.size()));
  Figure("seconds_to_agree",
         std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  int agree = 0;
  for (const auto& [key, s] : set_of) {
    const std::string& want = s->want.at(key);
    agree += got[key] == want ? 1 : 0;
    EXPECT_EQ(got[key], want) << s->corpus.at("id") << " " << key << " (router " << s->router
                              << "; \"\" = no entry)";
  }
  Figure("routes_agreeing", agree);
  EXPECT_TRUE(done);
}

}  // namespace
}  // namespace routestatus::e2e
