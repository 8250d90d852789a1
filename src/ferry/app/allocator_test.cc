#include "ferry/app/allocator.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace ferry::app {
namespace {

long MinorFaults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

// One round of what a batch does: 30 blocks of 1 MiB allocated and written, then all freed.
void AllocateTouchAndFree() {
  constexpr size_t kBlocks = 30;
  constexpr size_t kBlockBytes = 1 << 20;
  std::vector<char*> blocks;
  for (size_t i = 0; i < kBlocks; ++i) {
    auto* block = static_cast<char*>(std::malloc(kBlockBytes));
    ASSERT_NE(block, nullptr);
    std::memset(block, static_cast<int>(i), kBlockBytes);
    blocks.push_back(block);
  }
  for (char* block : blocks) {
    std::free(block);
  }
}

TEST(AllocatorTest, LaterBatchesReuseThePagesOfTheFirst) {
  if (!TuneAllocator()) {
    GTEST_SKIP() << "SKIPPED: the allocator settings do not apply here (a sanitizer's allocator, "
                    "a C library other than glibc, or GLIBC_TUNABLES sets malloc tunables)";
  }
  AllocateTouchAndFree();  // maps the pages
  long before = MinorFaults();
  for (int round = 0; round < 10; ++round) {
    AllocateTouchAndFree();
  }
  long faults = MinorFaults() - before;
  // Ten rounds touch 300 MiB (76,800 pages). With glibc's defaults each round faults its 30 MiB
  // in again (about 77,000 faults); kept in the heap, the rounds fault almost nothing.
  EXPECT_LT(faults, 30 * 256) << faults << " minor page faults in 10 rounds";
}

TEST(AllocatorTest, MallocTunablesInTheEnvironmentWin) {
  const char* old = std::getenv("GLIBC_TUNABLES");
  std::string saved = old != nullptr ? old : "";
  ASSERT_EQ(setenv("GLIBC_TUNABLES", "glibc.malloc.arena_max=2", 1), 0);
  EXPECT_FALSE(TuneAllocator());
  if (old != nullptr) {
    setenv("GLIBC_TUNABLES", saved.c_str(), 1);
  } else {
    unsetenv("GLIBC_TUNABLES");
  }
}

}  // namespace
}  // namespace ferry::app
