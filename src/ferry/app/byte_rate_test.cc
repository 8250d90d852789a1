#include "ferry/app/byte_rate.h"

#include <gtest/gtest.h>

namespace ferry::app {
namespace {

TEST(FormatByteRateTest, PicksTheUnitThatFitsTheNumber) {
  EXPECT_EQ(FormatByteRate(0), "0 B/s");
  EXPECT_EQ(FormatByteRate(0.5), "0.5 B/s");
  EXPECT_EQ(FormatByteRate(999), "999 B/s");
  EXPECT_EQ(FormatByteRate(999.6), "1 kB/s");
  EXPECT_EQ(FormatByteRate(1000), "1 kB/s");
  EXPECT_EQ(FormatByteRate(1400), "1.4 kB/s");  // was "0.0014 MB/s"
  EXPECT_EQ(FormatByteRate(12345), "12.3 kB/s");
  EXPECT_EQ(FormatByteRate(123456), "123 kB/s");
  EXPECT_EQ(FormatByteRate(1.5e6), "1.5 MB/s");
  EXPECT_EQ(FormatByteRate(2.5e9), "2.5 GB/s");
  EXPECT_EQ(FormatByteRate(7e12), "7 TB/s");
  EXPECT_EQ(FormatByteRate(5e15), "5000 TB/s");  // no unit past TB/s
}

TEST(FormatByteRateTest, RoundsToThreeSignificantDigitsAtEachBoundary) {
  EXPECT_EQ(FormatByteRate(9.994), "9.99 B/s");
  EXPECT_EQ(FormatByteRate(9.996), "10 B/s");
  EXPECT_EQ(FormatByteRate(99.94), "99.9 B/s");
  EXPECT_EQ(FormatByteRate(99.96), "100 B/s");
  EXPECT_EQ(FormatByteRate(1050), "1.05 kB/s");
  EXPECT_EQ(FormatByteRate(-1400), "-1.4 kB/s");
}

}  // namespace
}  // namespace ferry::app
