// Bounded waits for tests: poll a condition until it holds or a time limit passes, instead of a
// hand-written deadline loop in every test. WaitUntil returns whether the condition became true,
// for a test that asserts on what it waited for afterwards (its message then names the values);
// WaitFor returns a gtest AssertionResult that names what was waited for and for how long, for
// `ASSERT_TRUE(WaitFor("the table's 500 rows", ...)) << server->Log()`.
//
// The condition is called on the caller's thread: first at once, then after each `poll`, and a
// last time once the limit has passed (so a condition that turns true while the last sleep runs
// is not reported as a timeout). It may collect state (scrape metrics, read a table) as it goes.
//
// Thread-safety: the functions keep no state; call them from any thread.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <string_view>

namespace ferry::testing {

inline constexpr std::chrono::milliseconds kDefaultPoll{100};

// Polls `condition` every `poll` until it returns true (then true) or `limit` has passed (then
// false).
bool WaitUntil(const std::function<bool()>& condition, std::chrono::milliseconds limit,
               std::chrono::milliseconds poll = kDefaultPoll);

// The same as an assertion: success, or a failure "waited N ms for <what>".
::testing::AssertionResult WaitFor(std::string_view what, const std::function<bool()>& condition,
                                   std::chrono::milliseconds limit,
                                   std::chrono::milliseconds poll = kDefaultPoll);

}  // namespace ferry::testing
