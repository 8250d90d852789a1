#include "ferry/testing/wait_until.h"

#include <thread>

namespace ferry::testing {

bool WaitUntil(const std::function<bool()>& condition, std::chrono::milliseconds limit,
               std::chrono::milliseconds poll) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= until) {
      // Asked once more past the limit: a condition that came true during the last sleep counts.
      return condition();
    }
    std::this_thread::sleep_for(poll);
  }
  return true;
}

::testing::AssertionResult WaitFor(std::string_view what, const std::function<bool()>& condition,
                                   std::chrono::milliseconds limit,
                                   std::chrono::milliseconds poll) {
  if (WaitUntil(condition, limit, poll)) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "waited " << limit.count() << " ms for " << what;
}

}  // namespace ferry::testing
