#include "ferry/parquet/schema_writer.h"

#include <gtest/gtest.h>

#include "ferry/columnar/schema_for_test.h"

namespace ferry::parquet {
namespace {

using columnar::F;

using columnar::DataType;
using columnar::Field;
using columnar::Schema;
using columnar::TimeUnit;

TEST(SchemaWriterTest, NestedLayout) {
  Schema schema({
      F("id", DataType::Int64(), false),
      F("tags", DataType::List(DataType::String(), false)),
      F("attrs", DataType::Map(DataType::String(), DataType::Int32())),
      F("loc",
        DataType::Struct({F("lat", DataType::Float64()), F("lon", DataType::Float64(), false)})),
  });
  Result<ParquetSchema> ps = BuildParquetSchema(schema);
  ASSERT_TRUE(ps.ok()) << ps.status().ToString();
  const auto& e = ps->elements;
  std::vector<std::string> names;
  for (const auto& x : e) {
    names.push_back(x.name);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"schema", "id", "tags", "list", "element", "attrs",
                                             "key_value", "key", "value", "loc", "lat", "lon"}));
  EXPECT_EQ(e[0].num_children, 4);
  EXPECT_EQ(e[1].repetition_type, FieldRepetitionType::kRequired);
  EXPECT_EQ(e[2].converted_type, ConvertedType::kList);
  EXPECT_EQ(e[2].logical_type->kind, LogicalType::Kind::kList);
  EXPECT_EQ(e[3].repetition_type, FieldRepetitionType::kRepeated);
  EXPECT_EQ(e[4].repetition_type, FieldRepetitionType::kRequired);
  EXPECT_EQ(e[4].converted_type, ConvertedType::kUtf8);
  EXPECT_EQ(e[5].converted_type, ConvertedType::kMap);
  EXPECT_EQ(e[6].repetition_type, FieldRepetitionType::kRepeated);
  EXPECT_EQ(e[6].num_children, 2);
  EXPECT_EQ(e[7].repetition_type, FieldRepetitionType::kRequired);
  EXPECT_EQ(e[8].repetition_type, FieldRepetitionType::kOptional);
  EXPECT_EQ(e[9].num_children, 2);

  ASSERT_EQ(ps->leaves.size(), 6u);
  const ColumnDescriptor& tags = ps->leaves[1];
  EXPECT_EQ(tags.PathString(), "tags.list.element");
  EXPECT_EQ(tags.max_definition_level, 2);
  EXPECT_EQ(tags.max_repetition_level, 1);
  EXPECT_EQ(ps->leaves[2].PathString(), "attrs.key_value.key");
  EXPECT_EQ(ps->leaves[2].max_definition_level, 2);
  EXPECT_EQ(ps->leaves[3].max_definition_level, 3);
  EXPECT_EQ(ps->leaves[5].PathString(), "loc.lon");
  EXPECT_EQ(ps->leaves[5].max_definition_level, 1);
  EXPECT_EQ(ps->paths[3].nodes.back().step, PathNode::Step::kLeaf);
  EXPECT_EQ(ps->paths[3].nodes[0].step, PathNode::Step::kMapValue);
  EXPECT_TRUE(ps->paths[3].has_repetition);
  EXPECT_FALSE(ps->paths[5].has_repetition);
}

TEST(SchemaWriterTest, LeafTypes) {
  struct Case {
    columnar::DataTypePtr type;
    PhysicalType physical;
    std::optional<ConvertedType> converted;
    int32_t type_length;
  };
  std::vector<Case> cases = {
      {DataType::Boolean(), PhysicalType::kBoolean, std::nullopt, 0},
      {DataType::Int8(), PhysicalType::kInt32, ConvertedType::kInt8, 0},
      {DataType::UInt16(), PhysicalType::kInt32, ConvertedType::kUint16, 0},
      {DataType::UInt64(), PhysicalType::kInt64, ConvertedType::kUint64, 0},
      {DataType::Json(), PhysicalType::kByteArray, ConvertedType::kJson, 0},
      {DataType::Binary(), PhysicalType::kByteArray, std::nullopt, 0},
      {DataType::FixedBinary(16), PhysicalType::kFixedLenByteArray, std::nullopt, 16},
      {DataType::Date(), PhysicalType::kInt32, ConvertedType::kDate, 0},
      {DataType::Timestamp(TimeUnit::kMillis, true), PhysicalType::kInt64,
       ConvertedType::kTimestampMillis, 0},
      {DataType::Timestamp(TimeUnit::kMicros, false), PhysicalType::kInt64, std::nullopt, 0},
      {DataType::Decimal(9, 2), PhysicalType::kInt32, ConvertedType::kDecimal, 0},
      {DataType::Decimal(18, 2), PhysicalType::kInt64, ConvertedType::kDecimal, 0},
      {DataType::Decimal(19, 2), PhysicalType::kFixedLenByteArray, ConvertedType::kDecimal, 9},
      {DataType::Decimal(38, 10), PhysicalType::kFixedLenByteArray, ConvertedType::kDecimal, 16},
  };
  for (const Case& c : cases) {
    Schema schema({F("x", c.type)});
    Result<ParquetSchema> ps = BuildParquetSchema(schema);
    ASSERT_TRUE(ps.ok()) << c.type->ToString();
    const SchemaElement& e = ps->elements[1];
    EXPECT_EQ(e.type, c.physical) << c.type->ToString();
    EXPECT_EQ(e.converted_type, c.converted) << c.type->ToString();
    EXPECT_EQ(e.type_length.value_or(0), c.type_length) << c.type->ToString();
  }
  Result<ParquetSchema> ts =
      BuildParquetSchema(Schema({F("t", DataType::Timestamp(TimeUnit::kMicros, false))}));
  EXPECT_FALSE(ts->elements[1].logical_type->is_adjusted_to_utc);
  EXPECT_EQ(ts->elements[1].logical_type->unit, TimeUnit::kMicros);
}

TEST(SchemaWriterTest, DecimalByteWidth) {
  EXPECT_EQ(DecimalByteWidth(1), 1);
  EXPECT_EQ(DecimalByteWidth(2), 1);
  EXPECT_EQ(DecimalByteWidth(3), 2);
  EXPECT_EQ(DecimalByteWidth(9), 4);
  EXPECT_EQ(DecimalByteWidth(10), 5);
  EXPECT_EQ(DecimalByteWidth(18), 8);
  EXPECT_EQ(DecimalByteWidth(19), 9);
  EXPECT_EQ(DecimalByteWidth(38), 16);
}

TEST(SchemaWriterTest, RejectsEmptyStruct) {
  Schema schema({F("s", DataType::Struct({}))});
  EXPECT_EQ(BuildParquetSchema(schema).status().code(), StatusCode::kInvalidArgument);
}

TEST(SchemaWriterTest, DescribeLeavesRejectsMalformedSchemas) {
  SchemaElement root;
  root.name = "r";
  root.num_children = 3;
  SchemaElement leaf;
  leaf.name = "x";
  leaf.type = PhysicalType::kInt32;
  leaf.repetition_type = FieldRepetitionType::kOptional;
  EXPECT_FALSE(DescribeLeaves({root, leaf}).ok());  // children past the end
  root.num_children = 1;
  EXPECT_FALSE(DescribeLeaves({root, leaf, leaf}).ok());  // leftovers
  EXPECT_TRUE(DescribeLeaves({root, leaf}).ok());
  SchemaElement group;
  group.name = "g";
  group.repetition_type = FieldRepetitionType::kOptional;
  group.num_children = 1;
  std::vector<SchemaElement> deep = {root};
  for (int i = 0; i < 200; ++i) {
    deep.push_back(group);
  }
  deep.push_back(leaf);
  EXPECT_FALSE(DescribeLeaves(deep).ok());  // too deep
  SchemaElement flba = leaf;
  flba.type = PhysicalType::kFixedLenByteArray;
  EXPECT_FALSE(DescribeLeaves({root, flba}).ok());  // no type_length
}

}  // namespace
}  // namespace ferry::parquet
