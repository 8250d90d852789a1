#include "ferry/testing/fake_source.h"

#include <gtest/gtest.h>

namespace ferry::testing {
namespace {

class MapListener : public source::PartitionListener {
 public:
  Result<std::optional<int64_t>> OnAssigned(const source::PartitionInfo& p) override {
    assigned.push_back(p.key);
    auto it = positions.find(p.key);
    return it == positions.end() ? std::optional<int64_t>() : std::optional<int64_t>(it->second);
  }
  void OnRevoked(const source::PartitionInfo& p) override { revoked.push_back(p.key); }
  std::map<std::string, int64_t> positions;
  std::vector<std::string> assigned, revoked;
};

std::vector<std::pair<int32_t, int64_t>> Drain(FakeSource& s, size_t max) {
  std::vector<source::Message> out;
  EXPECT_TRUE(s.Poll(max, std::chrono::milliseconds(0), &out).ok());
  std::vector<std::pair<int32_t, int64_t>> got;
  for (const auto& m : out) {
    got.emplace_back(m.partition, m.position);
  }
  return got;
}

TEST(FakeSourceTest, ResumesAfterTablePositionAndInterleaves) {
  FakeSource s({.prefix = "kafka/t", .partitions = 2, .first_position = 0});
  for (int i = 0; i < 3; i++) {
    s.Produce(0, "a" + std::to_string(i));
    s.Produce(1, "b" + std::to_string(i));
  }
  MapListener l;
  l.positions["kafka/t/0"] = 1;  // 0 and 1 are committed
  ASSERT_TRUE(s.Start(&l).ok());
  auto got = Drain(s, 10);
  EXPECT_EQ(l.assigned, (std::vector<std::string>{"kafka/t/0", "kafka/t/1"}));
  EXPECT_EQ(got, (std::vector<std::pair<int32_t, int64_t>>{{0, 2}, {1, 0}, {1, 1}, {1, 2}}));
}

TEST(FakeSourceTest, RevokeRedeliverAndFailure) {
  FakeSource s({.partitions = 1, .first_position = 1});
  s.Produce(0, "x");
  s.Produce(0, "y");
  MapListener l;
  ASSERT_TRUE(s.Start(&l).ok());
  EXPECT_EQ(Drain(s, 1), (std::vector<std::pair<int32_t, int64_t>>{{0, 1}}));
  s.Redeliver(0, 1);
  EXPECT_EQ(Drain(s, 5), (std::vector<std::pair<int32_t, int64_t>>{{0, 1}, {0, 2}}));
  s.Revoke(0);
  s.Produce(0, "z");
  EXPECT_TRUE(Drain(s, 5).empty());
  EXPECT_EQ(l.revoked, std::vector<std::string>{"fake/t/0"});
  s.FailNextPoll(Unavailable("broker down"));
  std::vector<source::Message> out;
  EXPECT_EQ(s.Poll(5, std::chrono::milliseconds(0), &out).code(), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace ferry::testing
