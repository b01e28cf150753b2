// Fuzz-style robustness test: random and mutated bytes fed to every decoder
// of untrusted input. Passing means: no crash, no exception, errors are
// values. Seeded, so a failure reproduces.
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kubeclient/kube_client.h"
#include "kubeclient/rest/kube_config.h"
#include "kubeclient/rest/line_splitter.h"
#include "kubeclient/route.h"

namespace routestatus::kubeclient::rest {
namespace {

const std::vector<std::string>& Corpus() {
  static const std::vector<std::string> kCorpus = {
      R"({"type":"MODIFIED","object":{"apiVersion":"route.openshift.io/v1","kind":"Route",)"
      R"("metadata":{"name":"r","namespace":"n","uid":"u","resourceVersion":"5","generation":2,)"
      R"("labels":{"a":"b"},"creationTimestamp":"2026-11-29T14:00:00Z"},)"
      R"("spec":{"host":"h.example.com","path":"/p","to":{"kind":"Service","name":"s"},)"
      R"("tls":{"termination":"edge"}},"status":{"ingress":[{"routerName":"default",)"
      R"("host":"h","conditions":[{"type":"Admitted","status":"True",)"
      R"("lastTransitionTime":"2026-11-29T14:00:00Z"}]}]}}})",
      R"({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure",)"
      R"x("message":"too old resource version: 1 (5)","reason":"Expired","code":410}})x",
      R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"12"}}})",
      R"({"kind":"Status","status":"Failure","reason":"TooManyRequests","code":429,)"
      R"("details":{"retryAfterSeconds":2}})",
      "<html><body>502 Bad Gateway</body></html>",
      // A bare route and a list page (RouteFromText, RawListPageFromText).
      R"({"kind":"Route","metadata":{"name":"r","namespace":"n","uid":"u","resourceVersion":"5",)"
      R"("generation":2,"labels":{"a":"b","c":"d"},"creationTimestamp":"2026-11-29T14:00:00Z"},)"
      R"("spec":{"host":"h\u00e9.example.com","path":"/p","wildcardPolicy":"None",)"
      R"("to":{"kind":"Service","name":"s"},"tls":{"termination":"edge"}},)"
      R"("status":{"ingress":[{"routerName":"default","host":"h","wildcardPolicy":"None",)"
      R"("routerCanonicalHostname":"c","conditions":[{"type":"Admitted","status":"False",)"
      R"("reason":"R","message":"m \"q\" \ud83d\ude00","lastTransitionTime":"2026-11-29T14:00:00Z"}]},)"
      R"("x",{"routerName":"other","conditions":[1,{"type":"T"}]}]}})",
      R"({"kind":"RouteList","metadata":{"resourceVersion":"9","continue":"c1"},"items":[)"
      R"({"metadata":{"name":"a","namespace":"n","resourceVersion":"1"}},)"
      R"({"metadata":{"name":"b","namespace":"n","resourceVersion":"2"},"spec":{"host":"x"}}]})",
      // Fields of unexpected types (json::value() would throw on these).
      R"({"kind":5,"reason":{},"type":"ADDED","object":{"metadata":{"name":1,"labels":[]},)"
      R"("status":{"ingress":[{"routerName":2,"conditions":{}}]}}})",
      "current-context: c\ncontexts:\n- name: c\n  context: {cluster: k, user: u}\n"
      "clusters:\n- name: k\n  cluster:\n    server: https://1.2.3.4\n"
      "    certificate-authority-data: aGVsbG8=\nusers:\n- name: u\n  user: {token: t}\n",
  };
  return kCorpus;
}

std::string Mutate(std::string s, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> op(0, 5);
  int rounds = 1 + static_cast<int>(rng() % 4);
  for (int r = 0; r < rounds; ++r) {
    size_t pos = s.empty() ? 0 : rng() % (s.size() + 1);
    switch (op(rng)) {
      case 0:  // flip a byte
        if (!s.empty()) s[pos % s.size()] = static_cast<char>(rng());
        break;
      case 1:  // insert a random byte
        s.insert(s.begin() + pos, static_cast<char>(rng()));
        break;
      case 2:  // delete a range
        if (!s.empty()) s.erase(pos % s.size(), 1 + rng() % 16);
        break;
      case 3:  // truncate
        s.resize(pos);
        break;
      case 4:  // duplicate a slice
        if (!s.empty()) s.insert(pos, s.substr(rng() % s.size(), rng() % 32));
        break;
      case 5:  // insert a structural character
        s.insert(s.begin() + pos, "{}[]\":,\n\\ -"[rng() % 12]);
        break;
    }
  }
  return s;
}

std::string RandomBytes(std::mt19937_64& rng) {
  std::string s(rng() % 256, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

// RouteFromText (one pass, no tree) must agree with RouteFromJson on a
// parsed tree: same success, same typed fields, and raw_json is the input
// text itself.
// Returns whether the input decoded.
bool ExpectSameAsTree(const std::string& input) {
  auto fast = RouteFromText(input);
  nlohmann::json tree = nlohmann::json::parse(input, nullptr, /*allow_exceptions=*/false);
  StatusOr<Route> slow = tree.is_discarded()
                             ? StatusOr<Route>(Status(StatusCode::kInvalid, "not JSON"))
                             : RouteFromJson(tree);
  EXPECT_EQ(fast.ok(), slow.ok()) << input << "\nfast: " << fast.status().ToString()
                                  << "\nslow: " << slow.status().ToString();
  if (!fast.ok() || !slow.ok()) {
    EXPECT_EQ(fast.status().code(), fast.ok() ? StatusCode::kOk : StatusCode::kInvalid);
    return false;
  }
  const Route& a = fast.value();
  const Route& b = slow.value();
  EXPECT_EQ(a.metadata.name, b.metadata.name);
  EXPECT_EQ(a.metadata.namespace_name, b.metadata.namespace_name);
  EXPECT_EQ(a.metadata.uid, b.metadata.uid);
  EXPECT_EQ(a.metadata.resource_version, b.metadata.resource_version);
  EXPECT_EQ(a.metadata.generation, b.metadata.generation);
  EXPECT_EQ(a.metadata.labels, b.metadata.labels);
  EXPECT_EQ(a.metadata.creation_unix, b.metadata.creation_unix);
  EXPECT_EQ(a.spec.host, b.spec.host);
  EXPECT_EQ(a.spec.subdomain, b.spec.subdomain);
  EXPECT_EQ(a.spec.path, b.spec.path);
  EXPECT_EQ(a.spec.wildcard_policy, b.spec.wildcard_policy);
  EXPECT_EQ(a.spec.tls_termination, b.spec.tls_termination);
  // status.ingress: the lazy decoder over the exact text (a) and over the
  // tree's dump (b) against IngressFromJson over the tree itself.
  std::vector<RouteIngress> want;
  const auto st = tree.find("status");
  if (st != tree.end() && st->is_object()) {
    const auto in = st->find("ingress");
    if (in != st->end() && in->is_array()) {
      for (const auto& e : *in) want.push_back(IngressFromJson(e));
    }
  }
  for (const std::vector<RouteIngress>& got : {a.Ingress(), b.Ingress()}) {
    EXPECT_EQ(got.size(), want.size()) << input;
    for (size_t i = 0; i < got.size() && i < want.size(); ++i) {
      EXPECT_TRUE(IngressEqual(got[i], want[i])) << i;
      EXPECT_EQ(got[i].conditions.size(), want[i].conditions.size());
      for (size_t j = 0; j < got[i].conditions.size() && j < want[i].conditions.size(); ++j) {
        EXPECT_EQ(got[i].conditions[j].last_transition_time,
                  want[i].conditions[j].last_transition_time);
      }
    }
  }
  const nlohmann::json* ingress = tree.is_object() && tree.contains("status") &&
                                          tree["status"].is_object() &&
                                          tree["status"].contains("ingress")
                                      ? &tree["status"]["ingress"]
                                      : nullptr;
  if (ingress == nullptr || ingress->is_null()) {
    EXPECT_EQ(a.ingress_json, "");
  } else {
    EXPECT_EQ(nlohmann::json::parse(a.ingress_json), *ingress);
  }
  return true;
}

TEST(DecoderFuzzTest, TextDecoderAgreesWithTreeDecoder) {
  std::mt19937_64 rng(4242);
  int decoded = 0, items = 0;
  for (int i = 0; i < 40000; ++i) {
    std::string input = (i % 8 == 0) ? RandomBytes(rng)
                                     : Mutate(Corpus()[rng() % Corpus().size()], rng);
    SCOPED_TRACE("case " + std::to_string(i));
    decoded += ExpectSameAsTree(input);
    // Items of a mutated list page, when it still splits.
    auto page = RawListPageFromText(input);
    if (page.ok()) {
      for (size_t k = 0; k < page->size(); ++k) items += ExpectSameAsTree(std::string(page->Item(k)));
    } else {
      EXPECT_EQ(page.status().code(), StatusCode::kInvalid);
    }
  }
  // Enough inputs must survive mutation for the comparison to mean much.
  EXPECT_GT(decoded, 150);
  EXPECT_GT(items, 150);
}

TEST(DecoderFuzzTest, NoCrashOnRandomAndMutatedInput) {
  std::mt19937_64 rng(20261129);
  int decoded = 0;
  for (int i = 0; i < 4000; ++i) {
    std::string input = (i % 4 == 0) ? RandomBytes(rng)
                                     : Mutate(Corpus()[rng() % Corpus().size()], rng);
    SCOPED_TRACE("case " + std::to_string(i));
    auto route = RouteFromText(input);
    if (route.ok()) {
      ++decoded;
      // A decoded route's status.ingress always makes a patch; only a
      // route without a resourceVersion (nothing to guard it) is refused.
      auto again = IngressStatusPatch(route.value(), "default", std::nullopt);
      EXPECT_EQ(again.ok(), !route->metadata.resource_version.empty())
          << again.status().ToString();
    } else {
      EXPECT_EQ(route.status().code(), StatusCode::kInvalid);
    }
    auto ev = DecodeWatchEvent(input);
    auto tev = DecodeWatchEventText(input);
    EXPECT_EQ(ev.ok(), tev.ok()) << input;
    if (ev.ok() && tev.ok()) {
      EXPECT_EQ(ev->type, tev->type);
      if (tev->object_text.empty()) {
        EXPECT_EQ(ev->object, tev->object);
      } else {
        EXPECT_TRUE(tev->object.is_null());
        EXPECT_EQ(nlohmann::json::parse(tev->object_text), ev->object);
      }
    } else if (!tev.ok()) {
      EXPECT_EQ(tev.status().code(), StatusCode::kInvalid);
      if (!ev.ok()) {
        EXPECT_EQ(tev.status().message(), ev.status().message()) << input;
      }
    }
    if (ev.ok()) {
      ++decoded;
      (void)ev->ResourceVersion();
      (void)ev->ErrorStatus();
    } else {
      EXPECT_EQ(ev.status().code(), StatusCode::kInvalid);
    }
    Status st = StatusFromResponse(static_cast<int>(rng() % 600), input);
    EXPECT_FALSE(st.ok());
    auto cfg = ParseKubeconfig(input, "fuzz", "/tmp");
    if (!cfg.ok()) {
      EXPECT_EQ(cfg.status().code(), StatusCode::kInvalid);
    }
    (void)ParseRfc3339(input.substr(0, 40));

    LineSplitter splitter(64);
    size_t fed = 0;
    while (fed < input.size()) {
      size_t n = 1 + rng() % 50;
      splitter.Feed(std::string_view(input).substr(fed, n));
      fed += n;
      std::string_view line;
      LineSplitter::Result r;
      while ((r = splitter.Next(&line)) == LineSplitter::Result::kLine) {
        EXPECT_LE(line.size(), 64u);
        (void)DecodeWatchEvent(line);
      }
      if (r == LineSplitter::Result::kTooLong) break;
    }
  }
  // The mutator must leave some inputs valid, or this only tests rejection.
  EXPECT_GT(decoded, 50);
}

}  // namespace
}  // namespace routestatus::kubeclient::rest
