#include "ferry/app/allocator.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <thread>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace ferry::app {

bool TuneAllocator() {
#if defined(__GLIBC__)
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (tunables != nullptr && std::strstr(tunables, "glibc.malloc.") != nullptr) {
    return false;
  }
  // mallopt returns 1 on success; a sanitizer's interceptor does not take the settings.
  const int arenas = std::max(kMinArenas, static_cast<int>(std::thread::hardware_concurrency()));
  return mallopt(M_MMAP_THRESHOLD, kMmapThresholdBytes) == 1 &&
         mallopt(M_TRIM_THRESHOLD, kTrimThresholdBytes) == 1 && mallopt(M_ARENA_MAX, arenas) == 1;
#else
  return false;
#endif
}

}  // namespace ferry::app
