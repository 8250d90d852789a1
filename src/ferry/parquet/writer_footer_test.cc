// The footer's statistics (min/max in each type's sort order, null and NaN counts, the typed
// statistics the Delta log takes) and the writer's errors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "ferry/columnar/schema_for_test.h"
#include "ferry/parquet/writer.h"
#include "ferry/parquet/writer_test_decoder.h"

namespace ferry::parquet {
namespace {

using columnar::BinaryColumn;
using columnar::Column;
using columnar::DataType;
using columnar::F;
using columnar::Field;
using columnar::Int128;
using columnar::RecordBatch;
using columnar::Schema;
using testing::Bytes;
using testing::ReadFooter;
using testing::SharedStringStream;
using testing::WriteFile;

TEST(WriterTest, StatisticsFollowSortOrders) {
  std::vector<Field> fields = {F("u32", DataType::UInt32()), F("i32", DataType::Int32()),
                               F("d", DataType::Float64()),  F("nan", DataType::Float32()),
                               F("s", DataType::String()),   F("dec", DataType::Decimal(30, 2)),
                               F("z", DataType::Float64()),  F("nulls", DataType::Int64())};
  auto schema = std::make_shared<Schema>(fields);
  RecordBatch batch = RecordBatch::MakeEmpty(schema);
  auto append = [&](int col, auto fn) { fn(batch.mutable_column(col)); };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (uint32_t u : {1u, 0xF0000000u, 7u}) {
    append(0, [&](Column* c) { c->As<columnar::UInt32Column>()->Append(u); });
    append(1, [&](Column* c) { c->As<columnar::Int32Column>()->Append(static_cast<int32_t>(u)); });
    append(4, [&](Column* c) {
      c->As<BinaryColumn>()->Append(u == 1 ? "a" : u == 7 ? "\xff" : "b");
    });
    append(5, [&](Column* c) {
      c->As<columnar::DecimalColumn>()->Append(u == 1 ? -5 : static_cast<Int128>(u));
    });
    append(7, [&](Column* c) { c->AppendNull(); });
  }
  for (double d : {nan, 2.5, -1.0}) {
    append(2, [&](Column* c) { c->As<columnar::DoubleColumn>()->Append(d); });
    append(3, [&](Column* c) { c->As<columnar::FloatColumn>()->Append(static_cast<float>(nan)); });
    append(6, [&](Column* c) { c->As<columnar::DoubleColumn>()->Append(d == 2.5 ? 0.0 : -0.0); });
  }
  std::vector<ColumnStatistics> typed;
  std::string file = WriteFile(batch, WriterOptions{}, &typed);
  FileMetaData md = ReadFooter(file);
  auto stats = [&](int i) {
    return *md.row_groups[0].columns[static_cast<size_t>(i)].meta_data->statistics;
  };
  EXPECT_EQ(stats(0).min_value, Bytes<uint32_t>(1));
  EXPECT_EQ(stats(0).max_value, Bytes<uint32_t>(0xF0000000u));
  EXPECT_FALSE(stats(0).min.has_value());  // unsigned: no deprecated signed fields
  EXPECT_EQ(stats(1).min_value, Bytes<int32_t>(static_cast<int32_t>(0xF0000000u)));
  EXPECT_EQ(stats(1).max_value, Bytes<int32_t>(7));
  EXPECT_EQ(stats(1).min, stats(1).min_value);
  EXPECT_EQ(stats(2).min_value, Bytes(-1.0));
  EXPECT_EQ(stats(2).max_value, Bytes(2.5));
  EXPECT_EQ(stats(2).nan_count, 1);
  EXPECT_FALSE(stats(3).min_value.has_value());  // all NaN
  EXPECT_EQ(stats(3).nan_count, 3);
  EXPECT_EQ(stats(4).min_value, "a");
  EXPECT_EQ(stats(4).max_value, "\xff");
  EXPECT_EQ(stats(5).min_value->size(), 13u);
  EXPECT_EQ(static_cast<uint8_t>((*stats(5).min_value)[0]), 0xFF);  // -5 in big-endian
  EXPECT_EQ(stats(6).min_value, Bytes(-0.0));
  EXPECT_EQ(stats(6).max_value, Bytes(0.0));
  EXPECT_EQ(std::signbit(*reinterpret_cast<const double*>(stats(6).min_value->data())), true);
  EXPECT_FALSE(stats(7).min_value.has_value());
  EXPECT_EQ(stats(7).null_count, 3);
  EXPECT_EQ(stats(0).null_count, 0);

  ASSERT_EQ(typed.size(), fields.size());
  EXPECT_EQ(std::get<uint64_t>(*typed[0].max), 0xF0000000u);
  EXPECT_EQ(std::get<int64_t>(*typed[1].min), static_cast<int32_t>(0xF0000000u));
  EXPECT_EQ(std::get<double>(*typed[2].max), 2.5);
  EXPECT_FALSE(typed[3].min.has_value());
  EXPECT_EQ(std::get<std::string>(*typed[4].max), "\xff");
  EXPECT_TRUE(std::get<Int128>(*typed[5].min) == -5);
  EXPECT_TRUE(std::get<Int128>(*typed[5].max) == static_cast<Int128>(0xF0000000u));
  EXPECT_EQ(typed[7].null_count, 3);
  EXPECT_EQ(typed[7].num_values, 3);
}

// Byte strings order as unsigned bytes, compared eight at a time: long shared prefixes, bytes
// above 0x7f, NUL bytes, empty strings and prefixes of one another.
TEST(WriterTest, StringStatisticsCompareUnsignedBytes) {
  const std::string alphabet("\x00\x01\x61\x7f\x80\xff", 6);
  std::mt19937 rng(7);
  for (int round = 0; round < 50; round++) {
    auto schema = std::make_shared<Schema>(std::vector<Field>{F("s", DataType::String())});
    RecordBatch batch = RecordBatch::MakeEmpty(schema);
    auto* col = batch.mutable_column(0)->As<BinaryColumn>();
    std::string prefix(rng() % 20, 'p');
    std::string min;
    std::string max;
    for (int i = 0; i < 40; i++) {
      std::string v = prefix.substr(0, rng() % (prefix.size() + 1));
      for (size_t n = rng() % 12; n > 0; n--) {
        v.push_back(alphabet[rng() % alphabet.size()]);
      }
      col->Append(v);
      min = i == 0 || v < min ? v : min;  // std::string compares as unsigned char
      max = i == 0 || max < v ? v : max;
    }
    std::vector<ColumnStatistics> typed;
    FileMetaData md = ReadFooter(WriteFile(batch, WriterOptions{}, &typed));
    const Statistics& st = *md.row_groups[0].columns[0].meta_data->statistics;
    EXPECT_EQ(st.min_value, min) << "round " << round;
    EXPECT_EQ(st.max_value, max) << "round " << round;
    EXPECT_EQ(std::get<std::string>(*typed[0].min), min);
    EXPECT_EQ(std::get<std::string>(*typed[0].max), max);
  }
}

TEST(WriterTest, ErrorsAreStickyAndNamed) {
  auto schema = std::make_shared<Schema>(std::vector<Field>{F("x", DataType::Int32(), false)});
  std::string out;
  auto w = FileWriter::Open(std::make_unique<SharedStringStream>(&out), schema, {});
  ASSERT_TRUE(w.ok());
  RecordBatch bad = RecordBatch::MakeEmpty(schema);
  bad.mutable_column(0)->AppendNull();
  Status s = (*w)->Write(bad);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("test.parquet"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("'x'"), std::string::npos) << s.ToString();
  EXPECT_EQ((*w)->Close().code(), StatusCode::kInvalidArgument);

  // Another schema.
  auto other = std::make_shared<Schema>(std::vector<Field>{F("y", DataType::Int32(), false)});
  auto w2 = FileWriter::Open(std::make_unique<SharedStringStream>(&out), schema, {});
  EXPECT_EQ((*w2)->Write(RecordBatch::MakeEmpty(other)).code(), StatusCode::kInvalidArgument);

  // A fixed-width value of the wrong width, a decimal beyond its precision.
  for (auto [type, fill] :
       std::vector<std::pair<columnar::DataTypePtr, int>>{{DataType::FixedBinary(4), 0},
                                                          {DataType::Decimal(20, 0), 1},
                                                          {DataType::Decimal(5, 0), 1}}) {
    auto sc = std::make_shared<Schema>(std::vector<Field>{F("v", type)});
    RecordBatch b = RecordBatch::MakeEmpty(sc);
    if (fill == 0) {
      b.mutable_column(0)->As<BinaryColumn>()->Append("abc");
    } else {
      b.mutable_column(0)->As<columnar::DecimalColumn>()->Append(Int128{1} << 80);
    }
    auto w3 = FileWriter::Open(std::make_unique<SharedStringStream>(&out), sc, {});
    EXPECT_EQ((*w3)->Write(b).code(), StatusCode::kInvalidArgument) << type->ToString();
  }

  WriterOptions bad_options;
  bad_options.page_max_rows = 0;
  EXPECT_EQ(FileWriter::Open(std::make_unique<SharedStringStream>(&out), schema, bad_options)
                .status()
                .code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ferry::parquet
