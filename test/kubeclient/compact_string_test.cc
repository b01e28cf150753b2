#include "kubeclient/compact_string.h"

#include <sstream>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>

#include <gtest/gtest.h>

namespace routestatus::kubeclient {
namespace {

// Texts on both sides of the inline limit (15 characters).
const std::string kShort = "r-12345";
const std::string kFifteen = "abcdefghijklmno";
const std::string kSixteen = "abcdefghijklmnop";
const std::string kLong = "6f1c3f5e-2b4a-4c8e-9d7a-0e1f2a3b4c5d";

TEST(CompactStringTest, KeepsTextOfEveryLengthAndIsNulTerminated) {
  for (const std::string& text : {std::string(), kShort, kFifteen, kSixteen, kLong,
                                  std::string(5000, 'x'), std::string("a\0b", 3)}) {
    CompactString s(text);
    EXPECT_EQ(s.size(), text.size());
    EXPECT_EQ(s.view(), text);
    EXPECT_EQ(s.str(), text);
    EXPECT_EQ(s.c_str()[s.size()], '\0');
    EXPECT_EQ(s.empty(), text.empty());
  }
  EXPECT_EQ(sizeof(CompactString), 16u);
}

TEST(CompactStringTest, CopiesAndMovesAreIndependent) {
  for (const std::string& text : {kShort, kFifteen, kLong}) {
    CompactString a(text);
    CompactString b = a;
    a = "changed";
    EXPECT_EQ(b, text);
    EXPECT_EQ(a, "changed");
    CompactString c = std::move(b);
    EXPECT_EQ(c, text);
    EXPECT_TRUE(b.empty());  // NOLINT: moved-from is empty by contract of this type
    c = std::move(a);
    EXPECT_EQ(c, "changed");
    const CompactString& alias = c;
    c = alias;  // self-assignment keeps the text
    EXPECT_EQ(c, "changed");
  }
}

TEST(CompactStringTest, AssigningItsOwnSubstringIsSafe) {
  CompactString s(kLong);
  s = s.view().substr(9);  // the view points into s's own heap block
  EXPECT_EQ(s, kLong.substr(9));
  s = s.view().substr(0, 4);  // now short: inline
  EXPECT_EQ(s, kLong.substr(9, 4));
}

TEST(CompactStringTest, ComparesAndConcatenatesLikeStdString) {
  CompactString ns("scale-3");
  CompactString name(kSixteen);
  EXPECT_EQ(ns + "/" + name, "scale-3/" + kSixteen);
  EXPECT_EQ(std::string("x") + ns, "xscale-3");
  EXPECT_TRUE(ns == std::string("scale-3"));
  EXPECT_TRUE(std::string_view("scale-3") == ns);
  EXPECT_TRUE(ns != "scale-4");
  EXPECT_EQ(ns < name, std::string("scale-3") < kSixteen);
  EXPECT_TRUE(CompactString("a") < "b");
  std::string as_string = name;
  EXPECT_EQ(as_string, kSixteen);
  std::ostringstream out;
  out << name;
  EXPECT_EQ(out.str(), kSixteen);
  EXPECT_EQ(name.find("fgh"), 5u);
  EXPECT_EQ(name.substr(14), "op");
  std::unordered_set<CompactString> set{ns, name, CompactString("scale-3")};
  EXPECT_EQ(set.size(), 2u);
}

}  // namespace
}  // namespace routestatus::kubeclient
