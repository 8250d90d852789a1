#include "ferry/transform/protobuf_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>
#include <utility>

#include "ferry/base/varint.h"
#include "ferry/columnar/column.h"
#include "ferry/transform/decimal_math.h"
#include "ferry/transform/protobuf_reader_internal.h"
#include "ferry/transform/utf8.h"

namespace ferry::transform::protobuf {

using columnar::Column;

// One occurrence of a known field: a varint's value or fixed bits in `v`, a length-delimited
// value's bytes at [p, p + len). `next`: the field's next occurrence, or -1.
struct Occ {
  uint64_t v = 0;
  const uint8_t* p = nullptr;
  uint32_t len = 0;
  uint8_t wire = 0;
  int32_t next = -1;
};

// Per-Append working space, reused: occurrences, and per slot of each message being decoded its
// first and last occurrence (a stack: nested messages push above their parent's).
struct Scratch {
  const uint8_t* begin = nullptr;
  std::vector<Occ> occ;
  std::vector<int32_t> notes;
  std::string merged;  // a well-known JSON message's occurrences, concatenated
  std::string json;
};

namespace {

constexpr int32_t kMaxFieldNumber = (1 << 29) - 1;
constexpr int kMaxGroupDepth = 64;

[[gnu::cold, gnu::noinline]] Status Bad(const Scratch& s, const uint8_t* at, std::string_view path,
                                        std::string_view what) {
  return InvalidArgument("Protobuf message: field '{}': {} at byte {}",
                         path.empty() ? "<top>" : path, what, at - s.begin);
}

inline bool ReadVarint(const uint8_t** p, const uint8_t* end, uint64_t* v) {
  if (*p < end && **p < 0x80) {
    *v = *(*p)++;
    return true;
  }
  return DecodeVarint(p, end, v);
}

// Skips a group's fields up to its end tag (the start tag already read).
Status SkipGroup(const Scratch& s, const uint8_t** p, const uint8_t* end, uint64_t number,
                 std::string_view path) {
  int depth = 1;
  std::vector<uint64_t> open = {number};
  while (*p < end) {
    const uint8_t* at = *p;
    uint64_t tag = 0;
    uint64_t v = 0;
    if (!ReadVarint(p, end, &tag)) {
      return Bad(s, at, path, "a truncated or over-long tag");
    }
    switch (tag & 7) {
      case kVarint:
        if (!ReadVarint(p, end, &v)) {
          return Bad(s, at, path, "a truncated or over-long varint");
        }
        break;
      case kI64:
      case kI32: {
        size_t n = (tag & 7) == kI64 ? 8 : 4;
        if (static_cast<size_t>(end - *p) < n) {
          return Bad(s, at, path, "a message truncated inside a number");
        }
        *p += n;
        break;
      }
      case kLen:
        if (!ReadVarint(p, end, &v) || v > static_cast<uint64_t>(end - *p)) {
          return Bad(s, at, path, "a length beyond the message (truncated)");
        }
        *p += v;
        break;
      case kSGroup:
        if (++depth > kMaxGroupDepth) {
          return Bad(s, at, path, "groups nested too deep");
        }
        open.push_back(tag >> 3);
        break;
      case kEGroup:
        if (open.back() != (tag >> 3)) {
          return Bad(s, at, path, "a group end that does not match its start (malformed)");
        }
        open.pop_back();
        if (--depth == 0) {
          return Status::OK();
        }
        break;
      default:
        return Bad(s, at, path, fmt::format("wire type {} (malformed)", tag & 7));
    }
  }
  return Bad(s, *p, path, "a group without its end (truncated)");
}

// Step 1 (protobuf_reader.h): notes the occurrences of op's fields in the message made of the
// occurrence chain from `first` (one occurrence unless `chain`). Notes at [base, base + 2 * slots).
Status Scan(const MsgOp& op, int32_t first, bool chain, Scratch* s, size_t base,
            std::string_view path) {
  for (int32_t i = first; i >= 0; i = chain ? s->occ[static_cast<size_t>(i)].next : -1) {
    const uint8_t* p = s->occ[static_cast<size_t>(i)].p;
    const uint8_t* end = p + s->occ[static_cast<size_t>(i)].len;
    while (p < end) {
      const uint8_t* at = p;
      uint64_t tag = 0;
      if (!ReadVarint(&p, end, &tag)) {
        return Bad(*s, at, path, "a truncated or over-long tag");
      }
      const uint64_t number = tag >> 3;
      if (number == 0 || number > kMaxFieldNumber) {
        return Bad(*s, at, path, fmt::format("field number {} (malformed)", number));
      }
      Occ o;
      o.wire = static_cast<uint8_t>(tag & 7);
      o.p = at;  // a number's tag (where its errors point); a length-delimited value's bytes below
      switch (o.wire) {
        case kVarint:
          if (!ReadVarint(&p, end, &o.v)) {
            return Bad(*s, at, path, "a truncated or over-long varint");
          }
          break;
        case kI64:
          if (end - p < 8) {
            return Bad(*s, at, path, "a message truncated inside a number");
          }
          std::memcpy(&o.v, p, 8);  // little-endian, as the host (x86-64, arm64)
          p += 8;
          break;
        case kI32: {
          if (end - p < 4) {
            return Bad(*s, at, path, "a message truncated inside a number");
          }
          uint32_t v32 = 0;
          std::memcpy(&v32, p, 4);
          o.v = v32;
          p += 4;
          break;
        }
        case kLen: {
          uint64_t n = 0;
          if (!ReadVarint(&p, end, &n) || n > static_cast<uint64_t>(end - p)) {
            return Bad(*s, at, path, "a length beyond the message (truncated)");
          }
          o.p = p;
          o.len = static_cast<uint32_t>(n);
          p += n;
          break;
        }
        case kSGroup:
          FERRY_RETURN_IF_ERROR(SkipGroup(*s, &p, end, number, path));
          continue;
        case kEGroup:
          return Bad(*s, at, path, "a group end without its start (malformed)");
        default:
          return Bad(*s, at, path, fmt::format("wire type {} (malformed)", o.wire));
      }
      const int32_t slot = op.SlotOf(static_cast<int32_t>(number));
      if (slot < 0) {
        continue;  // unknown: skipped
      }
      const auto u = static_cast<size_t>(slot);
      if (o.wire != op.wire[u] && !(o.wire == kLen && op.packable[u] != 0)) {
        continue;  // another wire type than its type's: unknown, as libprotobuf keeps it
      }
      const auto index = static_cast<int32_t>(s->occ.size());
      s->occ.push_back(o);
      int32_t& head = s->notes[base + 2 * u];
      int32_t& tail = s->notes[base + 2 * u + 1];
      if (head < 0) {
        head = index;
      } else {
        s->occ[static_cast<size_t>(tail)].next = index;
      }
      tail = index;
    }
  }
  return Status::OK();
}

int32_t ZigZag32(uint64_t v) {
  auto u = static_cast<uint32_t>(v);
  return static_cast<int32_t>((u >> 1) ^ (~(u & 1) + 1));
}

// The value of a varint or fixed-width field of kind `k` as a signed 64-bit integer (uint64 and
// fixed64 excluded).
int64_t Signed(Kind k, uint64_t v) {
  switch (k) {
    case Kind::kInt32:
    case Kind::kSFixed32:
    case Kind::kEnum:
      return static_cast<int32_t>(static_cast<uint32_t>(v));
    case Kind::kSInt32:
      return ZigZag32(v);
    case Kind::kUInt32:
    case Kind::kFixed32:
      return static_cast<uint32_t>(v);
    case Kind::kSInt64:
      return ZigZagDecode(v);
    case Kind::kBool:
      return v != 0 ? 1 : 0;
    default:
      return static_cast<int64_t>(v);
  }
}

Status StoreNumber(const Scratch& s, const FieldOp& f, const uint8_t* at, uint64_t v, Column* col) {
  switch (f.store) {
    case Store::kInt32:
      col->As<columnar::Int32Column>()->Append(static_cast<int32_t>(Signed(f.kind, v)));
      return Status::OK();
    case Store::kInt64:
      col->As<columnar::Int64Column>()->Append(Signed(f.kind, v));
      return Status::OK();
    case Store::kDecimal: {
      const bool unsigned64 = f.kind == Kind::kUInt64 || f.kind == Kind::kFixed64;
      col->As<columnar::DecimalColumn>()->Append(
          unsigned64 ? static_cast<columnar::Int128>(v)
                     : static_cast<columnar::Int128>(Signed(f.kind, v)));
      return Status::OK();
    }
    case Store::kFloat32:
    case Store::kFloat64: {
      double d = 0;
      if (f.kind == Kind::kFloat) {
        float x = 0;
        auto bits = static_cast<uint32_t>(v);
        std::memcpy(&x, &bits, 4);
        d = static_cast<double>(x);
      } else {
        std::memcpy(&d, &v, 8);
      }
      if (f.store == Store::kFloat32) {
        col->As<columnar::FloatColumn>()->Append(static_cast<float>(d));
      } else {
        col->As<columnar::DoubleColumn>()->Append(d);
      }
      return Status::OK();
    }
    case Store::kBool:
      col->As<columnar::BooleanColumn>()->Append(v != 0 ? 1 : 0);
      return Status::OK();
    case Store::kDays: {
      // DATE's range, years 1 to 9999.
      const int64_t days = Signed(f.kind, v);
      if (days < -719162 || days > 2932896) {
        return Bad(s, at, f.path, fmt::format("the day count {} is out of DATE's range", days));
      }
      col->As<columnar::DateColumn>()->Append(static_cast<int32_t>(days));
      return Status::OK();
    }
    case Store::kEpoch: {
      const int64_t n = Signed(f.kind, v);
      int64_t micros = 0;
      if (__builtin_mul_overflow(n, f.micros_per_unit, &micros) ||
          micros < -62135596800LL * 1000000 || micros > 253402300799999999LL) {
        return Bad(s, at, f.path,
                   fmt::format("the epoch number {} (in units of {} microseconds) is out of "
                               "TIMESTAMP's range (timestamp_epoch_unit)",
                               n, f.micros_per_unit));
      }
      col->As<columnar::TimestampColumn>()->Append(micros);
      return Status::OK();
    }
    case Store::kEnumString: {
      const auto number = static_cast<int32_t>(Signed(Kind::kEnum, v));
      const auto& values = f.enum_def->values;
      auto it = std::lower_bound(values.begin(), values.end(), number,
                                 [](const auto& e, int32_t n) { return e.first < n; });
      if (it != values.end() && it->first == number) {
        col->As<columnar::BinaryColumn>()->Append(it->second);
      } else {
        col->As<columnar::BinaryColumn>()->Append(fmt::format("{}", number));
      }
      return Status::OK();
    }
    default:
      break;
  }
  return Bad(s, at, f.path, "not a number (internal)");
}

Status StoreBytes(const Scratch& s, const FieldOp& f, const Occ& o, Column* col) {
  std::string_view text(reinterpret_cast<const char*>(o.p), o.len);
  if (f.store == Store::kString && FindInvalidUtf8(text) != std::string_view::npos) {
    return Bad(s, o.p, f.path, "a string that is not UTF-8");
  }
  col->As<columnar::BinaryColumn>()->Append(text);
  return Status::OK();
}

// An absent field's value: null, or for a map key (and a wrapper's value) its type's default.
Status AppendAbsent(const Scratch& s, const FieldOp& f, Column* col) {
  if (!f.default_when_absent) {
    if (!f.nullable) {
      return Bad(s, s.begin, f.path, "absent: a null in a NOT NULL field");
    }
    col->AppendNull();
    return Status::OK();
  }
  if (f.store == Store::kString || f.store == Store::kBinary) {
    col->As<columnar::BinaryColumn>()->Append("");
    return Status::OK();
  }
  return StoreNumber(s, f, s.begin, 0, col);
}

template <typename ColumnAt>
Status DecodeMessage(const MsgOp& op, int32_t first, bool chain, Scratch* s,
                     const ColumnAt& column_at, std::string_view path);

// Reads the Timestamp from the occurrence chain into micros (nanos truncated toward the past).
Status DecodeTimestamp(const FieldOp& f, int32_t first, bool chain, Scratch* s, Column* col) {
  const MsgOp& op = *f.message;
  const size_t base = s->notes.size();
  s->notes.resize(base + 2 * op.wire.size(), -1);
  FERRY_RETURN_IF_ERROR(Scan(op, first, chain, s, base, f.path));
  auto last = [&](int32_t number) -> uint64_t {
    int32_t slot = op.SlotOf(number);
    int32_t tail = slot < 0 ? -1 : s->notes[base + 2 * static_cast<size_t>(slot) + 1];
    return tail < 0 ? 0 : s->occ[static_cast<size_t>(tail)].v;
  };
  const auto seconds = static_cast<int64_t>(last(1));
  const int64_t nanos = static_cast<int32_t>(static_cast<uint32_t>(last(2)));
  s->notes.resize(base);
  int64_t micros = 0;
  // Delta's TIMESTAMP range is years 1 to 9999; Timestamp's too (seconds -62135596800 ..
  // 253402300799).
  if (seconds < -62135596800LL || seconds > 253402300799LL || nanos < 0 || nanos > 999999999 ||
      __builtin_mul_overflow(seconds, int64_t{1000000}, &micros)) {
    return Bad(*s, s->begin, f.path,
               fmt::format("the Timestamp {}s {}ns is out of range", seconds, nanos));
  }
  col->As<columnar::Int64Column>()->Append(micros + nanos / 1000);
  return Status::OK();
}

// A decimal message (Connect's types): its `value` bytes at its `scale`, rescaled to the column.
Status DecodeDecimalMessage(const FieldOp& f, int32_t first, bool chain, Scratch* s, Column* col) {
  const MsgOp& op = *f.message;
  const size_t base = s->notes.size();
  s->notes.resize(base + 2 * op.wire.size(), -1);
  FERRY_RETURN_IF_ERROR(Scan(op, first, chain, s, base, f.path));
  auto last = [&](int32_t number) -> const Occ* {
    int32_t slot = op.SlotOf(number);
    int32_t tail = slot < 0 ? -1 : s->notes[base + 2 * static_cast<size_t>(slot) + 1];
    return tail < 0 ? nullptr : &s->occ[static_cast<size_t>(tail)];
  };
  const uint8_t* at = s->occ[static_cast<size_t>(first)].p;
  const Occ* value = last(f.value_number);
  const Occ* scale_occ = last(f.scale_number);
  const auto scale =
      scale_occ == nullptr ? int64_t{0} : static_cast<int64_t>(static_cast<int32_t>(scale_occ->v));
  std::string_view bytes;
  if (value != nullptr) {
    bytes = std::string_view(reinterpret_cast<const char*>(value->p), value->len);
  }
  s->notes.resize(base);
  const std::optional<columnar::Int128> parsed = FromBigEndianBytes(bytes);
  if (!parsed.has_value()) {
    return Bad(*s, at, f.path, "a decimal wider than 16 bytes");
  }
  const columnar::Int128 v = *parsed;
  std::optional<columnar::Int128> rescaled;
  if (scale >= 0 && scale <= 38 && FitsPrecision(v, 38)) {
    rescaled = Rescale(v, static_cast<int>(scale), f.scale, f.precision);
  }
  if (!rescaled.has_value()) {
    return Bad(*s, at, f.path,
               fmt::format("the decimal {} does not fit DECIMAL({}, {})",
                           DecimalToText(v, static_cast<int>(std::clamp<int64_t>(scale, 0, 38))),
                           f.precision, f.scale));
  }
  col->As<columnar::DecimalColumn>()->Append(*rescaled);
  return Status::OK();
}

Status DecodeJson(const FieldOp& f, int32_t first, bool chain, Scratch* s, Column* col) {
  std::string_view bytes;
  const Occ& o = s->occ[static_cast<size_t>(first)];
  if (!chain || o.next < 0) {
    bytes = std::string_view(reinterpret_cast<const char*>(o.p), o.len);
  } else {
    s->merged.clear();
    for (int32_t i = first; i >= 0; i = s->occ[static_cast<size_t>(i)].next) {
      const Occ& c = s->occ[static_cast<size_t>(i)];
      s->merged.append(reinterpret_cast<const char*>(c.p), c.len);
    }
    bytes = s->merged;
  }
  s->json.clear();
  Status st = AppendWellKnownJson(f.json, bytes, &s->json, 0);
  if (!st.ok()) {
    return Bad(*s, o.p, f.path, st.message());
  }
  col->As<columnar::BinaryColumn>()->Append(s->json);
  return Status::OK();
}

// One value of `f` (an element when repeated) from occurrence `i` (and the ones chained after
// it when `chain`: a singular message merges them).
Status DecodeValue(const FieldOp& f, int32_t i, bool chain, Scratch* s, Column* col) {
  const Occ o = s->occ[static_cast<size_t>(i)];
  switch (f.store) {
    case Store::kString:
    case Store::kBinary:
      return StoreBytes(*s, f, o, col);
    case Store::kTimestamp:
      return DecodeTimestamp(f, i, chain, s, col);
    case Store::kJson:
      return DecodeJson(f, i, chain, s, col);
    case Store::kDecimalMessage:
      return DecodeDecimalMessage(f, i, chain, s, col);
    case Store::kMessage: {
      auto* st = col->As<columnar::StructColumn>();
      FERRY_RETURN_IF_ERROR(DecodeMessage(
          *f.message, i, chain, s, [st](int c) { return st->mutable_child(c); }, f.path));
      st->FinishRow();
      return Status::OK();
    }
    case Store::kWrapper:
      return DecodeMessage(
          *f.message, i, chain, s, [col](int) { return col; }, f.path);
    case Store::kMap:
      return Bad(*s, o.p, f.path, "a map as a value (internal)");
    default:
      return StoreNumber(*s, f, o.p, o.v, col);
  }
}

// The elements of a packed occurrence.
Status DecodePacked(const FieldOp& f, const Occ& o, const Scratch& s, Column* col) {
  const uint8_t* p = o.p;
  const uint8_t* end = p + o.len;
  while (p < end) {
    const uint8_t* at = p;
    uint64_t v = 0;
    switch (f.kind) {
      case Kind::kDouble:
      case Kind::kFixed64:
      case Kind::kSFixed64:
        if (end - p < 8) {
          return Bad(s, at, f.path, "a packed array truncated inside a number");
        }
        std::memcpy(&v, p, 8);
        p += 8;
        break;
      case Kind::kFloat:
      case Kind::kFixed32:
      case Kind::kSFixed32: {
        if (end - p < 4) {
          return Bad(s, at, f.path, "a packed array truncated inside a number");
        }
        uint32_t v32 = 0;
        std::memcpy(&v32, p, 4);
        v = v32;
        p += 4;
        break;
      }
      default:
        if (!ReadVarint(&p, end, &v)) {
          return Bad(s, at, f.path, "a truncated or over-long varint in a packed array");
        }
    }
    FERRY_RETURN_IF_ERROR(StoreNumber(s, f, at, v, col));
  }
  return Status::OK();
}

// Step 2 for one field: its occurrences [head .. tail] into `col`.
Status DecodeField(const FieldOp& f, int32_t head, int32_t tail, Scratch* s, Column* col) {
  if (f.store == Store::kMap) {
    auto* m = col->As<columnar::MapColumn>();
    auto entry_column = [m](int c) { return c == 0 ? m->mutable_keys() : m->mutable_values(); };
    for (int32_t i = head; i >= 0; i = s->occ[static_cast<size_t>(i)].next) {
      FERRY_RETURN_IF_ERROR(DecodeMessage(*f.message, i, false, s, entry_column, f.path));
    }
    m->FinishRow();
    return Status::OK();
  }
  if (f.repeated) {
    auto* list = col->As<columnar::ListColumn>();
    Column* child = list->mutable_child();
    for (int32_t i = head; i >= 0; i = s->occ[static_cast<size_t>(i)].next) {
      const Occ& o = s->occ[static_cast<size_t>(i)];
      if (o.wire == kLen && f.kind != Kind::kString && f.kind != Kind::kBytes &&
          f.kind != Kind::kMessage) {
        FERRY_RETURN_IF_ERROR(DecodePacked(f, o, *s, child));
      } else {
        FERRY_RETURN_IF_ERROR(DecodeValue(f, i, false, s, child));
      }
    }
    list->FinishRow();
    return Status::OK();
  }
  if (head < 0) {
    return AppendAbsent(*s, f, col);
  }
  if (f.kind == Kind::kMessage) {
    return DecodeValue(f, head, true, s, col);  // merged
  }
  return DecodeValue(f, tail, false, s, col);  // the last wins
}

template <typename ColumnAt>
Status DecodeMessage(const MsgOp& op, int32_t first, bool chain, Scratch* s,
                     const ColumnAt& column_at, std::string_view path) {
  const size_t base = s->notes.size();
  const size_t occ_base = s->occ.size();
  s->notes.resize(base + 2 * op.wire.size(), -1);
  FERRY_RETURN_IF_ERROR(Scan(op, first, chain, s, base, path));
  for (const FieldOp& f : op.fields) {
    const auto u = static_cast<size_t>(f.slot);
    int32_t head = s->notes[base + 2 * u];
    int32_t tail = s->notes[base + 2 * u + 1];
    if (head >= 0 && op.oneof[u] >= 0) {
      // A oneof keeps the member that came last.
      for (size_t j = 0; j < op.oneof.size(); ++j) {
        if (j != u && op.oneof[j] == op.oneof[u] && s->notes[base + 2 * j + 1] > tail) {
          head = -1;
          tail = -1;
          break;
        }
      }
    }
    FERRY_RETURN_IF_ERROR(DecodeField(f, head, tail, s, column_at(f.column)));
  }
  for (int u : op.unfilled) {
    column_at(u)->AppendNull();
  }
  s->notes.resize(base);
  s->occ.resize(occ_base);
  return Status::OK();
}

}  // namespace

ProtobufRowReader::ProtobufRowReader() : scratch_(std::make_unique<Scratch>()) {}
ProtobufRowReader::~ProtobufRowReader() = default;

Result<std::unique_ptr<ProtobufRowReader>> ProtobufRowReader::Create(
    std::shared_ptr<const MessageSchema> writer, const columnar::Schema& batch_schema,
    std::vector<int> columns, ConnectTypes connect) {
  std::unique_ptr<ProtobufRowReader> reader(new ProtobufRowReader());
  std::vector<columnar::Field> fields;
  fields.reserve(columns.size());
  for (int c : columns) {
    fields.push_back(batch_schema.field(c));
  }
  FERRY_ASSIGN_OR_RETURN(reader->root_, PlanMessage(*writer, 0, fields, columns, "", 0, connect));
  std::vector<std::string> path;
  CollectUnmatched(*reader->root_, &path, &reader->unmatched_);
  reader->writer_ = std::move(writer);
  reader->columns_ = std::move(columns);
  return reader;
}

Result<std::unique_ptr<ProtobufRowReader>> ProtobufRowReader::CreateForColumn(
    std::shared_ptr<const MessageSchema> writer, const columnar::Schema& batch_schema, int column) {
  const columnar::Field& field = batch_schema.field(column);
  if (field.type->id() != columnar::TypeId::kStruct) {
    return InvalidArgument("Protobuf: column '{}': a message is read into a STRUCT, not {}",
                           field.name, field.type->ToString());
  }
  std::unique_ptr<ProtobufRowReader> reader(new ProtobufRowReader());
  FERRY_ASSIGN_OR_RETURN(reader->root_,
                         PlanMessage(*writer, 0, field.type->fields(), {}, field.name, 0, {}));
  reader->writer_ = std::move(writer);
  reader->columns_ = {column};
  reader->whole_ = true;
  return reader;
}

Status ProtobufRowReader::Append(std::string_view message, columnar::RecordBatch* batch) {
  if (message.size() > std::numeric_limits<uint32_t>::max()) {
    return InvalidArgument("Protobuf message: {} bytes is too large", message.size());
  }
  Scratch& s = *scratch_;
  s.begin = reinterpret_cast<const uint8_t*>(message.data());
  s.occ.clear();
  s.notes.clear();
  s.occ.push_back(Occ{.p = s.begin, .len = static_cast<uint32_t>(message.size())});
  const int64_t rows = batch->mutable_column(columns_.front())->length();
  Status st;
  if (whole_) {
    auto* col = batch->mutable_column(columns_.front())->As<columnar::StructColumn>();
    st = DecodeMessage(
        *root_, 0, false, &s, [col](int c) { return col->mutable_child(c); }, "");
    if (st.ok()) {
      col->FinishRow();
    }
  } else {
    st = DecodeMessage(
        *root_, 0, false, &s, [batch](int c) { return batch->mutable_column(c); }, "");
  }
  if (!st.ok()) [[unlikely]] {
    for (int c : columns_) {
      batch->mutable_column(c)->Truncate(rows);
    }
  }
  return st;
}

}  // namespace ferry::transform::protobuf
