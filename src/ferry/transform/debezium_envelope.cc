#include "ferry/transform/debezium_envelope.h"

#include <fmt/format.h>
#include <strings.h>

#include <algorithm>
#include <charconv>
#include <limits>
#include <optional>
#include <utility>

namespace ferry::transform {

using columnar::TypeId;

bool IsDebeziumEnvelopeField(std::string_view field) {
  if (field == "op" || field == "ts_ms" || field == "ts_us" || field == "ts_ns") {
    return true;
  }
  for (std::string_view prefix : {"source.", "transaction."}) {
    if (field.starts_with(prefix) && field.size() > prefix.size() &&
        field.find('.', prefix.size()) == std::string_view::npos) {
      return true;
    }
  }
  return false;
}

std::string_view EnvelopeKindName(EnvelopeValue::Kind kind) {
  switch (kind) {
    case EnvelopeValue::kAbsent:
      return "nothing";
    case EnvelopeValue::kNull:
      return "null";
    case EnvelopeValue::kString:
      return "a string";
    case EnvelopeValue::kNumber:
      return "a number";
    case EnvelopeValue::kBool:
      return "a boolean";
    case EnvelopeValue::kObject:
      return "an object";
    default:
      return "an array";
  }
}

Result<ChangeOp> ChangeOpOf(const EnvelopeValue& op) {
  if (op.kind == EnvelopeValue::kAbsent) {
    return InvalidArgument("field 'op': missing (not a Debezium change envelope)");
  }
  if (op.kind != EnvelopeValue::kString) {
    return InvalidArgument("field 'op': expected a string, found {}", EnvelopeKindName(op.kind));
  }
  if (op.text == "d") {
    return ChangeOp::kDelete;
  }
  if (op.text != "c" && op.text != "r" && op.text != "u") {
    return InvalidArgument(
        "field 'op': unknown operation \"{}\" (expected c, r, u or d; truncate 't' and message "
        "'m' events carry no row)",
        op.text);
  }
  return ChangeOp::kUpsert;
}

Status CheckRowPresent(EnvelopeValue::Kind row, ChangeOp op, std::string_view op_text) {
  if (row == EnvelopeValue::kObject) {
    return Status::OK();
  }
  const bool del = op == ChangeOp::kDelete;
  return InvalidArgument(
      "field '{}': {} in a '{}' change ({})", RowFieldOf(op),
      row == EnvelopeValue::kAbsent ? "missing" : EnvelopeKindName(row), op_text,
      del ? "a delete needs the old row, at least its key" : "the change needs the new row");
}

Result<EnvelopeColumns> EnvelopeColumns::Create(const columnar::Schema& schema,
                                                const std::map<std::string, std::string>& fields) {
  EnvelopeColumns out;
  for (const auto& [field, column] : fields) {
    if (!IsDebeziumEnvelopeField(field)) {
      return InvalidArgument(
          "envelope_columns: unknown envelope field \"{}\" (op, ts_ms, ts_us, ts_ns, "
          "source.<field>, transaction.<field>)",
          field);
    }
    std::optional<int> index = schema.FieldIndex(column);
    if (!index.has_value()) {
      return InvalidArgument(
          "envelope_columns: the table has no column \"{}\" (for '{}'); declare it in the "
          "schema",
          column, field);
    }
    const columnar::DataType& type = *schema.fields()[static_cast<size_t>(*index)].type;
    Slot slot{.field = field, .column = *index, .type = type.id(), .micros_per_unit = 1000};
    size_t dot = field.find('.');
    slot.scope = dot == std::string::npos      ? EnvelopeScope::kTop
                 : field.starts_with("source") ? EnvelopeScope::kSource
                                               : EnvelopeScope::kTransaction;
    slot.name = dot == std::string::npos ? field : field.substr(dot + 1);
    if (slot.name.ends_with("_us")) {
      slot.micros_per_unit = 1;
    } else if (slot.name.ends_with("_ns")) {
      slot.micros_per_unit = 0;
    }
    bool fits = type.id() == TypeId::kString || type.id() == TypeId::kInt64 ||
                type.id() == TypeId::kInt32 || type.id() == TypeId::kBoolean ||
                (type.id() == TypeId::kTimestamp && type.unit() == columnar::TimeUnit::kMicros);
    if (!fits) {
      return InvalidArgument(
          "envelope_columns: column \"{}\" for '{}' is {}; envelope columns are STRING, BIGINT, "
          "INT, BOOLEAN, TIMESTAMP or TIMESTAMP_NTZ",
          column, field, type.ToString());
    }
    out.names_.push_back(column);
    out.columns_.push_back(*index);
    out.slots_.push_back(std::move(slot));
  }
  return out;
}

bool EnvelopeColumns::wants(EnvelopeScope scope) const {
  return std::any_of(slots_.begin(), slots_.end(),
                     [scope](const Slot& s) { return s.scope == scope; });
}

bool EnvelopeColumns::wants(EnvelopeScope scope, std::string_view name) const {
  return std::any_of(slots_.begin(), slots_.end(),
                     [&](const Slot& s) { return s.scope == scope && s.name == name; });
}

EnvelopeValue* EnvelopeColumns::Find(EnvelopeScope scope, std::string_view name) {
  for (Slot& s : slots_) {
    if (s.scope == scope && s.name == name) {
      return &s.value;
    }
  }
  return nullptr;
}

void EnvelopeColumns::Clear() {
  for (Slot& s : slots_) {
    s.value.Clear();
  }
}

void EnvelopeColumns::SetTombstone() {
  Clear();
  if (EnvelopeValue* op = Find(EnvelopeScope::kTop, "op")) {
    op->kind = EnvelopeValue::kString;
    op->text = "d";
  }
}

Status EnvelopeColumns::Append(columnar::RecordBatch* batch) const {
  for (const Slot& s : slots_) {
    Status st = AppendValue(s, batch->mutable_column(s.column));
    if (!st.ok()) {
      return InvalidArgument("field '{}': {}", s.field, st.message());
    }
  }
  return Status::OK();
}

Status EnvelopeColumns::AppendValue(const Slot& s, columnar::Column* col) {
  const EnvelopeValue& v = s.value;
  if (v.kind == EnvelopeValue::kAbsent || v.kind == EnvelopeValue::kNull) {
    col->AppendNull();
    return Status::OK();
  }
  if (s.type == TypeId::kString) {
    col->As<columnar::BinaryColumn>()->Append(v.text);
    return Status::OK();
  }
  if (s.type == TypeId::kBoolean) {
    if (v.kind != EnvelopeValue::kBool) {
      return InvalidArgument("expected a boolean, found {}", EnvelopeKindName(v.kind));
    }
    col->As<columnar::BooleanColumn>()->Append(v.text == "true" ? 1 : 0);
    return Status::OK();
  }
  int64_t n = 0;
  auto [end, ec] = std::from_chars(v.text.data(), v.text.data() + v.text.size(), n);
  if (v.kind != EnvelopeValue::kNumber || ec != std::errc() ||
      end != v.text.data() + v.text.size()) {
    return InvalidArgument("expected an integer, found {} {}", EnvelopeKindName(v.kind), v.text);
  }
  switch (s.type) {
    case TypeId::kInt32:
      if (n < std::numeric_limits<int32_t>::min() || n > std::numeric_limits<int32_t>::max()) {
        return InvalidArgument("{} is out of range for INT", n);
      }
      col->As<columnar::Int32Column>()->Append(static_cast<int32_t>(n));
      return Status::OK();
    case TypeId::kInt64:
      col->As<columnar::Int64Column>()->Append(n);
      return Status::OK();
    default: {  // kTimestamp, microseconds (Create checks the unit)
      int64_t micros = 0;
      if (s.micros_per_unit == 0) {
        micros = n / 1000 - ((n % 1000) < 0 ? 1 : 0);
      } else if (__builtin_mul_overflow(n, s.micros_per_unit, &micros)) {
        return InvalidArgument("{} is out of range for a timestamp", n);
      }
      col->As<columnar::TimestampColumn>()->Append(micros);
      return Status::OK();
    }
  }
}

Result<std::vector<std::string>> DebeziumRowColumns(const columnar::Schema& schema,
                                                    const std::vector<std::string>& requested,
                                                    const EnvelopeColumns& envelope) {
  const std::vector<std::string>& names = envelope.names();
  auto is_envelope = [&](const std::string& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
  };
  std::vector<std::string> columns = requested;
  if (columns.empty()) {
    for (const columnar::Field& f : schema.fields()) {
      if (!is_envelope(f.name)) {
        columns.push_back(f.name);
      }
    }
  }
  for (const std::string& name : columns) {
    if (is_envelope(name)) {
      return InvalidArgument("envelope_columns: column \"{}\" is also a row column", name);
    }
  }
  return columns;
}

Status RowFieldError(std::string_view row_field, std::string_view prefix, const Status& st) {
  std::string_view m = st.message();
  if (m.starts_with(prefix)) {
    m.remove_prefix(prefix.size());
  }
  constexpr std::string_view kTop = "field '<top>': ";
  constexpr std::string_view kField = "field '";
  if (m.starts_with(kTop)) {
    return Status(st.code(), fmt::format("field '{}': {}", row_field, m.substr(kTop.size())));
  }
  if (m.starts_with(kField)) {
    return Status(st.code(), fmt::format("field '{}.{}", row_field, m.substr(kField.size())));
  }
  return Status(st.code(), fmt::format("field '{}': {}", row_field, m));
}

void SplitKeyColumns(const columnar::Schema& schema, const std::vector<int>& row_columns,
                     const std::vector<std::string_view>& key_fields, std::vector<int>* filled,
                     std::vector<int>* nulls) {
  for (int c : row_columns) {
    const std::string& name = schema.fields()[static_cast<size_t>(c)].name;
    bool named = std::any_of(key_fields.begin(), key_fields.end(), [&](std::string_view f) {
      return f.size() == name.size() && strncasecmp(f.data(), name.data(), name.size()) == 0;
    });
    (named ? filled : nulls)->push_back(c);
  }
}

}  // namespace ferry::transform
