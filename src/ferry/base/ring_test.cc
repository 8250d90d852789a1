#include "ferry/base/ring.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <random>
#include <vector>

namespace ferry {
namespace {

std::vector<int64_t> Contents(const Ring<int64_t>& r) {
  std::vector<int64_t> out;
  r.ForEachWhile([&](int64_t v) {
    out.push_back(v);
    return true;
  });
  return out;
}

TEST(RingTest, KeepsOrderAcrossWrapsAndGrowthWhileWrapped) {
  Ring<int64_t> r;
  // Fill, drain most, refill past the end of the buffer, then grow while the front is not at
  // slot 0: every value comes back in order.
  for (int64_t i = 0; i < 16; ++i) {
    r.push_back(i);
  }
  ASSERT_EQ(r.capacity(), 16u);
  for (int i = 0; i < 12; ++i) {
    r.pop_front();
  }
  for (int64_t i = 16; i < 40; ++i) {
    r.push_back(i);  // wraps at 28, grows at 32 with the front at slot 12
  }
  EXPECT_EQ(r.capacity(), 32u);
  ASSERT_EQ(r.size(), 28u);
  for (size_t i = 0; i < r.size(); ++i) {
    EXPECT_EQ(r[i], static_cast<int64_t>(12 + i)) << i;
  }
  EXPECT_EQ(r.front(), 12);
  EXPECT_EQ(r.back(), 39);
}

TEST(RingTest, MatchesADequeUnderRandomPushesAndPops) {
  Ring<int64_t> r;
  std::deque<int64_t> d;
  std::mt19937 rng(7);
  int64_t next = 0;
  for (int step = 0; step < 100000; ++step) {
    if (rng() % 3 != 0 || d.empty()) {
      r.push_back(next);
      d.push_back(next);
      ++next;
    } else {
      ASSERT_EQ(r.front(), d.front());
      r.pop_front();
      d.pop_front();
    }
    ASSERT_EQ(r.size(), d.size());
  }
  EXPECT_EQ(Contents(r), std::vector<int64_t>(d.begin(), d.end()));
}

TEST(RingTest, ClearKeepsCapacityAndForEachWhileStops) {
  Ring<int64_t> r;
  for (int64_t i = 0; i < 100; ++i) {
    r.push_back(i);
  }
  const size_t capacity = r.capacity();
  r.clear();
  EXPECT_TRUE(r.empty());
  EXPECT_EQ(r.capacity(), capacity);
  for (int64_t i = 0; i < 5; ++i) {
    r.push_back(i * 10);
  }
  std::vector<int64_t> seen;
  r.ForEachWhile([&](int64_t v) {
    seen.push_back(v);
    return v < 20;
  });
  EXPECT_EQ(seen, (std::vector<int64_t>{0, 10, 20}));

  Ring<int64_t> moved = std::move(r);
  EXPECT_EQ(Contents(moved), (std::vector<int64_t>{0, 10, 20, 30, 40}));
  EXPECT_TRUE(r.empty());  // NOLINT(bugprone-use-after-move): a moved-from ring is empty
  r.push_back(1);
  EXPECT_EQ(r.front(), 1);
}

}  // namespace
}  // namespace ferry
