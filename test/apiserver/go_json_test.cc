// Go's encoding/json syntax errors and kube's body summary, as kube-apiserver
// quotes them in its messages.

#include "apiserver/go_json.h"

#include <string>

#include <gtest/gtest.h>

namespace routestatus::apiserver {
namespace {

TEST(GoJsonSyntaxErrorTest, ValidJsonHasNone) {
  for (const char* ok : {"{}", " [1, 2.5e3, -0, true, false, null] ", "\"a\\u00e9\\n\"",
                         "{\"a\":{\"b\":[]}}", "0", "1e-7"}) {
    EXPECT_FALSE(GoJsonSyntaxError(ok).has_value()) << ok;
  }
}

TEST(GoJsonSyntaxErrorTest, MessagesMatchGo) {
  struct Case {
    const char* input;
    const char* want;
  };
  const Case cases[] = {
      {"{not json", "invalid character 'n' looking for beginning of object key string"},
      {"", "unexpected end of JSON input"},
      {"{\"a\":1", "unexpected end of JSON input"},
      {"{\"a\" 1}", "invalid character '1' after object key"},
      {"{\"a\":1 2}", "invalid character '2' after object key:value pair"},
      {"[1 2]", "invalid character '2' after array element"},
      {"{} x", "invalid character 'x' after top-level value"},
      {"01", "invalid character '1' after top-level value"},
      {"-x", "invalid character 'x' in numeric literal"},
      {"1.x", "invalid character 'x' after decimal point in numeric literal"},
      {"1ex", "invalid character 'x' in exponent of numeric literal"},
      {"tru", "invalid character ' ' in literal true (expecting 'e')"},
      {"trux", "invalid character 'x' in literal true (expecting 'e')"},
      {"nul!", "invalid character '!' in literal null (expecting 'l')"},
      {"\"a\tb\"", "invalid character '\\t' in string literal"},
      {"\"\\q\"", "invalid character 'q' in string escape code"},
      {"\"\\u12x4\"", "invalid character 'x' in \\u hexadecimal character escape"},
      {"'a'", "invalid character '\\'' looking for beginning of value"},
      {"\x81", "invalid character '\\u0081' looking for beginning of value"},
      {"\x01", "invalid character '\\x01' looking for beginning of value"},
  };
  for (const Case& c : cases) {
    std::optional<std::string> got = GoJsonSyntaxError(c.input);
    ASSERT_TRUE(got.has_value()) << c.input;
    EXPECT_EQ(*got, c.want) << c.input;
  }
}

// Go's scanner allows 10000 open objects and arrays and fails at the
// opening byte of the next one.
TEST(GoJsonSyntaxErrorTest, NestingBeyondGosMaxDepth) {
  auto nested = [](size_t depth, char open, char close) {
    return std::string(depth, open) + std::string(depth, close);
  };
  EXPECT_FALSE(GoJsonSyntaxError(nested(10000, '[', ']')).has_value());
  EXPECT_EQ(GoJsonSyntaxError(nested(10001, '[', ']')), "invalid character '[' exceeded max depth");
  std::string objects;
  for (int i = 0; i < 10001; ++i) objects += "{\"a\":";
  EXPECT_EQ(GoJsonSyntaxError(objects + "1" + std::string(10001, '}')),
            "invalid character '{' exceeded max depth");
}

TEST(SummarizeBodyTest, LikeKubesSummarizeData) {
  EXPECT_EQ(SummarizeBody(""), "<empty>");
  EXPECT_EQ(SummarizeBody("{not json"), "{not json");
  EXPECT_EQ(SummarizeBody("{\"apiVersion\": \"v1\", \"kind\": \"Namespace\"}"),
            "{\"apiVersion\": \"v1\", \"kind\": \" ...");
  EXPECT_EQ(SummarizeBody("[1]"), "5b315d");
}

}  // namespace
}  // namespace routestatus::apiserver
