// StatsCollector: string bounds across batches compared as unsigned bytes, nulls counted; the
// leaves taken from the Parquet writer's statistics give the same JSON as a scan of the batches.
#include "ferry/delta/stats.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ferry/base/io.h"
#include "ferry/columnar/column.h"
#include "ferry/columnar/schema_for_test.h"
#include "ferry/parquet/writer.h"

namespace ferry::delta {
namespace {

using columnar::DataType;
using columnar::Field;

columnar::RecordBatch StringBatch(const columnar::SchemaPtr& schema,
                                  const std::vector<std::optional<std::string>>& values) {
  auto batch = columnar::RecordBatch::MakeEmpty(schema);
  auto* column = batch.mutable_column(0)->As<columnar::BinaryColumn>();
  for (const auto& v : values) {
    if (v) {
      column->Append(*v);
    } else {
      column->AppendNull();
    }
  }
  return batch;
}

TEST(StatsCollectorTest, StringBoundsAreUnsignedByteOrderAcrossBatches) {
  auto schema = std::make_shared<const columnar::Schema>(
      std::vector<Field>{{"s", DataType::String(), true, {}}});
  // Values that differ in the first byte, share a prefix, are prefixes of each other, are empty,
  // or start with bytes >= 0x80 (which a signed char comparison would put first).
  std::vector<std::vector<std::optional<std::string>>> batches = {
      {"m", "\xc3\xa9t\xc3\xa9", std::nullopt, "ma", "b"},
      {"abc", std::nullopt, "ab", "\xc3\xa9", "zz"},
      {"", "ab\x7f", "\xff", "mb"},
  };
  StatsCollector stats(*schema, StatsOptions{});
  std::vector<std::string> all;
  int64_t nulls = 0;
  for (const auto& values : batches) {
    stats.Update(StringBatch(schema, values));
    for (const auto& v : values) {
      v ? all.push_back(*v) : void(++nulls);
    }
  }
  // std::string compares as unsigned bytes (char_traits<char>::compare is memcmp).
  std::string min = *std::min_element(all.begin(), all.end());
  std::string max = *std::max_element(all.begin(), all.end());
  EXPECT_EQ(min, "");
  EXPECT_EQ(max, "\xff");
  nlohmann::json json = nlohmann::json::parse(stats.ToJson(), nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(json.is_discarded()) << stats.ToJson();
  EXPECT_EQ(json["numRecords"], 14);
  EXPECT_EQ(json["nullCount"]["s"], nulls);
  EXPECT_EQ(json["minValues"]["s"], min);
  // "\xff" is not valid UTF-8: the max bound, if written, must not be below the real max.
  if (json["maxValues"].contains("s")) {
    EXPECT_GE(json["maxValues"]["s"].get<std::string>(), "\xc3\xa9t\xc3\xa9");
  }
}

TEST(StatsCollectorTest, StringBoundsOfOneBatchMatchASort) {
  auto schema = std::make_shared<const columnar::Schema>(
      std::vector<Field>{{"s", DataType::String(), false, {}}});
  std::vector<std::optional<std::string>> values;
  std::vector<std::string> plain;
  uint32_t x = 12345;
  for (int i = 0; i < 500; ++i) {
    x = x * 1103515245 + 12345;
    std::string v(1 + (x >> 8) % 5, 'a');
    for (char& c : v) {
      x = x * 1103515245 + 12345;
      c = static_cast<char>('a' + (x >> 16) % 3);  // few letters: many shared prefixes
    }
    values.push_back(v);
    plain.push_back(v);
  }
  StatsCollector stats(*schema, StatsOptions{});
  stats.Update(StringBatch(schema, values));
  nlohmann::json json = nlohmann::json::parse(stats.ToJson());
  std::sort(plain.begin(), plain.end());
  EXPECT_EQ(json["minValues"]["s"], plain.front());
  EXPECT_EQ(json["maxValues"]["s"], plain.back());
}

// Random values for every column type, nulls at any level, strings past the Parquet statistics'
// byte limit and bytes >= 0x80, extremes of each integer type.
class RandomRows {
 public:
  explicit RandomRows(uint64_t seed) : rng_(seed) {}

  void Append(const columnar::DataTypePtr& type, bool nullable, columnar::Column* col) {
    using columnar::TypeId;
    if (nullable && Chance(0.15)) {
      col->AppendNull();
      return;
    }
    switch (type->id()) {
      case TypeId::kStruct: {
        auto* s = col->As<columnar::StructColumn>();
        for (int i = 0; i < s->num_children(); i++) {
          const Field& f = type->fields()[static_cast<size_t>(i)];
          Append(f.type, f.nullable, s->mutable_child(i));
        }
        s->FinishRow();
        return;
      }
      case TypeId::kList: {
        auto* l = col->As<columnar::ListColumn>();
        for (int i = Uniform(0, 3); i > 0; i--) {
          Append(type->element().type, type->element().nullable, l->mutable_child());
        }
        l->FinishRow();
        return;
      }
      case TypeId::kMap: {
        auto* m = col->As<columnar::MapColumn>();
        for (int i = Uniform(0, 2); i > 0; i--) {
          Append(type->key().type, false, m->mutable_keys());
          Append(type->value().type, type->value().nullable, m->mutable_values());
        }
        m->FinishRow();
        return;
      }
      case TypeId::kString:
      case TypeId::kJson:
      case TypeId::kBinary: {
        std::string v(static_cast<size_t>(Chance(0.02) ? Uniform(4000, 5000) : Uniform(0, 40)),
                      'a');
        for (char& c : v) {
          c = static_cast<char>(Chance(0.05) ? Uniform(0x80, 0xff) : Uniform('a', 'e'));
        }
        col->As<columnar::BinaryColumn>()->Append(v);
        return;
      }
      case TypeId::kBoolean:
        col->As<columnar::PrimitiveColumn<uint8_t>>()->Append(Chance(0.5) ? 1 : 0);
        return;
      case TypeId::kFloat64: {
        double v = Chance(0.05) ? std::nan("") : Chance(0.05) ? -0.0 : Uniform(-1000, 1000) * 0.25;
        col->As<columnar::PrimitiveColumn<double>>()->Append(v);
        return;
      }
      case TypeId::kDecimal: {
        columnar::Int128 limit = 1;
        for (int i = 0; i < type->precision(); i++) {
          limit *= 10;
        }
        auto v = static_cast<columnar::Int128>(static_cast<columnar::UInt128>(rng_()) %
                                               static_cast<columnar::UInt128>(limit));
        col->As<columnar::PrimitiveColumn<columnar::Int128>>()->Append(Chance(0.5) ? -v : v);
        return;
      }
      default:
        columnar::VisitPrimitive(type->id(), [&]<typename C>(C*) {
          using T = typename C::ValueType;
          int64_t v = Chance(0.05) ? (Chance(0.5) ? INT64_MIN : INT64_MAX) : Uniform(-50, 50);
          col->As<C>()->Append(static_cast<T>(v));  // truncated to the type: its extremes too
        });
    }
  }

 private:
  int Uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool Chance(double p) { return std::bernoulli_distribution(p)(rng_); }

  std::mt19937_64 rng_;
};

TEST(StatsCollectorTest, ParquetLeavesGiveTheSameStatsAsAScan) {
  // Multi-leaf columns (a map of structs, a struct of structs) before the others, so that the
  // Parquet leaf ordinals differ from the column indexes; a list and a double stay scanned.
  columnar::SchemaPtr schema = columnar::Ddl(
      "m MAP<STRING, STRUCT<u: INT, v: STRING>>, st STRUCT<x: INT NOT NULL, y: STRING, z: "
      "STRUCT<q: BIGINT, r: DECIMAL(30,5)>>, tags ARRAY<STRING>, i8 TINYINT, i16 SMALLINT, "
      "i32 INT, i64 BIGINT NOT NULL, f DOUBLE, s STRING, b BOOLEAN, bin BINARY, d DATE, "
      "ts TIMESTAMP, ntz TIMESTAMP_NTZ, dec9 DECIMAL(9,2), dec18 DECIMAL(18,3), u32 UINT32, "
      "j JSON, empty STRING");
  for (int64_t indexed : {int64_t{32}, int64_t{4}, int64_t{-1}}) {
    for (uint64_t seed = 1; seed <= 4; ++seed) {
      SCOPED_TRACE(::testing::Message() << "num_indexed_cols " << indexed << ", seed " << seed);
      StatsOptions options;
      options.num_indexed_cols = indexed;
      StatsCollector scanned(*schema, options);
      StatsCollector from_parquet(*schema, options, /*parquet_leaves=*/true);
      parquet::WriterOptions writer_options;
      writer_options.whole_statistics_bounds = true;
      writer_options.page_max_rows = 100;  // several pages and row groups
      writer_options.row_group_max_rows = 300;
      auto writer =
          parquet::FileWriter::Open(std::make_unique<StringOutputStream>(), schema, writer_options);
      ASSERT_TRUE(writer.ok()) << writer.status().ToString();
      RandomRows rows(seed);
      for (int b = 0; b < 3; ++b) {
        auto batch = columnar::RecordBatch::MakeEmpty(schema);
        for (int row = 0; row < 250; ++row) {
          for (int c = 0; c < schema->num_fields(); ++c) {
            const Field& field = schema->field(c);
            if (field.name == "empty") {
              batch.mutable_column(c)->AppendNull();  // all null: no bounds
            } else {
              rows.Append(field.type, field.nullable, batch.mutable_column(c));
            }
          }
        }
        scanned.Update(batch);
        from_parquet.Update(batch);
        ASSERT_TRUE((*writer)->Write(batch).ok());
      }
      ASSERT_TRUE((*writer)->Close().ok());
      Status taken = from_parquet.TakeParquetStatistics((*writer)->column_statistics());
      ASSERT_TRUE(taken.ok()) << taken.ToString();
      EXPECT_EQ(from_parquet.ToJson(), scanned.ToJson());
      nlohmann::json json = nlohmann::json::parse(scanned.ToJson());
      EXPECT_EQ(json["numRecords"], 750);
      if (indexed != 4) {
        EXPECT_TRUE(json["maxValues"].contains("s")) << json.dump();  // long strings cut, kept
      }
    }
  }
}

TEST(StatsCollectorTest, ParquetLeavesThatDoNotLineUpAreAnError) {
  columnar::SchemaPtr schema = columnar::Ddl("a INT, b STRING");
  StatsCollector stats(*schema, StatsOptions{}, /*parquet_leaves=*/true);
  parquet::ColumnStatistics a;
  a.path = {"a"};
  a.type = columnar::DataType::Int32();
  EXPECT_FALSE(stats.TakeParquetStatistics({a}).ok());  // b is missing
  parquet::ColumnStatistics wrong = a;
  wrong.path = {"c"};
  EXPECT_FALSE(stats.TakeParquetStatistics({a, wrong}).ok());
}

}  // namespace
}  // namespace ferry::delta
