#include "ferry/parquet/metadata.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "ferry/base/endian.h"
#include "ferry/base/file.h"
#include "ferry/parquet/thrift_compact.h"

namespace ferry::parquet {
namespace {

FileMetaData FullMetaData() {
  FileMetaData md;
  md.version = 2;
  SchemaElement root;
  root.name = "schema";
  root.num_children = 2;
  SchemaElement a;
  a.name = "a";
  a.type = PhysicalType::kFixedLenByteArray;
  a.type_length = 16;
  a.repetition_type = FieldRepetitionType::kOptional;
  a.converted_type = ConvertedType::kDecimal;
  a.scale = 2;
  a.precision = 30;
  a.field_id = 7;
  LogicalType dec = LogicalType::Of(LogicalType::Kind::kDecimal);
  dec.scale = 2;
  dec.precision = 30;
  a.logical_type = dec;
  SchemaElement b;
  b.name = "b";
  b.type = PhysicalType::kInt64;
  b.repetition_type = FieldRepetitionType::kRequired;
  LogicalType ts = LogicalType::Of(LogicalType::Kind::kTimestamp);
  ts.unit = TimeUnit::kNanos;
  ts.is_adjusted_to_utc = true;
  b.logical_type = ts;
  md.schema = {root, a, b};
  md.num_rows = 1234567890123;

  ColumnMetaData cmd;
  cmd.type = PhysicalType::kInt64;
  cmd.encodings = {Encoding::kPlain, Encoding::kRle, Encoding::kRleDictionary};
  cmd.path_in_schema = {"b"};
  cmd.codec = CompressionCodec::kZstd;
  cmd.num_values = 5;
  cmd.total_uncompressed_size = 100;
  cmd.total_compressed_size = 80;
  cmd.key_value_metadata = std::vector<KeyValue>{{"k", "v"}, {"nullvalue", std::nullopt}};
  cmd.data_page_offset = 40;
  cmd.dictionary_page_offset = 4;
  Statistics st;
  st.min_value = std::string("\x01\x00\x00\x00\x00\x00\x00\x00", 8);
  st.max_value = std::string("\x09\x00\x00\x00\x00\x00\x00\x00", 8);
  st.min = st.min_value;
  st.max = st.max_value;
  st.null_count = 0;
  st.distinct_count = 3;
  st.is_max_value_exact = true;
  st.is_min_value_exact = false;
  st.nan_count = 0;
  cmd.statistics = st;
  cmd.encoding_stats =
      std::vector<PageEncodingStats>{{PageType::kDictionaryPage, Encoding::kPlain, 1},
                                     {PageType::kDataPage, Encoding::kRleDictionary, 2}};
  cmd.bloom_filter_offset = 99;
  cmd.bloom_filter_length = 10;
  ColumnChunk cc;
  cc.file_offset = 0;
  cc.meta_data = cmd;
  cc.offset_index_offset = 1;
  cc.offset_index_length = 2;
  cc.column_index_offset = 3;
  cc.column_index_length = 4;
  RowGroup rg;
  rg.columns = {cc, cc};
  rg.total_byte_size = 100;
  rg.num_rows = 5;
  rg.sorting_columns = std::vector<SortingColumn>{{1, true, false}};
  rg.file_offset = 4;
  rg.total_compressed_size = 80;
  rg.ordinal = 0;
  md.row_groups = {rg};
  md.key_value_metadata = std::vector<KeyValue>{{"writer", "ferry"}};
  md.created_by = "ferry version 0.1.0";
  md.column_orders = std::vector<ColumnOrder>{{}, {}};
  return md;
}

TEST(MetadataTest, FileMetaDataRoundTrip) {
  FileMetaData md = FullMetaData();
  std::string bytes;
  SerializeFileMetaData(md, &bytes);
  Result<FileMetaData> parsed = ParseFileMetaData(bytes);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(*parsed, md);
}

TEST(MetadataTest, EveryLogicalTypeRoundTrips) {
  using Kind = LogicalType::Kind;
  for (Kind k : {Kind::kString, Kind::kMap, Kind::kList, Kind::kEnum, Kind::kDecimal, Kind::kDate,
                 Kind::kTime, Kind::kTimestamp, Kind::kInteger, Kind::kUnknown, Kind::kJson,
                 Kind::kBson, Kind::kUuid, Kind::kFloat16}) {
    FileMetaData md;
    SchemaElement e;
    e.name = "x";
    e.type = PhysicalType::kInt32;
    LogicalType lt = LogicalType::Of(k);
    if (k == Kind::kInteger) {
      lt.bit_width = 16;
      lt.is_signed = false;
    }
    if (k == Kind::kTime) {
      lt.unit = TimeUnit::kMillis;
      lt.is_adjusted_to_utc = true;
    }
    if (k == Kind::kDecimal) {
      lt.precision = 9;
      lt.scale = 3;
    }
    e.logical_type = lt;
    md.schema = {e};
    std::string bytes;
    SerializeFileMetaData(md, &bytes);
    Result<FileMetaData> parsed = ParseFileMetaData(bytes);
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
    EXPECT_EQ(parsed->schema[0].logical_type, lt) << static_cast<int>(k);
  }
}

TEST(MetadataTest, PageHeaderRoundTripReportsBytesConsumed) {
  PageHeader h;
  h.type = PageType::kDataPageV2;
  h.uncompressed_page_size = 1000;
  h.compressed_page_size = 500;
  h.crc = -5;
  DataPageHeaderV2 v2;
  v2.num_values = 10;
  v2.num_nulls = 2;
  v2.num_rows = 8;
  v2.encoding = Encoding::kRleDictionary;
  v2.definition_levels_byte_length = 3;
  v2.repetition_levels_byte_length = 4;
  v2.is_compressed = false;
  v2.statistics = Statistics{};
  v2.statistics->null_count = 2;
  h.data_page_header_v2 = v2;
  std::string bytes;
  SerializePageHeader(h, &bytes);
  size_t header_size = bytes.size();
  bytes += "page bytes follow";
  PageHeader parsed;
  Result<size_t> n = ParsePageHeader(bytes, &parsed);
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, header_size);
  EXPECT_EQ(parsed, h);

  PageHeader dict;
  dict.type = PageType::kDictionaryPage;
  dict.dictionary_page_header = DictionaryPageHeader{3, Encoding::kPlain, true};
  PageHeader v1;
  v1.type = PageType::kDataPage;
  v1.data_page_header = DataPageHeader{};
  v1.data_page_header->num_values = 7;
  for (const PageHeader& p : {dict, v1}) {
    std::string b;
    SerializePageHeader(p, &b);
    PageHeader q;
    ASSERT_TRUE(ParsePageHeader(b, &q).ok());
    EXPECT_EQ(q, p);
  }
}

TEST(MetadataTest, SkipsUnknownFieldsAndUnionMembers) {
  // A SchemaElement with an unknown field 11 (vector_length) and a LogicalType of an unknown
  // union member 16 (VARIANT) holding a field; a FileMetaData with an unknown field 20.
  std::string bytes;
  thrift::CompactWriter w(&bytes);
  w.StructBegin();
  w.FieldI32(1, 1);
  w.FieldListBegin(2, thrift::CType::kStruct, 1);
  w.StructBegin();
  w.FieldBinary(4, "v");
  w.FieldBegin(thrift::CType::kStruct, 10);
  w.StructBegin();
  w.FieldStructBegin(16);
  w.FieldI8(1, 1);
  w.StructEnd();
  w.StructEnd();
  w.FieldI32(11, 3);
  w.StructEnd();
  w.FieldI64(3, 0);
  w.FieldListBegin(4, thrift::CType::kStruct, 0);
  w.FieldListBegin(20, thrift::CType::kDouble, 1);
  w.WriteDouble(1.5);
  w.StructEnd();
  Result<FileMetaData> md = ParseFileMetaData(bytes);
  ASSERT_TRUE(md.ok()) << md.status().ToString();
  ASSERT_EQ(md->schema.size(), 1u);
  EXPECT_EQ(md->schema[0].name, "v");
  ASSERT_TRUE(md->schema[0].logical_type.has_value());
  EXPECT_EQ(static_cast<int>(md->schema[0].logical_type->kind), 16);
}

TEST(MetadataTest, MissingRequiredFieldIsAnError) {
  std::string bytes;
  thrift::CompactWriter w(&bytes);
  w.StructBegin();
  w.FieldI32(1, 1);
  w.FieldI64(3, 0);
  w.StructEnd();
  Result<FileMetaData> md = ParseFileMetaData(bytes);
  ASSERT_FALSE(md.ok());
  EXPECT_EQ(md.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(md.status().message().find("required field 2"), std::string::npos)
      << md.status().ToString();
}

TEST(MetadataTest, WrongWireTypeIsAnError) {
  std::string bytes;
  thrift::CompactWriter w(&bytes);
  w.StructBegin();
  w.FieldBinary(1, "not an i32");
  w.StructEnd();
  EXPECT_EQ(ParseFileMetaData(bytes).status().code(), StatusCode::kDataLoss);
}

TEST(MetadataTest, EveryTruncationFailsCleanly) {
  std::string bytes;
  SerializeFileMetaData(FullMetaData(), &bytes);
  for (size_t len = 0; len < bytes.size(); ++len) {
    EXPECT_FALSE(ParseFileMetaData(std::string_view(bytes).substr(0, len)).ok()) << len;
  }
  // Flipped bytes must never crash (results may parse or fail).
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::string copy = bytes;
    copy[i] = static_cast<char>(copy[i] ^ 0x5a);
    (void)ParseFileMetaData(copy).ok();
  }
}

// Every footer and first page header of the parquet-testing files parses, survives a
// serialize/parse round trip, and agrees with itself (row counts, page sizes inside the file).
TEST(MetadataTest, ParsesParquetTestingFooters) {
  std::string dir = std::string(FERRY_TESTDATA_DIR) + "/parquet-testing";
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::string path = entry.path().string();
    if (entry.path().extension() != ".parquet") {
      continue;
    }
    Result<std::string> data = ReadFileToString(path);
    ASSERT_TRUE(data.ok()) << path;
    ASSERT_GE(data->size(), 12u) << path;
    uint32_t len = LoadLE<uint32_t>(data->data() + data->size() - 8);
    ASSERT_LE(len + 8u, data->size()) << path;
    std::string_view footer(data->data() + data->size() - 8 - len, len);
    Result<FileMetaData> md = ParseFileMetaData(footer);
    ASSERT_TRUE(md.ok()) << path << ": " << md.status().ToString();
    int64_t rows = 0;
    for (const RowGroup& rg : md->row_groups) {
      rows += rg.num_rows;
      for (const ColumnChunk& cc : rg.columns) {
        ASSERT_TRUE(cc.meta_data.has_value()) << path;
        int64_t offset = cc.meta_data->dictionary_page_offset.value_or(0) > 0
                             ? *cc.meta_data->dictionary_page_offset
                             : cc.meta_data->data_page_offset;
        ASSERT_LT(static_cast<size_t>(offset), data->size()) << path;
        PageHeader h;
        Result<size_t> n = ParsePageHeader(std::string_view(*data).substr(offset), &h);
        ASSERT_TRUE(n.ok()) << path << ": " << n.status().ToString();
        EXPECT_LE(static_cast<size_t>(offset) + *n + static_cast<size_t>(h.compressed_page_size),
                  data->size())
            << path;
      }
    }
    if (entry.path().filename() != "repeated_no_annotation.parquet") {  // its footer says 0
      EXPECT_EQ(rows, md->num_rows) << path;
    }
    std::string again;
    SerializeFileMetaData(*md, &again);
    Result<FileMetaData> md2 = ParseFileMetaData(again);
    ASSERT_TRUE(md2.ok()) << path;
    EXPECT_EQ(*md2, *md) << path;
    ++files;
  }
  EXPECT_GT(files, 50);
}

}  // namespace
}  // namespace ferry::parquet
