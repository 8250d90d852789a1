// Conformance of the reader with apache/parquet-testing, against expected values from sources
// independent of ferry: the *_expect.csv and .md files that ship with the data, pairs of files or
// columns that must agree (BYTE_STREAM_SPLIT vs PLAIN), and rows printed by DuckDB 1.x (`node
// tests/duckdb/query.mjs "SELECT * FROM read_parquet('...')"`), transcribed below in the
// notation of Render() (file_reader_test_util.h).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "ferry/columnar/column.h"
#include "ferry/parquet/file_reader.h"
#include "ferry/parquet/file_reader_test_util.h"

namespace ferry::parquet {
namespace {

using columnar::BinaryColumn;
using columnar::Column;
using columnar::RecordBatch;
using columnar::TypeId;
using testing::ExpectRows;
using testing::kDir;
using testing::ReadFile;
using testing::ReadStatus;
using testing::Render;
using testing::RenderRow;

// A CSV cell: `null` for an empty unquoted field.
struct Cell {
  std::string text;
  bool null = false;
};

std::vector<std::vector<Cell>> ReadCsv(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::vector<Cell>> rows;
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::vector<Cell> row;
    Cell cell;
    bool quoted = false;
    bool was_quoted = false;
    for (size_t i = 0; i <= line.size(); i++) {
      char ch = i < line.size() ? line[i] : ',';
      if (quoted) {
        if (ch == '"' && i + 1 < line.size() && line[i + 1] == '"') {
          cell.text.push_back('"');
          i++;
        } else if (ch == '"') {
          quoted = false;
        } else {
          cell.text.push_back(ch);
        }
      } else if (ch == '"') {
        quoted = true;
        was_quoted = true;
      } else if (ch == ',') {
        cell.null = !was_quoted && cell.text.empty();
        row.push_back(cell);
        cell = Cell{};
        was_quoted = false;
      } else {
        cell.text.push_back(ch);
      }
    }
    rows.push_back(row);
  }
  return rows;
}

// Text of a flat cell as the CSV writes it.
std::string CellText(const Column& c, int64_t row) {
  if (c.type()->is_binary_like()) {
    return std::string(c.As<BinaryColumn>()->Value(row));
  }
  return columnar::VisitPrimitive(c.type_id(), [&]<typename C>(C*) {
    return fmt::format("{}", static_cast<int64_t>(static_cast<const C&>(c).Value(row)));
  });
}

void ExpectMatchesCsv(const std::string& file, const std::string& csv) {
  RecordBatch b = ReadFile(file);
  auto rows = ReadCsv(kDir + csv);
  ASSERT_EQ(b.num_rows(), static_cast<int64_t>(rows.size())) << file;
  int64_t checked = 0;
  for (size_t r = 0; r < rows.size(); r++) {
    ASSERT_EQ(rows[r].size(), static_cast<size_t>(b.num_columns())) << csv << " line " << r + 2;
    for (int c = 0; c < b.num_columns(); c++) {
      const Cell& want = rows[r][static_cast<size_t>(c)];
      const Column& col = b.column(c);
      auto row = static_cast<int64_t>(r);
      ASSERT_EQ(col.IsNull(row), want.null) << file << " row " << r << " column " << c;
      if (!want.null) {
        ASSERT_EQ(CellText(col, row), want.text) << file << " row " << r << " column " << c;
      }
      checked++;
    }
  }
  EXPECT_GT(checked, 0);
}

TEST(ParquetTestingTest, DeltaEncodedFilesMatchTheirExpectCsv) {
  ExpectMatchesCsv("delta_binary_packed.parquet", "delta_binary_packed_expect.csv");
  ExpectMatchesCsv("delta_byte_array.parquet", "delta_byte_array_expect.csv");
  ExpectMatchesCsv("delta_encoding_optional_column.parquet",
                   "delta_encoding_optional_column_expect.csv");
  ExpectMatchesCsv("delta_encoding_required_column.parquet",
                   "delta_encoding_required_column_expect.csv");
}

// int96_from_spark.md lists the values as microseconds since the epoch; the last is past the
// year 290000, where nanoseconds overflow.
TEST(ParquetTestingTest, Int96FromSparkMatchesTheMd) {
  RecordBatch b = ReadFile("int96_from_spark.parquet");
  ASSERT_EQ(b.num_rows(), 6);
  EXPECT_TRUE(b.schema().field(0).type->Equals(
      *columnar::DataType::Timestamp(columnar::TimeUnit::kMicros, true)));
  const auto& ts = *b.column(0).As<columnar::TimestampColumn>();
  const int64_t expected[] = {
      1704141296123456,   1704070800000000, 253402225200000000, 1735599600000000, 0,
      9089380393200000000};
  for (int64_t i = 0; i < 6; i++) {
    if (i == 4) {
      EXPECT_TRUE(ts.IsNull(i));
    } else {
      EXPECT_EQ(ts.Value(i), expected[i]) << i;
    }
  }
}

// old_list_structure.md: one row [[1, 2], [3, 4]] in the legacy 2-level layout.
TEST(ParquetTestingTest, OldListStructureMatchesTheMd) {
  ExpectRows("old_list_structure.parquet", {R"({"a":[[1,2],[3,4]]})"});
}

// map_no_value.md: keys 1..9 in rows of three, no values; the key-only map reads as a list.
TEST(ParquetTestingTest, MapNoValueMatchesTheMd) {
  ExpectRows(
      "map_no_value.parquet",
      {R"({"my_map":[{"key":1,"value":null},{"key":2,"value":null},{"key":3,"value":null}],"my_map_no_v":[1,2,3],"my_list":[1,2,3]})",
       R"({"my_map":[{"key":4,"value":null},{"key":5,"value":null},{"key":6,"value":null}],"my_map_no_v":[4,5,6],"my_list":[4,5,6]})",
       R"({"my_map":[{"key":7,"value":null},{"key":8,"value":null},{"key":9,"value":null}],"my_map_no_v":[7,8,9],"my_list":[7,8,9]})"});
}

int64_t BigEndian(std::string_view bytes) {
  int64_t v = 0;
  for (char ch : bytes) {
    v = (v << 8) | static_cast<uint8_t>(ch);
  }
  return v;
}

// fixed_length_byte_array.md: 1000 values, descending, 105 nulls, min 0x00000001, max
// 0x000003E8, 10 pages.
TEST(ParquetTestingTest, FixedLengthByteArrayMatchesTheMd) {
  RecordBatch b = ReadFile("fixed_length_byte_array.parquet");
  ASSERT_EQ(b.num_rows(), 1000);
  const auto& col = *b.column(0).As<BinaryColumn>();
  EXPECT_EQ(col.null_count(), 105);
  int64_t previous = 1001;
  int64_t min = 1 << 30;
  int64_t max = 0;
  for (int64_t i = 0; i < 1000; i++) {
    if (col.IsNull(i)) {
      continue;
    }
    ASSERT_EQ(col.Value(i).size(), 4u);
    int64_t v = BigEndian(col.Value(i));
    EXPECT_LT(v, previous);
    previous = v;
    min = std::min(min, v);
    max = std::max(max, v);
  }
  EXPECT_EQ(min, 1);
  EXPECT_EQ(max, 1000);
}

// int32_with_null_pages.md: 1000 values, 275 nulls, min -2136906554, max 2145722375; page 2
// (rows 100..199 by the offset index) holds nulls only.
TEST(ParquetTestingTest, Int32WithNullPagesMatchesTheMd) {
  RecordBatch b = ReadFile("int32_with_null_pages.parquet");
  ASSERT_EQ(b.num_rows(), 1000);
  const auto& col = *b.column(0).As<columnar::Int32Column>();
  EXPECT_EQ(col.null_count(), 275);
  int32_t min = INT32_MAX;
  int32_t max = INT32_MIN;
  int64_t longest_null_run = 0;
  int64_t run = 0;
  for (int64_t i = 0; i < 1000; i++) {
    if (col.IsNull(i)) {
      longest_null_run = std::max(longest_null_run, ++run);
      continue;
    }
    run = 0;
    min = std::min(min, col.Value(i));
    max = std::max(max, col.Value(i));
  }
  EXPECT_EQ(min, -2136906554);
  EXPECT_EQ(max, 2145722375);
  EXPECT_GE(longest_null_run, 100);
}

// The README: each BYTE_STREAM_SPLIT column equals its PLAIN twin.
TEST(ParquetTestingTest, ByteStreamSplitColumnsEqualTheirPlainTwins) {
  RecordBatch b = ReadFile("byte_stream_split_extended.gzip.parquet");
  ASSERT_EQ(b.num_columns(), 14);
  ASSERT_EQ(b.num_rows(), 200);
  for (int c = 0; c < 14; c += 2) {
    SCOPED_TRACE(b.schema().field(c + 1).name);
    for (int64_t r = 0; r < b.num_rows(); r++) {
      ASSERT_EQ(Render(b.column(c), r), Render(b.column(c + 1), r)) << r;
    }
  }
}

// byte_stream_split.zstd.parquet: np.random.seed(0) normals; the first is 1.764052345967664
// (as float32 for f32); DuckDB prints the first two f64 values.
TEST(ParquetTestingTest, ByteStreamSplitZstdStartsWithNumpySeedZero) {
  RecordBatch b = ReadFile("byte_stream_split.zstd.parquet");
  ASSERT_EQ(b.num_rows(), 300);
  EXPECT_EQ(b.column(0).As<columnar::FloatColumn>()->Value(0), 1.764052345967664f);
  EXPECT_EQ(b.column(1).As<columnar::DoubleColumn>()->Value(0), -1.3065268517353166);
  EXPECT_EQ(b.column(1).As<columnar::DoubleColumn>()->Value(1), 1.658130679618188);
}

// Rows as DuckDB prints them (BIGINTs unquoted, timestamps as epoch_us).
TEST(ParquetTestingTest, FlatFilesMatchDuckDb) {
  ExpectRows(
      "alltypes_plain.parquet",
      {R"({"id":4,"bool_col":true,"tinyint_col":0,"smallint_col":0,"int_col":0,"bigint_col":0,"float_col":0,"double_col":0,"date_string_col":"03/01/09","string_col":"0","timestamp_col":1235865600000000})",
       R"({"id":5,"bool_col":false,"tinyint_col":1,"smallint_col":1,"int_col":1,"bigint_col":10,"float_col":1.100000023841858,"double_col":10.1,"date_string_col":"03/01/09","string_col":"1","timestamp_col":1235865660000000})",
       R"({"id":6,"bool_col":true,"tinyint_col":0,"smallint_col":0,"int_col":0,"bigint_col":0,"float_col":0,"double_col":0,"date_string_col":"04/01/09","string_col":"0","timestamp_col":1238544000000000})",
       R"({"id":7,"bool_col":false,"tinyint_col":1,"smallint_col":1,"int_col":1,"bigint_col":10,"float_col":1.100000023841858,"double_col":10.1,"date_string_col":"04/01/09","string_col":"1","timestamp_col":1238544060000000})",
       R"({"id":2,"bool_col":true,"tinyint_col":0,"smallint_col":0,"int_col":0,"bigint_col":0,"float_col":0,"double_col":0,"date_string_col":"02/01/09","string_col":"0","timestamp_col":1233446400000000})",
       R"({"id":3,"bool_col":false,"tinyint_col":1,"smallint_col":1,"int_col":1,"bigint_col":10,"float_col":1.100000023841858,"double_col":10.1,"date_string_col":"02/01/09","string_col":"1","timestamp_col":1233446460000000})",
       R"({"id":0,"bool_col":true,"tinyint_col":0,"smallint_col":0,"int_col":0,"bigint_col":0,"float_col":0,"double_col":0,"date_string_col":"01/01/09","string_col":"0","timestamp_col":1230768000000000})",
       R"({"id":1,"bool_col":false,"tinyint_col":1,"smallint_col":1,"int_col":1,"bigint_col":10,"float_col":1.100000023841858,"double_col":10.1,"date_string_col":"01/01/09","string_col":"1","timestamp_col":1230768060000000})"});
  ExpectRows("float16_nonzeros_and_nans.parquet",
             {R"({"x":null})", R"({"x":1})", R"({"x":-2})", R"({"x":"NaN"})", R"({"x":0})",
              R"({"x":-1})", R"({"x":-0})", R"({"x":2})"});
  ExpectRows("float16_zeros_and_nans.parquet", {R"({"x":null})", R"({"x":0})", R"({"x":"NaN"})"});
  ExpectRows(
      "unknown-logical-type.parquet",
      {R"({"column with known type":"known string 1","column with unknown type":"unknown string 1"})",
       R"({"column with known type":"known string 2","column with unknown type":"unknown string 2"})",
       R"({"column with known type":"known string 3","column with unknown type":"unknown string 3"})"});
  ExpectRows("datapage_v2_empty_datapage.snappy.parquet", {R"({"value":null})"});
  ExpectRows("single_nan.parquet", {R"({"mycol":null})"});
  // Decimals 1.00 .. 24.00 on INT32, INT64, FIXED and BYTE_ARRAY.
  for (const char* f :
       {"int32_decimal.parquet", "int64_decimal.parquet", "fixed_length_decimal.parquet",
        "fixed_length_decimal_legacy.parquet", "byte_array_decimal.parquet"}) {
    RecordBatch b = ReadFile(f);
    ASSERT_EQ(b.num_rows(), 24) << f;
    for (int64_t r = 0; r < 24; r++) {
      EXPECT_EQ(Render(b.column(0), r), fmt::format("\"{}.00\"", r + 1)) << f;
    }
  }
  // UINT64 1..513 in two concatenated gzip members; 40000 booleans in 40000+ pages.
  RecordBatch gz = ReadFile("concatenated_gzip_members.parquet");
  ASSERT_EQ(gz.num_rows(), 513);
  for (int64_t r = 0; r < 513; r++) {
    ASSERT_EQ(gz.column(0).As<columnar::UInt64Column>()->Value(r), static_cast<uint64_t>(r + 1));
  }
  RecordBatch zeros = ReadFile("page_v2_empty_compressed.parquet");
  ASSERT_EQ(zeros.num_rows(), 10);
  EXPECT_EQ(zeros.column(0).null_count(), 10);
  RecordBatch dict0 = ReadFile("dict-page-offset-zero.parquet");
  ASSERT_EQ(dict0.num_rows(), 39);
  EXPECT_EQ(dict0.column(0).As<columnar::Int32Column>()->Value(38), 1552);
  EXPECT_EQ(ReadFile("column_chunk_key_value_metadata.parquet").num_rows(), 0);
}

TEST(ParquetTestingTest, NestedFilesMatchDuckDb) {
  ExpectRows("datapage_v2.snappy.parquet", {R"({"a":"abc","b":1,"c":2,"d":true,"e":[1,2,3]})",
                                            R"({"a":"abc","b":2,"c":3,"d":true,"e":null})",
                                            R"({"a":"abc","b":3,"c":4,"d":true,"e":null})",
                                            R"({"a":null,"b":4,"c":5,"d":false,"e":[1,2,3]})",
                                            R"({"a":"abc","b":5,"c":2,"d":true,"e":[1,2]})"});
  ExpectRows("nested_lists.snappy.parquet",
             {R"({"a":[[["a","b"],["c"]],[null,["d"]]],"b":1})",
              R"({"a":[[["a","b"],["c","d"]],[null,["e"]]],"b":1})",
              R"({"a":[[["a","b"],["c","d"],["e"]],[null,["f"]]],"b":1})"});
  ExpectRows(
      "nested_maps.snappy.parquet",
      {R"({"a":[{"key":"a","value":[{"key":1,"value":true},{"key":2,"value":false}]}],"b":1,"c":1})",
       R"({"a":[{"key":"b","value":[{"key":1,"value":true}]}],"b":1,"c":1})",
       R"({"a":[{"key":"c","value":null}],"b":1,"c":1})",
       R"({"a":[{"key":"d","value":[]}],"b":1,"c":1})",
       R"({"a":[{"key":"e","value":[{"key":1,"value":true}]}],"b":1,"c":1})",
       R"({"a":[{"key":"f","value":[{"key":3,"value":true},{"key":4,"value":false},{"key":5,"value":true}]}],"b":1,"c":1})"});
  ExpectRows(
      "nonnullable.impala.parquet",
      {R"({"ID":8,"Int_Array":[-1],"int_array_array":[[-1,-2],[]],"Int_Map":[{"key":"k1","value":-1}],"int_map_array":[[],[{"key":"k1","value":1}],[],[]],"nested_Struct":{"a":-1,"B":[-1],"c":{"D":[[{"e":-1,"f":"nonnullable"}]]},"G":[]}})"});
  ExpectRows(
      "nullable.impala.parquet",
      {R"({"id":1,"int_array":[1,2,3],"int_array_Array":[[1,2],[3,4]],"int_map":[{"key":"k1","value":1},{"key":"k2","value":100}],"int_Map_Array":[[{"key":"k1","value":1}]],"nested_struct":{"A":1,"b":[1],"C":{"d":[[{"E":10,"F":"aaa"},{"E":-10,"F":"bbb"}],[{"E":11,"F":"c"}]]},"g":[{"key":"foo","value":{"H":{"i":[1.1]}}}]}})",
       R"({"id":2,"int_array":[null,1,2,null,3,null],"int_array_Array":[[null,1,2,null],[3,null,4],[],null],"int_map":[{"key":"k1","value":2},{"key":"k2","value":null}],"int_Map_Array":[[{"key":"k3","value":null},{"key":"k1","value":1}],null,[]],"nested_struct":{"A":null,"b":[null],"C":{"d":[[{"E":null,"F":null},{"E":10,"F":"aaa"},{"E":null,"F":null},{"E":-10,"F":"bbb"},{"E":null,"F":null}],[{"E":11,"F":"c"},null],[],null]},"g":[{"key":"g1","value":{"H":{"i":[2.2,null]}}},{"key":"g2","value":{"H":{"i":[]}}},{"key":"g3","value":null},{"key":"g4","value":{"H":{"i":null}}},{"key":"g5","value":{"H":null}}]}})",
       R"({"id":3,"int_array":[],"int_array_Array":[null],"int_map":[],"int_Map_Array":[null,null],"nested_struct":{"A":null,"b":null,"C":{"d":[]},"g":[]}})",
       R"({"id":4,"int_array":null,"int_array_Array":[],"int_map":[],"int_Map_Array":[],"nested_struct":{"A":null,"b":null,"C":{"d":null},"g":null}})",
       R"({"id":5,"int_array":null,"int_array_Array":null,"int_map":[],"int_Map_Array":null,"nested_struct":{"A":null,"b":null,"C":null,"g":[{"key":"foo","value":{"H":{"i":[2.2,3.3]}}}]}})",
       R"({"id":6,"int_array":null,"int_array_Array":null,"int_map":null,"int_Map_Array":null,"nested_struct":null})",
       R"({"id":7,"int_array":null,"int_array_Array":[null,[5,6]],"int_map":[{"key":"k1","value":null},{"key":"k3","value":null}],"int_Map_Array":null,"nested_struct":{"A":7,"b":[2,3,null],"C":{"d":[[],[null],null]},"g":null}})"});
  ExpectRows(
      "repeated_no_annotation.parquet",
      {R"({"id":1,"phoneNumbers":null})", R"({"id":2,"phoneNumbers":null})",
       R"({"id":3,"phoneNumbers":{"phone":[]}})",
       R"({"id":4,"phoneNumbers":{"phone":[{"number":5555555555,"kind":null}]}})",
       R"({"id":5,"phoneNumbers":{"phone":[{"number":1111111111,"kind":"home"}]}})",
       R"({"id":6,"phoneNumbers":{"phone":[{"number":1111111111,"kind":"home"},{"number":2222222222,"kind":null},{"number":3333333333,"kind":"mobile"}]}})"});
  ExpectRows(
      "repeated_primitive_no_list.parquet",
      {R"({"Int32_list":[0,1,2,3],"String_list":["foo","zero","one","two"],"group_of_lists":{"Int32_list_in_group":[0,1,2,3],"String_list_in_group":["foo","zero","one","two"]}})",
       R"({"Int32_list":[],"String_list":["three"],"group_of_lists":{"Int32_list_in_group":[],"String_list_in_group":["three"]}})",
       R"({"Int32_list":[4],"String_list":["four"],"group_of_lists":{"Int32_list_in_group":[4],"String_list_in_group":["four"]}})",
       R"({"Int32_list":[5,6,7,8],"String_list":["five","six","seven","eight"],"group_of_lists":{"Int32_list_in_group":[5,6,7,8],"String_list_in_group":["five","six","seven","eight"]}})"});
  ExpectRows("list_columns.parquet",
             {R"({"int64_list":[1,2,3],"utf8_list":["abc","efg","hij"]})",
              R"({"int64_list":[null,1],"utf8_list":null})",
              R"({"int64_list":[4],"utf8_list":["efg",null,"hij","xyz"]})"});
  ExpectRows("null_list.parquet", {R"({"emptylist":[]})"});
  ExpectRows("nulls.snappy.parquet",
             std::vector<std::string>(8, R"({"b_struct":{"b_c_int":null}})"));
  ExpectRows(
      "incorrect_map_schema.parquet",
      {R"({"my_map":[{"key":"parent","value":"another"},{"key":"name","value":"report"}]})"});
}

}  // namespace
}  // namespace ferry::parquet
