// Randomized round trip: random schemas (structs, lists and maps nested at depth, required and
// optional fields, every type the writer maps) filled with random values and nulls, written with
// every codec, dictionary on and off, data page v1 and v2 and small random page and row-group
// limits, then read back by FileReader and compared value by value with what was written.
// Seeded: a failure names its case seed, and FERRY_ROUND_TRIP_SEED=<seed> replays only that case.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "ferry/base/io.h"
#include "ferry/columnar/column.h"
#include "ferry/columnar/record_batch.h"
#include "ferry/parquet/file_reader.h"
#include "ferry/parquet/writer.h"

namespace ferry::parquet {
namespace {

using columnar::BinaryColumn;
using columnar::Column;
using columnar::DataType;
using columnar::DataTypePtr;
using columnar::Field;
using columnar::Int128;
using columnar::ListColumn;
using columnar::MapColumn;
using columnar::RecordBatch;
using columnar::Schema;
using columnar::StructColumn;
using columnar::TimeUnit;
using columnar::TypeId;
using columnar::UInt128;

class RandomCase {
 public:
  explicit RandomCase(uint64_t seed) : rng_(seed) {}

  int Uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool Chance(double p) { return std::bernoulli_distribution(p)(rng_); }
  uint64_t Bits() { return rng_(); }

  DataTypePtr RandomPrimitive() {
    switch (Uniform(0, 21)) {
      case 0:
        return DataType::Boolean();
      case 1:
        return DataType::Int8();
      case 2:
        return DataType::Int16();
      case 3:
        return DataType::Int32();
      case 4:
        return DataType::Int64();
      case 5:
        return DataType::UInt8();
      case 6:
        return DataType::UInt16();
      case 7:
        return DataType::UInt32();
      case 8:
        return DataType::UInt64();
      case 9:
        return DataType::Float32();
      case 10:
        return DataType::Float64();
      case 11:
      case 12:
        return DataType::String();
      case 13:
        return DataType::Json();
      case 14:
        return DataType::Binary();
      case 15:
        return DataType::FixedBinary(Uniform(1, 17));
      case 16:
        return DataType::Date();
      case 17:
        return DataType::Timestamp(Chance(0.5) ? TimeUnit::kMicros : TimeUnit::kMillis,
                                   Chance(0.5));
      case 18:
        return DataType::Timestamp(TimeUnit::kNanos, Chance(0.5));
      case 19:
        return RandomDecimal(1, 9);
      case 20:
        return RandomDecimal(10, 18);
      default:
        return RandomDecimal(19, 38);
    }
  }

  DataTypePtr RandomDecimal(int lo, int hi) {
    int p = Uniform(lo, hi);
    return DataType::Decimal(p, Uniform(0, p));
  }

  DataTypePtr RandomType(int depth) {
    if (depth <= 0 || Chance(0.55)) {
      return RandomPrimitive();
    }
    switch (Uniform(0, 2)) {
      case 0: {
        std::vector<Field> fields;
        int n = Uniform(1, 4);
        for (int i = 0; i < n; i++) {
          fields.push_back(RandomField("f" + std::to_string(i), depth - 1));
        }
        return DataType::Struct(std::move(fields));
      }
      case 1:
        return DataType::List(RandomType(depth - 1), Chance(0.7));
      default: {
        DataTypePtr key = RandomPrimitive();
        return DataType::Map(key, RandomType(depth - 1), Chance(0.7));
      }
    }
  }

  Field RandomField(std::string name, int depth) {
    Field f;
    f.name = std::move(name);
    f.type = RandomType(depth);
    f.nullable = Chance(0.7);
    return f;
  }

  std::string RandomBytes(size_t n, bool text) {
    std::string s;
    s.reserve(n);
    for (size_t i = 0; i < n; i++) {
      if (text) {
        // ASCII, with an occasional two-byte UTF-8 character (é).
        if (Chance(0.05)) {
          s += "\xc3\xa9";
        } else {
          s.push_back(static_cast<char>(Uniform(0x20, 0x7e)));
        }
      } else {
        s.push_back(static_cast<char>(Uniform(0, 255)));
      }
    }
    return s;
  }

  // Few distinct values half the time, so that dictionaries and their fallback both happen.
  int64_t RandomInt() {
    if (low_cardinality_) {
      return Uniform(-3, 3);
    }
    switch (Uniform(0, 3)) {
      case 0:
        return Uniform(-100, 100);
      case 1:
        return static_cast<int64_t>(Bits());
      case 2:
        return Chance(0.5) ? INT64_MIN : INT64_MAX;
      default:
        return Uniform(INT32_MIN, INT32_MAX);
    }
  }

  double RandomDouble() {
    switch (Uniform(0, 9)) {
      case 0:
        return std::nan("");
      case 1:
        return -0.0;
      case 2:
        return Chance(0.5) ? INFINITY : -INFINITY;
      case 3:
        return 0.0;
      default:
        return low_cardinality_ ? Uniform(-3, 3) * 0.5
                                : std::uniform_real_distribution<double>(-1e12, 1e12)(rng_);
    }
  }

  Int128 RandomUnscaled(int precision) {
    Int128 limit = 1;
    for (int i = 0; i < precision; i++) {
      limit *= 10;
    }
    UInt128 u = (static_cast<UInt128>(Bits()) << 64) | Bits();
    int digits = Uniform(1, precision);
    Int128 bound = 1;
    for (int i = 0; i < digits; i++) {
      bound *= 10;
    }
    Int128 v = static_cast<Int128>(u % static_cast<UInt128>(bound));
    EXPECT_LT(v, limit);
    return Chance(0.5) ? -v : v;
  }

  void AppendValue(const DataTypePtr& type, bool nullable, Column* col) {
    if (nullable && Chance(null_rate_)) {
      col->AppendNull();
      return;
    }
    switch (type->id()) {
      case TypeId::kStruct: {
        auto* s = col->As<StructColumn>();
        for (int i = 0; i < s->num_children(); i++) {
          const Field& f = type->fields()[static_cast<size_t>(i)];
          AppendValue(f.type, f.nullable, s->mutable_child(i));
        }
        s->FinishRow();
        return;
      }
      case TypeId::kList: {
        auto* l = col->As<ListColumn>();
        int n = Uniform(0, 4);
        for (int i = 0; i < n; i++) {
          AppendValue(type->element().type, type->element().nullable, l->mutable_child());
        }
        l->FinishRow();
        return;
      }
      case TypeId::kMap: {
        auto* m = col->As<MapColumn>();
        int n = Uniform(0, 3);
        for (int i = 0; i < n; i++) {
          AppendValue(type->key().type, false, m->mutable_keys());
          AppendValue(type->value().type, type->value().nullable, m->mutable_values());
        }
        m->FinishRow();
        return;
      }
      case TypeId::kString:
      case TypeId::kJson:
        col->As<BinaryColumn>()->Append(RandomBytes(
            static_cast<size_t>(low_cardinality_ ? Uniform(0, 1) : Uniform(0, 40)), true));
        return;
      case TypeId::kBinary:
        col->As<BinaryColumn>()->Append(RandomBytes(static_cast<size_t>(Uniform(0, 20)), false));
        return;
      case TypeId::kFixedBinary:
        col->As<BinaryColumn>()->Append(
            RandomBytes(static_cast<size_t>(type->byte_width()), false));
        return;
      case TypeId::kBoolean:
        col->As<columnar::PrimitiveColumn<uint8_t>>()->Append(Chance(0.5) ? 1 : 0);
        return;
      case TypeId::kFloat32:
        col->As<columnar::PrimitiveColumn<float>>()->Append(static_cast<float>(RandomDouble()));
        return;
      case TypeId::kFloat64:
        col->As<columnar::PrimitiveColumn<double>>()->Append(RandomDouble());
        return;
      case TypeId::kDecimal:
        col->As<columnar::PrimitiveColumn<Int128>>()->Append(RandomUnscaled(type->precision()));
        return;
      default:
        columnar::VisitPrimitive(type->id(), [&]<typename C>(C*) {
          // Integers, dates and timestamps: truncation to the storage type is the point.
          col->As<C>()->Append(static_cast<typename C::ValueType>(RandomInt()));
        });
    }
  }

  void set_null_rate(double r) { null_rate_ = r; }
  void set_low_cardinality(bool b) { low_cardinality_ = b; }

 private:
  std::mt19937_64 rng_;
  double null_rate_ = 0.2;
  bool low_cardinality_ = false;
};

// Canonical text of one cell: equal text means equal values (floats by their bits, so NaN
// equals NaN and -0.0 differs from 0.0; children of a null parent are not looked at).
void CellText(const Column& col, int64_t row, std::string* out) {
  if (!col.IsValid(row)) {
    *out += "null";
    return;
  }
  const DataType& type = *col.type();
  switch (type.id()) {
    case TypeId::kStruct: {
      const auto& s = *col.As<StructColumn>();
      *out += '{';
      for (int i = 0; i < s.num_children(); i++) {
        CellText(s.child(i), row, out);
        *out += ',';
      }
      *out += '}';
      return;
    }
    case TypeId::kList: {
      const auto& l = *col.As<ListColumn>();
      *out += '[';
      for (int64_t i = l.offsets()[static_cast<size_t>(row)];
           i < l.offsets()[static_cast<size_t>(row) + 1]; i++) {
        CellText(l.child(), i, out);
        *out += ',';
      }
      *out += ']';
      return;
    }
    case TypeId::kMap: {
      const auto& m = *col.As<MapColumn>();
      *out += '<';
      for (int64_t i = m.offsets()[static_cast<size_t>(row)];
           i < m.offsets()[static_cast<size_t>(row) + 1]; i++) {
        CellText(m.keys(), i, out);
        *out += ':';
        CellText(m.values(), i, out);
        *out += ',';
      }
      *out += '>';
      return;
    }
    default:
      break;
  }
  if (type.is_binary_like()) {
    std::string_view v = col.As<BinaryColumn>()->Value(row);
    *out += std::to_string(v.size()) + '\'';
    out->append(v);
    *out += '\'';
    return;
  }
  columnar::VisitPrimitive(type.id(), [&]<typename C>(C*) {
    using T = typename C::ValueType;
    T v = col.As<C>()->Value(row);
    unsigned char bytes[sizeof(T)];
    std::memcpy(bytes, &v, sizeof(T));
    for (unsigned char b : bytes) {
      static const char kHex[] = "0123456789abcdef";
      *out += kHex[b >> 4];
      *out += kHex[b & 15];
    }
  });
}

std::string RowText(const RecordBatch& batch, int64_t row, std::span<const int> columns) {
  std::string out;
  for (int c : columns) {
    CellText(batch.column(c), row, &out);
    out += '|';
  }
  return out;
}

constexpr CompressionCodec kCodecs[] = {
    CompressionCodec::kUncompressed, CompressionCodec::kSnappy, CompressionCodec::kGzip,
    CompressionCodec::kZstd,         CompressionCodec::kLz4Raw, CompressionCodec::kLz4,
    CompressionCodec::kBrotli,
};

// One case: a schema, a batch (written in one or more Write calls), options; read back whole and
// through a projection.
// `forced`: take codec, dictionary and page version from it instead of the seed.
struct Forced {
  CompressionCodec codec;
  bool dictionary;
  bool v2;
};

void RunCase(uint64_t seed, const Forced* forced = nullptr) {
  SCOPED_TRACE("seed " + std::to_string(seed) + " (FERRY_ROUND_TRIP_SEED replays it)");
  RandomCase r(seed);
  std::vector<Field> fields;
  int num_fields = r.Uniform(1, 6);
  int depth = r.Uniform(0, 4);
  for (int i = 0; i < num_fields; i++) {
    fields.push_back(r.RandomField("c" + std::to_string(i), depth));
  }
  auto schema = std::make_shared<const Schema>(std::move(fields));
  SCOPED_TRACE(schema->ToString());

  WriterOptions options;
  options.codec = kCodecs[static_cast<size_t>(r.Uniform(0, std::size(kCodecs) - 1))];
  options.enable_dictionary = r.Chance(0.5);
  options.data_page_v2 = r.Chance(0.5);
  options.page_max_rows = r.Chance(0.5) ? r.Uniform(1, 50) : 20000;
  options.page_max_bytes = r.Chance(0.3) ? r.Uniform(64, 4096) : 1 << 20;
  options.row_group_max_rows = r.Chance(0.5) ? r.Uniform(1, 200) : 1 << 20;
  options.dictionary_max_bytes = r.Chance(0.3) ? r.Uniform(8, 512) : 1 << 20;
  if (forced != nullptr) {
    options.codec = forced->codec;
    options.enable_dictionary = forced->dictionary;
    options.data_page_v2 = forced->v2;
  }
  r.set_null_rate(r.Chance(0.2) ? 0.0 : (r.Chance(0.2) ? 0.9 : 0.2));
  r.set_low_cardinality(r.Chance(0.5));
  SCOPED_TRACE(std::string(CompressionCodecName(options.codec)) +
               (options.enable_dictionary ? " dict" : " plain") +
               (options.data_page_v2 ? " v2" : " v1"));

  auto sink = std::make_unique<StringOutputStream>("random.parquet");
  StringOutputStream* out = sink.get();
  auto writer = FileWriter::Open(std::move(sink), schema, options);
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();

  RecordBatch all = RecordBatch::MakeEmpty(schema);
  int writes = r.Chance(0.03) ? 0 : r.Uniform(1, 3);  // no Write at all: an empty file
  for (int w = 0; w < writes; w++) {
    RecordBatch batch = RecordBatch::MakeEmpty(schema);
    int rows = r.Chance(0.05) ? 0 : r.Uniform(1, 600);
    for (int row = 0; row < rows; row++) {
      for (int c = 0; c < schema->num_fields(); c++) {
        const Field& f = schema->field(c);
        r.AppendValue(f.type, f.nullable, batch.mutable_column(c));
      }
    }
    ASSERT_TRUE(batch.Validate().ok()) << batch.Validate().ToString();
    Status s = (*writer)->Write(batch);
    ASSERT_TRUE(s.ok()) << s.ToString();
    for (int64_t row = 0; row < batch.num_rows(); row++) {
      for (int c = 0; c < schema->num_fields(); c++) {
        all.mutable_column(c)->AppendFrom(batch.column(c), row);
      }
    }
  }
  Status closed = (*writer)->Close();
  ASSERT_TRUE(closed.ok()) << closed.ToString();

  auto file = std::make_shared<StringRandomAccessFile>(out->buffer(), "random.parquet");
  // Small read windows put page headers and bodies across window edges.
  ReaderOptions read_options;
  if (r.Chance(0.5)) {
    read_options.min_read_size = r.Uniform(1, 300);
  }
  SCOPED_TRACE("min_read_size " + std::to_string(read_options.min_read_size));
  auto reader = FileReader::Open(file, read_options);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  ASSERT_TRUE((*reader)->schema()->Equals(*schema))
      << "read back as " << (*reader)->schema()->ToString();
  ASSERT_EQ((*reader)->num_rows(), all.num_rows());

  std::vector<int> every;
  for (int c = 0; c < schema->num_fields(); c++) {
    every.push_back(c);
  }
  auto read = (*reader)->ReadAll();
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  ASSERT_EQ(read->num_rows(), all.num_rows());
  for (int64_t row = 0; row < all.num_rows(); row++) {
    ASSERT_EQ(RowText(*read, row, every), RowText(all, row, every)) << "row " << row;
  }

  // A projection (last field first) of each row group on its own.
  std::vector<int> projection = {schema->num_fields() - 1, 0};
  if (projection[0] == 0) {
    projection.pop_back();
  }
  int64_t base = 0;
  for (int rg = 0; rg < (*reader)->num_row_groups(); rg++) {
    auto part = (*reader)->ReadRowGroup(rg, projection);
    ASSERT_TRUE(part.ok()) << part.status().ToString();
    std::vector<int> positions;
    for (size_t i = 0; i < projection.size(); i++) {
      positions.push_back(static_cast<int>(i));
    }
    for (int64_t row = 0; row < part->num_rows(); row++) {
      ASSERT_EQ(RowText(*part, row, positions), RowText(all, base + row, projection))
          << "row group " << rg << " row " << row;
    }
    base += part->num_rows();
  }
  EXPECT_EQ(base, all.num_rows());

  // The same projection in small batches (ReadBatches): row groups of flat fields larger than a
  // batch are read a batch at a time, cut in the middle of pages.
  const int64_t max_rows = r.Uniform(1, 40);
  SCOPED_TRACE("ReadBatches max_rows " + std::to_string(max_rows));
  base = 0;
  int batches = 0;
  Status batched = (*reader)->ReadBatches(projection, max_rows, [&](const RecordBatch& b) {
    ++batches;
    FERRY_RETURN_IF_ERROR(b.Validate());
    std::vector<int> positions;
    for (size_t i = 0; i < projection.size(); i++) {
      positions.push_back(static_cast<int>(i));
    }
    for (int64_t row = 0; row < b.num_rows(); row++) {
      if (RowText(b, row, positions) != RowText(all, base + row, projection)) {
        return Internal("row {} differs: {} vs {}", base + row, RowText(b, row, positions),
                        RowText(all, base + row, projection));
      }
    }
    base += b.num_rows();
    return Status::OK();
  });
  ASSERT_TRUE(batched.ok()) << batched.ToString();
  EXPECT_EQ(base, all.num_rows());
  EXPECT_GE(batches, (*reader)->num_row_groups());
}

TEST(RoundTripRandomTest, RandomSchemasAndDataReadBackEqual) {
  if (const char* only = std::getenv("FERRY_ROUND_TRIP_SEED")) {
    RunCase(std::strtoull(only, nullptr, 10));
    return;
  }
  constexpr int kCases = 400;
  for (int i = 0; i < kCases; i++) {
    RunCase(0x5eed0000u + static_cast<uint64_t>(i));
    if (::testing::Test::HasFatalFailure() || ::testing::Test::HasNonfatalFailure()) {
      return;  // the first failing seed is the one to look at
    }
  }
}

// Every codec with dictionary on and off and both page versions, each on several random cases.
TEST(RoundTripRandomTest, EveryCodecAndEncodingOnANestedSchema) {
  uint64_t seed = 0xc0dec000u;
  for (CompressionCodec codec : kCodecs) {
    for (bool dictionary : {false, true}) {
      for (bool v2 : {false, true}) {
        // Several seeds each, so that every combination meets nesting and nulls.
        for (int i = 0; i < 4; i++) {
          Forced forced{.codec = codec, .dictionary = dictionary, .v2 = v2};
          RunCase(seed++, &forced);
          if (::testing::Test::HasFatalFailure() || ::testing::Test::HasNonfatalFailure()) {
            return;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace ferry::parquet
