// FERRY_CHECK: invariants that hold unless ferry has a bug. Always on, even in release builds;
// a failed check logs the condition and aborts. Recovery is designed in (a restart resumes from
// the table's log), so crashing is safe, while continuing on a broken invariant is not.
// Never use it to validate input: return a Status instead.
#pragma once

#include <string_view>

namespace ferry::internal {
[[noreturn]] void CheckFailed(const char* file, int line, const char* condition,
                              std::string_view message);
}  // namespace ferry::internal

#define FERRY_CHECK(cond)                                            \
  do {                                                               \
    if (!(cond)) [[unlikely]] {                                      \
      ::ferry::internal::CheckFailed(__FILE__, __LINE__, #cond, {}); \
    }                                                                \
  } while (false)

#define FERRY_CHECK_MSG(cond, msg)                                      \
  do {                                                                  \
    if (!(cond)) [[unlikely]] {                                         \
      ::ferry::internal::CheckFailed(__FILE__, __LINE__, #cond, (msg)); \
    }                                                                   \
  } while (false)
