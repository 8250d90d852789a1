#include "ferry/base/varint.h"

#include <gtest/gtest.h>

#include <limits>

namespace ferry {
namespace {

TEST(VarintTest, RoundTripsBoundaries) {
  for (uint64_t v : {uint64_t{0}, uint64_t{1}, uint64_t{127}, uint64_t{128}, uint64_t{16383},
                     uint64_t{16384}, std::numeric_limits<uint64_t>::max()}) {
    std::string buf;
    AppendVarint(&buf, v);
    const auto* p = reinterpret_cast<const uint8_t*>(buf.data());
    uint64_t back = 0;
    ASSERT_TRUE(DecodeVarint(&p, p + buf.size(), &back));
    EXPECT_EQ(back, v);
    EXPECT_EQ(p, reinterpret_cast<const uint8_t*>(buf.data()) + buf.size());
  }
  std::string buf;
  AppendVarint(&buf, 300);
  EXPECT_EQ(buf, std::string("\xAC\x02"));  // the protobuf documentation's example
}

TEST(VarintTest, TruncatedAndOverlongFail) {
  const uint8_t truncated[] = {0x80, 0x80};
  const uint8_t* p = truncated;
  uint64_t v;
  EXPECT_FALSE(DecodeVarint(&p, truncated + 2, &v));
  uint8_t overlong[11];
  std::fill(overlong, overlong + 11, 0xFF);
  p = overlong;
  EXPECT_FALSE(DecodeVarint(&p, overlong + 11, &v));
}

TEST(VarintTest, ZigZag) {
  EXPECT_EQ(ZigZagEncode(0), 0u);
  EXPECT_EQ(ZigZagEncode(-1), 1u);
  EXPECT_EQ(ZigZagEncode(1), 2u);
  EXPECT_EQ(ZigZagEncode(-2), 3u);
  for (int64_t v : {int64_t{0}, int64_t{-5}, int64_t{77}, std::numeric_limits<int64_t>::min(),
                    std::numeric_limits<int64_t>::max()}) {
    EXPECT_EQ(ZigZagDecode(ZigZagEncode(v)), v);
  }
}

}  // namespace
}  // namespace ferry
