// Thrift compact parsing of the metadata model (metadata.h). Each Parse* function reads one
// struct: known field ids are type-checked and decoded, unknown ones skipped, missing required
// ones reported. List sizes are bounded by the bytes left (CompactReader), so a lying count
// cannot make us allocate more than a small multiple of the input.
#include <string>
#include <type_traits>

#include "ferry/parquet/metadata.h"
#include "ferry/parquet/thrift_compact.h"

namespace ferry::parquet {
namespace {

using thrift::CompactReader;
using thrift::CType;

Status Field(CompactReader* r, CType t, int8_t* v, [[maybe_unused]] std::string_view what) {
  if (!CompactReader::Matches(t, CType::kI8)) {
    return r->SkipMismatched(t);
  }
  return r->ReadI8(v);
}
Status Field(CompactReader* r, CType t, int16_t* v, [[maybe_unused]] std::string_view what) {
  if (!CompactReader::Matches(t, CType::kI16)) {
    return r->SkipMismatched(t);
  }
  return r->ReadI16(v);
}
Status Field(CompactReader* r, CType t, int32_t* v, [[maybe_unused]] std::string_view what) {
  if (!CompactReader::Matches(t, CType::kI32)) {
    return r->SkipMismatched(t);
  }
  return r->ReadI32(v);
}
Status Field(CompactReader* r, CType t, int64_t* v, [[maybe_unused]] std::string_view what) {
  if (!CompactReader::Matches(t, CType::kI64)) {
    return r->SkipMismatched(t);
  }
  return r->ReadI64(v);
}
Status Field(CompactReader* r, CType t, bool* v, [[maybe_unused]] std::string_view what) {
  if (!CompactReader::Matches(t, CType::kBoolTrue)) {
    return r->SkipMismatched(t);
  }
  *v = CompactReader::FieldBoolValue(t);
  return Status::OK();
}
Status Field(CompactReader* r, CType t, std::string* v, [[maybe_unused]] std::string_view what) {
  if (!CompactReader::Matches(t, CType::kBinary)) {
    return r->SkipMismatched(t);
  }
  return r->ReadBinary(v);
}
template <typename E>
requires std::is_enum_v<E> Status Field(CompactReader* r, CType t, E* v,
                                        [[maybe_unused]] std::string_view what) {
  int32_t raw;
  FERRY_RETURN_IF_ERROR(Field(r, t, &raw, what));
  *v = static_cast<E>(raw);
  return Status::OK();
}
template <typename T>
Status Field(CompactReader* r, CType t, std::optional<T>* v,
             [[maybe_unused]] std::string_view what) {
  T x{};
  FERRY_RETURN_IF_ERROR(Field(r, t, &x, what));
  *v = std::move(x);
  return Status::OK();
}

// Reads a struct: `on_field(type, id, &handled)` decodes the fields it knows; the rest are
// skipped. `required` is a bit mask of field ids that must be present.
template <typename Fn>
Status Struct(CompactReader* r, std::string_view name, uint32_t required, Fn&& on_field) {
  FERRY_RETURN_IF_ERROR(r->StructBegin());
  uint32_t seen = 0;
  while (true) {
    CType t;
    int16_t id;
    FERRY_RETURN_IF_ERROR(r->ReadFieldHeader(&t, &id));
    if (t == CType::kStop) {
      break;
    }
    bool handled = true;
    FERRY_RETURN_IF_ERROR(on_field(t, id, &handled));
    if (!handled) {
      FERRY_RETURN_IF_ERROR(r->Skip(t));
    } else if (!r->TakeSkippedMismatch() && id > 0 && id < 32) {
      seen |= 1u << id;
    }
  }
  FERRY_RETURN_IF_ERROR(r->StructEnd());
  if ((seen & required) != required) {
    for (int id = 1; id < 32; ++id) {
      if ((required & (1u << id)) && !(seen & (1u << id))) {
        return r->Corrupt(fmt::format("{} lacks required field {}", name, id));
      }
    }
  }
  return Status::OK();
}

constexpr uint32_t Bits(std::initializer_list<int> ids) {
  uint32_t m = 0;
  for (int id : ids) {
    m |= 1u << id;
  }
  return m;
}

// A list field: `element(&item)` parses one element (whose wire type is checked here).
template <typename T, typename Fn>
Status List(CompactReader* r, CType t, CType element_type, std::vector<T>* out,
            [[maybe_unused]] std::string_view what, Fn&& element) {
  if (!CompactReader::Matches(t, CType::kList)) {
    return r->SkipMismatched(t);
  }
  CType et;
  int32_t n;
  FERRY_RETURN_IF_ERROR(r->ReadListHeader(&et, &n));
  if (n > 0 && !CompactReader::Matches(et, element_type)) {
    FERRY_RETURN_IF_ERROR(r->SkipElements(et, n));
    r->NoteMismatch();
    return Status::OK();
  }
  out->clear();
  for (int32_t i = 0; i < n; ++i) {
    T item{};
    FERRY_RETURN_IF_ERROR(element(&item));
    out->push_back(std::move(item));
  }
  return Status::OK();
}

template <typename T, typename Fn>
Status List(CompactReader* r, CType t, CType element_type, std::optional<std::vector<T>>* out,
            [[maybe_unused]] std::string_view what, Fn&& element) {
  std::vector<T> items;
  FERRY_RETURN_IF_ERROR(List(r, t, element_type, &items, what, element));
  *out = std::move(items);
  return Status::OK();
}

Status ParseStatistics(CompactReader* r, Statistics* s) {
  return Struct(r, "Statistics", 0, [&](CType t, int16_t id, bool* handled) -> Status {
    switch (id) {
      case 1:
        return Field(r, t, &s->max, "Statistics.max");
      case 2:
        return Field(r, t, &s->min, "Statistics.min");
      case 3:
        return Field(r, t, &s->null_count, "Statistics.null_count");
      case 4:
        return Field(r, t, &s->distinct_count, "Statistics.distinct_count");
      case 5:
        return Field(r, t, &s->max_value, "Statistics.max_value");
      case 6:
        return Field(r, t, &s->min_value, "Statistics.min_value");
      case 7:
        return Field(r, t, &s->is_max_value_exact, "Statistics.is_max_value_exact");
      case 8:
        return Field(r, t, &s->is_min_value_exact, "Statistics.is_min_value_exact");
      case 9:
        return Field(r, t, &s->nan_count, "Statistics.nan_count");
      default:
        *handled = false;
        return Status::OK();
    }
  });
}

// A union member that is an empty struct (or one whose fields ferry ignores).
Status SkipStruct(CompactReader* r, CType t, [[maybe_unused]] std::string_view what) {
  if (!CompactReader::Matches(t, CType::kStruct)) {
    return r->SkipMismatched(t);
  }
  return r->Skip(t);
}

Status ParseTimeUnit(CompactReader* r, TimeUnit* unit) {
  bool found = false;
  FERRY_RETURN_IF_ERROR(Struct(r, "TimeUnit", 0, [&](CType t, int16_t id, bool* handled) {
    if (id < 1 || id > 3) {
      *handled = false;
      return Status::OK();
    }
    found = true;
    *unit = id == 1 ? TimeUnit::kMillis : id == 2 ? TimeUnit::kMicros : TimeUnit::kNanos;
    return SkipStruct(r, t, "TimeUnit");
  }));
  return found ? Status::OK() : r->Corrupt("TimeUnit without a unit");
}

Status ParseLogicalTypeMember(CompactReader* r, CType t, LogicalType* lt) {
  using Kind = LogicalType::Kind;
  if (!CompactReader::Matches(t, CType::kStruct)) {
    return r->SkipMismatched(t);
  }
  switch (lt->kind) {
    case Kind::kDecimal:
      return Struct(r, "DecimalType", Bits({1, 2}), [&](CType ft, int16_t id, bool* handled) {
        if (id == 1) {
          return Field(r, ft, &lt->scale, "DecimalType.scale");
        }
        if (id == 2) {
          return Field(r, ft, &lt->precision, "DecimalType.precision");
        }
        *handled = false;
        return Status::OK();
      });
    case Kind::kTime:
    case Kind::kTimestamp:
      return Struct(r, "TimestampType", Bits({1, 2}), [&](CType ft, int16_t id, bool* handled) {
        if (id == 1) {
          return Field(r, ft, &lt->is_adjusted_to_utc, "TimestampType.isAdjustedToUTC");
        }
        if (id == 2) {
          if (!CompactReader::Matches(ft, CType::kStruct)) {
            return r->SkipMismatched(ft);
          }
          return ParseTimeUnit(r, &lt->unit);
        }
        *handled = false;
        return Status::OK();
      });
    case Kind::kInteger:
      return Struct(r, "IntType", Bits({1, 2}), [&](CType ft, int16_t id, bool* handled) {
        if (id == 1) {
          return Field(r, ft, &lt->bit_width, "IntType.bitWidth");
        }
        if (id == 2) {
          return Field(r, ft, &lt->is_signed, "IntType.isSigned");
        }
        *handled = false;
        return Status::OK();
      });
    default:
      return r->Skip(t);
  }
}

Status ParseLogicalType(CompactReader* r, LogicalType* lt) {
  bool found = false;
  FERRY_RETURN_IF_ERROR(Struct(r, "LogicalType", 0, [&](CType t, int16_t id, bool*) {
    found = true;
    lt->kind = static_cast<LogicalType::Kind>(id);
    return ParseLogicalTypeMember(r, t, lt);
  }));
  return found ? Status::OK() : r->Corrupt("LogicalType union without a member");
}

Status ParseSchemaElement(CompactReader* r, SchemaElement* e) {
  return Struct(r, "SchemaElement", Bits({4}), [&](CType t, int16_t id, bool* handled) {
    switch (id) {
      case 1:
        return Field(r, t, &e->type, "SchemaElement.type");
      case 2:
        return Field(r, t, &e->type_length, "SchemaElement.type_length");
      case 3:
        return Field(r, t, &e->repetition_type, "SchemaElement.repetition_type");
      case 4:
        return Field(r, t, &e->name, "SchemaElement.name");
      case 5:
        return Field(r, t, &e->num_children, "SchemaElement.num_children");
      case 6:
        return Field(r, t, &e->converted_type, "SchemaElement.converted_type");
      case 7:
        return Field(r, t, &e->scale, "SchemaElement.scale");
      case 8:
        return Field(r, t, &e->precision, "SchemaElement.precision");
      case 9:
        return Field(r, t, &e->field_id, "SchemaElement.field_id");
      case 10: {
        if (!CompactReader::Matches(t, CType::kStruct)) {
          return r->SkipMismatched(t);
        }
        LogicalType lt;
        FERRY_RETURN_IF_ERROR(ParseLogicalType(r, &lt));
        e->logical_type = lt;
        return Status::OK();
      }
      default:
        *handled = false;
        return Status::OK();
    }
  });
}

Status ParseKeyValue(CompactReader* r, KeyValue* kv) {
  return Struct(r, "KeyValue", Bits({1}), [&](CType t, int16_t id, bool* handled) {
    if (id == 1) {
      return Field(r, t, &kv->key, "KeyValue.key");
    }
    if (id == 2) {
      return Field(r, t, &kv->value, "KeyValue.value");
    }
    *handled = false;
    return Status::OK();
  });
}

Status ParseKeyValues(CompactReader* r, CType t, std::optional<std::vector<KeyValue>>* out) {
  return List(r, t, CType::kStruct, out, "key_value_metadata",
              [&](KeyValue* kv) { return ParseKeyValue(r, kv); });
}

Status ParsePageEncodingStats(CompactReader* r, PageEncodingStats* s) {
  return Struct(r, "PageEncodingStats", Bits({1, 2, 3}), [&](CType t, int16_t id, bool* handled) {
    switch (id) {
      case 1:
        return Field(r, t, &s->page_type, "PageEncodingStats.page_type");
      case 2:
        return Field(r, t, &s->encoding, "PageEncodingStats.encoding");
      case 3:
        return Field(r, t, &s->count, "PageEncodingStats.count");
      default:
        *handled = false;
        return Status::OK();
    }
  });
}

Status ParseColumnMetaData(CompactReader* r, ColumnMetaData* c) {
  constexpr uint32_t kRequired = Bits({1, 2, 3, 4, 5, 6, 7, 9});
  return Struct(r, "ColumnMetaData", kRequired, [&](CType t, int16_t id, bool* handled) {
    switch (id) {
      case 1:
        return Field(r, t, &c->type, "ColumnMetaData.type");
      case 2:
        return List(r, t, CType::kI32, &c->encodings, "ColumnMetaData.encodings",
                    [&](Encoding* e) { return Field(r, CType::kI32, e, "encoding"); });
      case 3:
        return List(r, t, CType::kBinary, &c->path_in_schema, "ColumnMetaData.path_in_schema",
                    [&](std::string* s) { return r->ReadBinary(s); });
      case 4:
        return Field(r, t, &c->codec, "ColumnMetaData.codec");
      case 5:
        return Field(r, t, &c->num_values, "ColumnMetaData.num_values");
      case 6:
        return Field(r, t, &c->total_uncompressed_size, "ColumnMetaData.total_uncompressed_size");
      case 7:
        return Field(r, t, &c->total_compressed_size, "ColumnMetaData.total_compressed_size");
      case 8:
        return ParseKeyValues(r, t, &c->key_value_metadata);
      case 9:
        return Field(r, t, &c->data_page_offset, "ColumnMetaData.data_page_offset");
      case 10:
        return Field(r, t, &c->index_page_offset, "ColumnMetaData.index_page_offset");
      case 11:
        return Field(r, t, &c->dictionary_page_offset, "ColumnMetaData.dictionary_page_offset");
      case 12: {
        if (!CompactReader::Matches(t, CType::kStruct)) {
          return r->SkipMismatched(t);
        }
        Statistics s;
        FERRY_RETURN_IF_ERROR(ParseStatistics(r, &s));
        c->statistics = std::move(s);
        return Status::OK();
      }
      case 13:
        return List(r, t, CType::kStruct, &c->encoding_stats, "ColumnMetaData.encoding_stats",
                    [&](PageEncodingStats* s) { return ParsePageEncodingStats(r, s); });
      case 14:
        return Field(r, t, &c->bloom_filter_offset, "ColumnMetaData.bloom_filter_offset");
      case 15:
        return Field(r, t, &c->bloom_filter_length, "ColumnMetaData.bloom_filter_length");
      default:
        *handled = false;
        return Status::OK();
    }
  });
}

Status ParseColumnChunk(CompactReader* r, ColumnChunk* c) {
  return Struct(r, "ColumnChunk", Bits({2}), [&](CType t, int16_t id, bool* handled) {
    switch (id) {
      case 1:
        return Field(r, t, &c->file_path, "ColumnChunk.file_path");
      case 2:
        return Field(r, t, &c->file_offset, "ColumnChunk.file_offset");
      case 3: {
        if (!CompactReader::Matches(t, CType::kStruct)) {
          return r->SkipMismatched(t);
        }
        ColumnMetaData md;
        FERRY_RETURN_IF_ERROR(ParseColumnMetaData(r, &md));
        c->meta_data = std::move(md);
        return Status::OK();
      }
      case 4:
        return Field(r, t, &c->offset_index_offset, "ColumnChunk.offset_index_offset");
      case 5:
        return Field(r, t, &c->offset_index_length, "ColumnChunk.offset_index_length");
      case 6:
        return Field(r, t, &c->column_index_offset, "ColumnChunk.column_index_offset");
      case 7:
        return Field(r, t, &c->column_index_length, "ColumnChunk.column_index_length");
      case 8:
      case 9:
        c->encrypted = true;
        *handled = false;
        return Status::OK();
      default:
        *handled = false;
        return Status::OK();
    }
  });
}

Status ParseSortingColumn(CompactReader* r, SortingColumn* s) {
  return Struct(r, "SortingColumn", Bits({1, 2, 3}), [&](CType t, int16_t id, bool* handled) {
    switch (id) {
      case 1:
        return Field(r, t, &s->column_idx, "SortingColumn.column_idx");
      case 2:
        return Field(r, t, &s->descending, "SortingColumn.descending");
      case 3:
        return Field(r, t, &s->nulls_first, "SortingColumn.nulls_first");
      default:
        *handled = false;
        return Status::OK();
    }
  });
}

Status ParseRowGroup(CompactReader* r, RowGroup* rg) {
  return Struct(r, "RowGroup", Bits({1, 2, 3}), [&](CType t, int16_t id, bool* handled) {
    switch (id) {
      case 1:
        return List(r, t, CType::kStruct, &rg->columns, "RowGroup.columns",
                    [&](ColumnChunk* c) { return ParseColumnChunk(r, c); });
      case 2:
        return Field(r, t, &rg->total_byte_size, "RowGroup.total_byte_size");
      case 3:
        return Field(r, t, &rg->num_rows, "RowGroup.num_rows");
      case 4:
        return List(r, t, CType::kStruct, &rg->sorting_columns, "RowGroup.sorting_columns",
                    [&](SortingColumn* s) { return ParseSortingColumn(r, s); });
      case 5:
        return Field(r, t, &rg->file_offset, "RowGroup.file_offset");
      case 6:
        return Field(r, t, &rg->total_compressed_size, "RowGroup.total_compressed_size");
      case 7:
        return Field(r, t, &rg->ordinal, "RowGroup.ordinal");
      default:
        *handled = false;
        return Status::OK();
    }
  });
}

Status ParseColumnOrder(CompactReader* r, ColumnOrder* o) {
  return Struct(r, "ColumnOrder", 0, [&](CType t, int16_t id, bool*) {
    o->kind = static_cast<ColumnOrder::Kind>(id);
    return SkipStruct(r, t, "ColumnOrder");
  });
}

Status ParseFileMetaDataStruct(CompactReader* r, FileMetaData* md) {
  return Struct(r, "FileMetaData", Bits({1, 2, 3, 4}), [&](CType t, int16_t id, bool* handled) {
    switch (id) {
      case 1:
        return Field(r, t, &md->version, "FileMetaData.version");
      case 2:
        return List(r, t, CType::kStruct, &md->schema, "FileMetaData.schema",
                    [&](SchemaElement* e) { return ParseSchemaElement(r, e); });
      case 3:
        return Field(r, t, &md->num_rows, "FileMetaData.num_rows");
      case 4:
        return List(r, t, CType::kStruct, &md->row_groups, "FileMetaData.row_groups",
                    [&](RowGroup* rg) { return ParseRowGroup(r, rg); });
      case 5:
        return ParseKeyValues(r, t, &md->key_value_metadata);
      case 6:
        return Field(r, t, &md->created_by, "FileMetaData.created_by");
      case 7:
        return List(r, t, CType::kStruct, &md->column_orders, "FileMetaData.column_orders",
                    [&](ColumnOrder* o) { return ParseColumnOrder(r, o); });
      case 8:
        md->encrypted = true;
        *handled = false;
        return Status::OK();
      default:
        *handled = false;
        return Status::OK();
    }
  });
}

Status ParseDataPageHeader(CompactReader* r, DataPageHeader* d) {
  return Struct(r, "DataPageHeader", Bits({1, 2, 3, 4}), [&](CType t, int16_t id, bool* handled) {
    switch (id) {
      case 1:
        return Field(r, t, &d->num_values, "DataPageHeader.num_values");
      case 2:
        return Field(r, t, &d->encoding, "DataPageHeader.encoding");
      case 3:
        return Field(r, t, &d->definition_level_encoding, "DataPageHeader.dl_encoding");
      case 4:
        return Field(r, t, &d->repetition_level_encoding, "DataPageHeader.rl_encoding");
      case 5: {
        if (!CompactReader::Matches(t, CType::kStruct)) {
          return r->SkipMismatched(t);
        }
        Statistics s;
        FERRY_RETURN_IF_ERROR(ParseStatistics(r, &s));
        d->statistics = std::move(s);
        return Status::OK();
      }
      default:
        *handled = false;
        return Status::OK();
    }
  });
}

Status ParseDictionaryPageHeader(CompactReader* r, DictionaryPageHeader* d) {
  return Struct(r, "DictionaryPageHeader", Bits({1, 2}), [&](CType t, int16_t id, bool* handled) {
    switch (id) {
      case 1:
        return Field(r, t, &d->num_values, "DictionaryPageHeader.num_values");
      case 2:
        return Field(r, t, &d->encoding, "DictionaryPageHeader.encoding");
      case 3:
        return Field(r, t, &d->is_sorted, "DictionaryPageHeader.is_sorted");
      default:
        *handled = false;
        return Status::OK();
    }
  });
}

Status ParseDataPageHeaderV2(CompactReader* r, DataPageHeaderV2* d) {
  constexpr uint32_t kRequired = Bits({1, 2, 3, 4, 5, 6});
  return Struct(r, "DataPageHeaderV2", kRequired, [&](CType t, int16_t id, bool* handled) {
    switch (id) {
      case 1:
        return Field(r, t, &d->num_values, "DataPageHeaderV2.num_values");
      case 2:
        return Field(r, t, &d->num_nulls, "DataPageHeaderV2.num_nulls");
      case 3:
        return Field(r, t, &d->num_rows, "DataPageHeaderV2.num_rows");
      case 4:
        return Field(r, t, &d->encoding, "DataPageHeaderV2.encoding");
      case 5:
        return Field(r, t, &d->definition_levels_byte_length, "DataPageHeaderV2.dl_length");
      case 6:
        return Field(r, t, &d->repetition_levels_byte_length, "DataPageHeaderV2.rl_length");
      case 7:
        return Field(r, t, &d->is_compressed, "DataPageHeaderV2.is_compressed");
      case 8: {
        if (!CompactReader::Matches(t, CType::kStruct)) {
          return r->SkipMismatched(t);
        }
        Statistics s;
        FERRY_RETURN_IF_ERROR(ParseStatistics(r, &s));
        d->statistics = std::move(s);
        return Status::OK();
      }
      default:
        *handled = false;
        return Status::OK();
    }
  });
}

template <typename T, typename Fn>
Status SubStruct(CompactReader* r, CType t, std::optional<T>* out,
                 [[maybe_unused]] std::string_view what, Fn&& parse) {
  if (!CompactReader::Matches(t, CType::kStruct)) {
    return r->SkipMismatched(t);
  }
  T v;
  FERRY_RETURN_IF_ERROR(parse(r, &v));
  *out = std::move(v);
  return Status::OK();
}

Status ParsePageHeaderStruct(CompactReader* r, PageHeader* h) {
  return Struct(r, "PageHeader", Bits({1, 2, 3}), [&](CType t, int16_t id, bool* handled) {
    switch (id) {
      case 1:
        return Field(r, t, &h->type, "PageHeader.type");
      case 2:
        return Field(r, t, &h->uncompressed_page_size, "PageHeader.uncompressed_page_size");
      case 3:
        return Field(r, t, &h->compressed_page_size, "PageHeader.compressed_page_size");
      case 4:
        return Field(r, t, &h->crc, "PageHeader.crc");
      case 5:
        return SubStruct(r, t, &h->data_page_header, "PageHeader.data_page_header",
                         ParseDataPageHeader);
      case 6:
        h->has_index_page_header = true;
        return SkipStruct(r, t, "PageHeader.index_page_header");
      case 7:
        return SubStruct(r, t, &h->dictionary_page_header, "PageHeader.dictionary_page_header",
                         ParseDictionaryPageHeader);
      case 8:
        return SubStruct(r, t, &h->data_page_header_v2, "PageHeader.data_page_header_v2",
                         ParseDataPageHeaderV2);
      default:
        *handled = false;
        return Status::OK();
    }
  });
}

}  // namespace

Result<FileMetaData> ParseFileMetaData(std::string_view bytes) {
  CompactReader r(bytes);
  FileMetaData md;
  FERRY_RETURN_IF_ERROR(ParseFileMetaDataStruct(&r, &md).WithContext("FileMetaData"));
  return md;
}

Result<size_t> ParsePageHeader(std::string_view bytes, PageHeader* header) {
  CompactReader r(bytes);
  *header = PageHeader();
  FERRY_RETURN_IF_ERROR(ParsePageHeaderStruct(&r, header).WithContext("PageHeader"));
  if (header->uncompressed_page_size < 0 || header->compressed_page_size < 0) {
    return DataLoss("PageHeader: negative page size");
  }
  return r.position();
}

}  // namespace ferry::parquet
