// The Parquet file metadata model: C++ mirrors of the parquet.thrift structures ferry reads and
// writes (apache/parquet-format src/main/thrift/parquet.thrift; the field ids in metadata_*.cc
// follow it exactly), plus their Thrift compact codec.
//
// File layout (written by writer.h, read by the reader):
//   1. "PAR1"
//   2. column chunks, row group after row group; each chunk = [dictionary page] data pages,
//      every page = PageHeader (Thrift) + page bytes
//   3. FileMetaData (Thrift compact)
//   4. 4-byte little-endian length of the FileMetaData
//   5. "PAR1"
//
// Optional Thrift fields are std::optional so that "absent" differs from zero (a reader must not
// take a missing null_count for 0). Enums keep unknown values from newer writers as their raw
// number instead of failing the parse; the reader decides whether it can handle them.
//
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/columnar/types.h"

namespace ferry::parquet {

inline constexpr std::string_view kParquetMagic = "PAR1";

enum class PhysicalType : int32_t {
  kBoolean = 0,
  kInt32 = 1,
  kInt64 = 2,
  kInt96 = 3,
  kFloat = 4,
  kDouble = 5,
  kByteArray = 6,
  kFixedLenByteArray = 7,
};

enum class ConvertedType : int32_t {
  kUtf8 = 0,
  kMap = 1,
  kMapKeyValue = 2,
  kList = 3,
  kEnum = 4,
  kDecimal = 5,
  kDate = 6,
  kTimeMillis = 7,
  kTimeMicros = 8,
  kTimestampMillis = 9,
  kTimestampMicros = 10,
  kUint8 = 11,
  kUint16 = 12,
  kUint32 = 13,
  kUint64 = 14,
  kInt8 = 15,
  kInt16 = 16,
  kInt32 = 17,
  kInt64 = 18,
  kJson = 19,
  kBson = 20,
  kInterval = 21,
};

enum class FieldRepetitionType : int32_t {
  kRequired = 0,
  kOptional = 1,
  kRepeated = 2,
};

enum class Encoding : int32_t {
  kPlain = 0,
  kPlainDictionary = 2,
  kRle = 3,
  kBitPacked = 4,
  kDeltaBinaryPacked = 5,
  kDeltaLengthByteArray = 6,
  kDeltaByteArray = 7,
  kRleDictionary = 8,
  kByteStreamSplit = 9,
};

enum class CompressionCodec : int32_t {
  kUncompressed = 0,
  kSnappy = 1,
  kGzip = 2,
  kLzo = 3,
  kBrotli = 4,
  kLz4 = 5,  // deprecated: Hadoop framing (compression.h)
  kZstd = 6,
  kLz4Raw = 7,
};

enum class PageType : int32_t {
  kDataPage = 0,
  kIndexPage = 1,
  kDictionaryPage = 2,
  kDataPageV2 = 3,
};

std::string_view PhysicalTypeName(PhysicalType t);
std::string_view EncodingName(Encoding e);
std::string_view CompressionCodecName(CompressionCodec c);
std::string_view PageTypeName(PageType t);
std::string_view ConvertedTypeName(ConvertedType t);

using TimeUnit = columnar::TimeUnit;

// The LogicalType union. `kind` is the union member's field id; members ferry does not know
// (VARIANT, GEOMETRY, ...) keep their id and carry no parameters.
struct LogicalType {
  enum class Kind : int16_t {
    kString = 1,
    kMap = 2,
    kList = 3,
    kEnum = 4,
    kDecimal = 5,
    kDate = 6,
    kTime = 7,
    kTimestamp = 8,
    kInteger = 10,
    kUnknown = 11,  // the NullType ("always null")
    kJson = 12,
    kBson = 13,
    kUuid = 14,
    kFloat16 = 15,
  };
  Kind kind = Kind::kString;
  int32_t scale = 0;                  // kDecimal
  int32_t precision = 0;              // kDecimal
  TimeUnit unit = TimeUnit::kMicros;  // kTime, kTimestamp
  bool is_adjusted_to_utc = false;    // kTime, kTimestamp
  int8_t bit_width = 0;               // kInteger
  bool is_signed = true;              // kInteger

  static LogicalType Of(Kind k) {
    LogicalType t;
    t.kind = k;
    return t;
  }
  bool operator==(const LogicalType&) const = default;
};

struct Statistics {
  std::optional<std::string> max;  // deprecated: signed order only
  std::optional<std::string> min;  // deprecated: signed order only
  std::optional<int64_t> null_count;
  std::optional<int64_t> distinct_count;
  std::optional<std::string> max_value;
  std::optional<std::string> min_value;
  std::optional<bool> is_max_value_exact;
  std::optional<bool> is_min_value_exact;
  std::optional<int64_t> nan_count;
  bool operator==(const Statistics&) const = default;
};

// The columnar field metadata key that carries a SchemaElement's field_id: the reader sets it
// (schema_from_parquet.h), the writer writes it (schema_writer.h). The value is the decimal id.
inline constexpr char kFieldIdMetadataKey[] = "parquet.field.id";

struct SchemaElement {
  std::optional<PhysicalType> type;  // leaves only
  std::optional<int32_t> type_length;
  std::optional<FieldRepetitionType> repetition_type;  // absent on the root
  std::string name;
  std::optional<int32_t> num_children;  // groups only
  std::optional<ConvertedType> converted_type;
  std::optional<int32_t> scale;
  std::optional<int32_t> precision;
  std::optional<int32_t> field_id;
  std::optional<LogicalType> logical_type;
  bool operator==(const SchemaElement&) const = default;
};

struct KeyValue {
  std::string key;
  std::optional<std::string> value;
  bool operator==(const KeyValue&) const = default;
};

struct SortingColumn {
  int32_t column_idx = 0;
  bool descending = false;
  bool nulls_first = false;
  bool operator==(const SortingColumn&) const = default;
};

struct PageEncodingStats {
  PageType page_type = PageType::kDataPage;
  Encoding encoding = Encoding::kPlain;
  int32_t count = 0;
  bool operator==(const PageEncodingStats&) const = default;
};

struct ColumnMetaData {
  PhysicalType type = PhysicalType::kBoolean;
  std::vector<Encoding> encodings;
  std::vector<std::string> path_in_schema;
  CompressionCodec codec = CompressionCodec::kUncompressed;
  int64_t num_values = 0;
  int64_t total_uncompressed_size = 0;  // pages including their headers
  int64_t total_compressed_size = 0;    // pages including their headers
  std::optional<std::vector<KeyValue>> key_value_metadata;
  int64_t data_page_offset = 0;
  std::optional<int64_t> index_page_offset;
  std::optional<int64_t> dictionary_page_offset;
  std::optional<Statistics> statistics;
  std::optional<std::vector<PageEncodingStats>> encoding_stats;
  std::optional<int64_t> bloom_filter_offset;
  std::optional<int32_t> bloom_filter_length;
  bool operator==(const ColumnMetaData&) const = default;
};

struct ColumnChunk {
  std::optional<std::string> file_path;
  int64_t file_offset = 0;
  std::optional<ColumnMetaData> meta_data;
  std::optional<int64_t> offset_index_offset;
  std::optional<int32_t> offset_index_length;
  std::optional<int64_t> column_index_offset;
  std::optional<int32_t> column_index_length;
  // crypto_metadata or encrypted_column_metadata was present (parse only; never written).
  bool encrypted = false;
  bool operator==(const ColumnChunk&) const = default;
};

struct RowGroup {
  std::vector<ColumnChunk> columns;
  int64_t total_byte_size = 0;
  int64_t num_rows = 0;
  std::optional<std::vector<SortingColumn>> sorting_columns;
  std::optional<int64_t> file_offset;
  std::optional<int64_t> total_compressed_size;
  std::optional<int16_t> ordinal;
  bool operator==(const RowGroup&) const = default;
};

// The ColumnOrder union; ferry writes TYPE_ORDER (kind 1).
struct ColumnOrder {
  enum class Kind : int16_t { kTypeOrder = 1, kIeee754TotalOrder = 2, kInt96TimestampOrder = 3 };
  Kind kind = Kind::kTypeOrder;
  bool operator==(const ColumnOrder&) const = default;
};

struct FileMetaData {
  int32_t version = 1;
  std::vector<SchemaElement> schema;  // depth-first, root first
  int64_t num_rows = 0;
  std::vector<RowGroup> row_groups;
  std::optional<std::vector<KeyValue>> key_value_metadata;
  std::optional<std::string> created_by;
  std::optional<std::vector<ColumnOrder>> column_orders;
  // encryption_algorithm was present (parse only; never written).
  bool encrypted = false;
  bool operator==(const FileMetaData&) const = default;
};

struct DataPageHeader {
  int32_t num_values = 0;
  Encoding encoding = Encoding::kPlain;
  Encoding definition_level_encoding = Encoding::kRle;
  Encoding repetition_level_encoding = Encoding::kRle;
  std::optional<Statistics> statistics;
  bool operator==(const DataPageHeader&) const = default;
};

struct DictionaryPageHeader {
  int32_t num_values = 0;
  Encoding encoding = Encoding::kPlain;
  std::optional<bool> is_sorted;
  bool operator==(const DictionaryPageHeader&) const = default;
};

struct DataPageHeaderV2 {
  int32_t num_values = 0;
  int32_t num_nulls = 0;
  int32_t num_rows = 0;
  Encoding encoding = Encoding::kPlain;
  int32_t definition_levels_byte_length = 0;
  int32_t repetition_levels_byte_length = 0;
  std::optional<bool> is_compressed;  // absent means true
  std::optional<Statistics> statistics;
  bool operator==(const DataPageHeaderV2&) const = default;
};

struct PageHeader {
  PageType type = PageType::kDataPage;
  int32_t uncompressed_page_size = 0;
  int32_t compressed_page_size = 0;
  std::optional<int32_t> crc;
  std::optional<DataPageHeader> data_page_header;
  bool has_index_page_header = false;
  std::optional<DictionaryPageHeader> dictionary_page_header;
  std::optional<DataPageHeaderV2> data_page_header_v2;
  bool operator==(const PageHeader&) const = default;
};

// Serializers append the Thrift compact encoding to *out.
void SerializeFileMetaData(const FileMetaData& md, std::string* out);
void SerializePageHeader(const PageHeader& header, std::string* out);

// Parsers. Errors are DataLoss naming the problem and byte offset; required fields that are
// missing are errors; unknown fields are skipped.
Result<FileMetaData> ParseFileMetaData(std::string_view bytes);
// Parses the page header at the start of `bytes`; returns the bytes it took.
Result<size_t> ParsePageHeader(std::string_view bytes, PageHeader* header);

}  // namespace ferry::parquet
