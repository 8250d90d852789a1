#include "ferry/transform/debezium_json_decoder.h"

#include <simdjson.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <limits>
#include <optional>
#include <unordered_map>
#include <utility>

#include "ferry/transform/debezium_types.h"

namespace ferry::transform {

namespace sj = simdjson::ondemand;
using columnar::TypeId;

namespace {

std::string_view TrimEnvelopeToken(std::string_view s) {
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

Status Malformed(std::string_view where, simdjson::error_code e) {
  return InvalidArgument("malformed JSON{}: {}", where, simdjson::error_message(e));
}

// One envelope value as read: strings unescaped, numbers and booleans as written, objects and
// arrays as their JSON text.
struct EnvelopeValue {
  enum Kind : uint8_t { kAbsent, kNull, kString, kNumber, kBool, kObject, kArray };
  Kind kind = kAbsent;
  std::string text;

  void Clear() {
    kind = kAbsent;
    text.clear();
  }
};

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

// Reads `v` into `out`. Objects and arrays keep their raw text (a view into the message buffer
// is enough for the row objects, see Envelope).
simdjson::error_code ReadValue(sj::value v, EnvelopeValue* out, std::string_view* raw) {
  sj::json_type t;
  if (auto e = v.type().get(t)) {
    return e;
  }
  switch (t) {
    case sj::json_type::null: {
      bool is_null = false;
      if (auto e = v.is_null().get(is_null)) {
        return e;
      }
      out->kind = EnvelopeValue::kNull;
      return is_null ? simdjson::SUCCESS : simdjson::N_ATOM_ERROR;
    }
    case sj::json_type::string: {
      std::string_view s;
      if (auto e = v.get_string().get(s)) {
        return e;
      }
      out->kind = EnvelopeValue::kString;
      out->text.assign(s);
      return simdjson::SUCCESS;
    }
    case sj::json_type::number:
    case sj::json_type::boolean:
      out->kind = t == sj::json_type::number ? EnvelopeValue::kNumber : EnvelopeValue::kBool;
      out->text.assign(TrimEnvelopeToken(v.raw_json_token()));
      return simdjson::SUCCESS;
    case sj::json_type::object: {
      sj::object o;
      std::string_view text;
      if (auto e = v.get_object().get(o); e || (e = o.raw_json().get(text))) {
        return e;
      }
      out->kind = EnvelopeValue::kObject;
      *raw = text;
      return simdjson::SUCCESS;
    }
    default: {
      sj::array a;
      std::string_view text;
      if (auto e = v.get_array().get(a); e || (e = a.raw_json().get(text))) {
        return e;
      }
      out->kind = EnvelopeValue::kArray;
      *raw = text;
      return simdjson::SUCCESS;
    }
  }
}

// Where an envelope column's value comes from.
enum class Scope : uint8_t { kTop, kSource, kTransaction };

struct EnvelopeSlot {
  std::string field;  // as configured: "op", "source.lsn"
  Scope scope;
  std::string name;  // within the scope: "op", "lsn"
  int column;
  TypeId type;
  int64_t micros_per_unit;  // TIMESTAMP columns: 1000 for *_ms, 1 for *_us; 0 for *_ns
  EnvelopeValue value;
};

}  // namespace

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

class DebeziumJsonDecoder::Impl {
 public:
  Impl(std::unique_ptr<JsonDecoder> row, std::vector<EnvelopeSlot> slots, std::vector<int> outputs,
       RowRewriter rewriter)
      : row_(std::move(row)),
        slots_(std::move(slots)),
        outputs_(std::move(outputs)),
        rewriter_(std::move(rewriter)) {
    for (const EnvelopeSlot& s : slots_) {
      wants_source_ |= s.scope == Scope::kSource;
      wants_transaction_ |= s.scope == Scope::kTransaction;
    }
  }

  const std::vector<int>& output_columns() const { return outputs_; }

  Status Append(std::string_view payload, columnar::RecordBatch* batch) {
    Status st = ReadEnvelope(payload);
    if (!st.ok()) {
      return st;
    }
    ChangeOp op = ChangeOp::kUpsert;
    if (op_.kind == EnvelopeValue::kAbsent) {
      return InvalidArgument("field 'op': missing (not a Debezium change envelope)");
    }
    if (op_.kind != EnvelopeValue::kString) {
      return InvalidArgument("field 'op': expected a string, found {}", EnvelopeKindName(op_.kind));
    }
    if (op_.text == "d") {
      op = ChangeOp::kDelete;
    } else if (op_.text != "c" && op_.text != "r" && op_.text != "u") {
      return InvalidArgument(
          "field 'op': unknown operation \"{}\" (expected c, r, u or d; truncate 't' and message "
          "'m' events carry no row)",
          op_.text);
    }
    const bool del = op == ChangeOp::kDelete;
    const EnvelopeValue& row = del ? before_ : after_;
    std::string_view field = del ? "before" : "after";
    if (row.kind != EnvelopeValue::kObject) {
      return InvalidArgument(
          "field '{}': {} in a '{}' change ({})", field,
          row.kind == EnvelopeValue::kAbsent ? "missing" : EnvelopeKindName(row.kind), op_.text,
          del ? "a delete needs the old row, at least its key" : "the change needs the new row");
    }
    const RowRewriter::Semantics* semantics = nullptr;
    if (!schema_text_.empty()) {
      FERRY_ASSIGN_OR_RETURN(semantics, SemanticsOf(field));
    }
    st = AppendRow(del ? before_raw_ : after_raw_, semantics, field, batch);
    if (!st.ok()) {
      return st;
    }
    self_last_op_ = op;
    return Status::OK();
  }

  Status AppendTombstone(std::string_view key, columnar::RecordBatch* batch) {
    if (key.empty()) {
      return InvalidArgument("key: a tombstone without a key deletes nothing");
    }
    CopyToBuffer(key);
    std::string_view object;
    {
      sj::document doc;
      sj::object root;
      if (auto e = parser_.iterate(buffer_.get(), key.size(), buffer_size_).get(doc)) {
        return Malformed(" in the key", e);
      }
      if (doc.get_object().get(root)) {
        return InvalidArgument("key: expected a JSON object, as Debezium's JsonConverter writes");
      }
      bool wrapped = false;
      bool other = false;
      std::string_view payload;
      for (auto f : root) {
        std::string_view k;
        if (auto e = f.unescaped_key().get(k)) {
          return Malformed(" in the key", e);
        }
        if (k == "payload") {
          EnvelopeValue v;
          if (auto e = ReadValue(f.value(), &v, &payload)) {
            return Malformed(" in the key", e);
          }
          wrapped = v.kind == EnvelopeValue::kObject;
        } else if (k != "schema") {
          other = true;
        }
      }
      object = wrapped && !other ? payload : std::string_view(buffer_.get(), key.size());
    }
    for (EnvelopeSlot& s : slots_) {
      s.value.Clear();
      if (s.scope == Scope::kTop && s.name == "op") {
        s.value.kind = EnvelopeValue::kString;
        s.value.text = "d";
      }
    }
    FERRY_RETURN_IF_ERROR(AppendRow(object, nullptr, "key", batch));
    self_last_op_ = ChangeOp::kDelete;
    return Status::OK();
  }

  ChangeOp last_op() const { return self_last_op_; }

 private:
  void CopyToBuffer(std::string_view bytes) {
    size_t need = bytes.size() + simdjson::SIMDJSON_PADDING;
    if (buffer_size_ < need) {
      buffer_size_ = std::max(need, buffer_size_ * 2);
      buffer_ = std::make_unique<char[]>(buffer_size_);
    }
    std::memcpy(buffer_.get(), bytes.data(), bytes.size());
    std::memset(buffer_.get() + bytes.size(), 0, simdjson::SIMDJSON_PADDING);
  }

  // Fills op_, before_/after_ (and their raw text), ts fields, source/transaction values and
  // the wrapper's schema text from the message.
  Status ReadEnvelope(std::string_view payload) {
    CopyToBuffer(payload);
    // A bare envelope is read in one pass; the wrapper ({"schema": ..., "payload": {...}}, no
    // "op" at the top) in a second one over its payload.
    std::string_view wrapped;
    std::string_view schema;
    FERRY_RETURN_IF_ERROR(
        ReadFields(std::string_view(buffer_.get(), payload.size()), true, &wrapped, &schema));
    if (op_.kind == EnvelopeValue::kAbsent && !wrapped.empty()) {
      FERRY_RETURN_IF_ERROR(ReadFields(wrapped, false, nullptr, nullptr));
      schema_text_ = schema;
    }
    if (EnvelopeValue* op = FindSlot(Scope::kTop, "op")) {
      *op = op_;
    }
    if (!source_raw_.empty()) {
      FERRY_RETURN_IF_ERROR(ReadScope(Scope::kSource, source_raw_, "source"));
    }
    if (!transaction_raw_.empty()) {
      FERRY_RETURN_IF_ERROR(ReadScope(Scope::kTransaction, transaction_raw_, "transaction"));
    }
    return Status::OK();
  }

  // The envelope fields of the object `text` (in buffer_). At the top (`root`) also the
  // wrapper's "payload" and "schema" texts.
  Status ReadFields(std::string_view text, bool root, std::string_view* wrapped,
                    std::string_view* schema) {
    op_.Clear();
    before_.Clear();
    after_.Clear();
    before_raw_ = after_raw_ = source_raw_ = transaction_raw_ = schema_text_ = {};
    for (EnvelopeSlot& s : slots_) {
      s.value.Clear();
    }
    sj::document doc;
    sj::object obj;
    size_t capacity = buffer_size_ - static_cast<size_t>(text.data() - buffer_.get());
    if (auto e = parser_.iterate(text.data(), text.size(), capacity).get(doc)) {
      return Malformed("", e);
    }
    if (auto e = doc.get_object().get(obj)) {
      return e == simdjson::INCORRECT_TYPE
                 ? InvalidArgument(
                       "malformed message: expected a JSON object (a Debezium "
                       "envelope)")
                 : Malformed("", e);
    }
    for (auto f : obj) {
      std::string_view k;
      if (auto e = f.unescaped_key().get(k)) {
        return Malformed("", e);
      }
      EnvelopeValue* into = nullptr;
      std::string_view* raw = &scratch_raw_;
      if (k == "op") {
        into = &op_;
      } else if (k == "after") {
        into = &after_;
        raw = &after_raw_;
      } else if (k == "before") {
        into = &before_;
        raw = &before_raw_;
      } else if (k == "source" && wants_source_) {
        into = &scratch_;
        raw = &source_raw_;
      } else if (k == "transaction" && wants_transaction_) {
        into = &scratch_;
        raw = &transaction_raw_;
      } else if (root && (k == "payload" || k == "schema")) {
        into = &scratch_;
        raw = k == "payload" ? wrapped : schema;
      } else {
        into = FindSlot(Scope::kTop, k);
      }
      if (into == nullptr) {
        continue;  // skipped; On-Demand checks its structure only
      }
      if (auto e = ReadValue(f.value(), into, raw)) {
        return InvalidArgument("field '{}': malformed JSON: {}", k, simdjson::error_message(e));
      }
      if (root && k == "payload" && into->kind != EnvelopeValue::kObject) {
        return InvalidArgument("field 'payload': expected the change envelope, found {}",
                               EnvelopeKindName(into->kind));
      }
      bool row_or_scope = into == &after_ || into == &before_ || into == &scratch_;
      if (!row_or_scope &&
          (into->kind == EnvelopeValue::kObject || into->kind == EnvelopeValue::kArray)) {
        into->text.assign(*raw);
      }
    }
    const char* trailing = nullptr;
    if (root && !doc.current_location().get(trailing)) {
      return InvalidArgument("malformed message: unexpected text after the JSON object");
    }
    return Status::OK();
  }

  // The fields of `source` or `transaction` that envelope columns name.
  Status ReadScope(Scope scope, std::string_view object, std::string_view name) {
    sj::document doc;
    sj::object obj;
    size_t capacity = buffer_size_ - static_cast<size_t>(object.data() - buffer_.get());
    if (auto e = scope_parser_.iterate(object.data(), object.size(), capacity).get(doc);
        e || (e = doc.get_object().get(obj))) {
      return InvalidArgument("field '{}': malformed JSON: {}", name, simdjson::error_message(e));
    }
    for (auto f : obj) {
      std::string_view k;
      if (auto e = f.unescaped_key().get(k)) {
        return Malformed("", e);
      }
      if (EnvelopeValue* into = FindSlot(scope, k)) {
        std::string_view raw;
        if (auto e = ReadValue(f.value(), into, &raw)) {
          return InvalidArgument("field '{}.{}': malformed JSON: {}", name, k,
                                 simdjson::error_message(e));
        }
        if (into->kind == EnvelopeValue::kObject || into->kind == EnvelopeValue::kArray) {
          into->text.assign(raw);
        }
      }
    }
    return Status::OK();
  }

  EnvelopeValue* FindSlot(Scope scope, std::string_view name) {
    for (EnvelopeSlot& s : slots_) {
      if (s.scope == scope && s.name == name) {
        return &s.value;
      }
    }
    return nullptr;
  }

  // The Connect schema's semantic names for the fields of `field` ("after", "before"), from the
  // wrapper's schema; parsed again only when the schema text changes.
  Result<const RowRewriter::Semantics*> SemanticsOf(std::string_view field) {
    if (schema_text_ != cached_schema_) {
      cached_schema_.assign(schema_text_);
      Result<ConnectRowSemantics> parsed = ParseConnectEnvelopeSchema(cached_schema_);
      if (!parsed.ok()) {
        cached_schema_.clear();
        return InvalidArgument("field 'schema': {}", parsed.status().message());
      }
      cached_ = std::move(*parsed);
    }
    return field == "before" ? &cached_.before : &cached_.after;
  }

  // The row object (`object`, JSON text) through the rewriter and the JsonDecoder, then the
  // envelope columns; on error nothing stays appended.
  Status AppendRow(std::string_view object, const RowRewriter::Semantics* semantics,
                   std::string_view field, columnar::RecordBatch* batch) {
    size_t capacity = buffer_size_ - static_cast<size_t>(object.data() - buffer_.get());
    Result<std::string_view> row = rewriter_.Rewrite(object, capacity, semantics);
    if (!row.ok()) {  // "field 'name': ..."
      return InvalidArgument("field '{}.{}", field, row.status().message().substr(7));
    }
    const int64_t base = batch->column(outputs_[0]).length();
    Status st = row_->Append(*row, batch);
    if (row_->has_observations()) {
      for (FieldObservation& o : row_->TakeObservations()) {
        observations_->push_back(std::move(o));
      }
    }
    if (!st.ok()) {
      std::string_view message = st.message();
      if (message.starts_with("field '")) {
        return Status(st.code(), fmt::format("field '{}.{}", field, message.substr(7)));
      }
      return Status(st.code(), fmt::format("field '{}': {}", field, message));
    }
    for (const EnvelopeSlot& s : slots_) {
      st = AppendEnvelopeValue(s, batch->mutable_column(s.column));
      if (!st.ok()) {
        for (int c : outputs_) {
          batch->mutable_column(c)->Truncate(base);
        }
        return InvalidArgument("field '{}': {}", s.field, st.message());
      }
    }
    return Status::OK();
  }

  static Status AppendEnvelopeValue(const EnvelopeSlot& s, columnar::Column* col) {
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

 public:
  ChangeOp self_last_op_ = ChangeOp::kUpsert;
  std::vector<FieldObservation>* observations_ = nullptr;

 private:
  std::unique_ptr<JsonDecoder> row_;
  std::vector<EnvelopeSlot> slots_;
  std::vector<int> outputs_;
  RowRewriter rewriter_;
  bool wants_source_ = false;
  bool wants_transaction_ = false;
  sj::parser parser_;
  sj::parser scope_parser_;
  std::unique_ptr<char[]> buffer_;
  size_t buffer_size_ = 0;
  // The message being decoded.
  EnvelopeValue op_, before_, after_, scratch_;
  std::string_view before_raw_, after_raw_, source_raw_, transaction_raw_, scratch_raw_,
      schema_text_;
  // The last wrapper schema seen, and what it says about the row fields.
  std::string cached_schema_;
  ConnectRowSemantics cached_;
};

Result<std::unique_ptr<DebeziumJsonDecoder>> DebeziumJsonDecoder::Create(
    columnar::SchemaPtr schema, DebeziumJsonOptions options) {
  std::vector<EnvelopeSlot> slots;
  std::vector<int> outputs;
  std::vector<std::string> envelope_names;
  for (const auto& [field, column] : options.envelope_columns) {
    if (!IsDebeziumEnvelopeField(field)) {
      return InvalidArgument(
          "envelope_columns: unknown envelope field \"{}\" (op, ts_ms, ts_us, ts_ns, "
          "source.<field>, transaction.<field>)",
          field);
    }
    std::optional<int> index = schema->FieldIndex(column);
    if (!index.has_value()) {
      return InvalidArgument(
          "envelope_columns: the table has no column \"{}\" (for '{}'); declare it in the "
          "schema",
          column, field);
    }
    const columnar::DataType& type = *schema->fields()[static_cast<size_t>(*index)].type;
    EnvelopeSlot slot{.field = field, .column = *index, .type = type.id(), .micros_per_unit = 1000};
    size_t dot = field.find('.');
    slot.scope = dot == std::string::npos      ? Scope::kTop
                 : field.starts_with("source") ? Scope::kSource
                                               : Scope::kTransaction;
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
    envelope_names.push_back(column);
    outputs.push_back(*index);
    slots.push_back(std::move(slot));
  }
  JsonDecoderOptions row = std::move(options.row);
  if (row.columns.empty()) {
    for (const columnar::Field& f : schema->fields()) {
      if (std::find(envelope_names.begin(), envelope_names.end(), f.name) == envelope_names.end()) {
        row.columns.push_back(f.name);
      }
    }
  }
  for (const std::string& name : row.columns) {
    if (std::find(envelope_names.begin(), envelope_names.end(), name) != envelope_names.end()) {
      return InvalidArgument("envelope_columns: column \"{}\" is also a row column", name);
    }
  }
  FERRY_ASSIGN_OR_RETURN(
      RowRewriter rewriter,
      RowRewriter::Create(*schema, row.columns, row.epoch_unit, options.decimal_handling));
  row.epoch_unit = EpochUnit::kMicros;  // the rewriter turns epoch numbers into micros
  FERRY_ASSIGN_OR_RETURN(std::unique_ptr<JsonDecoder> json,
                         JsonDecoder::Create(schema, std::move(row)));
  outputs.insert(outputs.end(), json->output_columns().begin(), json->output_columns().end());
  std::sort(outputs.begin(), outputs.end());
  auto impl = std::make_unique<Impl>(std::move(json), std::move(slots), std::move(outputs),
                                     std::move(rewriter));
  return std::unique_ptr<DebeziumJsonDecoder>(new DebeziumJsonDecoder(std::move(impl)));
}

DebeziumJsonDecoder::DebeziumJsonDecoder(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {
  impl_->observations_ = &observations_;
}
DebeziumJsonDecoder::~DebeziumJsonDecoder() = default;

const std::vector<int>& DebeziumJsonDecoder::output_columns() const {
  return impl_->output_columns();
}

Status DebeziumJsonDecoder::Append(std::string_view payload, columnar::RecordBatch* batch) {
  Status st = impl_->Append(payload, batch);
  last_op_ = impl_->last_op();
  return st;
}

Status DebeziumJsonDecoder::AppendTombstone(std::string_view key, columnar::RecordBatch* batch) {
  Status st = impl_->AppendTombstone(key, batch);
  last_op_ = impl_->last_op();
  return st;
}

}  // namespace ferry::transform
