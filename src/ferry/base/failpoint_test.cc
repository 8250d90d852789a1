#include "ferry/base/failpoint.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <thread>

namespace ferry {
namespace {

class FailpointTest : public ::testing::Test {
 protected:
  void TearDown() override { failpoint::DisarmAll(); }
};

TEST_F(FailpointTest, UnarmedIsOk) {
  EXPECT_TRUE(FERRY_FAILPOINT("test.nothing").ok());
}

TEST_F(FailpointTest, ErrorKinds) {
  ASSERT_TRUE(failpoint::Arm("test.a", "error").ok());
  ASSERT_TRUE(failpoint::Arm("test.b", "error(ENOSPC)").ok());
  Status a = FERRY_FAILPOINT("test.a");
  EXPECT_EQ(a.code(), StatusCode::kIOError);
  EXPECT_NE(a.message().find("test.a"), std::string::npos);
  EXPECT_EQ(FERRY_FAILPOINT("test.b").code(), StatusCode::kResourceExhausted);
  EXPECT_TRUE(FERRY_FAILPOINT("test.c").ok());
}

TEST_F(FailpointTest, NthHitTriggers) {
  ASSERT_TRUE(failpoint::Arm("test.once", "error@3").ok());
  ASSERT_TRUE(failpoint::Arm("test.from", "error@2+").ok());
  std::vector<bool> once, from;
  for (int i = 0; i < 4; i++) {
    once.push_back(FERRY_FAILPOINT("test.once").ok());
    from.push_back(FERRY_FAILPOINT("test.from").ok());
  }
  EXPECT_EQ(once, (std::vector<bool>{true, true, false, true}));
  EXPECT_EQ(from, (std::vector<bool>{true, false, false, false}));
  EXPECT_EQ(failpoint::HitCount("test.once"), 4);
}

TEST_F(FailpointTest, MalformedSpecsRejected) {
  EXPECT_FALSE(failpoint::Arm("x", "explode").ok());
  EXPECT_FALSE(failpoint::Arm("x", "sleep(abc)").ok());
  EXPECT_FALSE(failpoint::Arm("x", "error(EPERM)").ok());
  EXPECT_FALSE(failpoint::Arm("x", "error@x").ok());
  EXPECT_FALSE(failpoint::ArmFromString("a=crash;b").ok());
}

TEST_F(FailpointTest, ArmFromStringAndOff) {
  ASSERT_TRUE(failpoint::ArmFromString("test.p=error;test.q=off").ok());
  EXPECT_FALSE(FERRY_FAILPOINT("test.p").ok());
  EXPECT_TRUE(FERRY_FAILPOINT("test.q").ok());
}

TEST_F(FailpointTest, WaitStallsUntilTheFileExists) {
  const std::filesystem::path dir = ::testing::TempDir();
  // '@' in the path is part of the path; the trigger follows the ')'.
  const std::filesystem::path go = dir / ("ferry-failpoint-go@" + std::to_string(::getpid()));
  std::filesystem::remove(go);
  ASSERT_TRUE(failpoint::Arm("test.wait", "wait(" + go.string() + ")@2").ok());
  EXPECT_TRUE(FERRY_FAILPOINT("test.wait").ok());  // the first hit does not wait
  std::atomic<bool> passed{false};
  std::thread waiter([&] {
    EXPECT_TRUE(FERRY_FAILPOINT("test.wait").ok());
    passed = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(passed.load());  // still waiting: the file is not there
  std::FILE* f = std::fopen(go.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fclose(f);
  waiter.join();
  EXPECT_TRUE(passed.load());
  EXPECT_EQ(failpoint::HitCount("test.wait"), 2);
  std::filesystem::remove(go);
  EXPECT_FALSE(failpoint::Arm("x", "wait").ok());
}

TEST_F(FailpointTest, CrashKillsTheProcess) {
  EXPECT_EXIT(
      {
        failpoint::Arm("test.crash", "crash").IgnoreError();
        FERRY_FAILPOINT("test.crash").IgnoreError();
      },
      ::testing::KilledBySignal(SIGKILL), "failpoint test.crash: crash");
}

}  // namespace
}  // namespace ferry
