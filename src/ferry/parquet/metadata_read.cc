// Thrift compact parsing of the metadata model (metadata.h). Each struct is read by ReadStruct
// from a table of its fields: a field id and the member it fills (Member), a flag to set
// (Flag), or a reader of its own (Custom). Known field ids are type-checked and decoded by the
// member's type (Field), unknown ones skipped, missing required ones reported. List sizes are
// bounded by the bytes left (CompactReader), so a lying count cannot make us allocate more than a
// small multiple of the input.
#include <concepts>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "ferry/parquet/metadata.h"
#include "ferry/parquet/thrift_compact.h"

namespace ferry::parquet {
namespace {

using thrift::CompactReader;
using thrift::CType;

// ---- Values by type: a field of the wrong wire type is skipped (and noted), never misread ----

// A value of wire type `kType`, read by `read`.
template <CType kType, typename T, Status (CompactReader::*read)(T*)>
Status Value(CompactReader* r, CType t, T* v) {
  if (!CompactReader::Matches(t, kType)) {
    return r->SkipMismatched(t);
  }
  return (r->*read)(v);
}
Status Field(CompactReader* r, CType t, int8_t* v) {
  return Value<CType::kI8, int8_t, &CompactReader::ReadI8>(r, t, v);
}
Status Field(CompactReader* r, CType t, int16_t* v) {
  return Value<CType::kI16, int16_t, &CompactReader::ReadI16>(r, t, v);
}
Status Field(CompactReader* r, CType t, int32_t* v) {
  return Value<CType::kI32, int32_t, &CompactReader::ReadI32>(r, t, v);
}
Status Field(CompactReader* r, CType t, int64_t* v) {
  return Value<CType::kI64, int64_t, &CompactReader::ReadI64>(r, t, v);
}
Status Field(CompactReader* r, CType t, std::string* v) {
  return Value<CType::kBinary, std::string, &CompactReader::ReadBinary>(r, t, v);
}
Status Field(CompactReader* r, CType t, bool* v) {
  if (!CompactReader::Matches(t, CType::kBoolTrue)) {
    return r->SkipMismatched(t);
  }
  *v = CompactReader::FieldBoolValue(t);
  return Status::OK();
}
template <typename E>
requires std::is_enum_v<E> Status Field(CompactReader* r, CType t, E* v) {
  int32_t raw;
  FERRY_RETURN_IF_ERROR(Field(r, t, &raw));
  *v = static_cast<E>(raw);
  return Status::OK();
}

// Structs: each has a Parse below; a field holding one must be a struct on the wire.
Status Parse(CompactReader* r, Statistics* s);
Status Parse(CompactReader* r, LogicalType* lt);
Status Parse(CompactReader* r, SchemaElement* e);
Status Parse(CompactReader* r, KeyValue* kv);
Status Parse(CompactReader* r, PageEncodingStats* s);
Status Parse(CompactReader* r, ColumnMetaData* c);
Status Parse(CompactReader* r, ColumnChunk* c);
Status Parse(CompactReader* r, SortingColumn* s);
Status Parse(CompactReader* r, RowGroup* rg);
Status Parse(CompactReader* r, ColumnOrder* o);
Status Parse(CompactReader* r, DataPageHeader* d);
Status Parse(CompactReader* r, DictionaryPageHeader* d);
Status Parse(CompactReader* r, DataPageHeaderV2* d);

template <typename T>
concept ThriftStruct = requires(CompactReader* r, T* v) {
  { Parse(r, v) } -> std::same_as<Status>;
};

template <ThriftStruct T>
Status Field(CompactReader* r, CType t, T* v) {
  if (!CompactReader::Matches(t, CType::kStruct)) {
    return r->SkipMismatched(t);
  }
  return Parse(r, v);
}
// An optional struct stays absent when the field holds something else.
template <ThriftStruct T>
Status Field(CompactReader* r, CType t, std::optional<T>* v) {
  if (!CompactReader::Matches(t, CType::kStruct)) {
    return r->SkipMismatched(t);
  }
  T x{};
  FERRY_RETURN_IF_ERROR(Parse(r, &x));
  *v = std::move(x);
  return Status::OK();
}

// The wire type of a list's elements.
template <typename T>
constexpr CType kElementType = CType::kStruct;
template <>
constexpr CType kElementType<std::string> = CType::kBinary;
template <>
constexpr CType kElementType<Encoding> = CType::kI32;

// A list: elements of another wire type are skipped (and noted), leaving `out` as it was.
template <typename T>
Status Field(CompactReader* r, CType t, std::vector<T>* out) {
  if (!CompactReader::Matches(t, CType::kList)) {
    return r->SkipMismatched(t);
  }
  CType et;
  int32_t n;
  FERRY_RETURN_IF_ERROR(r->ReadListHeader(&et, &n));
  if (n > 0 && !CompactReader::Matches(et, kElementType<T>)) {
    FERRY_RETURN_IF_ERROR(r->SkipElements(et, n));
    r->NoteMismatch();
    return Status::OK();
  }
  out->clear();
  for (int32_t i = 0; i < n; ++i) {
    T item{};
    FERRY_RETURN_IF_ERROR(Field(r, kElementType<T>, &item));
    out->push_back(std::move(item));
  }
  return Status::OK();
}

// Other optional fields are set (to the type's zero) even when the field holds something else.
template <typename T>
Status Field(CompactReader* r, CType t, std::optional<T>* v) {
  T x{};
  FERRY_RETURN_IF_ERROR(Field(r, t, &x));
  *v = std::move(x);
  return Status::OK();
}

// ---- Structs ----

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

// The entries of a struct's field table, each a type naming a field id and what reads it, so
// that ReadStruct's dispatch on the id compiles to a switch over constants.
//
// Field kId fills the member kMember (Field by its type).
template <int16_t kId, auto kMember>
struct Member {
  static constexpr int16_t id = kId;
  template <typename S>
  static Status Read(CompactReader* r, CType t, S* s, bool*) {
    return Field(r, t, &(s->*kMember));
  }
};
// Field kId, whatever it holds, sets the flag kFlag and is skipped (encryption, index pages).
template <int16_t kId, auto kFlag>
struct Flag {
  static constexpr int16_t id = kId;
  template <typename S>
  static Status Read(CompactReader*, CType, S* s, bool* handled) {
    s->*kFlag = true;
    *handled = false;
    return Status::OK();
  }
};
// Field kId is read by kRead(r, type, s).
template <int16_t kId, auto kRead>
struct Custom {
  static constexpr int16_t id = kId;
  template <typename S>
  static Status Read(CompactReader* r, CType t, S* s, bool*) {
    return kRead(r, t, s);
  }
};

template <typename S, typename Entry, typename... Rest>
Status Dispatch(CompactReader* r, CType t, int16_t id, S* s, bool* handled) {
  if (id == Entry::id) {
    return Entry::Read(r, t, s, handled);
  }
  if constexpr (sizeof...(Rest) > 0) {
    return Dispatch<S, Rest...>(r, t, id, s, handled);
  } else {
    *handled = false;  // a field ferry does not read
    return Status::OK();
  }
}

// A struct's field table: Member, Flag and Custom entries.
template <typename... Entries>
struct Fields {};

// Reads struct `name` into `s` by its field table.
template <typename S, typename... Entries>
Status ReadStruct(CompactReader* r, std::string_view name, uint32_t required, S* s,
                  Fields<Entries...>) {
  return Struct(r, name, required, [&](CType t, int16_t id, bool* handled) {
    return Dispatch<S, Entries...>(r, t, id, s, handled);
  });
}

Status Parse(CompactReader* r, Statistics* s) {
  using S = Statistics;
  return ReadStruct(r, "Statistics", 0, s,
                    Fields<Member<1, &S::max>, Member<2, &S::min>, Member<3, &S::null_count>,
                           Member<4, &S::distinct_count>, Member<5, &S::max_value>,
                           Member<6, &S::min_value>, Member<7, &S::is_max_value_exact>,
                           Member<8, &S::is_min_value_exact>, Member<9, &S::nan_count>>{});
}

// A union member that is an empty struct (or one whose fields ferry ignores).
Status SkipStruct(CompactReader* r, CType t) {
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
    return SkipStruct(r, t);
  }));
  return found ? Status::OK() : r->Corrupt("TimeUnit without a unit");
}

// TimestampType.unit (and TimeType.unit): the TimeUnit union.
Status ReadTimestampUnit(CompactReader* r, CType t, LogicalType* lt) {
  if (!CompactReader::Matches(t, CType::kStruct)) {
    return r->SkipMismatched(t);
  }
  return ParseTimeUnit(r, &lt->unit);
}

Status ParseLogicalTypeMember(CompactReader* r, CType t, LogicalType* lt) {
  using Kind = LogicalType::Kind;
  using L = LogicalType;
  if (!CompactReader::Matches(t, CType::kStruct)) {
    return r->SkipMismatched(t);
  }
  switch (lt->kind) {
    case Kind::kDecimal:
      return ReadStruct(r, "DecimalType", Bits({1, 2}), lt,
                        Fields<Member<1, &L::scale>, Member<2, &L::precision>>{});
    case Kind::kTime:
    case Kind::kTimestamp:
      return ReadStruct(r, "TimestampType", Bits({1, 2}), lt,
                        Fields<Member<1, &L::is_adjusted_to_utc>, Custom<2, ReadTimestampUnit>>{});
    case Kind::kInteger:
      return ReadStruct(r, "IntType", Bits({1, 2}), lt,
                        Fields<Member<1, &L::bit_width>, Member<2, &L::is_signed>>{});
    default:
      return r->Skip(t);
  }
}

Status Parse(CompactReader* r, LogicalType* lt) {
  bool found = false;
  FERRY_RETURN_IF_ERROR(Struct(r, "LogicalType", 0, [&](CType t, int16_t id, bool*) {
    found = true;
    lt->kind = static_cast<LogicalType::Kind>(id);
    return ParseLogicalTypeMember(r, t, lt);
  }));
  return found ? Status::OK() : r->Corrupt("LogicalType union without a member");
}

Status Parse(CompactReader* r, SchemaElement* e) {
  using S = SchemaElement;
  return ReadStruct(
      r, "SchemaElement", Bits({4}), e,
      Fields<Member<1, &S::type>, Member<2, &S::type_length>, Member<3, &S::repetition_type>,
             Member<4, &S::name>, Member<5, &S::num_children>, Member<6, &S::converted_type>,
             Member<7, &S::scale>, Member<8, &S::precision>, Member<9, &S::field_id>,
             Member<10, &S::logical_type>>{});
}

Status Parse(CompactReader* r, KeyValue* kv) {
  return ReadStruct(r, "KeyValue", Bits({1}), kv,
                    Fields<Member<1, &KeyValue::key>, Member<2, &KeyValue::value>>{});
}

Status Parse(CompactReader* r, PageEncodingStats* s) {
  using S = PageEncodingStats;
  return ReadStruct(
      r, "PageEncodingStats", Bits({1, 2, 3}), s,
      Fields<Member<1, &S::page_type>, Member<2, &S::encoding>, Member<3, &S::count>>{});
}

Status Parse(CompactReader* r, ColumnMetaData* c) {
  using S = ColumnMetaData;
  return ReadStruct(
      r, "ColumnMetaData", Bits({1, 2, 3, 4, 5, 6, 7, 9}), c,
      Fields<Member<1, &S::type>, Member<2, &S::encodings>, Member<3, &S::path_in_schema>,
             Member<4, &S::codec>, Member<5, &S::num_values>,
             Member<6, &S::total_uncompressed_size>, Member<7, &S::total_compressed_size>,
             Member<8, &S::key_value_metadata>, Member<9, &S::data_page_offset>,
             Member<10, &S::index_page_offset>, Member<11, &S::dictionary_page_offset>,
             Member<12, &S::statistics>, Member<13, &S::encoding_stats>,
             Member<14, &S::bloom_filter_offset>, Member<15, &S::bloom_filter_length>>{});
}

Status Parse(CompactReader* r, ColumnChunk* c) {
  using S = ColumnChunk;
  return ReadStruct(
      r, "ColumnChunk", Bits({2}), c,
      Fields<Member<1, &S::file_path>, Member<2, &S::file_offset>, Member<3, &S::meta_data>,
             Member<4, &S::offset_index_offset>, Member<5, &S::offset_index_length>,
             Member<6, &S::column_index_offset>, Member<7, &S::column_index_length>,
             Flag<8, &S::encrypted>, Flag<9, &S::encrypted>>{});
}

Status Parse(CompactReader* r, SortingColumn* s) {
  using S = SortingColumn;
  return ReadStruct(
      r, "SortingColumn", Bits({1, 2, 3}), s,
      Fields<Member<1, &S::column_idx>, Member<2, &S::descending>, Member<3, &S::nulls_first>>{});
}

Status Parse(CompactReader* r, RowGroup* rg) {
  using S = RowGroup;
  return ReadStruct(
      r, "RowGroup", Bits({1, 2, 3}), rg,
      Fields<Member<1, &S::columns>, Member<2, &S::total_byte_size>, Member<3, &S::num_rows>,
             Member<4, &S::sorting_columns>, Member<5, &S::file_offset>,
             Member<6, &S::total_compressed_size>, Member<7, &S::ordinal>>{});
}

Status Parse(CompactReader* r, ColumnOrder* o) {
  return Struct(r, "ColumnOrder", 0, [&](CType t, int16_t id, bool*) {
    o->kind = static_cast<ColumnOrder::Kind>(id);
    return SkipStruct(r, t);
  });
}

Status Parse(CompactReader* r, DataPageHeader* d) {
  using S = DataPageHeader;
  return ReadStruct(r, "DataPageHeader", Bits({1, 2, 3, 4}), d,
                    Fields<Member<1, &S::num_values>, Member<2, &S::encoding>,
                           Member<3, &S::definition_level_encoding>,
                           Member<4, &S::repetition_level_encoding>, Member<5, &S::statistics>>{});
}

Status Parse(CompactReader* r, DictionaryPageHeader* d) {
  using S = DictionaryPageHeader;
  return ReadStruct(
      r, "DictionaryPageHeader", Bits({1, 2}), d,
      Fields<Member<1, &S::num_values>, Member<2, &S::encoding>, Member<3, &S::is_sorted>>{});
}

Status Parse(CompactReader* r, DataPageHeaderV2* d) {
  using S = DataPageHeaderV2;
  return ReadStruct(
      r, "DataPageHeaderV2", Bits({1, 2, 3, 4, 5, 6}), d,
      Fields<Member<1, &S::num_values>, Member<2, &S::num_nulls>, Member<3, &S::num_rows>,
             Member<4, &S::encoding>, Member<5, &S::definition_levels_byte_length>,
             Member<6, &S::repetition_levels_byte_length>, Member<7, &S::is_compressed>,
             Member<8, &S::statistics>>{});
}

Status ParseFileMetaDataStruct(CompactReader* r, FileMetaData* md) {
  using S = FileMetaData;
  return ReadStruct(
      r, "FileMetaData", Bits({1, 2, 3, 4}), md,
      Fields<Member<1, &S::version>, Member<2, &S::schema>, Member<3, &S::num_rows>,
             Member<4, &S::row_groups>, Member<5, &S::key_value_metadata>,
             Member<6, &S::created_by>, Member<7, &S::column_orders>, Flag<8, &S::encrypted>>{});
}

Status ParsePageHeaderStruct(CompactReader* r, PageHeader* h) {
  using S = PageHeader;
  return ReadStruct(
      r, "PageHeader", Bits({1, 2, 3}), h,
      Fields<Member<1, &S::type>, Member<2, &S::uncompressed_page_size>,
             Member<3, &S::compressed_page_size>, Member<4, &S::crc>,
             Member<5, &S::data_page_header>, Flag<6, &S::has_index_page_header>,
             Member<7, &S::dictionary_page_header>, Member<8, &S::data_page_header_v2>>{});
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
