#include "base/bounded_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace routestatus {
namespace {

using ::testing::HasSubstr;

class BoundedFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/bounded_file_test_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    for (const std::string& p : created_) std::remove(p.c_str());
    ::rmdir(dir_.c_str());
  }
  std::string Write(const std::string& name, const std::string& text) {
    std::string path = dir_ + "/" + name;
    FILE* f = std::fopen(path.c_str(), "w");
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
    created_.push_back(path);
    return path;
  }
  std::string dir_;
  std::vector<std::string> created_;
};

TEST_F(BoundedFileTest, ReadsARegularFileUpToTheLimit) {
  std::string path = Write("ok", "hello");
  auto text = ReadBoundedFile(path, 5);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_EQ(*text, "hello");
  auto empty = ReadBoundedFile(Write("empty", ""), 5);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(*empty, "");
}

TEST_F(BoundedFileTest, RefusesALargerFile) {
  auto text = ReadBoundedFile(Write("big", std::string(6, 'x')), 5);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().code(), StatusCode::kInvalid);
  EXPECT_THAT(text.status().message(), HasSubstr("larger than the limit of 5 bytes"));
  EXPECT_THAT(ReadBoundedFile(Write("big2", std::string(2 << 20, 'x')), 1 << 20).status().message(),
              HasSubstr("limit of 1 MiB"));
}

TEST_F(BoundedFileTest, RefusesWhatIsNotARegularFileWithoutBlocking) {
  std::string fifo = dir_ + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  created_.push_back(fifo);
  EXPECT_THAT(ReadBoundedFile(fifo, 100).status().message(), HasSubstr("is a FIFO (named pipe)"));
  EXPECT_THAT(ReadBoundedFile(dir_, 100).status().message(), HasSubstr("is a directory"));
  EXPECT_THAT(ReadBoundedFile("/dev/zero", 100).status().message(),
              HasSubstr("is a character device, not a regular file"));
  EXPECT_THAT(ReadBoundedFile(dir_ + "/missing", 100).status().message(),
              HasSubstr("No such file or directory"));
}

// /proc files report size 0; the limit holds for what is read.
TEST_F(BoundedFileTest, FilesReportingSizeZeroAreStillBounded) {
  auto small = ReadBoundedFile("/proc/self/status", 1 << 20);
  ASSERT_TRUE(small.ok()) << small.status().ToString();
  EXPECT_THAT(*small, HasSubstr("Name:"));
  EXPECT_THAT(ReadBoundedFile("/proc/self/status", 16).status().message(), HasSubstr("larger than"));
}

TEST(FormatByteSizeTest, Units) {
  EXPECT_EQ(FormatByteSize(1 << 20), "1 MiB");
  EXPECT_EQ(FormatByteSize(64 << 10), "64 KiB");
  EXPECT_EQ(FormatByteSize(1000), "1000 bytes");
}

}  // namespace
}  // namespace routestatus
