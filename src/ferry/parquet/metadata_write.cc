// Thrift compact serialization of the metadata model (metadata.h) and the enum names. Field ids
// are those of parquet.thrift; fields are written in increasing id order.
#include <string>

#include "ferry/parquet/metadata.h"
#include "ferry/parquet/thrift_compact.h"

namespace ferry::parquet {
namespace {

using thrift::CompactWriter;
using thrift::CType;

template <typename E>
int32_t Raw(E e) {
  return static_cast<int32_t>(e);
}

void WriteStatistics(const Statistics& s, CompactWriter* w) {
  w->StructBegin();
  if (s.max) {
    w->FieldBinary(1, *s.max);
  }
  if (s.min) {
    w->FieldBinary(2, *s.min);
  }
  if (s.null_count) {
    w->FieldI64(3, *s.null_count);
  }
  if (s.distinct_count) {
    w->FieldI64(4, *s.distinct_count);
  }
  if (s.max_value) {
    w->FieldBinary(5, *s.max_value);
  }
  if (s.min_value) {
    w->FieldBinary(6, *s.min_value);
  }
  if (s.is_max_value_exact) {
    w->FieldBool(7, *s.is_max_value_exact);
  }
  if (s.is_min_value_exact) {
    w->FieldBool(8, *s.is_min_value_exact);
  }
  if (s.nan_count) {
    w->FieldI64(9, *s.nan_count);
  }
  w->StructEnd();
}

void WriteTimeUnit(TimeUnit unit, CompactWriter* w) {
  w->StructBegin();
  switch (unit) {
    case TimeUnit::kMillis:
      w->FieldEmptyStruct(1);
      break;
    case TimeUnit::kMicros:
      w->FieldEmptyStruct(2);
      break;
    case TimeUnit::kNanos:
      w->FieldEmptyStruct(3);
      break;
  }
  w->StructEnd();
}

void WriteLogicalType(const LogicalType& t, CompactWriter* w) {
  using Kind = LogicalType::Kind;
  w->StructBegin();
  auto id = static_cast<int16_t>(t.kind);
  w->FieldStructBegin(id);
  switch (t.kind) {
    case Kind::kDecimal:
      w->FieldI32(1, t.scale);
      w->FieldI32(2, t.precision);
      break;
    case Kind::kTime:
    case Kind::kTimestamp:
      w->FieldBool(1, t.is_adjusted_to_utc);
      w->FieldBegin(CType::kStruct, 2);
      WriteTimeUnit(t.unit, w);
      break;
    case Kind::kInteger:
      w->FieldI8(1, t.bit_width);
      w->FieldBool(2, t.is_signed);
      break;
    default:
      break;  // empty structs
  }
  w->StructEnd();
  w->StructEnd();
}

void WriteSchemaElement(const SchemaElement& e, CompactWriter* w) {
  w->StructBegin();
  if (e.type) {
    w->FieldI32(1, Raw(*e.type));
  }
  if (e.type_length) {
    w->FieldI32(2, *e.type_length);
  }
  if (e.repetition_type) {
    w->FieldI32(3, Raw(*e.repetition_type));
  }
  w->FieldBinary(4, e.name);
  if (e.num_children) {
    w->FieldI32(5, *e.num_children);
  }
  if (e.converted_type) {
    w->FieldI32(6, Raw(*e.converted_type));
  }
  if (e.scale) {
    w->FieldI32(7, *e.scale);
  }
  if (e.precision) {
    w->FieldI32(8, *e.precision);
  }
  if (e.field_id) {
    w->FieldI32(9, *e.field_id);
  }
  if (e.logical_type) {
    w->FieldBegin(CType::kStruct, 10);
    WriteLogicalType(*e.logical_type, w);
  }
  w->StructEnd();
}

void WriteKeyValues(int16_t id, const std::vector<KeyValue>& kvs, CompactWriter* w) {
  w->FieldListBegin(id, CType::kStruct, static_cast<int32_t>(kvs.size()));
  for (const KeyValue& kv : kvs) {
    w->StructBegin();
    w->FieldBinary(1, kv.key);
    if (kv.value) {
      w->FieldBinary(2, *kv.value);
    }
    w->StructEnd();
  }
}

void WriteColumnMetaData(const ColumnMetaData& c, CompactWriter* w) {
  w->StructBegin();
  w->FieldI32(1, Raw(c.type));
  w->FieldListBegin(2, CType::kI32, static_cast<int32_t>(c.encodings.size()));
  for (Encoding e : c.encodings) {
    w->WriteI32(Raw(e));
  }
  w->FieldListBegin(3, CType::kBinary, static_cast<int32_t>(c.path_in_schema.size()));
  for (const std::string& p : c.path_in_schema) {
    w->WriteBinary(p);
  }
  w->FieldI32(4, Raw(c.codec));
  w->FieldI64(5, c.num_values);
  w->FieldI64(6, c.total_uncompressed_size);
  w->FieldI64(7, c.total_compressed_size);
  if (c.key_value_metadata) {
    WriteKeyValues(8, *c.key_value_metadata, w);
  }
  w->FieldI64(9, c.data_page_offset);
  if (c.index_page_offset) {
    w->FieldI64(10, *c.index_page_offset);
  }
  if (c.dictionary_page_offset) {
    w->FieldI64(11, *c.dictionary_page_offset);
  }
  if (c.statistics) {
    w->FieldBegin(CType::kStruct, 12);
    WriteStatistics(*c.statistics, w);
  }
  if (c.encoding_stats) {
    w->FieldListBegin(13, CType::kStruct, static_cast<int32_t>(c.encoding_stats->size()));
    for (const PageEncodingStats& s : *c.encoding_stats) {
      w->StructBegin();
      w->FieldI32(1, Raw(s.page_type));
      w->FieldI32(2, Raw(s.encoding));
      w->FieldI32(3, s.count);
      w->StructEnd();
    }
  }
  if (c.bloom_filter_offset) {
    w->FieldI64(14, *c.bloom_filter_offset);
  }
  if (c.bloom_filter_length) {
    w->FieldI32(15, *c.bloom_filter_length);
  }
  w->StructEnd();
}

void WriteColumnChunk(const ColumnChunk& c, CompactWriter* w) {
  w->StructBegin();
  if (c.file_path) {
    w->FieldBinary(1, *c.file_path);
  }
  w->FieldI64(2, c.file_offset);
  if (c.meta_data) {
    w->FieldBegin(CType::kStruct, 3);
    WriteColumnMetaData(*c.meta_data, w);
  }
  if (c.offset_index_offset) {
    w->FieldI64(4, *c.offset_index_offset);
  }
  if (c.offset_index_length) {
    w->FieldI32(5, *c.offset_index_length);
  }
  if (c.column_index_offset) {
    w->FieldI64(6, *c.column_index_offset);
  }
  if (c.column_index_length) {
    w->FieldI32(7, *c.column_index_length);
  }
  w->StructEnd();
}

void WriteRowGroup(const RowGroup& rg, CompactWriter* w) {
  w->StructBegin();
  w->FieldListBegin(1, CType::kStruct, static_cast<int32_t>(rg.columns.size()));
  for (const ColumnChunk& c : rg.columns) {
    WriteColumnChunk(c, w);
  }
  w->FieldI64(2, rg.total_byte_size);
  w->FieldI64(3, rg.num_rows);
  if (rg.sorting_columns) {
    w->FieldListBegin(4, CType::kStruct, static_cast<int32_t>(rg.sorting_columns->size()));
    for (const SortingColumn& s : *rg.sorting_columns) {
      w->StructBegin();
      w->FieldI32(1, s.column_idx);
      w->FieldBool(2, s.descending);
      w->FieldBool(3, s.nulls_first);
      w->StructEnd();
    }
  }
  if (rg.file_offset) {
    w->FieldI64(5, *rg.file_offset);
  }
  if (rg.total_compressed_size) {
    w->FieldI64(6, *rg.total_compressed_size);
  }
  if (rg.ordinal) {
    w->FieldI16(7, *rg.ordinal);
  }
  w->StructEnd();
}

}  // namespace

void SerializeFileMetaData(const FileMetaData& md, std::string* out) {
  CompactWriter w(out);
  w.StructBegin();
  w.FieldI32(1, md.version);
  w.FieldListBegin(2, CType::kStruct, static_cast<int32_t>(md.schema.size()));
  for (const SchemaElement& e : md.schema) {
    WriteSchemaElement(e, &w);
  }
  w.FieldI64(3, md.num_rows);
  w.FieldListBegin(4, CType::kStruct, static_cast<int32_t>(md.row_groups.size()));
  for (const RowGroup& rg : md.row_groups) {
    WriteRowGroup(rg, &w);
  }
  if (md.key_value_metadata) {
    WriteKeyValues(5, *md.key_value_metadata, &w);
  }
  if (md.created_by) {
    w.FieldBinary(6, *md.created_by);
  }
  if (md.column_orders) {
    w.FieldListBegin(7, CType::kStruct, static_cast<int32_t>(md.column_orders->size()));
    for (const ColumnOrder& o : *md.column_orders) {
      w.StructBegin();
      w.FieldEmptyStruct(static_cast<int16_t>(o.kind));
      w.StructEnd();
    }
  }
  w.StructEnd();
}

void SerializePageHeader(const PageHeader& h, std::string* out) {
  CompactWriter w(out);
  w.StructBegin();
  w.FieldI32(1, Raw(h.type));
  w.FieldI32(2, h.uncompressed_page_size);
  w.FieldI32(3, h.compressed_page_size);
  if (h.crc) {
    w.FieldI32(4, *h.crc);
  }
  if (h.data_page_header) {
    const DataPageHeader& d = *h.data_page_header;
    w.FieldStructBegin(5);
    w.FieldI32(1, d.num_values);
    w.FieldI32(2, Raw(d.encoding));
    w.FieldI32(3, Raw(d.definition_level_encoding));
    w.FieldI32(4, Raw(d.repetition_level_encoding));
    if (d.statistics) {
      w.FieldBegin(CType::kStruct, 5);
      WriteStatistics(*d.statistics, &w);
    }
    w.StructEnd();
  }
  if (h.has_index_page_header) {
    w.FieldEmptyStruct(6);
  }
  if (h.dictionary_page_header) {
    const DictionaryPageHeader& d = *h.dictionary_page_header;
    w.FieldStructBegin(7);
    w.FieldI32(1, d.num_values);
    w.FieldI32(2, Raw(d.encoding));
    if (d.is_sorted) {
      w.FieldBool(3, *d.is_sorted);
    }
    w.StructEnd();
  }
  if (h.data_page_header_v2) {
    const DataPageHeaderV2& d = *h.data_page_header_v2;
    w.FieldStructBegin(8);
    w.FieldI32(1, d.num_values);
    w.FieldI32(2, d.num_nulls);
    w.FieldI32(3, d.num_rows);
    w.FieldI32(4, Raw(d.encoding));
    w.FieldI32(5, d.definition_levels_byte_length);
    w.FieldI32(6, d.repetition_levels_byte_length);
    if (d.is_compressed) {
      w.FieldBool(7, *d.is_compressed);
    }
    if (d.statistics) {
      w.FieldBegin(CType::kStruct, 8);
      WriteStatistics(*d.statistics, &w);
    }
    w.StructEnd();
  }
  w.StructEnd();
}

std::string_view PhysicalTypeName(PhysicalType t) {
  switch (t) {
    case PhysicalType::kBoolean:
      return "BOOLEAN";
    case PhysicalType::kInt32:
      return "INT32";
    case PhysicalType::kInt64:
      return "INT64";
    case PhysicalType::kInt96:
      return "INT96";
    case PhysicalType::kFloat:
      return "FLOAT";
    case PhysicalType::kDouble:
      return "DOUBLE";
    case PhysicalType::kByteArray:
      return "BYTE_ARRAY";
    case PhysicalType::kFixedLenByteArray:
      return "FIXED_LEN_BYTE_ARRAY";
  }
  return "UNKNOWN_TYPE";
}

std::string_view EncodingName(Encoding e) {
  switch (e) {
    case Encoding::kPlain:
      return "PLAIN";
    case Encoding::kPlainDictionary:
      return "PLAIN_DICTIONARY";
    case Encoding::kRle:
      return "RLE";
    case Encoding::kBitPacked:
      return "BIT_PACKED";
    case Encoding::kDeltaBinaryPacked:
      return "DELTA_BINARY_PACKED";
    case Encoding::kDeltaLengthByteArray:
      return "DELTA_LENGTH_BYTE_ARRAY";
    case Encoding::kDeltaByteArray:
      return "DELTA_BYTE_ARRAY";
    case Encoding::kRleDictionary:
      return "RLE_DICTIONARY";
    case Encoding::kByteStreamSplit:
      return "BYTE_STREAM_SPLIT";
  }
  return "UNKNOWN_ENCODING";
}

std::string_view CompressionCodecName(CompressionCodec c) {
  switch (c) {
    case CompressionCodec::kUncompressed:
      return "UNCOMPRESSED";
    case CompressionCodec::kSnappy:
      return "SNAPPY";
    case CompressionCodec::kGzip:
      return "GZIP";
    case CompressionCodec::kLzo:
      return "LZO";
    case CompressionCodec::kBrotli:
      return "BROTLI";
    case CompressionCodec::kLz4:
      return "LZ4";
    case CompressionCodec::kZstd:
      return "ZSTD";
    case CompressionCodec::kLz4Raw:
      return "LZ4_RAW";
  }
  return "UNKNOWN_CODEC";
}

std::string_view PageTypeName(PageType t) {
  switch (t) {
    case PageType::kDataPage:
      return "DATA_PAGE";
    case PageType::kIndexPage:
      return "INDEX_PAGE";
    case PageType::kDictionaryPage:
      return "DICTIONARY_PAGE";
    case PageType::kDataPageV2:
      return "DATA_PAGE_V2";
  }
  return "UNKNOWN_PAGE";
}

std::string_view ConvertedTypeName(ConvertedType t) {
  static constexpr std::string_view kNames[] = {"UTF8",
                                                "MAP",
                                                "MAP_KEY_VALUE",
                                                "LIST",
                                                "ENUM",
                                                "DECIMAL",
                                                "DATE",
                                                "TIME_MILLIS",
                                                "TIME_MICROS",
                                                "TIMESTAMP_MILLIS",
                                                "TIMESTAMP_MICROS",
                                                "UINT_8",
                                                "UINT_16",
                                                "UINT_32",
                                                "UINT_64",
                                                "INT_8",
                                                "INT_16",
                                                "INT_32",
                                                "INT_64",
                                                "JSON",
                                                "BSON",
                                                "INTERVAL"};
  auto i = static_cast<size_t>(t);
  return i < std::size(kNames) ? kNames[i] : "UNKNOWN_CONVERTED_TYPE";
}

}  // namespace ferry::parquet
