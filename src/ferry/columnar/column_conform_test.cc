#include "ferry/columnar/column_conform.h"

#include <gtest/gtest.h>

#include "ferry/columnar/ddl.h"

namespace ferry::columnar {
namespace {

DataTypePtr Type(std::string_view ddl) {
  auto t = ParseDdlType(ddl);
  EXPECT_TRUE(t.ok()) << ddl << ": " << t.status().ToString();
  return *t;
}

TEST(ConformTest, WhatConverts) {
  struct Case {
    const char* from;
    const char* to;
    bool ok;
  };
  const Case cases[] = {
      {"TINYINT", "BIGINT", true},
      {"INT", "BIGINT", true},
      {"BIGINT", "INT", false},
      {"INT", "DOUBLE", true},
      {"BIGINT", "DOUBLE", false},
      {"FLOAT", "DOUBLE", true},
      {"DOUBLE", "FLOAT", false},
      {"INT", "DECIMAL(10,0)", true},
      {"INT", "DECIMAL(10,1)", false},
      {"INT", "DECIMAL(11,1)", true},
      {"BIGINT", "DECIMAL(20,0)", true},
      {"BIGINT", "DECIMAL(19,0)", false},
      {"DECIMAL(10,2)", "DECIMAL(20,5)", true},
      {"DECIMAL(10,2)", "DECIMAL(10,3)", false},
      {"DECIMAL(10,2)", "DECIMAL(12,1)", false},
      {"DATE", "TIMESTAMP_NTZ", true},
      {"DATE", "TIMESTAMP", false},
      {"STRING", "BINARY", false},
      {"INT", "STRING", false},
      {"STRUCT<a: INT>", "STRUCT<a: BIGINT, b: STRING>", true},
      {"STRUCT<a: INT>", "STRUCT<A: INT>", true},
      {"STRUCT<a: INT, b: INT>", "STRUCT<a: INT>", false},
      {"STRUCT<a: INT>", "STRUCT<a: INT, b: STRING NOT NULL>", false},
      {"ARRAY<INT>", "ARRAY<BIGINT>", true},
      {"MAP<STRING, INT>", "MAP<STRING, DOUBLE>", true},
      {"ARRAY<INT>", "MAP<STRING, INT>", false},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(CanConform(*Type(c.from), *Type(c.to)), c.ok) << c.from << " -> " << c.to;
  }
}

TEST(ConformTest, WidensIntegersDecimalsAndDates) {
  auto ints = MakeColumn(DataType::Int32());
  ints->As<Int32Column>()->Append(2'000'000'000);
  ints->AppendNull();
  ints->As<Int32Column>()->Append(-7);
  auto wide = ConformColumn(std::move(ints), DataType::Int64());
  ASSERT_TRUE(wide.ok()) << wide.status().ToString();
  const auto* longs = (*wide)->As<Int64Column>();
  EXPECT_EQ(longs->Value(0), 2'000'000'000);
  EXPECT_TRUE(longs->IsNull(1));
  EXPECT_EQ(longs->Value(2), -7);

  auto bytes = MakeColumn(DataType::Int8());
  bytes->As<Int8Column>()->Append(1);
  auto dec = ConformColumn(std::move(bytes), DataType::Decimal(11, 1));
  ASSERT_TRUE(dec.ok());
  EXPECT_EQ((*dec)->As<DecimalColumn>()->Value(0), 10);  // 1.0

  auto d = MakeColumn(DataType::Decimal(10, 2));
  d->As<DecimalColumn>()->Append(6789);  // 67.89
  auto d5 = ConformColumn(std::move(d), DataType::Decimal(20, 5));
  ASSERT_TRUE(d5.ok());
  EXPECT_EQ((*d5)->As<DecimalColumn>()->Value(0), 6789000);

  auto f = MakeColumn(DataType::Float32());
  f->As<FloatColumn>()->Append(3.4F);
  auto dbl = ConformColumn(std::move(f), DataType::Float64());
  ASSERT_TRUE(dbl.ok());
  EXPECT_EQ((*dbl)->As<DoubleColumn>()->Value(0), static_cast<double>(3.4F));

  auto dates = MakeColumn(DataType::Date());
  dates->As<DateColumn>()->Append(19975);  // 2024-09-09
  auto ts = ConformColumn(std::move(dates), DataType::Timestamp(TimeUnit::kMicros, false));
  ASSERT_TRUE(ts.ok());
  EXPECT_EQ((*ts)->As<TimestampColumn>()->Value(0), 1725840000000000LL);
}

TEST(ConformTest, StructsGainFieldsAsNullsAndWidenInsideArrays) {
  auto from = Type("ARRAY<STRUCT<a: INT>>");
  auto col = MakeColumn(from);
  auto* list = col->As<ListColumn>();
  auto* st = list->mutable_child()->As<StructColumn>();
  st->mutable_child(0)->As<Int32Column>()->Append(5);
  st->FinishRow();
  st->AppendNull();
  list->FinishRow();  // [{a: 5}, null]
  list->AppendNull();
  auto to = Type("ARRAY<STRUCT<a: BIGINT, b: STRING>>");
  auto out = ConformColumn(std::move(col), to, "items");
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE((*out)->type()->Equals(*to));
  const auto& element = (*out)->As<ListColumn>()->child().As<StructColumn>()[0];
  EXPECT_EQ(element.child(0).As<Int64Column>()->Value(0), 5);
  EXPECT_EQ(element.child(1).length(), 2);
  EXPECT_EQ(element.child(1).null_count(), 2);
  EXPECT_TRUE((*out)->IsNull(1));
  EXPECT_EQ(ConformColumn(MakeColumn(Type("STRUCT<a: INT>")), Type("STRUCT<b: INT>"), "s")
                .status()
                .code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ferry::columnar
