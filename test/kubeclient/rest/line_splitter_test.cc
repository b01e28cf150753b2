#include "kubeclient/rest/line_splitter.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace routestatus::kubeclient::rest {
namespace {

std::vector<std::string> Drain(LineSplitter& s) {
  std::vector<std::string> out;
  std::string_view line;
  while (s.Next(&line) == LineSplitter::Result::kLine) out.emplace_back(line);
  return out;
}

TEST(LineSplitterTest, SplitsLinesAcrossChunks) {
  LineSplitter s;
  s.Feed("ab");
  EXPECT_TRUE(Drain(s).empty());
  s.Feed("c\nde");
  EXPECT_EQ(Drain(s), std::vector<std::string>({"abc"}));
  s.Feed("f\r\n\ng\n");
  EXPECT_EQ(Drain(s), std::vector<std::string>({"def", "", "g"}));
  EXPECT_EQ(s.pending(), 0u);
  s.Feed("tail");
  EXPECT_TRUE(Drain(s).empty());
  EXPECT_EQ(s.pending(), 4u);
}

TEST(LineSplitterTest, ByteByByteEqualsWhole) {
  std::string text;
  for (int i = 0; i < 1000; ++i) text += "line" + std::to_string(i) + "\n";
  LineSplitter whole, bytes;
  whole.Feed(text);
  std::vector<std::string> got;
  for (char c : text) {
    bytes.Feed(std::string_view(&c, 1));
    for (auto& l : Drain(bytes)) got.push_back(l);
  }
  EXPECT_EQ(got, Drain(whole));
  EXPECT_EQ(got.size(), 1000u);
}

TEST(LineSplitterTest, RefusesTooLongPartialLine) {
  LineSplitter s(8);
  s.Feed("12345678");
  std::string_view line;
  EXPECT_EQ(s.Next(&line), LineSplitter::Result::kNeedMore);
  s.Feed("9");  // may still be "12345678\r"
  EXPECT_EQ(s.Next(&line), LineSplitter::Result::kNeedMore);
  s.Feed("0");
  EXPECT_EQ(s.Next(&line), LineSplitter::Result::kTooLong);
  s.Feed("\nok\n");
  EXPECT_EQ(s.Next(&line), LineSplitter::Result::kTooLong);  // sticky
}

TEST(LineSplitterTest, RefusesTooLongCompleteLine) {
  LineSplitter s(4);
  s.Feed("ok\n123456\n");
  std::string_view line;
  ASSERT_EQ(s.Next(&line), LineSplitter::Result::kLine);
  EXPECT_EQ(line, "ok");
  EXPECT_EQ(s.Next(&line), LineSplitter::Result::kTooLong);
}

TEST(LineSplitterTest, LineOfExactlyMaxIsAccepted) {
  LineSplitter s(4);
  s.Feed("1234\r\n");
  std::string_view line;
  ASSERT_EQ(s.Next(&line), LineSplitter::Result::kLine);
  EXPECT_EQ(line, "1234");
}

}  // namespace
}  // namespace routestatus::kubeclient::rest
