#include "ferry/delta/schema_json.h"

#include <gtest/gtest.h>

namespace ferry::delta {
namespace {

using columnar::DataType;
using columnar::TypeId;

TEST(SchemaJsonTest, ParsesSparkSchemaAndRoundTrips) {
  // The nested schema of golden table data-reader-nested-struct plus every primitive type.
  std::string json =
      R"({"type":"struct","fields":[)"
      R"({"name":"a","type":"integer","nullable":true,"metadata":{}},)"
      R"({"name":"b","type":"long","nullable":false,"metadata":{"comment":"x","delta.columnMapping.id":5}},)"
      R"j({"name":"c","type":"decimal(12,2)","nullable":true,"metadata":{}},)j"
      R"({"name":"d","type":"timestamp_ntz","nullable":true,"metadata":{}},)"
      R"({"name":"e","type":{"type":"array","elementType":"string","containsNull":false},"nullable":true,"metadata":{}},)"
      R"({"name":"f","type":{"type":"map","keyType":"string","valueType":{"type":"struct","fields":[{"name":"g","type":"date","nullable":true,"metadata":{}}]},"valueContainsNull":true},"nullable":true,"metadata":{}},)"
      R"({"name":"h","type":"timestamp","nullable":true,"metadata":{}},)"
      R"({"name":"i","type":"byte","nullable":true,"metadata":{}},)"
      R"({"name":"j","type":"short","nullable":true,"metadata":{}},)"
      R"({"name":"k","type":"float","nullable":true,"metadata":{}},)"
      R"({"name":"l","type":"double","nullable":true,"metadata":{}},)"
      R"({"name":"m","type":"boolean","nullable":true,"metadata":{}},)"
      R"({"name":"n","type":"binary","nullable":true,"metadata":{}})"
      R"(]})";
  auto schema = ParseSchemaJson(json);
  ASSERT_TRUE(schema.ok()) << schema.status().ToString();
  ASSERT_EQ((*schema)->num_fields(), 13);
  EXPECT_EQ((*schema)->field(1).nullable, false);
  EXPECT_EQ((*schema)->field(1).metadata.size(), 2u);
  EXPECT_EQ((*schema)->field(2).type->precision(), 12);
  EXPECT_FALSE((*schema)->field(3).type->utc_adjusted());
  EXPECT_TRUE((*schema)->field(6).type->utc_adjusted());
  EXPECT_EQ((*schema)->field(4).type->id(), TypeId::kList);
  EXPECT_FALSE((*schema)->field(4).type->element().nullable);
  EXPECT_EQ((*schema)->field(5).type->value().type->id(), TypeId::kStruct);
  auto back = SchemaToJson(**schema);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, json);
}

TEST(SchemaJsonTest, BadSchemasAreErrorsNotCrashes) {
  EXPECT_EQ(ParseSchemaJson("not json").status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(ParseSchemaJson(R"({"type":"array"})").status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(ParseSchemaJson(R"({"type":"struct","fields":[{"name":"a"}]})").status().code(),
            StatusCode::kDataLoss);
  EXPECT_EQ(ParseSchemaJson(R"({"type":"struct","fields":[{"name":"a","type":"int128"}]})")
                .status()
                .code(),
            StatusCode::kDataLoss);
  EXPECT_EQ(ParseSchemaJson(R"j({"type":"struct","fields":[{"name":"a","type":"decimal(40,2)"}]})j")
                .status()
                .code(),
            StatusCode::kNotSupported);
  auto variant = ParseSchemaJson(R"({"type":"struct","fields":[{"name":"v","type":"variant"}]})");
  EXPECT_EQ(variant.status().code(), StatusCode::kNotSupported);
  EXPECT_NE(variant.status().message().find("'v'"), std::string::npos);
  std::string deep = R"({"type":"struct","fields":[{"name":"a","type":)";
  for (int i = 0; i < 200; ++i) {
    deep += R"({"type":"array","elementType":)";
  }
  deep += "\"long\"";
  for (int i = 0; i < 200; ++i) {
    deep += "}";
  }
  deep += "}]}";
  EXPECT_EQ(ParseSchemaJson(deep).status().code(), StatusCode::kDataLoss);
}

TEST(SchemaJsonTest, TypesDeltaLacksAreRefused) {
  columnar::Schema schema({columnar::Field{"u", DataType::UInt32(), true, {}}});
  EXPECT_EQ(SchemaToJson(schema).status().code(), StatusCode::kInvalidArgument);
  columnar::Schema millis(
      {columnar::Field{"t", DataType::Timestamp(columnar::TimeUnit::kMillis), true, {}}});
  EXPECT_EQ(SchemaToJson(millis).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ferry::delta
