#include "ferry/pipeline/transform_stage.h"

#include <gtest/gtest.h>

#include "ferry/columnar/ddl.h"

namespace ferry::pipeline {
namespace {

columnar::SchemaPtr Input() {
  auto schema = columnar::ParseDdlSchema("id BIGINT NOT NULL, dateTime STRING");
  EXPECT_TRUE(schema.ok());
  return std::make_shared<const columnar::Schema>(*schema);
}

columnar::RecordBatch Rows(const columnar::SchemaPtr& schema) {
  columnar::RecordBatch batch = columnar::RecordBatch::MakeEmpty(schema);
  const char* dates[] = {"11/30/2026 - 07:10:00 +0000", "12/01/2026 - 23:30:00 -0500", "not a date",
                         nullptr};
  for (int64_t i = 0; i < 4; ++i) {
    batch.mutable_column(0)->As<columnar::Int64Column>()->Append(i);
    if (dates[i] == nullptr) {
      batch.mutable_column(1)->AppendNull();
    } else {
      batch.mutable_column(1)->As<columnar::BinaryColumn>()->Append(dates[i]);
    }
  }
  return batch;
}

// The Spark job's derived partition column: from_unixtime(unix_timestamp(dateTime, pattern),
// 'MM/dd/yyyy'). Spark gives 11/30/2026 for the first, 12/02/2026 for the second (23:30 -05:00 is
// 04:30 UTC the next day, in the UTC session zone), and null for a malformed or null date.
TEST(TransformStageTest, DateOnlyAsTheSparkJobDerivedIt) {
  auto stage = TransformStage::Create(
      Input(), {.columns = {{.name = "date_only",
                             .expr = "from_unixtime(unix_timestamp(dateTime, 'MM/dd/yyyy - "
                                     "HH:mm:ss Z'), 'MM/dd/yyyy')"}}});
  ASSERT_TRUE(stage.ok()) << stage.status().ToString();
  EXPECT_EQ((*stage)->table_schema()->ToString(),
            "id BIGINT NOT NULL, dateTime STRING, date_only STRING");
  EXPECT_EQ((*stage)->derived_names(), std::vector<std::string>{"date_only"});
  int64_t filtered = -1;
  columnar::RecordBatch out = (*stage)->Apply(Rows(Input()), &filtered);
  EXPECT_EQ(filtered, 0);
  ASSERT_EQ(out.num_rows(), 4);
  const auto* d = out.column(2).As<columnar::BinaryColumn>();
  EXPECT_EQ(d->Value(0), "11/30/2026");
  EXPECT_EQ(d->Value(1), "12/02/2026");
  EXPECT_TRUE(out.column(2).IsNull(2));
  EXPECT_TRUE(out.column(2).IsNull(3));
}

TEST(TransformStageTest, WhereDropsRowsThatAreNotTrue) {
  auto stage = TransformStage::Create(Input(), {.columns = {{.name = "even", .expr = "id % 2 = 0"}},
                                                .where = "even AND dateTime IS NOT NULL"});
  ASSERT_TRUE(stage.ok()) << stage.status().ToString();
  int64_t filtered = -1;
  columnar::RecordBatch out = (*stage)->Apply(Rows(Input()), &filtered);
  EXPECT_EQ(filtered, 2);  // 1 and 3 are odd
  ASSERT_EQ(out.num_rows(), 2);
  EXPECT_EQ(out.column(0).As<columnar::Int64Column>()->Value(1), 2);
}

TEST(TransformStageTest, ErrorsNameTheExpression) {
  auto unknown = TransformStage::Create(
      Input(), {.columns = {{.name = "x", .expr = "upper(dateTim)", .origin = "f.toml:3: expr"}}});
  EXPECT_EQ(unknown.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.status().message().find("f.toml:3: expr"), std::string::npos)
      << unknown.status().ToString();
  auto taken = TransformStage::Create(Input(), {.columns = {{.name = "id", .expr = "1"}}});
  EXPECT_EQ(taken.status().code(), StatusCode::kInvalidArgument);
  auto not_bool = TransformStage::Create(Input(), {.where = "id + 1"});
  EXPECT_NE(not_bool.status().message().find("BOOLEAN"), std::string::npos);
}

TEST(TransformStageTest, InputSchemaLeavesTheDerivedColumnsOut) {
  auto table = columnar::ParseDdlSchema("id BIGINT, d STRING, e STRING");
  columnar::SchemaPtr input = InputSchema(*table, {{.name = "d", .expr = "''"}});
  EXPECT_EQ(input->ToString(), "id BIGINT, e STRING");
}

}  // namespace
}  // namespace ferry::pipeline
