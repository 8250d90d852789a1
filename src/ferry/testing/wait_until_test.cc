#include "ferry/testing/wait_until.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>

namespace ferry::testing {
namespace {

using std::chrono::milliseconds;

// A condition that always answers `answer`, counting its calls in *calls.
std::function<bool()> Counting(int* calls, bool answer) {
  return [calls, answer] {
    ++*calls;
    return answer;
  };
}

TEST(WaitUntilTest, ReturnsAtOnceWhenTheConditionHoldsWithoutSleeping) {
  int calls = 0;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(WaitUntil(Counting(&calls, true), milliseconds(60000), milliseconds(10000)));
  EXPECT_EQ(calls, 1);
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(5000));
}

TEST(WaitUntilTest, PollsUntilTheConditionTurnsTrue) {
  int calls = 0;
  EXPECT_TRUE(WaitUntil([&] { return ++calls == 5; }, milliseconds(60000), milliseconds(1)));
  EXPECT_EQ(calls, 5);
}

TEST(WaitUntilTest, GivesUpAfterTheLimitAndAsksOnceMorePastIt) {
  int calls = 0;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(WaitUntil(Counting(&calls, false), milliseconds(200), milliseconds(50)));
  EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(200));
  // At 0, 50, 100, 150 and 200 ms or so, and once more past the limit.
  EXPECT_GE(calls, 3);
  EXPECT_LE(calls, 7);
}

TEST(WaitUntilTest, SeesAChangeMadeByAnotherThread) {
  std::atomic<bool> flag{false};
  std::thread setter([&] {
    std::this_thread::sleep_for(milliseconds(50));
    flag.store(true);
  });
  EXPECT_TRUE(WaitUntil([&] { return flag.load(); }, milliseconds(60000), milliseconds(5)));
  setter.join();
}

TEST(WaitForTest, AFailureNamesWhatWasWaitedForAndTheLimit) {
  ::testing::AssertionResult r = WaitFor(
      "the 500 rows of t_a", [] { return false; }, milliseconds(30), milliseconds(10));
  EXPECT_FALSE(r);
  EXPECT_STREQ(r.message(), "waited 30 ms for the 500 rows of t_a");
  EXPECT_TRUE(WaitFor(
      "anything", [] { return true; }, milliseconds(30)));
}

}  // namespace
}  // namespace ferry::testing
