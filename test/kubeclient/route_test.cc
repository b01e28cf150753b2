#include "kubeclient/route.h"

#include <cstdio>
#include <ctime>
#include <random>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace routestatus::kubeclient {
namespace {

using nlohmann::json;

// A route with fields the model does not know, at every level, and two
// other routers' entries around ours.
const char kRouteText[] = R"({
  "apiVersion": "route.openshift.io/v1", "kind": "Route",
  "metadata": {"name": "r1", "namespace": "ns", "uid": "u-1", "resourceVersion": "17",
               "generation": 3, "labels": {"shard": "a"},
               "creationTimestamp": "2026-11-29T14:00:00Z",
               "annotations": {"x": "y"}, "managedFields": [{"manager": "kubectl"}]},
  "spec": {"host": "www.example.com", "path": "/p", "wildcardPolicy": "None",
           "to": {"kind": "Service", "name": "svc", "weight": 100},
           "tls": {"termination": "edge", "insecureEdgeTerminationPolicy": "Redirect"},
           "port": {"targetPort": "http"}, "futureField": {"nested": [1, 2, 3]}},
  "status": {
    "ingress": [
      {"routerName": "internal", "host": "i.example.com", "extra": true,
       "conditions": [{"type": "Admitted", "status": "True"}]},
      {"routerName": "default", "host": "www.example.com",
       "routerCanonicalHostname": "router-default.apps", "wildcardPolicy": "None",
       "conditions": [{"type": "Admitted", "status": "True",
                       "lastTransitionTime": "2026-11-29T14:00:00Z"}]},
      {"routerName": "zeta", "host": "z", "conditions": []}
    ],
    "unknownStatusField": "keep"
  },
  "topLevelUnknown": {"a": 1}
})";

RouteIngress Ours(const std::string& reason = "") {
  RouteIngress in;
  in.router_name = "default";
  in.host = "www.example.com";
  in.router_canonical_hostname = "router-default.apps";
  in.wildcard_policy = "None";
  in.conditions.push_back({"Admitted", reason.empty() ? "True" : "False", reason,
                           reason.empty() ? "" : "msg", "2026-11-29T15:00:00Z"});
  return in;
}

// The merge patch names only the guard and status.ingress.
void ExpectOnlyGuardAndIngress(const json& patch, const std::string& rv) {
  EXPECT_EQ(patch, (json{{"metadata", {{"resourceVersion", rv}}},
                         {"status", {{"ingress", patch["status"]["ingress"]}}}}))
      << patch.dump();
}

TEST(RouteTest, DecodesTypedFields) {
  auto r = RouteFromText(kRouteText);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->Key(), "ns/r1");
  EXPECT_EQ(r->metadata.uid, "u-1");
  EXPECT_EQ(r->metadata.resource_version, "17");
  EXPECT_EQ(r->metadata.generation, 3);
  EXPECT_EQ(r->metadata.labels.at("shard"), "a");
  EXPECT_EQ(r->metadata.creation_unix, ParseRfc3339("2026-11-29T14:00:00Z").value());
  EXPECT_EQ(r->spec.host, "www.example.com");
  EXPECT_EQ(r->spec.path, "/p");
  EXPECT_EQ(r->spec.tls_termination, "edge");
  ASSERT_EQ(r->Ingress().size(), 3u);
  ASSERT_TRUE(r->FindIngress("default").has_value());
  EXPECT_EQ(r->FindIngress("default")->conditions.at(0).last_transition_time, "2026-11-29T14:00:00Z");
  EXPECT_FALSE(r->FindIngress("nobody").has_value());
}

// spec.tls's material (for extended validation) is kept by both decoders,
// and only when the route has some.
TEST(RouteTest, DecodesTlsMaterial) {
  const std::string text = R"({"metadata":{"name":"r","namespace":"ns"},"spec":{"host":"h",
      "tls":{"termination":"reencrypt","certificate":"C","key":"K","caCertificate":"CA",
      "destinationCACertificate":"D","insecureEdgeTerminationPolicy":"Redirect","x":1}}})";
  for (const auto& r : {RouteFromText(text), RouteFromJson(json::parse(text))}) {
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->spec.tls_termination, "reencrypt");
    ASSERT_TRUE(r->spec.tls_material);
    EXPECT_EQ(r->spec.tls_material->certificate, "C");
    EXPECT_EQ(r->spec.tls_material->key, "K");
    EXPECT_EQ(r->spec.tls_material->ca_certificate, "CA");
    EXPECT_EQ(r->spec.tls_material->destination_ca_certificate, "D");
    EXPECT_EQ(r->spec.tls_material->insecure_edge_termination_policy, "Redirect");
  }
  auto edge = RouteFromText(R"({"metadata":{"name":"r"},"spec":{"tls":{"termination":"edge"}}})");
  ASSERT_TRUE(edge.ok());
  EXPECT_FALSE(edge->spec.tls_material) << "no allocation for a route without material";
}

TEST(RouteTest, PatchReplacesOurEntryInPlaceKeepingOthersVerbatim) {
  auto r = RouteFromText(kRouteText);
  ASSERT_TRUE(r.ok());
  auto out = IngressStatusPatch(*r, "default", Ours("HostAlreadyClaimed"));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ExpectOnlyGuardAndIngress(*out, "17");
  json before = json::parse(kRouteText);
  const json& ing = (*out)["status"]["ingress"];
  ASSERT_EQ(ing.size(), 3u);
  EXPECT_EQ(ing[0], before["status"]["ingress"][0]);  // other routers untouched, in order
  EXPECT_EQ(ing[2], before["status"]["ingress"][2]);
  EXPECT_EQ(ing[0]["extra"], true) << "their unknown fields too";
  EXPECT_EQ(ing[1]["routerName"], "default");
  EXPECT_EQ(ing[1]["conditions"][0]["reason"], "HostAlreadyClaimed");
  EXPECT_EQ(ing[1]["conditions"][0]["lastTransitionTime"], "2026-11-29T15:00:00Z");
  // Applied as the server applies a merge patch, only status.ingress
  // changes, and it decodes back to what we wrote.
  json after = before;
  after.merge_patch((*out));
  json expected = before;
  expected["status"]["ingress"] = ing;
  EXPECT_EQ(after, expected);
  auto back = RouteFromJson(after);
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(IngressEqual(*back->FindIngress("default"), Ours("HostAlreadyClaimed")));
}

TEST(RouteTest, PatchAppendsWhenAbsentRemovesAndReducesDuplicates) {
  auto r = RouteFromText(kRouteText);
  ASSERT_TRUE(r.ok());
  auto removed = IngressStatusPatch(*r, "default", std::nullopt);
  ASSERT_TRUE(removed.ok());
  ExpectOnlyGuardAndIngress(*removed, "17");
  ASSERT_EQ((*removed)["status"]["ingress"].size(), 2u);
  EXPECT_EQ((*removed)["status"]["ingress"][0]["routerName"], "internal");
  EXPECT_EQ((*removed)["status"]["ingress"][1]["routerName"], "zeta");

  Route r2 = *r;
  r2.ingress_json = (*removed)["status"]["ingress"].dump();
  auto appended = IngressStatusPatch(r2, "default", Ours());
  ASSERT_TRUE(appended.ok());
  ASSERT_EQ((*appended)["status"]["ingress"].size(), 3u);
  EXPECT_EQ((*appended)["status"]["ingress"][2]["routerName"], "default");

  // Removing an absent entry sends the list unchanged.
  auto noop = IngressStatusPatch(r2, "absent", std::nullopt);
  ASSERT_TRUE(noop.ok());
  EXPECT_EQ(*noop, *removed);

  // Two entries of ours become one, in the first one's place.
  Route dup = *r;
  dup.ingress_json =
      R"([{"routerName":"default","host":"old"},{"routerName":"x"},{"routerName":"default"}])";
  auto one = IngressStatusPatch(dup, "default", Ours());
  ASSERT_TRUE(one.ok());
  ASSERT_EQ((*one)["status"]["ingress"].size(), 2u);
  EXPECT_EQ((*one)["status"]["ingress"][0]["host"], "www.example.com");
  EXPECT_EQ((*one)["status"]["ingress"][1], (json{{"routerName", "x"}}));
}

TEST(RouteTest, PatchCreatesTheListWhenMissingAndNeedsAVersion) {
  auto r = RouteFromText(
      R"({"metadata":{"name":"a","namespace":"b","resourceVersion":"5"},"spec":{"host":"h"}})");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->ingress_json, "");
  auto out = IngressStatusPatch(*r, "default", Ours());
  ASSERT_TRUE(out.ok());
  ExpectOnlyGuardAndIngress(*out, "5");
  ASSERT_EQ((*out)["status"]["ingress"].size(), 1u);
  // Unguarded, a write could overwrite another writer's change: refused.
  Route unversioned = *r;
  unversioned.metadata.resource_version.clear();
  EXPECT_EQ(IngressStatusPatch(unversioned, "default", Ours()).status().code(),
            StatusCode::kInvalid);
  Route broken = *r;
  broken.ingress_json = "{not json";
  EXPECT_EQ(IngressStatusPatch(broken, "default", Ours()).status().code(), StatusCode::kInvalid);
}

TEST(RouteTest, KeepsOnlyStatusIngressOfTheObject) {
  // The cache needs no managedFields, annotations, certificates or unknown
  // fields: a route keeps its typed fields and status.ingress's text.
  auto r = RouteFromText(kRouteText);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(json::parse(r->ingress_json), json::parse(kRouteText)["status"]["ingress"]);
  EXPECT_EQ(r->ingress_json.find("managedFields"), std::string::npos);
  auto tree = RouteFromJson(json::parse(kRouteText));
  ASSERT_TRUE(tree.ok());
  EXPECT_EQ(json::parse(tree->ingress_json), json::parse(r->ingress_json));
}

TEST(RouteTest, MalformedInputsAreInvalid) {
  const char* cases[] = {
      "", "null", "[]", "{", "not json", R"({"metadata":{}})", R"({"metadata":{"name":5}})",
      R"({"metadata":"x"})", R"({"metadata":{"name":"a","generation":"x"}})",
      R"({"metadata":{"name":"a","labels":{"k":1}}})",
      R"({"metadata":{"name":"a","creationTimestamp":"yesterday"}})",
      R"({"metadata":{"name":"a"},"spec":[]})", R"({"metadata":{"name":"a"},"spec":{"host":1}})",
      R"({"metadata":{"name":"a"},"status":{"ingress":{}}})",
  };
  for (const char* c : cases) {
    auto r = RouteFromText(c);
    ASSERT_FALSE(r.ok()) << c;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalid) << c;
  }
  // Odd but tolerated shapes inside ingress entries do not fail the route.
  auto r = RouteFromText(
      R"({"metadata":{"name":"a"},"status":{"ingress":[5,{"routerName":1,"conditions":[7]}]}})");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->Ingress().size(), 2u);
}

TEST(RouteTest, IngressIsDecodedFromTheTextOnDemand) {
  // Duplicate keys: the last "status" and the last "ingress" win, as in the
  // typed decode; fields of an entry come in any order.
  Route r = RouteFromText(R"({"metadata":{"name":"a"},"status":{"ingress":[{"routerName":"x"}]},
      "status":{"ingress":[{"routerName":"y"}],"ingress":[{"host":"h","routerName":"z"},
      {"routerName":"z","host":"second"}]}})")
                .value();
  ASSERT_EQ(r.Ingress().size(), 2u);
  EXPECT_FALSE(r.FindIngress("x").has_value());
  EXPECT_FALSE(r.FindIngress("y").has_value());
  ASSERT_TRUE(r.FindIngress("z").has_value());
  EXPECT_EQ(r.FindIngress("z")->host, "h") << "the first entry of a router name";
  // status or ingress of another type, or null: no entries.
  for (const char* text : {R"({"metadata":{"name":"a"},"status":null})",
                           R"({"metadata":{"name":"a"},"status":{"ingress":null}})",
                           R"({"metadata":{"name":"a"},"status":"x"})"}) {
    auto decoded = RouteFromText(text);
    ASSERT_TRUE(decoded.ok()) << text;
    EXPECT_TRUE(decoded->Ingress().empty()) << text;
  }
  // A hand-built route with no text has no entries, never a crash.
  Route empty;
  EXPECT_TRUE(empty.Ingress().empty());
  empty.ingress_json = "{not json";
  EXPECT_FALSE(empty.FindIngress("z").has_value());
}

TEST(RouteTest, SetIngressRewritesOnlyStatusIngress) {
  Route r = RouteFromText(kRouteText).value();
  const Route before = r;
  r.SetIngress({Ours("HostAlreadyClaimed")});
  ASSERT_EQ(r.Ingress().size(), 1u);
  EXPECT_TRUE(IngressEqual(*r.FindIngress("default"), Ours("HostAlreadyClaimed")));
  EXPECT_EQ(r.Key(), before.Key());
  EXPECT_EQ(r.spec.host, before.spec.host);
  Route hand;
  hand.SetIngress({Ours()});
  EXPECT_EQ(json::parse(hand.ingress_json).size(), 1u);
  EXPECT_TRUE(hand.FindIngress("default").has_value());
}

TEST(RouteTest, IngressEqualTable) {
  RouteIngress base = Ours();
  base.conditions.push_back({"Other", "False", "R", "m", ""});
  struct Case {
    const char* name;
    void (*mutate)(RouteIngress&);
    bool equal;
  } cases[] = {
      {"identical", [](RouteIngress&) {}, true},
      {"transition time ignored", [](RouteIngress& i) { i.conditions[0].last_transition_time = "x"; }, true},
      {"condition order ignored", [](RouteIngress& i) { std::swap(i.conditions[0], i.conditions[1]); }, true},
      {"host", [](RouteIngress& i) { i.host = "other"; }, false},
      {"canonical", [](RouteIngress& i) { i.router_canonical_hostname = "c"; }, false},
      {"wildcard", [](RouteIngress& i) { i.wildcard_policy = "Subdomain"; }, false},
      {"router", [](RouteIngress& i) { i.router_name = "x"; }, false},
      {"status", [](RouteIngress& i) { i.conditions[0].status = "False"; }, false},
      {"reason", [](RouteIngress& i) { i.conditions[1].reason = "Q"; }, false},
      {"message", [](RouteIngress& i) { i.conditions[1].message = "n"; }, false},
      {"type", [](RouteIngress& i) { i.conditions[1].type = "T"; }, false},
      {"extra condition", [](RouteIngress& i) { i.conditions.push_back({}); }, false},
      {"fewer conditions", [](RouteIngress& i) { i.conditions.pop_back(); }, false},
      {"duplicate instead of other",
       [](RouteIngress& i) { i.conditions[1] = i.conditions[0]; }, false},
  };
  for (const auto& c : cases) {
    RouteIngress other = base;
    c.mutate(other);
    EXPECT_EQ(IngressEqual(base, other), c.equal) << c.name;
    EXPECT_EQ(IngressEqual(other, base), c.equal) << c.name << " (swapped)";
    EXPECT_EQ(IngressFingerprint(base) == IngressFingerprint(other), c.equal)
        << c.name << " (fingerprint)";
  }
  // Field boundaries count: moving a character between fields changes it.
  RouteIngress ab = base, a_b = base;
  ab.host = "ab";
  ab.router_canonical_hostname = "c";
  a_b.host = "a";
  a_b.router_canonical_hostname = "bc";
  EXPECT_NE(IngressFingerprint(ab), IngressFingerprint(a_b));
}

TEST(RouteTest, IngressJsonRoundTrip) {
  RouteIngress in = Ours("InvalidHost");
  RouteIngress back = IngressFromJson(IngressToJson(in));
  EXPECT_TRUE(IngressEqual(in, back));
  EXPECT_EQ(back.conditions[0].last_transition_time, "2026-11-29T15:00:00Z");
  in.conditions[0].last_transition_time.clear();
  EXPECT_FALSE(IngressToJson(in)["conditions"][0].contains("lastTransitionTime"));
}

TEST(Rfc3339Test, ParseAndFormat) {
  EXPECT_EQ(ParseRfc3339("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(ParseRfc3339("2026-11-29T14:00:00Z"), 1795960800);
  EXPECT_EQ(ParseRfc3339("2026-11-29T14:00:00.123456Z"), 1795960800);
  EXPECT_EQ(ParseRfc3339("2026-11-29T16:00:00+02:00"), 1795960800);
  EXPECT_EQ(ParseRfc3339("2026-11-29T13:30:00-00:30"), 1795960800);
  EXPECT_EQ(FormatRfc3339(1795960800), "2026-11-29T14:00:00Z");
  EXPECT_EQ(FormatRfc3339(0), "1970-01-01T00:00:00Z");
  for (int64_t t : {int64_t{0}, int64_t{951782400}, int64_t{1795960800}, int64_t{4102444799}}) {
    EXPECT_EQ(ParseRfc3339(FormatRfc3339(t)), t);
  }
  const char* bad[] = {"", "2026-11-29", "2026-11-29T14:00:00", "2026-13-01T00:00:00Z",
                       "2026-11-29T24:00:00Z", "2026-11-29T14:00:00Zjunk", "2026-11-29 14:00:00Z",
                       "2026-11-29T14:00:00+0200", "x026-11-29T14:00:00Z",
                       "2026-11-29T-1:00:00Z", "2026-11-29T14:-1:00Z"};
  for (const char* b : bad) EXPECT_EQ(ParseRfc3339(b), std::nullopt) << b;
}

// The parser as it was (sscanf and timegm): the reference the hand-written
// one must match on every input.
std::optional<int64_t> ReferenceParseRfc3339(std::string_view text) {
  int year, mon, day, hour, min, sec;
  int consumed = 0;
  std::string s(text);
  if (std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &year, &mon, &day, &hour, &min, &sec,
                  &consumed) != 6 ||
      consumed != 19) {
    return std::nullopt;
  }
  for (size_t i : {0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18}) {
    if (s[i] < '0' || s[i] > '9') return std::nullopt;
  }
  if (mon < 1 || mon > 12 || day < 1 || day > 31 || hour > 23 || min > 59 || sec > 60) {
    return std::nullopt;
  }
  size_t pos = 19;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') ++pos;
  }
  int64_t offset = 0;
  if (pos < s.size() && (s[pos] == 'Z' || s[pos] == 'z')) {
    ++pos;
  } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    int oh, om, n = 0;
    if (std::sscanf(s.c_str() + pos + 1, "%2d:%2d%n", &oh, &om, &n) != 2 || n != 5 ||
        oh < 0 || om < 0 || s[pos + 1] < '0' || s[pos + 4] < '0') {
      return std::nullopt;
    }
    offset = (s[pos] == '+' ? 1 : -1) * (oh * 3600 + om * 60);
    pos += 6;
  } else {
    return std::nullopt;
  }
  if (pos != s.size()) return std::nullopt;
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = mon - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = min;
  tm.tm_sec = sec;
  return static_cast<int64_t>(timegm(&tm)) - offset;
}

// Every date of years around leap rules (day 29-31 of every month
// included: they roll over), then random edits of valid stamps (digits,
// signs, spaces, separators, lengths): the same answer as the reference.
TEST(Rfc3339Test, MatchesTheSscanfParser) {
  std::vector<std::string> inputs;
  char buf[64];
  for (int year : {0, 1, 99, 1899, 1900, 1969, 1970, 1999, 2000, 2024, 2026, 2100, 2400, 9999}) {
    for (int mon = 0; mon <= 13; ++mon) {
      for (int day = 0; day <= 32; ++day) {
        std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT23:59:60Z", year, mon, day);
        inputs.push_back(buf);
      }
    }
  }
  const char* seeds[] = {"2026-11-29T14:00:00Z", "2026-11-29T14:00:00.123456Z",
                         "2026-11-29T16:00:00+02:00", "2026-11-29T13:30:00-00:30",
                         "1970-01-01T00:00:00z", "2026-02-28T23:59:59.Z"};
  const std::string alphabet = "0123456789-+:.TZz x";
  std::mt19937_64 rng(42);
  for (const char* seed : seeds) {
    inputs.push_back(seed);
    for (int i = 0; i < 3000; ++i) {
      std::string s = seed;
      for (int edits = 1 + static_cast<int>(rng() % 3); edits > 0; --edits) {
        const size_t at = rng() % (s.size() + 1);
        const char c = alphabet[rng() % alphabet.size()];
        switch (rng() % 3) {
          case 0: if (at < s.size()) s[at] = c; break;
          case 1: s.insert(s.begin() + static_cast<std::ptrdiff_t>(at), c); break;
          default: if (at < s.size()) s.erase(at, 1); break;
        }
      }
      inputs.push_back(s);
    }
  }
  int valid = 0;
  for (const std::string& s : inputs) {
    auto want = ReferenceParseRfc3339(s);
    EXPECT_EQ(ParseRfc3339(s), want) << "\"" << s << "\"";
    valid += want.has_value();
  }
  EXPECT_GT(valid, 3000) << "the inputs must include many valid stamps";
}

}  // namespace
}  // namespace routestatus::kubeclient
