#include "ferry/transform/avro_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>
#include <utility>

#include "ferry/base/varint.h"
#include "ferry/columnar/column.h"
#include "ferry/transform/avro_reader_internal.h"
#include "ferry/transform/decimal_math.h"
#include "ferry/transform/utf8.h"

namespace ferry::transform::avro {

using columnar::Column;
using columnar::DataType;
using columnar::TypeId;

namespace {

constexpr int kMaxDataDepth = 256;      // nesting in a datum (recursive writer types)
constexpr int64_t kSlackItems = 65536;  // items beyond the datum's bytes (zero-byte items)

// The bytes of one datum, read front to back, bounds-checked.
struct Cursor {
  const uint8_t* begin;
  const uint8_t* p;
  const uint8_t* end;
  // Array and map items the rest of the datum may still announce, in all its arrays and maps
  // together. Every item but a zero-byte one (null, an empty record, fixed(0)) has a byte of its
  // own, so a datum holds at most its size in items plus the zero-byte ones. Counted per datum,
  // not per array: per array, nested arrays of zero-byte items (array<array<null>>) made a datum
  // of a few KiB announce billions of items to skip.
  int64_t items_left;

  explicit Cursor(std::string_view datum)
      : begin(reinterpret_cast<const uint8_t*>(datum.data())),
        p(begin),
        end(begin + datum.size()),
        items_left(static_cast<int64_t>(datum.size()) + kSlackItems) {}

  size_t offset() const { return static_cast<size_t>(p - begin); }
  size_t left() const { return static_cast<size_t>(end - p); }
};

// Errors are rare: out of line, so that the readers below inline into Decode.
[[gnu::cold, gnu::noinline]] Status Truncated(const Cursor& in, const std::string& path,
                                              std::string_view what) {
  return InvalidArgument("Avro datum: field '{}': {} at byte {} of {}", path, what, in.offset(),
                         static_cast<size_t>(in.end - in.begin));
}

// The readers below return Status with the value through an out-parameter, rather than a
// Result (a std::variant): they run for every field of every message, and inline into Decode.
inline Status ReadLong(Cursor* in, const std::string& path, int64_t* v) {
  if (in->p < in->end && *in->p < 0x80) {  // one byte: -64..63, lengths below 64
    *v = ZigZagDecode(*in->p++);
    return Status::OK();
  }
  uint64_t raw = 0;
  if (!DecodeVarint(&in->p, in->end, &raw)) {
    return Truncated(*in, path, "a truncated or over-long varint");
  }
  *v = ZigZagDecode(raw);
  return Status::OK();
}

[[gnu::cold, gnu::noinline]] Status IntOutOfRange(const Cursor& in, const std::string& path,
                                                  int64_t v) {
  return Truncated(in, path, fmt::format("the int {} is out of range", v));
}

inline Status ReadInt(Cursor* in, const std::string& path, int32_t* out) {
  int64_t v = 0;
  FERRY_RETURN_IF_ERROR(ReadLong(in, path, &v));
  if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
    return IntOutOfRange(*in, path, v);
  }
  *out = static_cast<int32_t>(v);
  return Status::OK();
}

template <typename T>
inline Status ReadFixedWidth(Cursor* in, const std::string& path, T* v) {
  if (in->left() < sizeof(T)) {
    return Truncated(*in, path, "the datum ends inside a number");
  }
  std::memcpy(v, in->p, sizeof(T));  // little-endian, as the host (x86-64, arm64)
  in->p += sizeof(T);
  return Status::OK();
}

[[gnu::cold, gnu::noinline]] Status BadLength(const Cursor& in, const std::string& path,
                                              int64_t n) {
  return Truncated(in, path, fmt::format("a length of {} with {} bytes left", n, in.left()));
}

inline Status ReadBytes(Cursor* in, const std::string& path, std::string_view* out) {
  int64_t n = 0;
  FERRY_RETURN_IF_ERROR(ReadLong(in, path, &n));
  if (n < 0 || static_cast<uint64_t>(n) > in->left()) {
    return BadLength(*in, path, n);
  }
  *out = std::string_view(reinterpret_cast<const char*>(in->p), static_cast<size_t>(n));
  in->p += n;
  return Status::OK();
}

Status ReadFixed(Cursor* in, int32_t size, const std::string& path, std::string_view* out) {
  if (static_cast<size_t>(size) > in->left()) {
    return Truncated(*in, path, fmt::format("a fixed of {} bytes with {} left", size, in->left()));
  }
  *out = std::string_view(reinterpret_cast<const char*>(in->p), static_cast<size_t>(size));
  in->p += size;
  return Status::OK();
}

// A block's item count (the byte size after a negative count is skipped), bounded by the items
// the datum may still hold (Cursor::items_left); 0 ends the array or map.
Result<int64_t> ReadBlockCount(Cursor* in, const std::string& path) {
  int64_t count = 0;
  FERRY_RETURN_IF_ERROR(ReadLong(in, path, &count));
  if (count < 0) {
    if (count == std::numeric_limits<int64_t>::min()) {
      return Truncated(*in, path, "a block count out of range");
    }
    count = -count;
    int64_t bytes = 0;
    FERRY_RETURN_IF_ERROR(ReadLong(in, path, &bytes));
    if (bytes < 0) {
      return Truncated(*in, path, "a negative block size");
    }
  }
  // Compared before it is taken off (a huge count must not overflow anything).
  if (count > in->items_left) {
    return Truncated(*in, path, fmt::format("{} items with {} bytes left", count, in->left()));
  }
  in->items_left -= count;
  return count;
}

Status SkipValue(const Node& w, Cursor* in, const std::string& path, int depth) {
  if (depth > kMaxDataDepth) {
    return Truncated(*in, path, fmt::format("a value nested deeper than {}", kMaxDataDepth));
  }
  std::string_view skipped;
  int64_t skipped_long = 0;
  switch (w.type) {
    case AvroType::kNull:
      return Status::OK();
    case AvroType::kBoolean:
      return ReadFixed(in, 1, path, &skipped);
    case AvroType::kInt:
    case AvroType::kLong:
    case AvroType::kEnum:
      return ReadLong(in, path, &skipped_long);
    case AvroType::kFloat:
      return ReadFixed(in, 4, path, &skipped);
    case AvroType::kDouble:
      return ReadFixed(in, 8, path, &skipped);
    case AvroType::kBytes:
    case AvroType::kString:
      return ReadBytes(in, path, &skipped);
    case AvroType::kFixed:
      return ReadFixed(in, w.size, path, &skipped);
    case AvroType::kRecord:
      for (const FieldDef& f : w.fields) {
        FERRY_RETURN_IF_ERROR(SkipValue(*f.type, in, path, depth + 1));
      }
      return Status::OK();
    case AvroType::kArray:
    case AvroType::kMap: {
      while (true) {
        FERRY_ASSIGN_OR_RETURN(int64_t count, ReadBlockCount(in, path));
        if (count == 0) {
          return Status::OK();
        }
        for (int64_t i = 0; i < count; ++i) {
          if (w.type == AvroType::kMap) {
            FERRY_RETURN_IF_ERROR(ReadBytes(in, path, &skipped));
          }
          FERRY_RETURN_IF_ERROR(
              SkipValue(w.type == AvroType::kMap ? *w.values : *w.items, in, path, depth + 1));
        }
      }
    }
    case AvroType::kUnion: {
      int64_t branch = 0;
      FERRY_RETURN_IF_ERROR(ReadLong(in, path, &branch));
      if (branch < 0 || static_cast<size_t>(branch) >= w.branches.size()) {
        return Truncated(*in, path,
                         fmt::format("union branch {} of {}", branch, w.branches.size()));
      }
      return SkipValue(*w.branches[static_cast<size_t>(branch)], in, path, depth + 1);
    }
  }
  return Status::OK();
}

// The offset of the first byte of `s` that is not UTF-8, or npos. ASCII (most text) is checked
// 8 bytes at a time first; only text with other bytes takes the byte-wise validator.
size_t FindInvalidText(std::string_view s) {
  uint64_t seen = 0;
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t word = 0;
    std::memcpy(&word, s.data() + i, 8);
    seen |= word;
  }
  for (; i < s.size(); ++i) {
    seen |= static_cast<uint8_t>(s[i]);
  }
  return (seen & 0x8080808080808080ULL) == 0 ? std::string_view::npos : FindInvalidUtf8(s);
}

// A two's-complement big-endian integer of at most 16 bytes that fits `precision` digits.
Result<columnar::Int128> DecimalValue(std::string_view bytes, int32_t precision, Cursor* in,
                                      const std::string& path) {
  const std::optional<columnar::Int128> parsed = FromBigEndianBytes(bytes);
  if (!parsed.has_value()) {
    return Truncated(*in, path, "a decimal wider than 16 bytes");
  }
  const columnar::Int128 v = *parsed;
  columnar::Int128 limit = 1;
  for (int32_t i = 0; i < precision; ++i) {
    limit *= 10;
  }
  if (v >= limit || v <= -limit) {
    return Truncated(*in, path, fmt::format("a decimal with more than {} digits", precision));
  }
  return v;
}

Status Decode(const ReadOp& op, Cursor* in, Column* col, int depth);

// io.debezium.data.VariableScaleDecimal: the value at its own scale, rescaled to the column's
// (rounded half up when the column's scale is smaller, as Spark casts).
[[gnu::noinline]] Status DecodeVariableDecimal(const ReadOp& op, Cursor* in, Column* col) {
  int32_t scale = 0;
  std::string_view bytes;
  FERRY_RETURN_IF_ERROR(ReadInt(in, op.path, &scale));
  FERRY_RETURN_IF_ERROR(ReadBytes(in, op.path, &bytes));
  FERRY_ASSIGN_OR_RETURN(columnar::Int128 v, DecimalValue(bytes, 38, in, op.path));
  std::optional<columnar::Int128> rescaled =
      scale < 0 || scale > 38 ? std::nullopt : Rescale(v, scale, op.scale, op.precision);
  if (!rescaled.has_value()) {
    return Truncated(
        *in, op.path,
        fmt::format("the decimal {} does not fit DECIMAL({}, {})",
                    DecimalToText(v, std::clamp(scale, 0, 38)), op.precision, op.scale));
  }
  col->As<columnar::DecimalColumn>()->Append(*rescaled);
  return Status::OK();
}

Status DecodeRecord(const ReadOp& op, Cursor* in, columnar::StructColumn* s, int depth) {
  const Node& w = *op.writer;
  for (size_t i = 0; i < w.fields.size(); ++i) {
    if (op.child_index[i] < 0) {
      FERRY_RETURN_IF_ERROR(
          SkipValue(*w.fields[i].type, in, JoinPath(op.path, w.fields[i].name), depth + 1));
      continue;
    }
    FERRY_RETURN_IF_ERROR(
        Decode(*op.children[i], in, s->mutable_child(op.child_index[i]), depth + 1));
  }
  for (int u : op.unfilled) {
    s->mutable_child(u)->AppendNull();
  }
  s->FinishRow();
  return Status::OK();
}

// Conversions before kRecord are leaves: they read one value and never recurse.
constexpr bool IsLeaf(Conv c) {
  return c < Conv::kRecord;
}

// A leaf, inlined where fields are read (the top-level loop, a union's branch): the call, the
// depth check and the second switch of Decode cost as much as reading a small value.
[[gnu::always_inline]] inline Status DecodeLeaf(const ReadOp& op, Cursor* in, Column* col) {
  switch (op.conv) {
    case Conv::kNull:
      if (!op.nullable) {
        return Truncated(*in, op.path, "a null for a NOT NULL column");
      }
      col->AppendNull();
      return Status::OK();
    case Conv::kBool: {
      std::string_view b;
      FERRY_RETURN_IF_ERROR(ReadFixed(in, 1, op.path, &b));
      col->As<columnar::BooleanColumn>()->Append(b[0] != 0 ? 1 : 0);
      return Status::OK();
    }
    case Conv::kIntToInt32:
    case Conv::kIntToDate: {
      int32_t v = 0;
      FERRY_RETURN_IF_ERROR(ReadInt(in, op.path, &v));
      col->As<columnar::Int32Column>()->Append(v);
      return Status::OK();
    }
    case Conv::kIntToInt64: {
      int32_t v = 0;
      FERRY_RETURN_IF_ERROR(ReadInt(in, op.path, &v));
      col->As<columnar::Int64Column>()->Append(v);
      return Status::OK();
    }
    case Conv::kIntToFloat32: {
      int32_t v = 0;
      FERRY_RETURN_IF_ERROR(ReadInt(in, op.path, &v));
      col->As<columnar::FloatColumn>()->Append(static_cast<float>(v));
      return Status::OK();
    }
    case Conv::kIntToFloat64: {
      int32_t v = 0;
      FERRY_RETURN_IF_ERROR(ReadInt(in, op.path, &v));
      col->As<columnar::DoubleColumn>()->Append(static_cast<double>(v));
      return Status::OK();
    }
    case Conv::kLongToInt64: {
      int64_t v = 0;
      FERRY_RETURN_IF_ERROR(ReadLong(in, op.path, &v));
      col->As<columnar::Int64Column>()->Append(v);
      return Status::OK();
    }
    case Conv::kLongToFloat32: {
      int64_t v = 0;
      FERRY_RETURN_IF_ERROR(ReadLong(in, op.path, &v));
      col->As<columnar::FloatColumn>()->Append(static_cast<float>(v));
      return Status::OK();
    }
    case Conv::kLongToFloat64: {
      int64_t v = 0;
      FERRY_RETURN_IF_ERROR(ReadLong(in, op.path, &v));
      col->As<columnar::DoubleColumn>()->Append(static_cast<double>(v));
      return Status::OK();
    }
    case Conv::kMillisToMicros: {
      int64_t v = 0;
      FERRY_RETURN_IF_ERROR(ReadLong(in, op.path, &v));
      int64_t micros = 0;
      if (__builtin_mul_overflow(v, int64_t{1000}, &micros)) {
        return Truncated(*in, op.path, fmt::format("the timestamp {} ms is out of range", v));
      }
      col->As<columnar::Int64Column>()->Append(micros);
      return Status::OK();
    }
    case Conv::kFloatToFloat32:
    case Conv::kFloatToFloat64: {
      float v = 0;
      FERRY_RETURN_IF_ERROR(ReadFixedWidth(in, op.path, &v));
      if (op.conv == Conv::kFloatToFloat32) {
        col->As<columnar::FloatColumn>()->Append(v);
      } else {
        col->As<columnar::DoubleColumn>()->Append(static_cast<double>(v));
      }
      return Status::OK();
    }
    case Conv::kDoubleToFloat64: {
      double v = 0;
      FERRY_RETURN_IF_ERROR(ReadFixedWidth(in, op.path, &v));
      col->As<columnar::DoubleColumn>()->Append(v);
      return Status::OK();
    }
    case Conv::kTextToString:
    case Conv::kTextToBinary: {
      size_t at = in->offset();
      std::string_view s;
      FERRY_RETURN_IF_ERROR(ReadBytes(in, op.path, &s));
      if (op.conv == Conv::kTextToString) {
        size_t bad = FindInvalidText(s);
        if (bad != std::string_view::npos) {
          return InvalidArgument(
              "Avro datum: field '{}': the string at byte {} is not UTF-8 (byte "
              "{} of it)",
              op.path, at, bad);
        }
      }
      col->As<columnar::BinaryColumn>()->Append(s);
      return Status::OK();
    }
    case Conv::kEnumToString: {
      int64_t index = 0;
      FERRY_RETURN_IF_ERROR(ReadLong(in, op.path, &index));
      const auto& symbols = op.writer->symbols;
      if (index < 0 || static_cast<size_t>(index) >= symbols.size()) {
        return Truncated(*in, op.path,
                         fmt::format("enum index {} of {} symbols", index, symbols.size()));
      }
      col->As<columnar::BinaryColumn>()->Append(symbols[static_cast<size_t>(index)]);
      return Status::OK();
    }
    case Conv::kFixedToBinary: {
      std::string_view s;
      FERRY_RETURN_IF_ERROR(ReadFixed(in, op.writer->size, op.path, &s));
      col->As<columnar::BinaryColumn>()->Append(s);
      return Status::OK();
    }
    case Conv::kDecimalBytes:
    case Conv::kDecimalFixed: {
      std::string_view bytes;
      if (op.conv == Conv::kDecimalBytes) {
        FERRY_RETURN_IF_ERROR(ReadBytes(in, op.path, &bytes));
      } else {
        FERRY_RETURN_IF_ERROR(ReadFixed(in, op.writer->size, op.path, &bytes));
      }
      FERRY_ASSIGN_OR_RETURN(columnar::Int128 v, DecimalValue(bytes, op.precision, in, op.path));
      col->As<columnar::DecimalColumn>()->Append(v);
      return Status::OK();
    }
    case Conv::kNanosToMicros: {
      int64_t v = 0;
      FERRY_RETURN_IF_ERROR(ReadLong(in, op.path, &v));
      col->As<columnar::Int64Column>()->Append(v / 1000 - (v % 1000 < 0 ? 1 : 0));
      return Status::OK();
    }
    case Conv::kVariableDecimal:
      return DecodeVariableDecimal(op, in, col);
    default:
      break;
  }
  return Internal("Avro: field '{}': not a leaf read op", op.path);
}

Status Decode(const ReadOp& op, Cursor* in, Column* col, int depth) {
  if (IsLeaf(op.conv)) {
    return DecodeLeaf(op, in, col);
  }
  if (depth > kMaxDataDepth) {
    return Truncated(*in, op.path, fmt::format("a value nested deeper than {}", kMaxDataDepth));
  }
  switch (op.conv) {
    case Conv::kRecord:
      return DecodeRecord(op, in, static_cast<columnar::StructColumn*>(col), depth);
    case Conv::kArray:
    case Conv::kMap: {
      const bool map = op.conv == Conv::kMap;
      auto* list = map ? nullptr : static_cast<columnar::ListColumn*>(col);
      auto* m = map ? static_cast<columnar::MapColumn*>(col) : nullptr;
      while (true) {
        FERRY_ASSIGN_OR_RETURN(int64_t count, ReadBlockCount(in, op.path));
        if (count == 0) {
          break;
        }
        for (int64_t i = 0; i < count; ++i) {
          if (map) {
            size_t at = in->offset();
            std::string_view key;
            FERRY_RETURN_IF_ERROR(ReadBytes(in, op.path, &key));
            if (FindInvalidText(key) != std::string_view::npos) {
              return InvalidArgument("Avro datum: field '{}': the map key at byte {} is not UTF-8",
                                     op.path, at);
            }
            m->mutable_keys()->As<columnar::BinaryColumn>()->Append(key);
            FERRY_RETURN_IF_ERROR(Decode(*op.children[0], in, m->mutable_values(), depth + 1));
          } else {
            FERRY_RETURN_IF_ERROR(Decode(*op.children[0], in, list->mutable_child(), depth + 1));
          }
        }
      }
      if (map) {
        m->FinishRow();
      } else {
        list->FinishRow();
      }
      return Status::OK();
    }
    case Conv::kUnion: {
      int64_t branch = 0;
      FERRY_RETURN_IF_ERROR(ReadLong(in, op.path, &branch));
      if (branch < 0 || static_cast<size_t>(branch) >= op.children.size()) {
        return Truncated(*in, op.path,
                         fmt::format("union branch {} of {}", branch, op.children.size()));
      }
      const auto b = static_cast<size_t>(branch);
      if (!op.members) {
        const ReadOp& child = *op.children[b];
        return IsLeaf(child.conv) ? DecodeLeaf(child, in, col) : Decode(child, in, col, depth + 1);
      }
      auto* s = static_cast<columnar::StructColumn*>(col);
      const int member = op.member_of_branch[b];
      if (member < 0) {  // the null branch
        if (!op.nullable) {
          return Truncated(*in, op.path, "a null for a NOT NULL column");
        }
        s->AppendNull();
        return Status::OK();
      }
      for (int j = 0; j < s->num_children(); ++j) {
        if (j == member) {
          FERRY_RETURN_IF_ERROR(Decode(*op.children[b], in, s->mutable_child(j), depth + 1));
        } else {
          s->mutable_child(j)->AppendNull();
        }
      }
      s->FinishRow();
      return Status::OK();
    }
    default:
      break;
  }
  return Internal("Avro: field '{}': unknown read op", op.path);
}

}  // namespace

AvroRowReader::~AvroRowReader() = default;

Status SkipDatum(const Node& type, std::string_view* datum, const std::string& path) {
  Cursor in(*datum);
  FERRY_RETURN_IF_ERROR(SkipValue(type, &in, path, 0));
  datum->remove_prefix(in.offset());
  return Status::OK();
}

Status AvroRowReader::AppendPrefix(std::string_view* datum, columnar::RecordBatch* batch) const {
  Cursor in(*datum);
  const int64_t rows = batch->mutable_column(columns_.front())->length();
  const Node& root = *root_;
  for (size_t i = 0; i < field_ops_.size(); ++i) {
    Status st;
    if (column_of_field_[i] < 0) {  // skipped: no op (field_ops_[i] is null)
      st = SkipValue(*root.fields[i].type, &in, root.fields[i].name, 1);
    } else if (const ReadOp& op = *field_ops_[i]; IsLeaf(op.conv)) {
      st = DecodeLeaf(op, &in, batch->mutable_column(column_of_field_[i]));
    } else {
      st = Decode(op, &in, batch->mutable_column(column_of_field_[i]), 1);
    }
    if (!st.ok()) [[unlikely]] {
      // Puts the batch back as it was: the datum is a bad record.
      for (int c : columns_) {
        batch->mutable_column(c)->Truncate(rows);
      }
      return st;
    }
  }
  for (int c : unfilled_columns_) {
    batch->mutable_column(c)->AppendNull();
  }
  datum->remove_prefix(in.offset());
  return Status::OK();
}

Status AvroRowReader::Append(std::string_view datum, columnar::RecordBatch* batch) const {
  std::string_view rest = datum;
  const int64_t rows = batch->mutable_column(columns_.front())->length();
  FERRY_RETURN_IF_ERROR(AppendPrefix(&rest, batch));
  if (!rest.empty()) [[unlikely]] {
    for (int c : columns_) {
      batch->mutable_column(c)->Truncate(rows);
    }
    return InvalidArgument("Avro datum: {} bytes left over after the record ({} bytes)",
                           rest.size(), datum.size());
  }
  return Status::OK();
}

}  // namespace ferry::transform::avro
