#include "ferry/base/check.h"

#include <cstdio>
#include <cstdlib>

namespace ferry::internal {

void CheckFailed(const char* file, int line, const char* condition, std::string_view message) {
  std::fprintf(stderr, "FATAL %s:%d: check failed: %s%s%.*s\n", file, line, condition,
               message.empty() ? "" : ": ", static_cast<int>(message.size()), message.data());
  std::fflush(stderr);
  std::abort();
}

}  // namespace ferry::internal
