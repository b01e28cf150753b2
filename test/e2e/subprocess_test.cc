#include "e2e/harness/subprocess.h"

#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>

namespace routestatus::e2e {
namespace {

std::string TempLog(const char* name) {
  return ::testing::TempDir() + "/" + name + "." + std::to_string(getpid()) + ".log";
}

TEST(SubprocessTest, CapturesOutputAndExitCode) {
  Subprocess p({"/bin/sh", "-c", "echo hello $GREETING; exit 3"}, TempLog("echo"),
               {{"GREETING", "world"}});
  EXPECT_EQ(p.Wait(std::chrono::seconds(10)), 3);
  EXPECT_NE(p.ReadLog().find("hello world"), std::string::npos);
}

TEST(SubprocessTest, StopSendsTermThenKill) {
  Subprocess p({"/bin/sh", "-c", "trap '' TERM; echo ready; while true; do sleep 1; done"},
               TempLog("stubborn"));
  ASSERT_TRUE(p.WaitForLog("ready", std::chrono::seconds(10)));
  EXPECT_EQ(p.Stop(std::chrono::milliseconds(200)), 128 + SIGKILL);
  EXPECT_FALSE(p.Running());
}

TEST(SubprocessTest, ExecFailureIs127) {
  Subprocess p({"/nonexistent/binary"}, TempLog("missing"));
  EXPECT_EQ(p.Wait(std::chrono::seconds(10)), 127);
}

TEST(SubprocessTest, PickFreePortGivesUsablePort) {
  int port = PickFreePort();
  EXPECT_GT(port, 0);
  EXPECT_LT(port, 65536);
}

}  // namespace
}  // namespace routestatus::e2e
