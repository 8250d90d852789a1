#include "ferry/parquet/page_arena.h"

#include <gtest/gtest.h>

#include <cstring>
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

}  // namespace
}  // namespace ferry::parquet
