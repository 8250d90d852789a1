#include "ferry/transform/debezium_json_decoder.h"

#include <simdjson.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <utility>

#include "ferry/transform/debezium_envelope.h"
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

}  // namespace

class DebeziumJsonDecoder::Impl {
 public:
  Impl(std::unique_ptr<JsonDecoder> row, EnvelopeColumns envelope, std::vector<int> outputs,
       RowRewriter rewriter)
      : row_(std::move(row)),
        envelope_(std::move(envelope)),
        outputs_(std::move(outputs)),
        rewriter_(std::move(rewriter)),
        wants_source_(envelope_.wants(EnvelopeScope::kSource)),
        wants_transaction_(envelope_.wants(EnvelopeScope::kTransaction)) {}

  const std::vector<int>& output_columns() const { return outputs_; }

  Status Append(std::string_view payload, columnar::RecordBatch* batch) {
    Status st = ReadEnvelope(payload);
    if (!st.ok()) {
      return st;
    }
    FERRY_ASSIGN_OR_RETURN(ChangeOp op, ChangeOpOf(op_));
    const bool del = op == ChangeOp::kDelete;
    const EnvelopeValue& row = del ? before_ : after_;
    std::string_view field = RowFieldOf(op);
    FERRY_RETURN_IF_ERROR(CheckRowPresent(row.kind, op, op_.text));
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
    envelope_.SetTombstone();
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
    if (EnvelopeValue* op = envelope_.Find(EnvelopeScope::kTop, "op")) {
      *op = op_;
    }
    if (!source_raw_.empty()) {
      FERRY_RETURN_IF_ERROR(ReadScope(EnvelopeScope::kSource, source_raw_, "source"));
    }
    if (!transaction_raw_.empty()) {
      FERRY_RETURN_IF_ERROR(
          ReadScope(EnvelopeScope::kTransaction, transaction_raw_, "transaction"));
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
    envelope_.Clear();
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
        into = envelope_.Find(EnvelopeScope::kTop, k);
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
  Status ReadScope(EnvelopeScope scope, std::string_view object, std::string_view name) {
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
      if (EnvelopeValue* into = envelope_.Find(scope, k)) {
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
    st = envelope_.Append(batch);
    if (!st.ok()) {
      for (int c : outputs_) {
        batch->mutable_column(c)->Truncate(base);
      }
      return st;
    }
    return Status::OK();
  }

 public:
  ChangeOp self_last_op_ = ChangeOp::kUpsert;
  std::vector<FieldObservation>* observations_ = nullptr;

 private:
  std::unique_ptr<JsonDecoder> row_;
  EnvelopeColumns envelope_;
  std::vector<int> outputs_;
  RowRewriter rewriter_;
  bool wants_source_;
  bool wants_transaction_;
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
  FERRY_ASSIGN_OR_RETURN(EnvelopeColumns envelope,
                         EnvelopeColumns::Create(*schema, options.envelope_columns));
  std::vector<int> outputs = envelope.columns();
  JsonDecoderOptions row = std::move(options.row);
  FERRY_ASSIGN_OR_RETURN(row.columns, DebeziumRowColumns(*schema, row.columns, envelope));
  FERRY_ASSIGN_OR_RETURN(
      RowRewriter rewriter,
      RowRewriter::Create(*schema, row.columns, row.epoch_unit, options.decimal_handling));
  row.epoch_unit = EpochUnit::kMicros;  // the rewriter turns epoch numbers into micros
  FERRY_ASSIGN_OR_RETURN(std::unique_ptr<JsonDecoder> json,
                         JsonDecoder::Create(schema, std::move(row)));
  outputs.insert(outputs.end(), json->output_columns().begin(), json->output_columns().end());
  std::sort(outputs.begin(), outputs.end());
  auto impl = std::make_unique<Impl>(std::move(json), std::move(envelope), std::move(outputs),
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
