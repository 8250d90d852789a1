#include "ferry/testing/subprocess.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "ferry/testing/wait_until.h"

namespace ferry::testing {
namespace {

TEST(RunProgramTest, CapturesStdoutStderrAndExitCode) {
  auto out =
      RunProgram({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"}, std::chrono::seconds(60));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->exit_code, 3);
  EXPECT_EQ(out->out, "out\n");
  EXPECT_EQ(out->err, "err\n");
}

TEST(RunProgramTest, SetsAndRemovesEnvironmentVariablesAndChangesDirectory) {
  setenv("FERRY_SUBPROCESS_TEST_GONE", "still here", 1);
  ProgramOptions options;
  options.env = {"FERRY_SUBPROCESS_TEST_SET=a=b", "FERRY_SUBPROCESS_TEST_GONE"};
  options.cwd = "/";
  auto out =
      RunProgram({"/bin/sh", "-c",
                  "echo \"$FERRY_SUBPROCESS_TEST_SET ${FERRY_SUBPROCESS_TEST_GONE-unset} $(pwd)\""},
                 std::chrono::seconds(60), options);
  unsetenv("FERRY_SUBPROCESS_TEST_GONE");
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->out, "a=b unset /\n");
}

// Of two changes to one key the later wins (a test's override of a variable its base
// environment sets): the child sees one entry, the later value.
TEST(RunProgramTest, TheLaterOfTwoChangesToOneVariableWins) {
  ProgramOptions options;
  options.env = {"FERRY_SUBPROCESS_TEST_X=one", "FERRY_SUBPROCESS_TEST_Y=1",
                 "FERRY_SUBPROCESS_TEST_X=two", "FERRY_SUBPROCESS_TEST_Y"};
  auto out = RunProgram({"/bin/sh", "-c",
                         "echo \"$FERRY_SUBPROCESS_TEST_X ${FERRY_SUBPROCESS_TEST_Y-unset} "
                         "$(env | grep -c ^FERRY_SUBPROCESS_TEST_X=)\""},
                        std::chrono::seconds(60), options);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->out, "two unset 1\n");
}

TEST(RunProgramTest, KillsAProgramThatOutlivesItsTimeoutAndSaysWhich) {
  auto out =
      RunProgram({"/bin/sh", "-c", "echo started; exec sleep 600"}, std::chrono::milliseconds(300));
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(out.status().message().find("/bin/sh did not finish"), std::string::npos)
      << out.status().ToString();
  EXPECT_NE(out.status().message().find("started"), std::string::npos);
}

TEST(SubprocessTest, AKilledChildIsAZombieUntilReapedAndNotAlive) {
  const std::string log = std::filesystem::temp_directory_path() /
                          ("ferry-subprocess-test-" + std::to_string(getpid()) + ".log");
  auto child = Subprocess::Start({"/bin/sh", "-c", "echo hello; exec sleep 600"}, log);
  ASSERT_TRUE(child.ok()) << child.status().ToString();
  pid_t pid = child->pid();
  EXPECT_TRUE(child->Alive());
  EXPECT_EQ(child->name(), "sh");
  WaitUntil([&] { return TailOfFile(log, 5) == "hello\n"; }, std::chrono::seconds(10),
            std::chrono::milliseconds(10));
  EXPECT_EQ(TailOfFile(log, 5), "hello\n");
  kill(pid, SIGKILL);
  // Not reaped yet: a zombie, which kill(pid, 0) still reports as there.
  WaitUntil([&] { return ProcessState(pid) == "Z"; }, std::chrono::seconds(10),
            std::chrono::milliseconds(10));
  EXPECT_EQ(ProcessState(pid), "Z");
  EXPECT_EQ(kill(pid, 0), 0);
  EXPECT_FALSE(child->Alive());
  EXPECT_EQ(child->TryWait(), 128 + SIGKILL);
  EXPECT_EQ(ProcessState(pid), "");
  std::filesystem::remove(log);
}

TEST(SubprocessTest, KillAndDestructorReapTheChild) {
  const std::string log = std::filesystem::temp_directory_path() /
                          ("ferry-subprocess-test-" + std::to_string(getpid()) + "-2.log");
  pid_t first = -1;
  pid_t second = -1;
  {
    auto child = Subprocess::Start({"/bin/sleep", "600"}, log);
    ASSERT_TRUE(child.ok());
    first = child->pid();
    ASSERT_TRUE(child->Kill().ok());
    EXPECT_EQ(ProcessState(first), "");
    EXPECT_FALSE(child->Alive());
    auto other = Subprocess::Start({"/bin/sleep", "600"}, log);
    ASSERT_TRUE(other.ok());
    second = other->pid();
    Subprocess moved = std::move(*other);
    EXPECT_TRUE(moved.Alive());
    EXPECT_EQ(moved.pid(), second);
  }
  EXPECT_EQ(ProcessState(second), "");
  std::filesystem::remove(log);
}

TEST(SubprocessTest, TerminateSendsSigtermFirst) {
  const std::string log = std::filesystem::temp_directory_path() /
                          ("ferry-subprocess-test-" + std::to_string(getpid()) + "-3.log");
  auto child = Subprocess::Start({"/bin/sleep", "600"}, log);
  ASSERT_TRUE(child.ok());
  pid_t pid = child->pid();
  ASSERT_TRUE(child->Terminate(std::chrono::seconds(60)).ok());
  EXPECT_EQ(ProcessState(pid), "");
  std::filesystem::remove(log);
}

TEST(FindProgramTest, PrefersTheListedPathsAndNamesTheHintWhenMissing) {
  auto sh = FindProgram("sh", {"/bin/sh"}, "");
  ASSERT_TRUE(sh.ok());
  EXPECT_EQ(*sh, "/bin/sh");
  auto missing = FindProgram("ferry-no-such-program", {}, "Debian package nothing");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("Debian package nothing"), std::string::npos);
}

TEST(TailOfFileTest, ReturnsTheLastLines) {
  const std::string path =
      std::filesystem::temp_directory_path() / ("ferry-tail-test-" + std::to_string(getpid()));
  std::ofstream(path) << "a\nb\nc\nd\n";
  EXPECT_EQ(TailOfFile(path, 2), "c\nd\n");
  EXPECT_EQ(TailOfFile(path, 10), "a\nb\nc\nd\n");
  std::filesystem::remove(path);
  EXPECT_NE(TailOfFile(path, 2).find("cannot read"), std::string::npos);
}

}  // namespace
}  // namespace ferry::testing
