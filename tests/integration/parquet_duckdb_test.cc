// Independent reader check: files ferry's Parquet writer produces, for every type, nesting, null
// pattern, codec and page format, are read by DuckDB (tests/duckdb, `make setup-npm`) and must
// hold exactly the values the test put in. Expected values are built from the test's own input,
// never from ferry's reader. Statistics are checked through DuckDB's parquet_metadata().
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ferry/columnar/record_batch.h"
#include "ferry/parquet/atomic_file.h"
#include "ferry/parquet/writer.h"

namespace ferry::parquet {
namespace {

using columnar::BinaryColumn;
using columnar::Column;
using columnar::DataType;
using columnar::DataTypePtr;
using columnar::Field;
using columnar::Int128;
using columnar::RecordBatch;
using columnar::Schema;
using columnar::TimeUnit;
using columnar::TypeId;
using Json = nlohmann::json;

Field F(std::string name, DataTypePtr type, bool nullable = true) {
  Field f;
  f.name = std::move(name);
  f.type = std::move(type);
  f.nullable = nullable;
  return f;
}

// Runs SQL through DuckDB; returns the rows of the last statement.
std::vector<Json> Duck(const std::string& sql) {
  std::string script = std::string(FERRY_SOURCE_DIR) + "/tests/duckdb/query.mjs";
  std::string quoted = "'";
  for (char c : sql) {
    quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  }
  quoted += "'";
  std::string cmd = "node " + script + " " + quoted + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  EXPECT_NE(p, nullptr);
  std::string out;
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) {
    out.append(buf, n);
  }
  int rc = pclose(p);
  EXPECT_EQ(WEXITSTATUS(rc), 0) << sql << "\n" << out.substr(0, 2000);
  std::vector<Json> rows;
  size_t start = 0;
  while (start < out.size()) {
    size_t end = out.find('\n', start);
    if (end == std::string::npos) {
      end = out.size();
    }
    if (end > start) {
      rows.push_back(Json::parse(out.substr(start, end - start), nullptr, false));
    }
    start = end + 1;
  }
  return rows;
}

class ParquetDuckDbTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::string modules = std::string(FERRY_SOURCE_DIR) + "/tests/duckdb/node_modules/@duckdb";
    ASSERT_TRUE(std::filesystem::exists(modules)) << "run `make setup-npm` first";
  }
  void SetUp() override {
    char tmpl[] = "/tmp/ferry-duckdb-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Write(const std::string& name, const RecordBatch& batch, WriterOptions o) {
    std::string path = dir_ + "/" + name + ".parquet";
    auto sink = AtomicFileOutputStream::Create(path);
    EXPECT_TRUE(sink.ok());
    auto w = FileWriter::Open(std::move(*sink), batch.schema_ptr(), std::move(o));
    EXPECT_TRUE(w.ok()) << w.status().ToString();
    // Two Write calls, to cross batch boundaries.
    int64_t half = batch.num_rows() / 2;
    std::vector<int64_t> first(static_cast<size_t>(half));
    std::vector<int64_t> second(static_cast<size_t>(batch.num_rows() - half));
    for (int64_t i = 0; i < batch.num_rows(); ++i) {
      (i < half ? first[static_cast<size_t>(i)] : second[static_cast<size_t>(i - half)]) = i;
    }
    EXPECT_TRUE((*w)->Write(batch.Take(first)).ok());
    Status s = (*w)->Write(batch.Take(second));
    EXPECT_TRUE(s.ok()) << s.ToString();
    s = (*w)->Close();
    EXPECT_TRUE(s.ok()) << s.ToString();
    return path;
  }

  std::string dir_;
};

std::string DecimalString(Int128 v, int32_t scale) {
  bool neg = v < 0;
  auto u = static_cast<columnar::UInt128>(neg ? -v : v);
  std::string digits;
  do {
    digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  } while (u != 0);
  if (scale > 0) {
    while (digits.size() <= static_cast<size_t>(scale)) {
      digits.insert(digits.begin(), '0');
    }
    digits.insert(digits.end() - scale, '.');
  }
  return (neg ? "-" : "") + digits;
}

std::string Hex(std::string_view s) {
  static const char* kDigits = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out;
}

// The SQL select expression for a flat column and the JSON value DuckDB then prints for row r.
std::string SelectExpr(const Field& f) {
  std::string c = "\"" + f.name + "\"";
  switch (f.type->id()) {
    case TypeId::kFloat32:
    case TypeId::kFloat64:
    case TypeId::kString:
      return c;
    case TypeId::kBinary:
    case TypeId::kFixedBinary:
      return "hex(" + c + ")";
    case TypeId::kDate:
      return "CAST(datediff('day', DATE '1970-01-01', " + c + ") AS VARCHAR)";
    case TypeId::kTimestamp:
      return "CAST(epoch_us(" + c + ") AS VARCHAR)";
    default:
      return "CAST(" + c + " AS VARCHAR)";
  }
}

Json ExpectedFlat(const Column& col, int64_t r) {
  if (col.IsNull(r)) {
    return nullptr;
  }
  const DataType& t = *col.type();
  switch (t.id()) {
    case TypeId::kBoolean:
      return col.As<columnar::BooleanColumn>()->Value(r) ? "true" : "false";
    case TypeId::kFloat32:
    case TypeId::kFloat64: {
      double d = t.id() == TypeId::kFloat32 ? col.As<columnar::FloatColumn>()->Value(r)
                                            : col.As<columnar::DoubleColumn>()->Value(r);
      if (std::isnan(d)) {
        return "NaN";
      }
      return d;
    }
    case TypeId::kString:
    case TypeId::kJson:
      return std::string(col.As<BinaryColumn>()->Value(r));
    case TypeId::kBinary:
    case TypeId::kFixedBinary:
      return Hex(col.As<BinaryColumn>()->Value(r));
    case TypeId::kDecimal:
      return DecimalString(col.As<columnar::DecimalColumn>()->Value(r), t.scale());
    case TypeId::kTimestamp: {
      int64_t v = col.As<columnar::TimestampColumn>()->Value(r);
      return std::to_string(t.unit() == TimeUnit::kMillis ? v * 1000 : v);
    }
    default:
      return columnar::VisitPrimitive(t.id(), [&]<typename C>(C*) -> Json {
        if constexpr (std::is_same_v<typename C::ValueType, Int128>) {
          return nullptr;  // decimals are handled above
        } else {
          return std::to_string(col.As<C>()->Value(r));
        }
      });
  }
}

enum class Nulls { kNone, kAll, kAlternate, kRandom };

// Every primitive type, each with its own null pattern.
RecordBatch FlatBatch(int64_t n, uint32_t seed) {
  std::vector<Field> fields = {
      F("b", DataType::Boolean()),
      F("i8", DataType::Int8()),
      F("i16", DataType::Int16(), false),
      F("i32", DataType::Int32()),
      F("i64", DataType::Int64(), false),
      F("u8", DataType::UInt8()),
      F("u16", DataType::UInt16()),
      F("u32", DataType::UInt32()),
      F("u64", DataType::UInt64()),
      F("f32", DataType::Float32()),
      F("f64", DataType::Float64()),
      F("s", DataType::String()),
      F("j", DataType::Json()),
      F("bin", DataType::Binary()),
      F("fixed", DataType::FixedBinary(3)),
      F("date", DataType::Date()),
      F("ts", DataType::Timestamp()),
      F("ts_ntz", DataType::Timestamp(TimeUnit::kMicros, false)),
      F("ts_ms", DataType::Timestamp(TimeUnit::kMillis, true)),
      F("ts_ms_ntz", DataType::Timestamp(TimeUnit::kMillis, false)),
      F("dec_i32", DataType::Decimal(9, 2)),
      F("dec_i64", DataType::Decimal(18, 5)),
      F("dec_flba", DataType::Decimal(38, 6)),
      F("dec_flba_small", DataType::Decimal(20, 0)),
      F("all_null", DataType::Int64()),
      F("alternate", DataType::String()),
  };
  auto schema = std::make_shared<Schema>(fields);
  RecordBatch batch = RecordBatch::MakeEmpty(schema);
  std::mt19937_64 rng(seed);
  const char* words[] = {"alpha", "béta", "日本", "", "delta with spaces", "\"quoted\""};
  for (int i = 0; i < batch.num_columns(); ++i) {
    Column* col = batch.mutable_column(i);
    const Field& f = fields[static_cast<size_t>(i)];
    Nulls nulls = !f.nullable             ? Nulls::kNone
                  : f.name == "all_null"  ? Nulls::kAll
                  : f.name == "alternate" ? Nulls::kAlternate
                                          : Nulls::kRandom;
    for (int64_t r = 0; r < n; ++r) {
      bool null = nulls == Nulls::kAll || (nulls == Nulls::kAlternate && r % 2 == 1) ||
                  (nulls == Nulls::kRandom && rng() % 100 < 20);
      if (null) {
        col->AppendNull();
        continue;
      }
      uint64_t x = rng();
      // Half low-cardinality (dictionary pages), half wide (PLAIN fallback).
      uint64_t v = r % 3 == 0 ? x : x % 40;
      switch (f.type->id()) {
        case TypeId::kString:
        case TypeId::kJson:
          col->As<BinaryColumn>()->Append(f.type->id() == TypeId::kJson
                                              ? "{\"k\":" + std::to_string(v % 1000) + "}"
                                              : std::string(words[v % 6]) + std::to_string(v));
          break;
        case TypeId::kBinary: {
          std::string s(v % 9, '\0');
          for (char& ch : s) {
            ch = static_cast<char>(rng());
          }
          col->As<BinaryColumn>()->Append(s);
          break;
        }
        case TypeId::kFixedBinary:
          col->As<BinaryColumn>()->Append(std::string{static_cast<char>(v), '\xff', '\0'});
          break;
        case TypeId::kFloat32:
          col->As<columnar::FloatColumn>()->Append(
              v % 17 == 5 ? NAN : static_cast<float>(static_cast<int64_t>(x)) / 1e9f);
          break;
        case TypeId::kFloat64:
          col->As<columnar::DoubleColumn>()->Append(
              v % 13 == 1 ? -0.0 : static_cast<double>(static_cast<int64_t>(x)) / 3e7);
          break;
        case TypeId::kDate:
          col->As<columnar::DateColumn>()->Append(static_cast<int32_t>(v % 200000) - 100000);
          break;
        case TypeId::kTimestamp:
          col->As<columnar::TimestampColumn>()->Append(static_cast<int64_t>(v % (1ull << 50)) -
                                                       (int64_t{1} << 49));
          break;
        case TypeId::kDecimal: {
          Int128 limit = 1;
          for (int k = 0; k < f.type->precision(); ++k) {
            limit *= 10;
          }
          Int128 d = (static_cast<Int128>(x) << 64 | rng()) % limit;
          col->As<columnar::DecimalColumn>()->Append(v % 2 ? -d : d);
          break;
        }
        case TypeId::kBoolean:
          col->As<columnar::BooleanColumn>()->Append(static_cast<uint8_t>(v & 1));
          break;
        default:
          columnar::VisitPrimitive(f.type->id(), [&]<typename C>(C*) {
            col->As<C>()->Append(static_cast<typename C::ValueType>(v));
          });
      }
    }
  }
  EXPECT_TRUE(batch.Validate().ok());
  return batch;
}

void ExpectSameRows(const std::vector<Json>& actual, const std::vector<Json>& expected,
                    const std::string& what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  for (size_t r = 0; r < expected.size(); ++r) {
    ASSERT_EQ(actual[r], expected[r]) << what << " row " << r;
  }
}

TEST_F(ParquetDuckDbTest, FlatTypesEveryCodecAndPageFormat) {
  RecordBatch batch = FlatBatch(3000, 7);
  const Schema& schema = batch.schema();
  std::string select;
  for (const Field& f : schema.fields()) {
    select += (select.empty() ? "" : ", ") + SelectExpr(f) + " AS \"" + f.name + "\"";
  }
  std::vector<Json> expected;
  for (int64_t r = 0; r < batch.num_rows(); ++r) {
    Json row = Json::object();
    for (int i = 0; i < batch.num_columns(); ++i) {
      row[schema.field(i).name] = ExpectedFlat(batch.column(i), r);
    }
    expected.push_back(std::move(row));
  }
  struct Variant {
    CompressionCodec codec;
    bool v2;
    bool dictionary;
  };
  std::vector<Variant> variants = {
      {CompressionCodec::kUncompressed, false, true}, {CompressionCodec::kSnappy, true, true},
      {CompressionCodec::kGzip, false, false},        {CompressionCodec::kZstd, false, true},
      {CompressionCodec::kZstd, true, false},         {CompressionCodec::kLz4Raw, false, true},
      {CompressionCodec::kBrotli, true, true},
  };
  for (const Variant& v : variants) {
    std::string name = std::string(CompressionCodecName(v.codec)) + (v.v2 ? "_v2" : "_v1") +
                       (v.dictionary ? "_dict" : "_plain");
    WriterOptions o;
    o.codec = v.codec;
    o.data_page_v2 = v.v2;
    o.enable_dictionary = v.dictionary;
    o.row_group_max_rows = 1100;    // three row groups
    o.page_max_rows = 300;          // several pages per chunk
    o.dictionary_max_bytes = 2000;  // wide columns fall back to PLAIN mid-chunk
    std::string path = Write(name, batch, o);
    std::vector<Json> rows = Duck("SELECT " + select + " FROM read_parquet('" + path + "')");
    ExpectSameRows(rows, expected, name);
  }
}

TEST_F(ParquetDuckDbTest, LogicalTypesAsDuckDbSeesThem) {
  RecordBatch batch = FlatBatch(10, 8);
  std::string path = Write("types", batch, WriterOptions{});
  std::vector<Json> rows = Duck(
      "SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet('" + path + "'))");
  std::map<std::string, std::string> types;
  for (const Json& r : rows) {
    types[r["column_name"].get<std::string>()] = r["column_type"].get<std::string>();
  }
  EXPECT_EQ(types["i8"], "TINYINT");
  EXPECT_EQ(types["i16"], "SMALLINT");
  EXPECT_EQ(types["u8"], "UTINYINT");
  EXPECT_EQ(types["u16"], "USMALLINT");
  EXPECT_EQ(types["u32"], "UINTEGER");
  EXPECT_EQ(types["u64"], "UBIGINT");
  EXPECT_EQ(types["f32"], "FLOAT");
  EXPECT_EQ(types["s"], "VARCHAR");
  EXPECT_EQ(types["bin"], "BLOB");
  EXPECT_EQ(types["date"], "DATE");
  EXPECT_EQ(types["ts"], "TIMESTAMP WITH TIME ZONE");
  EXPECT_EQ(types["ts_ntz"], "TIMESTAMP");
  EXPECT_EQ(types["dec_i32"], "DECIMAL(9,2)");
  EXPECT_EQ(types["dec_i64"], "DECIMAL(18,5)");
  EXPECT_EQ(types["dec_flba"], "DECIMAL(38,6)");
}

// A nested schema: structs, lists and maps inside each other, with nulls at every level.
RecordBatch NestedBatch(int64_t n, uint32_t seed, Json* expected_rows) {
  auto point = DataType::Struct({F("x", DataType::Int32(), false), F("label", DataType::String())});
  std::vector<Field> fields = {
      F("id", DataType::Int64(), false),
      F("tags", DataType::List(DataType::String())),
      F("attrs", DataType::Map(DataType::String(), DataType::Int32())),
      F("loc", DataType::Struct({F("lat", DataType::Float64()),
                                 F("lon", DataType::Float64(), false), F("inner", point)})),
      F("points", DataType::List(point, false), false),
      F("deep", DataType::List(DataType::List(DataType::List(DataType::Int64())))),
      F("map_of_lists", DataType::Map(DataType::String(), DataType::List(DataType::Int32()))),
  };
  auto schema = std::make_shared<Schema>(fields);
  RecordBatch batch = RecordBatch::MakeEmpty(schema);
  std::mt19937 rng(seed);
  auto chance = [&](int pct) { return static_cast<int>(rng() % 100) < pct; };
  *expected_rows = Json::array();
  for (int64_t r = 0; r < n; ++r) {
    Json row;
    batch.mutable_column(0)->As<columnar::Int64Column>()->Append(r);
    row["id"] = std::to_string(r);
    // tags: null, empty, or up to 3 strings with null elements
    auto* tags = batch.mutable_column(1)->As<columnar::ListColumn>();
    if (chance(15)) {
      tags->AppendNull();
      row["tags"] = nullptr;
    } else {
      Json arr = Json::array();
      for (int k = 0, len = static_cast<int>(rng() % 4); k < len; ++k) {
        if (chance(20)) {
          tags->mutable_child()->AppendNull();
          arr.push_back(nullptr);
        } else {
          std::string s = "t" + std::to_string(rng() % 10);
          tags->mutable_child()->As<BinaryColumn>()->Append(s);
          arr.push_back(s);
        }
      }
      tags->FinishRow();
      row["tags"] = arr;
    }
    // attrs: map with null values
    auto* attrs = batch.mutable_column(2)->As<columnar::MapColumn>();
    if (chance(15)) {
      attrs->AppendNull();
      row["attrs"] = nullptr;
    } else {
      Json arr = Json::array();
      for (int k = 0, len = static_cast<int>(rng() % 3); k < len; ++k) {
        std::string key = "k" + std::to_string(k);
        attrs->mutable_keys()->As<BinaryColumn>()->Append(key);
        Json value = nullptr;
        if (chance(25)) {
          attrs->mutable_values()->AppendNull();
        } else {
          int32_t v = static_cast<int32_t>(rng() % 1000) - 500;
          attrs->mutable_values()->As<columnar::Int32Column>()->Append(v);
          value = v;
        }
        arr.push_back(Json{{"key", key}, {"value", value}});
      }
      attrs->FinishRow();
      row["attrs"] = arr;
    }
    // loc: nullable struct with a required field and a nested nullable struct
    auto* loc = batch.mutable_column(3)->As<columnar::StructColumn>();
    auto append_point = [&](columnar::StructColumn* p, Json* out) {
      if (chance(20)) {
        p->AppendNull();
        *out = nullptr;
        return;
      }
      auto x = static_cast<int32_t>(rng() % 100);
      p->mutable_child(0)->As<columnar::Int32Column>()->Append(x);
      Json label = nullptr;
      if (chance(30)) {
        p->mutable_child(1)->AppendNull();
      } else {
        label = "p" + std::to_string(x);
        p->mutable_child(1)->As<BinaryColumn>()->Append(label.get<std::string>());
      }
      p->FinishRow();
      *out = Json{{"x", x}, {"label", label}};
    };
    if (chance(20)) {
      loc->AppendNull();
      row["loc"] = nullptr;
    } else {
      Json lat = nullptr;
      if (chance(20)) {
        loc->mutable_child(0)->AppendNull();
      } else {
        double d = static_cast<double>(rng() % 18000) / 100.0 - 90;
        loc->mutable_child(0)->As<columnar::DoubleColumn>()->Append(d);
        lat = d;
      }
      double lon = static_cast<double>(rng() % 36000) / 100.0 - 180;
      loc->mutable_child(1)->As<columnar::DoubleColumn>()->Append(lon);
      Json inner;
      append_point(loc->mutable_child(2)->As<columnar::StructColumn>(), &inner);
      loc->FinishRow();
      row["loc"] = Json{{"lat", lat}, {"lon", lon}, {"inner", inner}};
    }
    // points: required list of required structs (whose label may be null)
    auto* points = batch.mutable_column(4)->As<columnar::ListColumn>();
    Json parr = Json::array();
    for (int k = 0, len = static_cast<int>(rng() % 3); k < len; ++k) {
      auto* p = points->mutable_child()->As<columnar::StructColumn>();
      auto x = static_cast<int32_t>(rng() % 100);
      p->mutable_child(0)->As<columnar::Int32Column>()->Append(x);
      p->mutable_child(1)->As<BinaryColumn>()->Append("q");
      p->FinishRow();
      parr.push_back(Json{{"x", x}, {"label", "q"}});
    }
    points->FinishRow();
    row["points"] = parr;
    // deep: list<list<list<bigint>>> with nulls and empties at every level
    auto* deep = batch.mutable_column(5)->As<columnar::ListColumn>();
    if (chance(10)) {
      deep->AppendNull();
      row["deep"] = nullptr;
    } else {
      Json a1 = Json::array();
      auto* l2 = deep->mutable_child()->As<columnar::ListColumn>();
      for (int i = 0, n1 = static_cast<int>(rng() % 3); i < n1; ++i) {
        if (chance(15)) {
          l2->AppendNull();
          a1.push_back(nullptr);
          continue;
        }
        Json a2 = Json::array();
        auto* l3 = l2->mutable_child()->As<columnar::ListColumn>();
        for (int j = 0, n2 = static_cast<int>(rng() % 3); j < n2; ++j) {
          if (chance(15)) {
            l3->AppendNull();
            a2.push_back(nullptr);
            continue;
          }
          Json a3 = Json::array();
          for (int k = 0, n3 = static_cast<int>(rng() % 3); k < n3; ++k) {
            if (chance(15)) {
              l3->mutable_child()->AppendNull();
              a3.push_back(nullptr);
            } else {
              auto v = static_cast<int64_t>(rng()) << 20;
              l3->mutable_child()->As<columnar::Int64Column>()->Append(v);
              a3.push_back(std::to_string(v));
            }
          }
          l3->FinishRow();
          a2.push_back(a3);
        }
        l2->FinishRow();
        a1.push_back(a2);
      }
      deep->FinishRow();
      row["deep"] = a1;
    }
    // map_of_lists
    auto* mol = batch.mutable_column(6)->As<columnar::MapColumn>();
    Json marr = Json::array();
    for (int k = 0, len = static_cast<int>(rng() % 3); k < len; ++k) {
      std::string key = "m" + std::to_string(k);
      mol->mutable_keys()->As<BinaryColumn>()->Append(key);
      auto* vl = mol->mutable_values()->As<columnar::ListColumn>();
      Json value = nullptr;
      if (!chance(20)) {
        value = Json::array();
        for (int j = 0, m = static_cast<int>(rng() % 3); j < m; ++j) {
          auto v = static_cast<int32_t>(rng() % 10);
          vl->mutable_child()->As<columnar::Int32Column>()->Append(v);
          value.push_back(v);
        }
        vl->FinishRow();
      } else {
        vl->AppendNull();
      }
      marr.push_back(Json{{"key", key}, {"value", value}});
    }
    mol->FinishRow();
    row["map_of_lists"] = marr;
    expected_rows->push_back(std::move(row));
  }
  Status s = batch.Validate();
  EXPECT_TRUE(s.ok()) << s.ToString();
  return batch;
}

TEST_F(ParquetDuckDbTest, NestedTypesAndNullsAtEveryLevel) {
  Json expected;
  RecordBatch batch = NestedBatch(2500, 11, &expected);
  for (bool v2 : {false, true}) {
    for (CompressionCodec codec : {CompressionCodec::kZstd, CompressionCodec::kSnappy}) {
      WriterOptions o;
      o.codec = codec;
      o.data_page_v2 = v2;
      o.page_max_rows = 200;
      o.row_group_max_rows = 1000;
      std::string name =
          std::string("nested_") + (v2 ? "v2_" : "v1_") + std::string(CompressionCodecName(codec));
      std::string path = Write(name, batch, o);
      std::vector<Json> rows = Duck("SELECT * FROM read_parquet('" + path + "') ORDER BY id");
      ExpectSameRows(rows, std::vector<Json>(expected.begin(), expected.end()), name);
    }
  }
}

// DuckDB's reading of the footer statistics agrees with the data.
TEST_F(ParquetDuckDbTest, StatisticsAsDuckDbReadsThem) {
  RecordBatch batch = FlatBatch(2000, 9);
  WriterOptions o;
  o.row_group_max_rows = 1000000;
  std::string path = Write("stats", batch, o);
  std::vector<Json> rows = Duck(
      "SELECT path_in_schema, stats_min_value, stats_max_value, stats_null_count FROM "
      "parquet_metadata('" +
      path + "') WHERE row_group_id = 0");
  std::map<std::string, Json> by_name;
  for (const Json& r : rows) {
    by_name[r["path_in_schema"].get<std::string>()] = r;
  }
  const Schema& schema = batch.schema();
  auto check_int = [&](const std::string& name, auto getter) {
    int i = *schema.FieldIndex(name);
    const Column& col = batch.column(i);
    using T = decltype(getter(col, 0));
    bool any = false;
    T lo{};
    T hi{};
    int64_t nulls = 0;
    for (int64_t r = 0; r < col.length(); ++r) {
      if (col.IsNull(r)) {
        ++nulls;
        continue;
      }
      T v = getter(col, r);
      lo = any ? std::min(lo, v) : v;
      hi = any ? std::max(hi, v) : v;
      any = true;
    }
    const Json& s = by_name[name];
    EXPECT_EQ(s["stats_null_count"], std::to_string(nulls)) << name;
    if (any) {
      EXPECT_EQ(s["stats_min_value"], std::to_string(lo)) << name;
      EXPECT_EQ(s["stats_max_value"], std::to_string(hi)) << name;
    } else {
      EXPECT_TRUE(s["stats_min_value"].is_null()) << name;
    }
  };
  check_int("i32",
            [](const Column& c, int64_t r) { return c.As<columnar::Int32Column>()->Value(r); });
  check_int("i64",
            [](const Column& c, int64_t r) { return c.As<columnar::Int64Column>()->Value(r); });
  check_int("u32",
            [](const Column& c, int64_t r) { return c.As<columnar::UInt32Column>()->Value(r); });
  check_int("u64",
            [](const Column& c, int64_t r) { return c.As<columnar::UInt64Column>()->Value(r); });
  check_int("all_null",
            [](const Column& c, int64_t r) { return c.As<columnar::Int64Column>()->Value(r); });
  // Strings compare as unsigned bytes.
  int si = *schema.FieldIndex("s");
  std::string lo;
  std::string hi;
  bool any = false;
  const Column& s = batch.column(si);
  for (int64_t r = 0; r < s.length(); ++r) {
    if (s.IsValid(r)) {
      std::string v(s.As<BinaryColumn>()->Value(r));
      lo = any ? std::min(lo, v) : v;
      hi = any ? std::max(hi, v) : v;
      any = true;
    }
  }
  EXPECT_EQ(by_name["s"]["stats_min_value"], lo);
  EXPECT_EQ(by_name["s"]["stats_max_value"], hi);
}

}  // namespace
}  // namespace ferry::parquet
