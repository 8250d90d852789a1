#include "ferry/parquet/writer.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <random>

#include "ferry/columnar/schema_for_test.h"
#include "ferry/parquet/file_reader.h"
#include "ferry/parquet/schema_writer.h"
#include "ferry/parquet/writer_test_decoder.h"

namespace ferry::parquet {
namespace {

using columnar::F;

using columnar::BinaryColumn;
using columnar::Column;
using columnar::DataType;
using columnar::Field;
using columnar::Int128;
using columnar::RecordBatch;
using columnar::Schema;
using columnar::TypeId;
using testing::Bytes;
using testing::DecodeChunk;
using testing::ReadFooter;
using testing::SharedStringStream;
using testing::WriteFile;

// The PLAIN bytes the writer must produce for row `row` of a flat column.
std::string ExpectedPlain(const Column& col, int64_t row, const ColumnDescriptor& c) {
  const DataType& t = *col.type();
  if (t.is_binary_like()) {
    return std::string(col.As<BinaryColumn>()->Value(row));
  }
  if (t.id() == TypeId::kBoolean) {
    return std::string(1, static_cast<char>(col.As<columnar::BooleanColumn>()->Value(row)));
  }
  if (t.id() == TypeId::kDecimal) {
    Int128 v = col.As<columnar::DecimalColumn>()->Value(row);
    if (c.physical_type == PhysicalType::kInt32) {
      return Bytes(static_cast<int32_t>(v));
    }
    if (c.physical_type == PhysicalType::kInt64) {
      return Bytes(static_cast<int64_t>(v));
    }
    std::string be(static_cast<size_t>(c.type_length), '\0');
    for (size_t b = 0; b < be.size(); ++b) {
      be[be.size() - 1 - b] = static_cast<char>(static_cast<columnar::UInt128>(v) >> (8 * b));
    }
    return be;
  }
  return columnar::VisitPrimitive(t.id(), [&]<typename C>(C*) -> std::string {
    auto v = col.As<C>()->Value(row);
    if (c.physical_type == PhysicalType::kInt32) {
      return Bytes(static_cast<int32_t>(v));
    }
    if (c.physical_type == PhysicalType::kInt64) {
      return Bytes(static_cast<int64_t>(v));
    }
    return Bytes(v);
  });
}

// A batch with every primitive type, nullable (with ~15% nulls) and not, `n` rows.
RecordBatch AllTypesBatch(int64_t n, uint32_t seed) {
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
      F("f", DataType::Float32()),
      F("d", DataType::Float64()),
      F("s", DataType::String()),
      F("j", DataType::Json(), false),
      F("bin", DataType::Binary()),
      F("fx", DataType::FixedBinary(5)),
      F("date", DataType::Date()),
      F("ts", DataType::Timestamp()),
      F("ts_ms", DataType::Timestamp(columnar::TimeUnit::kMillis, false)),
      F("dec9", DataType::Decimal(9, 2)),
      F("dec18", DataType::Decimal(18, 4)),
      F("dec38", DataType::Decimal(38, 6)),
  };
  auto schema = std::make_shared<Schema>(fields);
  RecordBatch batch = RecordBatch::MakeEmpty(schema);
  std::mt19937_64 rng(seed);
  for (int i = 0; i < batch.num_columns(); ++i) {
    Column* col = batch.mutable_column(i);
    const Field& f = fields[static_cast<size_t>(i)];
    for (int64_t r = 0; r < n; ++r) {
      if (f.nullable && rng() % 100 < 15) {
        col->AppendNull();
        continue;
      }
      uint64_t x = rng();
      uint64_t small = x % 50;  // low cardinality half of the time: exercises dictionaries
      uint64_t v = (r % 2 == 0) ? small : x;
      switch (f.type->id()) {
        case TypeId::kString:
        case TypeId::kJson:
        case TypeId::kBinary:
          col->As<BinaryColumn>()->Append(std::string("v") + std::to_string(v % 100000) +
                                          (v % 3 == 0 ? "\xff" : ""));
          break;
        case TypeId::kFixedBinary:
          col->As<BinaryColumn>()->Append(std::string(5, static_cast<char>('a' + v % 26)));
          break;
        case TypeId::kDecimal: {
          Int128 max = f.type->precision() == 9    ? 999999999
                       : f.type->precision() == 18 ? 999999999999999999
                                                   : Int128{1} << 100;
          Int128 d = static_cast<Int128>(v) % max;
          col->As<columnar::DecimalColumn>()->Append(x % 2 ? -d : d);
          break;
        }
        case TypeId::kFloat32:
          col->As<columnar::FloatColumn>()->Append(static_cast<float>(static_cast<int64_t>(v)) /
                                                   7.0f);
          break;
        case TypeId::kFloat64:
          col->As<columnar::DoubleColumn>()->Append(static_cast<double>(static_cast<int64_t>(v)) /
                                                    3.0);
          break;
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

void CheckFlatFile(const std::string& file, const RecordBatch& batch) {
  FileMetaData md = ReadFooter(file);
  Result<std::vector<ColumnDescriptor>> leaves = DescribeLeaves(md.schema);
  ASSERT_TRUE(leaves.ok());
  ASSERT_EQ(leaves->size(), static_cast<size_t>(batch.num_columns()));
  EXPECT_EQ(md.num_rows, batch.num_rows());
  ASSERT_TRUE(md.column_orders.has_value());
  EXPECT_EQ(md.column_orders->size(), leaves->size());
  for (int i = 0; i < batch.num_columns(); ++i) {
    const ColumnDescriptor& c = (*leaves)[static_cast<size_t>(i)];
    const Column& col = batch.column(i);
    std::vector<std::string> values;
    std::vector<int16_t> def;
    for (const RowGroup& rg : md.row_groups) {
      testing::DecodedChunk d = DecodeChunk(file, rg.columns[static_cast<size_t>(i)], c);
      values.insert(values.end(), d.values.begin(), d.values.end());
      def.insert(def.end(), d.def.begin(), d.def.end());
    }
    size_t k = 0;
    for (int64_t r = 0; r < batch.num_rows(); ++r) {
      if (c.max_definition_level > 0) {
        ASSERT_EQ(def[static_cast<size_t>(r)], col.IsValid(r) ? 1 : 0) << c.PathString() << r;
      }
      if (col.IsValid(r)) {
        ASSERT_LT(k, values.size());
        ASSERT_EQ(values[k++], ExpectedPlain(col, r, c)) << c.PathString() << " row " << r;
      }
    }
    EXPECT_EQ(k, values.size()) << c.PathString();
  }
}

// Calls fn(options) for every codec of `codecs` x page v1/v2 x dictionary on/off, traced.
template <typename Fn>
void ForEachCodecPageVersionAndDictionary(std::initializer_list<CompressionCodec> codecs, Fn fn) {
  for (CompressionCodec codec : codecs) {
    for (bool v2 : {false, true}) {
      for (bool dict : {false, true}) {
        SCOPED_TRACE(std::string(CompressionCodecName(codec)) + (v2 ? " v2" : " v1") +
                     (dict ? " dict" : " plain"));
        WriterOptions o;
        o.codec = codec;
        o.data_page_v2 = v2;
        o.enable_dictionary = dict;
        fn(o);
      }
    }
  }
}

TEST(WriterTest, EveryTypeCodecAndPageVersionRoundTrips) {
  RecordBatch batch = AllTypesBatch(3000, 1);
  ForEachCodecPageVersionAndDictionary(
      {CompressionCodec::kUncompressed, CompressionCodec::kSnappy, CompressionCodec::kGzip,
       CompressionCodec::kZstd, CompressionCodec::kLz4Raw, CompressionCodec::kBrotli},
      [&](WriterOptions o) {
        o.page_max_rows = 700;  // several pages per chunk
        o.row_group_max_rows = 2000;
        std::string file = WriteFile(batch, o);
        CheckFlatFile(file, batch);
      });
}

// Pages compressed on a pool (compression_threads > 1) give the same file, byte for byte, as
// pages compressed inline: every codec, both page versions, dictionary and PLAIN pages, several
// pages and row groups (cut by rows, so that the estimate of pages still in the pool plays no
// part), and the file reads back equal to the batch.
TEST(WriterTest, CompressionThreadsWriteTheSameFile) {
  RecordBatch batch = AllTypesBatch(5000, 3);
  ForEachCodecPageVersionAndDictionary(
      {CompressionCodec::kSnappy, CompressionCodec::kGzip, CompressionCodec::kZstd,
       CompressionCodec::kLz4Raw},
      [&](WriterOptions o) {
        o.page_max_rows = 300;  // many pages per chunk: more than the pool queues
        o.row_group_max_rows = 2000;
        std::string inline_file = WriteFile(batch, o);
        o.compression_threads = 3;
        std::string pooled_file = WriteFile(batch, o);
        EXPECT_EQ(pooled_file.size(), inline_file.size());
        EXPECT_TRUE(pooled_file == inline_file);
        CheckFlatFile(pooled_file, batch);
      });
  WriterOptions bad;
  bad.compression_threads = 0;
  std::string out;
  auto w = FileWriter::Open(std::make_unique<SharedStringStream>(&out), batch.schema_ptr(), bad);
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("compression_threads"), std::string::npos);
}

// PLAIN values are kept behind 8 KiB of room into which a v1 page's levels are copied
// (PlainPageValues). A page of 80,000 rows with ~15 % nulls has ~10 KiB of definition levels,
// more than the room, and is formed by copying the values after the levels instead; pages of
// 2,000 rows use the room. Both, inline and on a pool, v1 and v2, read back equal.
TEST(WriterTest, PagesWithLevelsLargerThanTheRoomBeforeTheirValues) {
  RecordBatch batch = AllTypesBatch(80000, 5);
  for (int64_t page_rows : {80000, 2000}) {
    for (bool v2 : {false, true}) {
      SCOPED_TRACE(fmt::format("{} rows per page, v{}", page_rows, v2 ? 2 : 1));
      WriterOptions o;
      o.enable_dictionary = false;
      o.data_page_v2 = v2;
      o.page_max_rows = page_rows;
      o.page_max_bytes = 64 << 20;
      std::string inline_file = WriteFile(batch, o);
      CheckFlatFile(inline_file, batch);
      o.compression_threads = 2;
      EXPECT_TRUE(WriteFile(batch, o) == inline_file);
    }
  }
}

// Dictionary pages compare each distinct value of a page once for the page's min/max: every page's
// statistics are still those of all its values, including values first seen on earlier pages
// and pages that hold nothing but such values.
TEST(WriterTest, DictionaryPageStatisticsCoverEveryValueOfThePage) {
  auto schema =
      std::make_shared<Schema>(std::vector<Field>{F("s", DataType::String(), /*nullable=*/false)});
  RecordBatch batch = RecordBatch::MakeEmpty(schema);
  std::mt19937 rng(11);
  for (int i = 0; i < 3000; ++i) {
    // Rows 1000-1199 repeat one value seen before; elsewhere a value of a small vocabulary
    // whose members share prefixes, and now and then one that is new to the chunk.
    std::string v = i >= 1000 && i < 1200 ? "c0007"
                    : rng() % 10 == 0     ? fmt::format("n{}", rng() % 100000)
                                          : fmt::format("c{:04}", rng() % 40);
    batch.mutable_column(0)->As<BinaryColumn>()->Append(v);
  }
  for (bool v2 : {false, true}) {
    SCOPED_TRACE(v2 ? "v2" : "v1");
    WriterOptions o;
    o.page_max_rows = 100;
    o.data_page_v2 = v2;
    std::string file = WriteFile(batch, o);
    FileMetaData md = ReadFooter(file);
    auto leaves = DescribeLeaves(md.schema);
    ASSERT_TRUE(leaves.ok());
    testing::DecodedChunk d = DecodeChunk(file, md.row_groups[0].columns[0], (*leaves)[0]);
    size_t at = 0;
    int pages = 0;
    for (const PageHeader& h : d.pages) {
      if (h.type == PageType::kDictionaryPage) {
        continue;
      }
      const Statistics& s =
          v2 ? *h.data_page_header_v2->statistics : *h.data_page_header->statistics;
      int32_t n = v2 ? h.data_page_header_v2->num_values : h.data_page_header->num_values;
      ASSERT_LE(at + static_cast<size_t>(n), d.values.size());
      auto [lo, hi] = std::minmax_element(d.values.begin() + static_cast<ptrdiff_t>(at),
                                          d.values.begin() + static_cast<ptrdiff_t>(at + n));
      EXPECT_EQ(s.min_value, *lo) << "page " << pages;
      EXPECT_EQ(s.max_value, *hi) << "page " << pages;
      at += static_cast<size_t>(n);
      ++pages;
    }
    EXPECT_EQ(at, d.values.size());
    EXPECT_GE(pages, 30);  // 100 rows or fewer each
    CheckFlatFile(file, batch);
  }
}

// A sink that fails from its `fail_at`-th Append on.
class FailingStream final : public OutputStream {
 public:
  explicit FailingStream(int fail_at) : fail_at_(fail_at) {}
  Status Append(std::string_view d) override {
    if (++appends_ >= fail_at_) {
      return IOError("disk full");
    }
    size_ += d.size();
    return Status::OK();
  }
  uint64_t Tell() const override { return size_; }
  Status Close() override { return Status::OK(); }
  const std::string& name() const override { return name_; }

 private:
  int fail_at_;
  int appends_ = 0;
  uint64_t size_ = 0;
  std::string name_ = "failing.parquet";
};

// A sink error while pages are still in the pool: the error is returned (and sticks), and the
// writer is destroyed with jobs pending without a hang or a use after free (ASan, TSan builds).
TEST(WriterTest, SinkErrorWithPagesInThePool) {
  RecordBatch batch = AllTypesBatch(5000, 4);
  for (int fail_at : {2, 5, 40}) {
    SCOPED_TRACE(fail_at);
    WriterOptions o;
    o.compression_threads = 3;
    o.page_max_rows = 200;
    o.row_group_max_rows = 1000;
    auto w = FileWriter::Open(std::make_unique<FailingStream>(fail_at), batch.schema_ptr(), o);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    Status s = (*w)->Write(batch);
    if (s.ok()) {
      s = (*w)->Close();
    }
    EXPECT_EQ(s.code(), StatusCode::kIOError) << s.ToString();
    EXPECT_NE(s.message().find("failing.parquet"), std::string::npos) << s.ToString();
    EXPECT_EQ((*w)->Close().code(), StatusCode::kIOError);
  }
}

TEST(WriterTest, RowGroupAndPageLimits) {
  RecordBatch batch = AllTypesBatch(10000, 2);
  WriterOptions o;
  o.row_group_max_rows = 3000;
  o.page_max_rows = 500;
  o.data_page_v2 = true;
  std::string file = WriteFile(batch, o);
  FileMetaData md = ReadFooter(file);
  ASSERT_EQ(md.row_groups.size(), 4u);
  EXPECT_EQ(md.row_groups[0].num_rows, 3000);
  EXPECT_EQ(md.row_groups[3].num_rows, 1000);
  auto leaves = DescribeLeaves(md.schema);
  for (const RowGroup& rg : md.row_groups) {
    for (size_t i = 0; i < rg.columns.size(); ++i) {
      testing::DecodedChunk d = DecodeChunk(file, rg.columns[i], (*leaves)[i]);
      int64_t rows = 0;
      for (const PageHeader& h : d.pages) {
        if (h.data_page_header_v2) {
          EXPECT_LE(h.data_page_header_v2->num_rows, 500);
          rows += h.data_page_header_v2->num_rows;
          ASSERT_TRUE(h.data_page_header_v2->statistics.has_value());
          EXPECT_TRUE(h.data_page_header_v2->statistics->null_count.has_value());
        }
      }
      EXPECT_EQ(rows, rg.num_rows);
    }
  }
  CheckFlatFile(file, batch);

  // A byte limit cuts row groups too.
  WriterOptions small;
  small.row_group_max_bytes = 20000;
  small.codec = CompressionCodec::kUncompressed;
  std::string f2 = WriteFile(batch, small);
  EXPECT_GT(ReadFooter(f2).row_groups.size(), 3u);
  CheckFlatFile(f2, batch);
}

TEST(WriterTest, PageByteLimit) {
  auto schema = std::make_shared<Schema>(std::vector<Field>{F("s", DataType::String(), false)});
  RecordBatch batch = RecordBatch::MakeEmpty(schema);
  for (int i = 0; i < 20000; ++i) {
    batch.mutable_column(0)->As<BinaryColumn>()->Append(
        std::string(100, static_cast<char>('a' + i % 26)) + std::to_string(i));
  }
  WriterOptions o;
  o.enable_dictionary = false;
  o.page_max_bytes = 64 << 10;
  std::string file = WriteFile(batch, o);
  FileMetaData md = ReadFooter(file);
  auto leaves = DescribeLeaves(md.schema);
  testing::DecodedChunk d = DecodeChunk(file, md.row_groups[0].columns[0], (*leaves)[0]);
  EXPECT_GT(d.pages.size(), 20u);
  for (const PageHeader& h : d.pages) {
    EXPECT_LE(h.uncompressed_page_size, (64 << 10) * 5 / 4);
  }
}

TEST(WriterTest, DictionaryFallsBackToPlain) {
  auto schema = std::make_shared<Schema>(std::vector<Field>{F("s", DataType::String())});
  RecordBatch batch = RecordBatch::MakeEmpty(schema);
  for (int i = 0; i < 5000; ++i) {
    batch.mutable_column(0)->As<BinaryColumn>()->Append("unique-" + std::to_string(i));
  }
  WriterOptions o;
  o.dictionary_max_bytes = 4000;
  o.page_max_rows = 100;
  std::string file = WriteFile(batch, o);
  FileMetaData md = ReadFooter(file);
  const ColumnMetaData& cmd = *md.row_groups[0].columns[0].meta_data;
  EXPECT_TRUE(cmd.dictionary_page_offset.has_value());
  std::set<Encoding> encodings(cmd.encodings.begin(), cmd.encodings.end());
  EXPECT_TRUE(encodings.count(Encoding::kRleDictionary));
  EXPECT_TRUE(encodings.count(Encoding::kPlain));
  ASSERT_TRUE(cmd.encoding_stats.has_value());
  int dict_pages = 0;
  int plain_pages = 0;
  for (const PageEncodingStats& s : *cmd.encoding_stats) {
    if (s.page_type == PageType::kDataPage) {
      (s.encoding == Encoding::kRleDictionary ? dict_pages : plain_pages) += s.count;
    }
  }
  EXPECT_GT(dict_pages, 0);
  EXPECT_GT(plain_pages, 0);
  CheckFlatFile(file, batch);
}

// The first dictionary page of 1,000 values or more decides: unique values go PLAIN from the next
// page on (the dictionary would only grow the file), repeated values keep the dictionary.
TEST(WriterTest, DictionaryThatDoesNotPayFallsBackAfterTheFirstPage) {
  auto schema = std::make_shared<Schema>(std::vector<Field>{F("id", DataType::Int64(), false),
                                                            F("uuid", DataType::String(), false),
                                                            F("city", DataType::String(), false)});
  RecordBatch batch = RecordBatch::MakeEmpty(schema);
  for (int64_t i = 0; i < 10000; ++i) {
    batch.mutable_column(0)->As<columnar::Int64Column>()->Append(i * 7919);
    batch.mutable_column(1)->As<BinaryColumn>()->Append(fmt::format("{:036}", i * 104729));
    batch.mutable_column(2)->As<BinaryColumn>()->Append(i % 3 == 0 ? "Berlin" : "Lisbon");
  }
  WriterOptions o;
  o.page_max_rows = 2000;
  std::string file = WriteFile(batch, o);
  FileMetaData md = ReadFooter(file);
  auto data_pages = [&](int column, Encoding encoding) {
    const ColumnMetaData& cmd = *md.row_groups[0].columns[static_cast<size_t>(column)].meta_data;
    int n = 0;
    for (const PageEncodingStats& s : *cmd.encoding_stats) {
      if (s.page_type == PageType::kDataPage && s.encoding == encoding) {
        n += s.count;
      }
    }
    return n;
  };
  for (int unique : {0, 1}) {
    // The pages up to the first one of 1,000 values or more are dictionary-encoded.
    EXPECT_GE(data_pages(unique, Encoding::kRleDictionary), 1) << "column " << unique;
    EXPECT_LE(data_pages(unique, Encoding::kRleDictionary), 2) << "column " << unique;
    EXPECT_GE(data_pages(unique, Encoding::kPlain), 3) << "column " << unique;
  }
  EXPECT_GE(data_pages(2, Encoding::kRleDictionary), 5);
  EXPECT_EQ(data_pages(2, Encoding::kPlain), 0);
  CheckFlatFile(file, batch);
}

// Dictionary lookups compare whole values: values of one length that differ in a single byte,
// before, at or after the eighth, each get their own entry.
TEST(WriterTest, DictionaryKeepsValuesThatDifferInOneByte) {
  auto schema = std::make_shared<Schema>(std::vector<Field>{F("s", DataType::String())});
  RecordBatch batch = RecordBatch::MakeEmpty(schema);
  auto* col = batch.mutable_column(0)->As<BinaryColumn>();
  std::vector<std::string> values = {"", std::string(1, '\0'), std::string(2, '\0')};
  for (size_t len : {1, 7, 8, 9, 16, 17}) {
    for (size_t at = 0; at < len; at++) {
      std::string v(len, 'k');
      v[at] = '\x80';
      values.push_back(v);
    }
    values.push_back(std::string(len, 'k'));
  }
  for (int round = 0; round < 3; round++) {
    for (const std::string& v : values) {
      col->Append(v);
    }
  }
  std::string file = WriteFile(batch, WriterOptions{});
  FileMetaData md = ReadFooter(file);
  const ColumnMetaData& cmd = *md.row_groups[0].columns[0].meta_data;
  EXPECT_TRUE(cmd.dictionary_page_offset.has_value());
  CheckFlatFile(file, batch);
}

TEST(WriterTest, FooterMetadata) {
  RecordBatch batch = AllTypesBatch(10, 3);
  WriterOptions o;
  o.key_value_metadata = {{"k", "v"}, {"delta.schema", "{}"}};
  std::string file = WriteFile(batch, o);
  FileMetaData md = ReadFooter(file);
  ASSERT_TRUE(md.key_value_metadata.has_value());
  EXPECT_EQ((*md.key_value_metadata)[1].key, "delta.schema");
  EXPECT_EQ(md.created_by.value_or(""), "ferry version 0.1.0");
  EXPECT_EQ(md.version, 1);
  EXPECT_EQ(md.row_groups[0].columns[0].meta_data->codec, CompressionCodec::kZstd);
}

TEST(WriterTest, EmptyFileIsValid) {
  RecordBatch batch = AllTypesBatch(0, 4);
  std::string file = WriteFile(batch, WriterOptions{});
  FileMetaData md = ReadFooter(file);
  EXPECT_EQ(md.num_rows, 0);
  EXPECT_TRUE(md.row_groups.empty());
  EXPECT_EQ(md.schema.size(), 22u);
}

TEST(WriterTest, EstimatedFileSizeTracksTheFile) {
  RecordBatch batch = AllTypesBatch(20000, 5);
  std::string out;
  auto schema = batch.schema_ptr();
  WriterOptions o;
  o.row_group_max_rows = 5000;
  auto w = FileWriter::Open(std::make_unique<SharedStringStream>(&out), schema, o);
  ASSERT_TRUE(w.ok());
  int64_t before = (*w)->estimated_file_size();
  ASSERT_TRUE((*w)->Write(batch).ok());
  int64_t estimate = (*w)->estimated_file_size();
  EXPECT_GT(estimate, before);
  ASSERT_TRUE((*w)->Close().ok());
  auto actual = static_cast<int64_t>(out.size());
  EXPECT_GT(estimate, actual / 2);
  EXPECT_LT(estimate, actual * 2);
}

// Delta column mapping writes batches named as the table shows them into files named with the
// physical names and carrying field ids (PROTOCOL.md "Column Mapping"): the ids reach the
// footer at every depth, read back as field metadata, and the rows land under the file's names.
TEST(WriterTest, FieldIdsAndFieldsMatchedByPosition) {
  auto id_field = [](std::string name, columnar::DataTypePtr type, int id) {
    Field f = F(std::move(name), std::move(type));
    f.metadata.emplace_back(kFieldIdMetadataKey, std::to_string(id));
    return f;
  };
  auto file_schema = std::make_shared<const Schema>(std::vector<Field>{
      id_field("col-a", DataType::Int64(), 1),
      id_field("col-b", DataType::Struct({id_field("col-c", DataType::String(), 3)}), 2),
      id_field("col-d", DataType::List(DataType::Int32()), 4),
  });
  auto logical = std::make_shared<const Schema>(std::vector<Field>{
      F("id", DataType::Int64()),
      F("loc", DataType::Struct({F("city", DataType::String())})),
      F("tags", DataType::List(DataType::Int32())),
  });
  std::vector<std::unique_ptr<Column>> columns;
  for (const Field& f : logical->fields()) {
    columns.push_back(columnar::MakeColumn(f.type));
  }
  for (int64_t i = 0; i < 3; ++i) {
    columns[0]->As<columnar::Int64Column>()->Append(i * 10);
    auto* loc = columns[1]->As<columnar::StructColumn>();
    loc->mutable_child(0)->As<BinaryColumn>()->Append("c" + std::to_string(i));
    loc->FinishRow();
    auto* tags = columns[2]->As<columnar::ListColumn>();
    for (int64_t k = 0; k < i; ++k) {
      tags->mutable_child()->As<columnar::Int32Column>()->Append(static_cast<int32_t>(k));
    }
    tags->FinishRow();
  }
  RecordBatch batch(logical, std::move(columns));

  std::string out;
  WriterOptions options;
  auto strict = FileWriter::Open(std::make_unique<SharedStringStream>(&out), file_schema, options);
  ASSERT_TRUE(strict.ok()) << strict.status().ToString();
  EXPECT_EQ((*strict)->Write(batch).code(), StatusCode::kInvalidArgument);

  out.clear();
  options.match_fields_by_position = true;
  auto w = FileWriter::Open(std::make_unique<SharedStringStream>(&out), file_schema, options);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_TRUE((*w)->Write(batch).ok());
  ASSERT_TRUE((*w)->Close().ok());

  FileMetaData md = ReadFooter(out);
  std::map<std::string, std::optional<int32_t>> ids;
  for (const SchemaElement& e : md.schema) {
    ids[e.name] = e.field_id;
  }
  EXPECT_EQ(ids["col-a"], 1);
  EXPECT_EQ(ids["col-b"], 2);
  EXPECT_EQ(ids["col-c"], 3);
  EXPECT_EQ(ids["col-d"], 4);
  EXPECT_EQ(ids["element"], std::nullopt);  // as Spark writes lists: no id below the field
  EXPECT_EQ(ids["schema"], std::nullopt);

  auto reader = FileReader::Open(std::make_shared<StringRandomAccessFile>(out));
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  const Schema& read_schema = *(*reader)->schema();
  ASSERT_TRUE(read_schema.Equals(*file_schema)) << read_schema.ToString();
  EXPECT_EQ(read_schema.field(1).type->fields()[0].metadata,
            (columnar::FieldMetadata{{kFieldIdMetadataKey, "3"}}));
  EXPECT_EQ(read_schema.field(2).metadata, (columnar::FieldMetadata{{kFieldIdMetadataKey, "4"}}));
  auto rows = (*reader)->ReadAll();
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->num_rows(), 3);
  EXPECT_EQ(rows->column(0).As<columnar::Int64Column>()->Value(2), 20);
  EXPECT_EQ(rows->column(1).As<columnar::StructColumn>()->child(0).As<BinaryColumn>()->Value(1),
            "c1");
  EXPECT_EQ(rows->column(2).As<columnar::ListColumn>()->ListLength(2), 2);
}

TEST(WriterTest, FieldIdMustBeAnInt32) {
  Field f = F("a", DataType::Int32());
  f.metadata.emplace_back(kFieldIdMetadataKey, "4294967296");
  Result<ParquetSchema> ps = BuildParquetSchema(Schema({f}));
  EXPECT_EQ(ps.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(ps.status().message().find("32-bit"), std::string::npos) << ps.status().ToString();
}

}  // namespace
}  // namespace ferry::parquet
