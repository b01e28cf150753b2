// Unit tests of the JSONPath subset used for printer columns.

#include "apiserver/json_path.h"

#include <random>

#include <gtest/gtest.h>

namespace routestatus::apiserver {
namespace {

using nlohmann::json;

const json& Doc() {
  static const json doc = json::parse(R"({
    "metadata": {"name": "web", "labels": {"app.kubernetes.io/name": "x"}},
    "spec": {"to": {"name": "svc"}, "ports": [1, 2, 3], "weight": 1.5, "on": true, "none": null},
    "status": {"ingress": [
      {"routerName": "a", "host": "h1",
       "conditions": [{"type": "Admitted", "status": "True"}]},
      {"routerName": "b", "host": "h2",
       "conditions": [{"type": "Admitted", "status": "False"}, {"type": "Other", "status": "X"}]}
    ]}
  })");
  return doc;
}

struct EvalCase {
  const char* path;
  const char* want;  // results joined with ","
};

class JsonPathEvalTest : public ::testing::TestWithParam<EvalCase> {};

TEST_P(JsonPathEvalTest, SelectsWhatKubeSelects) {
  std::string error;
  std::optional<JsonPath> path = JsonPath::Parse(GetParam().path, &error);
  ASSERT_TRUE(path) << error;
  EXPECT_EQ(path->EvaluateJoined(Doc(), ","), GetParam().want) << GetParam().path;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, JsonPathEvalTest,
    ::testing::Values(
        EvalCase{".metadata.name", "web"},
        EvalCase{"{.metadata.name}", "web"},
        EvalCase{" { $.metadata.name } ", "web"},
        EvalCase{"$['metadata'][\"name\"]", "web"},
        EvalCase{".spec.to", R"({"name":"svc"})"},
        EvalCase{".spec.ports", "[1,2,3]"},
        EvalCase{".spec.ports.*", "1,2,3"},
        EvalCase{".spec.ports[*]", "1,2,3"},
        EvalCase{".spec.weight", "1.5"},
        EvalCase{".spec.on", "true"},
        EvalCase{".spec.none", "null"},
        EvalCase{".status.ingress[0].host", "h1"},
        EvalCase{".status.ingress[-1].host", "h2"},
        EvalCase{".status.ingress[ 1 ].host", "h2"},
        EvalCase{".status.ingress[2].host", ""},
        EvalCase{".status.ingress[-3].host", ""},
        EvalCase{".status.ingress[*].host", "h1,h2"},
        EvalCase{".status.ingress[0].conditions[?(@.type==\"Admitted\")].status", "True"},
        EvalCase{".status.ingress[*].conditions[?(@.type=='Admitted')].status", "True,False"},
        EvalCase{".status.ingress[?(@.routerName != \"a\")].host", "h2"},
        EvalCase{".status.ingress[?(@.host)].routerName", "a,b"},
        EvalCase{".status.ingress[?(@.missing)].host", ""},
        EvalCase{".spec.ports[?(@ > 1)]", "2,3"},
        EvalCase{".spec.ports[?(@ <= 2)]", "1,2"},
        EvalCase{".spec.ports[?(@ == 2.0)]", "2"},
        EvalCase{".status.ingress[?(@.routerName == 1)].host", ""},
        EvalCase{".metadata.labels['app.kubernetes.io/name']", "x"},
        EvalCase{".metadata.labels.app\\.kubernetes\\.io/name", "x"},
        EvalCase{"..host", "h1,h2"},
        EvalCase{"..conditions[0].status", "True,False"},
        EvalCase{".nothing.here", ""},
        EvalCase{".metadata.name.deeper", ""},
        EvalCase{".metadata[0]", ""},
        EvalCase{".spec.to[?(@.name)]", ""}));

class JsonPathErrorTest : public ::testing::TestWithParam<const char*> {};

TEST_P(JsonPathErrorTest, MalformedPathIsAClearError) {
  std::string error;
  EXPECT_FALSE(JsonPath::Parse(GetParam(), &error)) << GetParam();
  EXPECT_NE(error.find("invalid jsonpath"), std::string::npos) << error;
  EXPECT_GT(error.size(), std::string("invalid jsonpath \"\": ").size() + std::string(GetParam()).size())
      << error;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, JsonPathErrorTest,
    ::testing::Values("", "   ", "{", "{}", "{.a", "{.a}}", "metadata.name", ".a[", ".a[0",
                      ".a[x]", ".a[1:2]", ".a[-]", ".a[99999999999999999999]", ".a]",
                      ".a[?(@.b==\"x\"]", ".a[?(@.b=\"x\")]", ".a[?(@.b==)]", ".a[?(b==1)]",
                      ".a[?(@.b==tru)]", ".a[?@.b]", ".a['unterminated]", ".a[\"x\"", ".a.",
                      "..", ".a..", ".a b", ".a(", "$$", ".a[*", ".a[?(@.b==\"x\")"));

TEST(JsonPathTest, ErrorNamesThePosition) {
  std::string error;
  EXPECT_FALSE(JsonPath::Parse(".status.ingress[x]", &error));
  EXPECT_EQ(error, "invalid jsonpath \".status.ingress[x]\": unexpected 'x' after '[' at 16");
}

TEST(JsonPathTest, DotAloneSelectsTheRoot) {
  std::string error;
  auto path = JsonPath::Parse(".", &error);
  ASSERT_TRUE(path) << error;
  ASSERT_EQ(path->Evaluate(Doc()).size(), 1u);
  EXPECT_EQ(path->Evaluate(Doc())[0], &Doc());
}

TEST(JsonPathTest, EvaluatesAnyJsonWithoutThrowing) {
  std::string error;
  auto path = JsonPath::Parse(".a[0].b[?(@.c=='d')].e", &error);
  ASSERT_TRUE(path) << error;
  for (const char* text : {"null", "1", "\"s\"", "[]", "{}", "{\"a\":{}}", "{\"a\":[1]}",
                           "{\"a\":[{\"b\":{\"c\":\"d\"}}]}", "{\"a\":[{\"b\":[{\"c\":1}]}]}"}) {
    EXPECT_TRUE(path->Evaluate(json::parse(text)).empty()) << text;
  }
  EXPECT_EQ(path->EvaluateJoined(json::parse(R"({"a":[{"b":[{"c":"d","e":7}]}]})"), ","), "7");
}

TEST(JsonPathTest, DeepDocumentsDoNotExhaustTheStack) {
  json deep = json::object();
  json* at = &deep;
  for (int i = 0; i < 2000; ++i) at = &((*at)["x"] = json::object());
  (*at)["host"] = "bottom";
  std::string error;
  auto path = JsonPath::Parse("..host", &error);
  ASSERT_TRUE(path) << error;
  EXPECT_EQ(path->EvaluateJoined(deep, ","), "bottom");
}

// Random text from the path alphabet must parse or fail cleanly, never crash.
TEST(JsonPathTest, RandomTextNeverCrashes) {
  const std::string alphabet = ".[]*?()@=!<>'\"{}$-0123456789 abc\\:,";
  std::mt19937 rng(42);
  int parsed = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string text;
    size_t len = rng() % 16;
    for (size_t k = 0; k < len; ++k) text += alphabet[rng() % alphabet.size()];
    std::string error;
    std::optional<JsonPath> path = JsonPath::Parse(text, &error);
    if (path) {
      ++parsed;
      path->Evaluate(Doc());
    } else {
      EXPECT_FALSE(error.empty()) << text;
    }
  }
  EXPECT_GT(parsed, 0);
}

}  // namespace
}  // namespace routestatus::apiserver
