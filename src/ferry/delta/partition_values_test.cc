#include "ferry/delta/partition_values.h"

#include <gtest/gtest.h>

namespace ferry::delta {
namespace {

using columnar::DataType;

// The golden tables show Spark's spelling (FIELD-NOTES "Delta Lake"):
//   data-reader-escaped-chars: value "bar+%21" -> dir "_2=bar+%2521" -> log "_2=bar+%252521/..."
//   data-reader-partition-values: "2021-09-08 11:11:11" -> dir "as_timestamp=2021-09-08
//     11%3A11%3A11" -> log "as_timestamp=2021-09-08%2011%253A11%253A11/..."
//   log-replay-special-characters: file "special p@#h" -> log "special%20p@%23h"
TEST(PartitionValuesTest, EscapingMatchesSpark) {
  EXPECT_EQ(EscapePartitionPathName("bar+%21"), "bar+%2521");
  EXPECT_EQ(EncodeUriPath("_2=bar+%2521/part-0.parquet"), "_2=bar+%252521/part-0.parquet");
  EXPECT_EQ(EscapePartitionPathName("2021-09-08 11:11:11"), "2021-09-08 11%3A11%3A11");
  EXPECT_EQ(EncodeUriPath("as_timestamp=2021-09-08 11%3A11%3A11/p"),
            "as_timestamp=2021-09-08%2011%253A11%253A11/p");
  EXPECT_EQ(EncodeUriPath("special p@#h"), "special%20p@%23h");
  EXPECT_EQ(EscapePartitionPathName("A/A"), "A%2FA");
  EXPECT_EQ(EscapePartitionPathName("a\x01\"#%'*/:=?\\\x7f{[]^ ok"),
            "a%01%22%23%25%27%2A%2F%3A%3D%3F%5C%7F%7B%5B%5D%5E ok");
  EXPECT_EQ(EscapePartitionPathName("ünï €"), "ünï €");
  EXPECT_EQ(EncodeUriPath("ünï"), "ünï");
  EXPECT_EQ(*DecodeUriPath("_2=bar+%252521/x"), "_2=bar+%2521/x");
  EXPECT_EQ(UnescapePartitionPathName("bar+%2521"), "bar+%21");
  EXPECT_FALSE(DecodeUriPath("bad%2").ok());
  EXPECT_FALSE(DecodeUriPath("bad%zz").ok());
}

TEST(PartitionValuesTest, SerializesPerType) {
  auto ts = columnar::MakeColumn(DataType::Timestamp());
  ts->As<columnar::TimestampColumn>()->Append(1631099471000000);
  ts->AppendNull();
  auto v = SerializePartitionValue(*ts, 0);
  EXPECT_EQ(v.log_value, "2021-09-08T11:11:11.000000Z");
  EXPECT_EQ(v.directory_value, "2021-09-08 11:11:11");
  auto null_value = SerializePartitionValue(*ts, 1);
  EXPECT_FALSE(null_value.log_value.has_value());
  EXPECT_EQ(null_value.directory_value, kHiveDefaultPartition);

  auto ntz = columnar::MakeColumn(DataType::Timestamp(columnar::TimeUnit::kMicros, false));
  ntz->As<columnar::TimestampColumn>()->Append(1373043660123456);
  EXPECT_EQ(SerializePartitionValue(*ntz, 0).log_value, "2013-07-05 17:01:00.123456");

  auto str = columnar::MakeColumn(DataType::String());
  str->As<columnar::BinaryColumn>()->Append("");
  str->As<columnar::BinaryColumn>()->Append("a=b/c");
  EXPECT_FALSE(SerializePartitionValue(*str, 0).log_value.has_value());
  EXPECT_EQ(SerializePartitionValue(*str, 1).log_value, "a=b/c");
  EXPECT_EQ(PartitionDirectory({"s", "n"}, {"a=b/c", std::string(kHiveDefaultPartition)}),
            "s=a%3Db%2Fc/n=__HIVE_DEFAULT_PARTITION__");

  auto dbl = columnar::MakeColumn(DataType::Float64());
  dbl->As<columnar::DoubleColumn>()->Append(1.0);
  EXPECT_EQ(SerializePartitionValue(*dbl, 0).log_value, "1.0");
  auto dec = columnar::MakeColumn(DataType::Decimal(5, 2));
  dec->As<columnar::DecimalColumn>()->Append(-150);
  EXPECT_EQ(SerializePartitionValue(*dec, 0).log_value, "-1.50");
  auto date = columnar::MakeColumn(DataType::Date());
  date->As<columnar::DateColumn>()->Append(18878);
  EXPECT_EQ(SerializePartitionValue(*date, 0).log_value, "2021-09-08");
  auto b = columnar::MakeColumn(DataType::Boolean());
  b->As<columnar::BooleanColumn>()->Append(1);
  EXPECT_EQ(SerializePartitionValue(*b, 0).log_value, "true");
  auto i8 = columnar::MakeColumn(DataType::Int8());
  i8->As<columnar::Int8Column>()->Append(-7);
  EXPECT_EQ(SerializePartitionValue(*i8, 0).log_value, "-7");
}

TEST(PartitionValuesTest, ParsesBackPerType) {
  auto ts = columnar::MakeColumn(DataType::Timestamp());
  ASSERT_TRUE(AppendPartitionValue("2021-09-08 11:11:11", ts.get()).ok());
  ASSERT_TRUE(AppendPartitionValue("2024-01-01T10:00:00.000000Z", ts.get()).ok());
  ASSERT_TRUE(AppendPartitionValue(std::nullopt, ts.get()).ok());
  EXPECT_EQ(ts->As<columnar::TimestampColumn>()->Value(0), 1631099471000000);
  EXPECT_EQ(ts->As<columnar::TimestampColumn>()->Value(1), 1704103200000000);
  EXPECT_TRUE(ts->IsNull(2));
  auto i32 = columnar::MakeColumn(DataType::Int32());
  EXPECT_FALSE(AppendPartitionValue("x1", i32.get()).ok());
  EXPECT_TRUE(AppendPartitionValue("-12", i32.get()).ok());
  auto dec = columnar::MakeColumn(DataType::Decimal(38, 18));
  EXPECT_TRUE(AppendPartitionValue("1", dec.get()).ok());
  EXPECT_FALSE(CheckPartitionColumnType({"x", DataType::Binary(), true, {}}).ok());
  EXPECT_FALSE(CheckPartitionColumnType({"x", DataType::List(DataType::Int32()), true, {}}).ok());
}

}  // namespace
}  // namespace ferry::delta
