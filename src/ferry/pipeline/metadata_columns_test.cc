#include "ferry/pipeline/metadata_columns.h"

#include <gtest/gtest.h>

#include "ferry/columnar/ddl.h"

namespace ferry::pipeline {
namespace {

TEST(MetadataColumnsTest, MissingColumnsAreAppendedWithDefaultTypes) {
  auto declared = columnar::ParseDdlSchema("id BIGINT, _offset BIGINT");
  ASSERT_TRUE(declared.ok());
  auto schema = ResolveSchema(*declared, {{"offset", "_offset"},
                                          {"partition", "_partition"},
                                          {"headers", "_headers"},
                                          {"timestamp", "_ts"}});
  ASSERT_TRUE(schema.ok()) << schema.status().ToString();
  EXPECT_EQ((*schema)->ToString(),
            "id BIGINT, _offset BIGINT, _headers MAP<STRING, STRING>, _partition INT, "
            "_ts TIMESTAMP");
}

TEST(MetadataColumnsTest, WrongTypesAndUnknownKindsAreNamed) {
  auto declared = columnar::ParseDdlSchema("id BIGINT, _offset STRING");
  ASSERT_TRUE(declared.ok());
  auto bad = ResolveSchema(*declared, {{"offset", "_offset"}});
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("_offset"), std::string::npos);
  auto unknown = ResolveSchema(*declared, {{"ofset", "_o"}});
  EXPECT_NE(unknown.status().message().find("ofset"), std::string::npos);
  auto shared = ResolveSchema(*declared, {{"offset", "_x"}, {"sequence", "_x"}});
  EXPECT_EQ(shared.status().code(), StatusCode::kInvalidArgument);
}

TEST(MetadataColumnsTest, WriterFillsOneRowPerMessage) {
  auto declared = columnar::ParseDdlSchema("id BIGINT");
  auto schema = ResolveSchema(*declared, {{"key", "k"}, {"headers", "h"}, {"msg_id", "m"}});
  ASSERT_TRUE(schema.ok());
  auto writer = MetadataWriter::Create(**schema, {{"key", "k"}, {"headers", "h"}, {"msg_id", "m"}});
  ASSERT_TRUE(writer.ok());
  columnar::RecordBatch batch = columnar::RecordBatch::MakeEmpty(*schema);
  std::vector<source::Header> headers = {{"a", "1"}, {"b", "2"}};
  source::Message m{.position = 5, .key = "key-1", .headers = headers};
  batch.mutable_column(0)->As<columnar::Int64Column>()->Append(1);
  writer->Append(m, &batch);
  EXPECT_TRUE(batch.Validate().ok());
  EXPECT_EQ(batch.num_rows(), 1);
  // Appended in kind-name order: headers, key, msg_id.
  EXPECT_EQ(batch.column(2).As<columnar::BinaryColumn>()->Value(0), "key-1");
  EXPECT_TRUE(batch.column(3).IsNull(0));  // no msg id
  EXPECT_EQ(batch.column(1).As<columnar::MapColumn>()->MapLength(0), 2);
}

}  // namespace
}  // namespace ferry::pipeline
