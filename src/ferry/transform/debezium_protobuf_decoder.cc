#include "ferry/transform/debezium_protobuf_decoder.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "ferry/base/varint.h"
#include "ferry/transform/confluent_wire.h"
#include "ferry/transform/debezium_envelope.h"
#include "ferry/transform/field_path.h"
#include "ferry/transform/protobuf_reader.h"
#include "ferry/transform/protobuf_wire.h"

namespace ferry::transform {

namespace {

using protobuf::FieldDef;
using protobuf::Kind;
using protobuf::MessageDef;
using protobuf::MessageSchema;

// A scalar field's value as debezium-json reads it (an enum by its name); a wrapper message as
// its `value`; another message reads as null.
Status ReadPbEnvelopeValue(const MessageSchema& schema, const FieldDef& field,
                           const protobuf::WireField& f, std::string_view path,
                           EnvelopeValue* out) {
  switch (field.kind) {
    case Kind::kString:
    case Kind::kBytes:
      out->kind = EnvelopeValue::kString;
      out->text.assign(f.bytes);
      return Status::OK();
    case Kind::kBool:
      out->kind = EnvelopeValue::kBool;
      out->text = f.v != 0 ? "true" : "false";
      return Status::OK();
    case Kind::kFloat:
    case Kind::kDouble: {
      double d = 0;
      if (field.kind == Kind::kFloat) {
        float x = 0;
        auto bits = static_cast<uint32_t>(f.v);
        std::memcpy(&x, &bits, 4);
        d = static_cast<double>(x);
      } else {
        std::memcpy(&d, &f.v, 8);
      }
      out->kind = EnvelopeValue::kNumber;
      out->text = fmt::format("{}", d);
      return Status::OK();
    }
    case Kind::kUInt64:
    case Kind::kFixed64:
      out->kind = EnvelopeValue::kNumber;
      out->text = fmt::format("{}", f.v);
      return Status::OK();
    case Kind::kUInt32:
    case Kind::kFixed32:
      out->kind = EnvelopeValue::kNumber;
      out->text = fmt::format("{}", static_cast<uint32_t>(f.v));
      return Status::OK();
    case Kind::kSInt32:
    case Kind::kSInt64:
      out->kind = EnvelopeValue::kNumber;
      out->text = fmt::format("{}", ZigZagDecode(f.v));  // sint32's zigzag fits 32 bits
      return Status::OK();
    case Kind::kInt32:
    case Kind::kSFixed32:
      out->kind = EnvelopeValue::kNumber;
      out->text = fmt::format("{}", static_cast<int32_t>(static_cast<uint32_t>(f.v)));
      return Status::OK();
    case Kind::kInt64:
    case Kind::kSFixed64:
      out->kind = EnvelopeValue::kNumber;
      out->text = fmt::format("{}", static_cast<int64_t>(f.v));
      return Status::OK();
    case Kind::kEnum: {
      const auto number = static_cast<int32_t>(static_cast<uint32_t>(f.v));
      const auto& values = schema.enums[static_cast<size_t>(field.type)].values;
      auto it = std::find_if(values.begin(), values.end(),
                             [number](const auto& e) { return e.first == number; });
      out->kind = EnvelopeValue::kString;
      out->text = it != values.end() ? it->second : fmt::format("{}", number);
      return Status::OK();
    }
    case Kind::kMessage: {
      const MessageDef& m = schema.messages[static_cast<size_t>(field.type)];
      out->kind = EnvelopeValue::kNull;
      if (m.well_known != protobuf::WellKnown::kWrapper || m.fields.empty()) {
        return Status::OK();  // its JSON text is not at hand
      }
      // A wrapper: its `value` (field 1), the type's default when absent.
      const FieldDef& inner = m.fields.front();
      if (inner.kind == Kind::kString || inner.kind == Kind::kBytes) {
        *out = {.kind = EnvelopeValue::kString, .text = ""};
      } else if (inner.kind == Kind::kBool) {
        *out = {.kind = EnvelopeValue::kBool, .text = "false"};
      } else {
        *out = {.kind = EnvelopeValue::kNumber, .text = "0"};
      }
      std::string_view in = f.bytes;
      protobuf::WireField w;
      while (true) {
        FERRY_ASSIGN_OR_RETURN(bool more, protobuf::NextWireField(&in, f.bytes.size(), path, &w));
        if (!more) {
          return Status::OK();
        }
        if (w.number == static_cast<uint64_t>(inner.number) &&
            w.wire == protobuf::WireTypeOf(inner.kind)) {
          FERRY_RETURN_IF_ERROR(ReadPbEnvelopeValue(schema, inner, w, path, out));
        }
      }
    }
    default:
      out->kind = EnvelopeValue::kNull;
      return Status::OK();
  }
}

// How one field of the envelope message is read.
struct PbStep {
  enum Kind : uint8_t { kBefore, kAfter, kOp, kTop, kScope };
  Kind kind = kTop;
  const FieldDef* field = nullptr;
  EnvelopeScope scope = EnvelopeScope::kTop;
};

// What a value writer type is read with: made once per (schema id, message indexes).
struct PbEnvelopePlan {
  std::shared_ptr<const MessageSchema> envelope;
  std::map<uint64_t, PbStep> steps;  // by field number; fields no one reads are absent
  bool has_row[2] = {false, false};  // before, after
  std::unique_ptr<protobuf::ProtobufRowReader> after;
  std::unique_ptr<protobuf::ProtobufRowReader> before;  // null when `after` reads before's type
  std::vector<FieldObservation> new_fields;             // when observing
  DroppedFields dropped;

  protobuf::ProtobufRowReader* reader(ChangeOp op) const {
    return op == ChangeOp::kDelete && before != nullptr ? before.get() : after.get();
  }
};

// What a key writer type is read with: the row columns named like its fields.
struct PbKeyPlan {
  std::unique_ptr<protobuf::ProtobufRowReader> reader;  // null: no key field names a row column
  std::vector<int> null_columns;                        // row columns the key does not fill
};

using WriterKey = std::pair<int32_t, std::vector<int32_t>>;

}  // namespace

class DebeziumProtobufDecoder::Impl {
 public:
  Impl(columnar::SchemaPtr schema, DebeziumProtobufOptions options, EnvelopeColumns envelope,
       std::vector<int> row_columns, std::vector<int> outputs)
      : schema_(std::move(schema)),
        options_(std::move(options)),
        envelope_(std::move(envelope)),
        row_columns_(std::move(row_columns)),
        outputs_(std::move(outputs)) {}

  const std::vector<int>& output_columns() const { return outputs_; }

  Status Append(std::string_view payload, columnar::RecordBatch* batch) {
    self_->last_dropped_ = nullptr;
    FERRY_ASSIGN_OR_RETURN(ConfluentFrame frame, ParseConfluentFrame(payload, true));
    WriterKey key(frame.schema_id, std::move(frame.message_indexes));
    Result<const PbEnvelopePlan*> plan = PlanFor(key);
    if (!plan.ok()) {
      return Prefixed(frame.schema_id, plan.status());
    }
    Status st = Decode(**plan, frame.payload, batch);
    if (!(*plan)->new_fields.empty()) {
      self_->observations_ = (*plan)->new_fields;
    }
    if (!st.ok()) {
      return Prefixed(frame.schema_id, st);
    }
    if (!(*plan)->dropped.fields.empty()) {
      self_->last_dropped_ = &(*plan)->dropped;
    }
    return Status::OK();
  }

  Status AppendTombstone(std::string_view key, columnar::RecordBatch* batch) {
    self_->last_dropped_ = nullptr;
    if (key.empty()) {
      return InvalidArgument("key: a tombstone without a key deletes nothing");
    }
    Result<ConfluentFrame> frame = ParseConfluentFrame(key, true);
    if (!frame.ok()) {
      return InvalidArgument("key: {}", frame.status().message());
    }
    Result<const PbKeyPlan*> plan = PbKeyPlanFor({frame->schema_id, frame->message_indexes});
    if (!plan.ok()) {
      return Prefixed(frame->schema_id, plan.status(), "key: ");
    }
    const int64_t base = batch->column(outputs_.front()).length();
    if ((*plan)->reader != nullptr) {
      Status st = (*plan)->reader->Append(frame->payload, batch);
      if (!st.ok()) {
        return Prefixed(frame->schema_id, st, "key: ");
      }
    }
    for (int c : (*plan)->null_columns) {
      batch->mutable_column(c)->AppendNull();
    }
    envelope_.SetTombstone();
    if (Status st = envelope_.Append(batch); !st.ok()) {
      Truncate(batch, base);
      return st;
    }
    self_->last_op_ = ChangeOp::kDelete;
    return Status::OK();
  }

  DebeziumProtobufDecoder* self_ = nullptr;

 private:
  static Status Prefixed(int32_t id, const Status& st, std::string_view before = "") {
    if (st.code() != StatusCode::kInvalidArgument) {
      return st;
    }
    return InvalidArgument("{}schema id {}: {}", before, id, st.message());
  }

  void Truncate(columnar::RecordBatch* batch, int64_t rows) const {
    for (int c : outputs_) {
      batch->mutable_column(c)->Truncate(rows);
    }
  }

  // Steps 1-3 of the header.
  Status Decode(const PbEnvelopePlan& plan, std::string_view message,
                columnar::RecordBatch* batch) {
    envelope_.Clear();
    EnvelopeValue op;
    // proto3 writes a null message as nothing: a row field the type has reads as null.
    EnvelopeValue::Kind kinds[2] = {
        plan.has_row[0] ? EnvelopeValue::kNull : EnvelopeValue::kAbsent,
        plan.has_row[1] ? EnvelopeValue::kNull : EnvelopeValue::kAbsent};
    for (std::vector<std::string_view>& r : rows_) {
      r.clear();
    }
    const MessageSchema& schema = *plan.envelope;
    std::string_view in = message;
    protobuf::WireField f;
    while (true) {
      FERRY_ASSIGN_OR_RETURN(bool more, protobuf::NextWireField(&in, message.size(), "", &f));
      if (!more) {
        break;
      }
      auto it = plan.steps.find(f.number);
      if (it == plan.steps.end() || f.wire != protobuf::WireTypeOf(it->second.field->kind)) {
        continue;  // unknown, or another wire type than its type's: skipped
      }
      const PbStep& s = it->second;
      switch (s.kind) {
        case PbStep::kBefore:
        case PbStep::kAfter: {
          const int i = s.kind == PbStep::kAfter ? 1 : 0;
          kinds[i] = EnvelopeValue::kObject;
          rows_[i].push_back(f.bytes);
          break;
        }
        case PbStep::kOp:
          op.Clear();
          FERRY_RETURN_IF_ERROR(ReadPbEnvelopeValue(schema, *s.field, f, "op", &op));
          if (EnvelopeValue* slot = envelope_.Find(EnvelopeScope::kTop, "op")) {
            *slot = op;
          }
          break;
        case PbStep::kTop:
          FERRY_RETURN_IF_ERROR(
              ReadPbEnvelopeValue(schema, *s.field, f, s.field->name,
                                  envelope_.Find(EnvelopeScope::kTop, s.field->name)));
          break;
        case PbStep::kScope:
          FERRY_RETURN_IF_ERROR(ReadScope(schema, s, f.bytes));
          break;
      }
    }
    FERRY_ASSIGN_OR_RETURN(ChangeOp change, ChangeOpOf(op));
    const int i = change == ChangeOp::kDelete ? 0 : 1;
    FERRY_RETURN_IF_ERROR(CheckRowPresent(kinds[i], change, op.text));
    std::string_view row = rows_[i].front();
    if (rows_[i].size() > 1) {  // occurrences of a message merge: decoded as their bytes, joined
      merged_.clear();
      for (std::string_view part : rows_[i]) {
        merged_.append(part);
      }
      row = merged_;
    }
    const int64_t base = batch->column(outputs_.front()).length();
    Status st = plan.reader(change)->Append(row, batch);
    if (!st.ok()) {
      return RowFieldError(RowFieldOf(change), "Protobuf message: ", st);
    }
    st = envelope_.Append(batch);
    if (!st.ok()) {
      Truncate(batch, base);
      return st;
    }
    self_->last_op_ = change;
    return Status::OK();
  }

  // The fields of `source` or `transaction` that envelope columns name (the last occurrence
  // wins); the rest skipped.
  Status ReadScope(const MessageSchema& schema, const PbStep& s, std::string_view bytes) {
    const MessageDef& m = schema.messages[static_cast<size_t>(s.field->type)];
    std::string_view in = bytes;
    protobuf::WireField f;
    while (true) {
      FERRY_ASSIGN_OR_RETURN(bool more,
                             protobuf::NextWireField(&in, bytes.size(), s.field->name, &f));
      if (!more) {
        return Status::OK();
      }
      for (const FieldDef& field : m.fields) {
        if (static_cast<uint64_t>(field.number) != f.number || field.repeated ||
            protobuf::WireTypeOf(field.kind) != f.wire) {
          continue;
        }
        if (EnvelopeValue* slot = envelope_.Find(s.scope, field.name)) {
          FERRY_RETURN_IF_ERROR(
              ReadPbEnvelopeValue(schema, field, f, JoinPath(s.field->name, field.name), slot));
        }
        break;
      }
    }
  }

  // The message of `key`, its full name, and the file it is in.
  Result<std::shared_ptr<const MessageSchema>> WriterMessage(
      const WriterKey& key, std::string* full_name,
      std::shared_ptr<const protobuf::ProtoSchema>* file) const {
    Result<std::shared_ptr<const protobuf::ProtoSchema>> schema = options_.schemas->Get(key.first);
    if (!schema.ok()) {
      const Status& st = schema.status();
      if (st.code() == StatusCode::kUnavailable) {
        return st;
      }
      return st.code() == StatusCode::kNotFound
                 ? InvalidArgument("unknown to the schema registry ({})", st.message())
                 : InvalidArgument("{}", st.message());
    }
    FERRY_ASSIGN_OR_RETURN(std::shared_ptr<const MessageSchema> message,
                           (*schema)->MessageAt(key.second));
    *full_name = message->root().full_name;
    *file = *schema;
    return message;
  }

  Result<const PbEnvelopePlan*> PlanFor(const WriterKey& key) {
    auto it = plans_.find(key);
    if (it == plans_.end()) {
      Result<std::unique_ptr<PbEnvelopePlan>> plan = MakePlan(key);
      if (!plan.ok() && plan.status().code() == StatusCode::kUnavailable) {
        return plan.status();  // not kept: the next message asks again
      }
      it = plans_.emplace(key, std::move(plan)).first;
    }
    if (!it->second.ok()) {
      return it->second.status();
    }
    return it->second->get();
  }

  Result<std::unique_ptr<PbEnvelopePlan>> MakePlan(const WriterKey& key) const {
    std::string name;
    std::shared_ptr<const protobuf::ProtoSchema> file;
    auto plan = std::make_unique<PbEnvelopePlan>();
    FERRY_ASSIGN_OR_RETURN(plan->envelope, WriterMessage(key, &name, &file));
    const MessageSchema& schema = *plan->envelope;
    int32_t types[2] = {-1, -1};  // before, after: their message types
    bool has_op = false;
    for (const FieldDef& f : schema.root().fields) {
      PbStep step{.field = &f};
      if (f.name == "before" || f.name == "after") {
        const int i = f.name == "after" ? 1 : 0;
        if (f.kind != Kind::kMessage || f.repeated) {
          return InvalidArgument(
              "field '{}': the writer's type is not a message (not a Debezium change envelope)",
              f.name);
        }
        types[i] = f.type;
        plan->has_row[i] = true;
        step.kind = i == 1 ? PbStep::kAfter : PbStep::kBefore;
      } else if (f.name == "op") {
        has_op = true;
        step.kind = PbStep::kOp;
      } else if (f.name == "source" || f.name == "transaction") {
        step.scope = f.name == "source" ? EnvelopeScope::kSource : EnvelopeScope::kTransaction;
        if (!envelope_.wants(step.scope) || f.kind != Kind::kMessage || f.repeated) {
          continue;
        }
        step.kind = PbStep::kScope;
      } else if (envelope_.wants(EnvelopeScope::kTop, f.name) && !f.repeated) {
        step.kind = PbStep::kTop;
      } else {
        continue;
      }
      plan->steps[static_cast<uint64_t>(f.number)] = step;
    }
    if (!has_op) {
      return InvalidArgument(
          "field 'op': missing (not a Debezium change envelope: the writer's message \"{}\" "
          "has no field op)",
          name);
    }
    const protobuf::ConnectTypes connect{.enabled = true,
                                         .epoch_micros_per_unit = options_.epoch_micros_per_unit};
    plan->dropped.writer = fmt::format("schema id {} message {}", key.first, name);
    for (int i : {1, 0}) {
      if (types[i] < 0 || (i == 0 && types[0] == types[1] && plan->after)) {
        continue;
      }
      const std::string& row_type = schema.messages[static_cast<size_t>(types[i])].full_name;
      auto writer = file->Message(row_type);
      auto made =
          writer.ok()
              ? protobuf::ProtobufRowReader::Create(*writer, *schema_, row_columns_, connect)
              : Result<std::unique_ptr<protobuf::ProtobufRowReader>>(writer.status());
      if (!made.ok()) {
        return InvalidArgument("field '{}': {}", i == 1 ? "after" : "before",
                               made.status().message());
      }
      if (i == 1 || plan->after == nullptr) {
        Skipped(**made, **writer, plan.get());
      }
      (i == 1 ? plan->after : plan->before) = std::move(*made);
    }
    if (plan->after == nullptr) {  // only `before`: deletes read it, others fail on `after`
      plan->after = std::move(plan->before);
    }
    if (plan->after == nullptr) {
      return InvalidArgument("field 'after': missing (not a Debezium change envelope)");
    }
    return plan;
  }

  // The row message's fields no column takes: observations (with a column type) and drops.
  void Skipped(const protobuf::ProtobufRowReader& reader, const MessageSchema& writer,
               PbEnvelopePlan* plan) const {
    for (const protobuf::UnmatchedField& field : reader.unmatched_fields()) {
      std::string path = JoinPath(field.path);
      plan->dropped.fields.push_back(path);
      if (!options_.observe) {
        continue;
      }
      // A type with no column (a recursive message) stays dropped.
      if (auto type = protobuf::FieldColumnType(writer, *field.field, path); type.ok()) {
        plan->new_fields.push_back({.path = field.path, .type = type->type, .missing = true});
      }
    }
  }

  Result<const PbKeyPlan*> PbKeyPlanFor(const WriterKey& key) {
    auto it = keys_.find(key);
    if (it == keys_.end()) {
      Result<std::unique_ptr<PbKeyPlan>> plan = MakePbKeyPlan(key);
      if (!plan.ok() && plan.status().code() == StatusCode::kUnavailable) {
        return plan.status();
      }
      it = keys_.emplace(key, std::move(plan)).first;
    }
    if (!it->second.ok()) {
      return it->second.status();
    }
    return it->second->get();
  }

  Result<std::unique_ptr<PbKeyPlan>> MakePbKeyPlan(const WriterKey& key) const {
    std::string name;
    std::shared_ptr<const protobuf::ProtoSchema> file;
    FERRY_ASSIGN_OR_RETURN(std::shared_ptr<const MessageSchema> writer,
                           WriterMessage(key, &name, &file));
    auto plan = std::make_unique<PbKeyPlan>();
    std::vector<std::string_view> names;
    for (const FieldDef& f : writer->root().fields) {
      names.push_back(f.name);
    }
    std::vector<int> filled;
    SplitKeyColumns(*schema_, row_columns_, names, &filled, &plan->null_columns);
    if (!filled.empty()) {
      FERRY_ASSIGN_OR_RETURN(
          plan->reader,
          protobuf::ProtobufRowReader::Create(
              writer, *schema_, filled,
              {.enabled = true, .epoch_micros_per_unit = options_.epoch_micros_per_unit}));
    }
    return plan;
  }

  columnar::SchemaPtr schema_;
  DebeziumProtobufOptions options_;
  EnvelopeColumns envelope_;
  std::vector<int> row_columns_;
  std::vector<int> outputs_;
  std::vector<std::string_view> rows_[2];  // before, after: the occurrences of the message
  std::string merged_;
  // By writer type; node-stable (last_dropped_ points into a plan).
  std::map<WriterKey, Result<std::unique_ptr<PbEnvelopePlan>>> plans_;
  std::map<WriterKey, Result<std::unique_ptr<PbKeyPlan>>> keys_;
};

Result<std::unique_ptr<DebeziumProtobufDecoder>> DebeziumProtobufDecoder::Create(
    columnar::SchemaPtr schema, DebeziumProtobufOptions options) {
  if (options.schemas == nullptr) {
    return InvalidArgument(
        "Debezium Protobuf decoder: needs a schema registry (Confluent's ProtobufConverter "
        "frames every message with its writer schema's id)");
  }
  FERRY_ASSIGN_OR_RETURN(EnvelopeColumns envelope,
                         EnvelopeColumns::Create(*schema, options.envelope_columns));
  FERRY_ASSIGN_OR_RETURN(std::vector<std::string> names,
                         DebeziumRowColumns(*schema, options.columns, envelope));
  if (names.empty()) {
    return InvalidArgument(
        "Debezium Protobuf decoder: no row columns (every column is an envelope column)");
  }
  FERRY_ASSIGN_OR_RETURN(std::vector<int> row_columns,
                         OutputColumns(*schema, names, "Debezium Protobuf decoder"));
  std::vector<int> outputs = row_columns;
  outputs.insert(outputs.end(), envelope.columns().begin(), envelope.columns().end());
  std::sort(outputs.begin(), outputs.end());
  auto impl = std::make_unique<Impl>(std::move(schema), std::move(options), std::move(envelope),
                                     std::move(row_columns), std::move(outputs));
  return std::unique_ptr<DebeziumProtobufDecoder>(new DebeziumProtobufDecoder(std::move(impl)));
}

DebeziumProtobufDecoder::DebeziumProtobufDecoder(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {
  impl_->self_ = this;
}
DebeziumProtobufDecoder::~DebeziumProtobufDecoder() = default;

const std::vector<int>& DebeziumProtobufDecoder::output_columns() const {
  return impl_->output_columns();
}

Status DebeziumProtobufDecoder::Append(std::string_view payload, columnar::RecordBatch* batch) {
  return impl_->Append(payload, batch);
}

Status DebeziumProtobufDecoder::AppendTombstone(std::string_view key,
                                                columnar::RecordBatch* batch) {
  return impl_->AppendTombstone(key, batch);
}

}  // namespace ferry::transform
