#include "ferry/transform/raw_decoder.h"

#include <gtest/gtest.h>

#include "ferry/columnar/ddl.h"
#include "ferry/columnar/schema_for_test.h"

namespace ferry::transform {
namespace {

using columnar::Ddl;

TEST(RawDecoderTest, StringColumnTakesValidUtf8Only) {
  auto schema = Ddl("_offset BIGINT, payload STRING");
  auto decoder = RawDecoder::Create(schema, {});
  ASSERT_TRUE(decoder.ok());
  EXPECT_EQ((*decoder)->output_columns(), std::vector<int>{1});
  auto batch = columnar::RecordBatch::MakeEmpty(schema);
  ASSERT_TRUE((*decoder)->Append("héllo {not json", &batch).ok());
  ASSERT_TRUE((*decoder)->Append("", &batch).ok());
  Status bad = (*decoder)->Append("ab\xff", &batch);
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.message(),
            "payload is not valid UTF-8 (byte offset 2) for STRING column 'payload'");
  EXPECT_FALSE((*decoder)->Append("\xed\xa0\x80", &batch).ok());  // an encoded surrogate
  const auto& col = *batch.column(1).As<columnar::BinaryColumn>();
  ASSERT_EQ(col.length(), 2);
  EXPECT_EQ(col.Value(0), "héllo {not json");
  EXPECT_EQ(col.Value(1), "");
  EXPECT_EQ(batch.column(0).length(), 0);  // not the decoder's column
}

TEST(RawDecoderTest, BinaryColumnTakesAnyBytes) {
  auto schema = Ddl("data BINARY");
  RawDecoderOptions options;
  options.column = "data";
  auto decoder = RawDecoder::Create(schema, options);
  ASSERT_TRUE(decoder.ok());
  auto batch = columnar::RecordBatch::MakeEmpty(schema);
  std::string bytes("\x00\xff\xfe", 3);
  ASSERT_TRUE((*decoder)->Append(bytes, &batch).ok());
  EXPECT_EQ(batch.column(0).As<columnar::BinaryColumn>()->Value(0), bytes);
}

TEST(RawDecoderTest, CreateChecksTheColumn) {
  EXPECT_EQ(RawDecoder::Create(Ddl("x STRING"), {}).status().message(),
            "raw decoder: no column 'payload' in the schema");
  EXPECT_EQ(RawDecoder::Create(Ddl("payload INT"), {}).status().message(),
            "raw decoder: column 'payload' is INT, not STRING or BINARY");
}

}  // namespace
}  // namespace ferry::transform
