#include "ferry/delta/value_format.h"

#include <gtest/gtest.h>

namespace ferry::delta {
namespace {

TEST(ValueFormatTest, Dates) {
  EXPECT_EQ(FormatDate(0), "1970-01-01");
  EXPECT_EQ(FormatDate(18878), "2021-09-08");
  EXPECT_EQ(FormatDate(-1), "1969-12-31");
  EXPECT_EQ(*ParseDate("2021-09-08"), 18878);
  EXPECT_EQ(*ParseDate("2000-02-29"), 11016);
  EXPECT_FALSE(ParseDate("2001-02-29").ok());
  EXPECT_FALSE(ParseDate("2021-9-8").ok());
}

TEST(ValueFormatTest, Timestamps) {
  int64_t t = 1631099471000000;  // 2021-09-08 11:11:11 UTC
  EXPECT_EQ(FormatTimestampMicros(t, TimestampStyle::kSparkCast), "2021-09-08 11:11:11");
  EXPECT_EQ(FormatTimestampMicros(t + 123400, TimestampStyle::kSparkCast),
            "2021-09-08 11:11:11.1234");
  EXPECT_EQ(FormatTimestampMicros(t, TimestampStyle::kIsoMicrosZ), "2021-09-08T11:11:11.000000Z");
  EXPECT_EQ(FormatTimestampMicros(t + 123999, TimestampStyle::kStatsMillis),
            "2021-09-08T11:11:11.123Z");
  EXPECT_EQ(FormatTimestampMicros(-1, TimestampStyle::kStatsMillisNtz), "1969-12-31T23:59:59.999");
  EXPECT_EQ(*ParseTimestampMicros("2021-09-08 11:11:11"), t);
  EXPECT_EQ(*ParseTimestampMicros("2021-09-08T11:11:11.000000Z"), t);
  EXPECT_EQ(*ParseTimestampMicros("2021-09-08T03:11:11.5-08:00"), t + 500000);
  EXPECT_EQ(*ParseTimestampMicros("2021-09-08"), t - (11 * 3600 + 11 * 60 + 11) * 1000000LL);
  EXPECT_FALSE(ParseTimestampMicros("2021-09-08 25:00:00").ok());
  EXPECT_FALSE(ParseTimestampMicros("yesterday").ok());
}

TEST(ValueFormatTest, JavaDoubles) {
  EXPECT_EQ(FormatJavaDouble(0.0), "0.0");
  EXPECT_EQ(FormatJavaDouble(1.0), "1.0");
  EXPECT_EQ(FormatJavaDouble(-2.5), "-2.5");
  EXPECT_EQ(FormatJavaDouble(0.001), "0.001");
  EXPECT_EQ(FormatJavaDouble(0.0001), "1.0E-4");
  EXPECT_EQ(FormatJavaDouble(1234567.0), "1234567.0");
  EXPECT_EQ(FormatJavaDouble(12345678.0), "1.2345678E7");
  EXPECT_EQ(FormatJavaDouble(1e10), "1.0E10");
  EXPECT_EQ(FormatJavaFloat(0.1f), "0.1");
  EXPECT_EQ(FormatJavaDouble(0.1), "0.1");
}

TEST(ValueFormatTest, Decimals) {
  EXPECT_EQ(FormatDecimal(12345, 2), "123.45");
  EXPECT_EQ(FormatDecimal(-5, 3), "-0.005");
  EXPECT_EQ(FormatDecimal(7, 0), "7");
  EXPECT_EQ(*ParseDecimal("123.45", 2), 12345);
  EXPECT_EQ(*ParseDecimal("-0.005", 3), -5);
  EXPECT_EQ(*ParseDecimal("1E+2", 1), 1000);
  EXPECT_EQ(*ParseDecimal("1.50", 1), 15);
  EXPECT_FALSE(ParseDecimal("1.55", 1).ok());
  EXPECT_FALSE(ParseDecimal("abc", 1).ok());
}

}  // namespace
}  // namespace ferry::delta
