#include "ferry/parquet/page_arena.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

namespace ferry::parquet {
namespace {

TEST(PageArenaTest, CommittedBytesStayWhileLaterPagesAreAdded) {
  PageArena arena;
  char* a = arena.Reserve(1000);
  ASSERT_NE(a, nullptr);
  std::memset(a, 'a', 10);
  arena.Commit(10);
  char* b = arena.Reserve(5000);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b, a + 10);  // right after the committed bytes, not after the whole reservation
  std::memset(b, 'b', 5000);
  arena.Commit(5000);
  EXPECT_EQ(std::string(a, 10), std::string(10, 'a'));
  EXPECT_EQ(std::string(b, 5000), std::string(5000, 'b'));
}

TEST(PageArenaTest, ARequestThatDoesNotFitStartsAnotherSegment) {
  PageArena arena;
  constexpr size_t kBig = PageArena::kSegmentBytes - 100;
  char* a = arena.Reserve(kBig);
  ASSERT_NE(a, nullptr);
  std::memset(a, 'x', kBig);
  arena.Commit(kBig);
  char* b = arena.Reserve(1000);  // 100 bytes are left in the first segment
  ASSERT_NE(b, nullptr);
  EXPECT_TRUE(b < a || b >= a + PageArena::kSegmentBytes);
  std::memset(b, 'y', 1000);
  arena.Commit(1000);
  EXPECT_EQ(a[kBig - 1], 'x');
  EXPECT_EQ(arena.Reserve(PageArena::kSegmentBytes + 1), nullptr);  // the caller allocates it
}

TEST(PageArenaTest, ResetReusesTheMemory) {
  PageArena arena;
  char* first = arena.Reserve(3 << 20);
  ASSERT_NE(first, nullptr);
  arena.Commit(3 << 20);
  size_t populated = arena.populated_bytes();
  EXPECT_GE(populated, size_t{3} << 20);
  arena.Reset();
  char* again = arena.Reserve(3 << 20);
  EXPECT_EQ(again, first);
  arena.Commit(3 << 20);
  EXPECT_EQ(arena.populated_bytes(), populated);  // nothing new was mapped
}

// The THP mode the kernel is in ("always", "madvise", "never"), or "" when it has no THP.
std::string ThpMode() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  std::getline(in, line);
  size_t open = line.find('[');
  size_t close = line.find(']');
  return open == std::string::npos || close == std::string::npos
             ? ""
             : line.substr(open + 1, close - open - 1);
}

// The "THPeligible" value /proc/self/smaps gives the mapping that holds `p`, or -1.
int ThpEligible(const void* p) {
  std::ifstream in("/proc/self/smaps");
  const uintptr_t at = reinterpret_cast<uintptr_t>(p);
  bool inside = false;
  std::string line;
  while (std::getline(in, line)) {
    unsigned long from = 0;
    unsigned long to = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &from, &to) == 2 && line.find(':') > line.find('-')) {
      inside = from <= at && at < to;
    } else if (inside && line.rfind("THPeligible:", 0) == 0) {
      return std::stoi(line.substr(12));
    }
  }
  return -1;
}

TEST(PageArenaTest, SegmentsStartOnAHugePageAndAreAdvisedForHugePages) {
  PageArena arena;
  char* a = arena.Reserve(1000);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % PageArena::kHugePageBytes, 0u);
  EXPECT_EQ(arena.populated_bytes(), PageArena::kHugePageBytes);  // one step: one huge page
  arena.Commit(1000);
  const std::string mode = ThpMode();
  if (mode != "always" && mode != "madvise") {
    GTEST_SKIP() << "THIS HOST HAS NO TRANSPARENT HUGE PAGES (mode '" << mode
                 << "'): the segment's huge-page advice is not checked";
  }
  EXPECT_EQ(ThpEligible(a), 1) << "THP mode " << mode;
  // A second segment is aligned and advised too.
  char* b = arena.Reserve(PageArena::kSegmentBytes - 10);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b) % PageArena::kHugePageBytes, 0u);
  EXPECT_EQ(ThpEligible(b), 1);
}

}  // namespace
}  // namespace ferry::parquet
