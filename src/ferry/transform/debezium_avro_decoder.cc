#include "ferry/transform/debezium_avro_decoder.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "ferry/base/varint.h"
#include "ferry/transform/avro_reader.h"
#include "ferry/transform/confluent_wire.h"
#include "ferry/transform/debezium_envelope.h"
#include "ferry/transform/field_path.h"

namespace ferry::transform {

namespace {

using avro::AvroType;
using avro::Node;

Status Short(std::string_view path, std::string_view what) {
  return InvalidArgument("Avro datum: field '{}': {}", path, what);
}

Status ReadLong(std::string_view* in, std::string_view path, int64_t* v) {
  const auto* begin = reinterpret_cast<const uint8_t*>(in->data());
  const uint8_t* p = begin;
  uint64_t raw = 0;
  if (!DecodeVarint(&p, begin + in->size(), &raw)) {
    return Short(path, "a truncated or over-long varint");
  }
  in->remove_prefix(static_cast<size_t>(p - begin));
  *v = ZigZagDecode(raw);
  return Status::OK();
}

// The branch a union value takes.
Status ReadBranch(const Node& u, std::string_view* in, std::string_view path, const Node** branch) {
  int64_t b = 0;
  FERRY_RETURN_IF_ERROR(ReadLong(in, path, &b));
  if (b < 0 || static_cast<size_t>(b) >= u.branches.size()) {
    return Short(path, fmt::format("union branch {} of {}", b, u.branches.size()));
  }
  *branch = u.branches[static_cast<size_t>(b)];
  return Status::OK();
}

// One envelope value: primitives as debezium-json reads them; a record, array, map or fixed is
// skipped and reads as null (its JSON text is not at hand).
Status ReadEnvelopeValue(const Node& type, std::string_view* in, const std::string& path,
                         EnvelopeValue* out) {
  const Node* t = &type;
  if (t->type == AvroType::kUnion) {
    FERRY_RETURN_IF_ERROR(ReadBranch(*t, in, path, &t));
  }
  switch (t->type) {
    case AvroType::kNull:
      out->kind = EnvelopeValue::kNull;
      return Status::OK();
    case AvroType::kBoolean:
      if (in->empty()) {
        return Short(path, "the datum ends inside a boolean");
      }
      out->kind = EnvelopeValue::kBool;
      out->text = in->front() != 0 ? "true" : "false";
      in->remove_prefix(1);
      return Status::OK();
    case AvroType::kInt:
    case AvroType::kLong: {
      int64_t v = 0;
      FERRY_RETURN_IF_ERROR(ReadLong(in, path, &v));
      out->kind = EnvelopeValue::kNumber;
      out->text = fmt::format("{}", v);
      return Status::OK();
    }
    case AvroType::kFloat:
    case AvroType::kDouble: {
      const size_t width = t->type == AvroType::kFloat ? 4 : 8;
      if (in->size() < width) {
        return Short(path, "the datum ends inside a number");
      }
      double d = 0;
      if (width == 4) {
        float f = 0;
        std::memcpy(&f, in->data(), 4);
        d = f;
      } else {
        std::memcpy(&d, in->data(), 8);
      }
      in->remove_prefix(width);
      out->kind = EnvelopeValue::kNumber;
      out->text = fmt::format("{}", d);
      return Status::OK();
    }
    case AvroType::kString:
    case AvroType::kBytes: {
      int64_t n = 0;
      FERRY_RETURN_IF_ERROR(ReadLong(in, path, &n));
      if (n < 0 || static_cast<uint64_t>(n) > in->size()) {
        return Short(path, fmt::format("a length of {} with {} bytes left", n, in->size()));
      }
      out->kind = EnvelopeValue::kString;
      out->text.assign(in->substr(0, static_cast<size_t>(n)));
      in->remove_prefix(static_cast<size_t>(n));
      return Status::OK();
    }
    case AvroType::kEnum: {
      int64_t i = 0;
      FERRY_RETURN_IF_ERROR(ReadLong(in, path, &i));
      if (i < 0 || static_cast<size_t>(i) >= t->symbols.size()) {
        return Short(path, fmt::format("enum index {} of {} symbols", i, t->symbols.size()));
      }
      out->kind = EnvelopeValue::kString;
      out->text = t->symbols[static_cast<size_t>(i)];
      return Status::OK();
    }
    default:
      FERRY_RETURN_IF_ERROR(avro::SkipDatum(*t, in, path));
      out->kind = EnvelopeValue::kNull;
      return Status::OK();
  }
}

// The record of a row or scope field: the field's type when it is a record, or the record of a
// union of null and one record; else null.
const Node* RecordOf(const Node& type) {
  if (type.type == AvroType::kRecord) {
    return &type;
  }
  if (type.type != AvroType::kUnion) {
    return nullptr;
  }
  const Node* record = nullptr;
  for (const Node* b : type.branches) {
    if (b->type == AvroType::kRecord && record == nullptr) {
      record = b;
    } else if (b->type != AvroType::kNull) {
      return nullptr;
    }
  }
  return record;
}

// How one field of the envelope record is read.
struct Step {
  enum Kind : uint8_t { kSkip, kBefore, kAfter, kOp, kTop, kScope };
  Kind kind = kSkip;
  const Node* type = nullptr;
  std::string name;
  EnvelopeScope scope = EnvelopeScope::kTop;
};

// What a value writer schema is read with: made once per schema id.
struct EnvelopePlan {
  std::vector<Step> steps;
  std::unique_ptr<avro::AvroRowReader> after;
  std::unique_ptr<avro::AvroRowReader> before;  // null when `after` reads before's record too
  std::vector<FieldObservation> new_fields;     // when observing
  DroppedFields dropped;

  const avro::AvroRowReader* reader(ChangeOp op) const {
    return op == ChangeOp::kDelete && before != nullptr ? before.get() : after.get();
  }
};

// What a key writer schema is read with: the row columns named like its fields.
struct KeyPlan {
  std::unique_ptr<avro::AvroRowReader> reader;  // null: no key field names a row column
  std::vector<int> null_columns;                // row columns the key does not fill
};

}  // namespace

class DebeziumAvroDecoder::Impl {
 public:
  Impl(columnar::SchemaPtr schema, DebeziumAvroOptions options, EnvelopeColumns envelope,
       std::vector<int> row_columns, std::vector<int> outputs)
      : schema_(std::move(schema)),
        options_(std::move(options)),
        envelope_(std::move(envelope)),
        row_columns_(std::move(row_columns)),
        outputs_(std::move(outputs)) {}

  const std::vector<int>& output_columns() const { return outputs_; }

  Status Append(std::string_view payload, columnar::RecordBatch* batch) {
    self_->last_dropped_ = nullptr;
    FERRY_ASSIGN_OR_RETURN(ConfluentFrame frame, ParseConfluentFrame(payload, false));
    Result<const EnvelopePlan*> plan = PlanFor(frame.schema_id);
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
    Result<ConfluentFrame> frame = ParseConfluentFrame(key, false);
    if (!frame.ok()) {
      return InvalidArgument("key: {}", frame.status().message());
    }
    Result<const KeyPlan*> plan = KeyPlanFor(frame->schema_id);
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

  DebeziumAvroDecoder* self_ = nullptr;

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

  // Walks the envelope datum, then decodes the row the change needs and the envelope columns.
  Status Decode(const EnvelopePlan& plan, std::string_view datum, columnar::RecordBatch* batch) {
    envelope_.Clear();
    EnvelopeValue op;
    EnvelopeValue::Kind kinds[2] = {EnvelopeValue::kAbsent, EnvelopeValue::kAbsent};
    std::string_view rows[2];  // before, after: where each row record starts
    std::string_view in = datum;
    for (const Step& s : plan.steps) {
      switch (s.kind) {
        case Step::kSkip:
          FERRY_RETURN_IF_ERROR(avro::SkipDatum(*s.type, &in, s.name));
          break;
        case Step::kBefore:
        case Step::kAfter: {
          const int i = s.kind == Step::kAfter ? 1 : 0;
          const Node* t = s.type;
          if (t->type == AvroType::kUnion) {
            FERRY_RETURN_IF_ERROR(ReadBranch(*t, &in, s.name, &t));
          }
          if (t->type == AvroType::kNull) {
            kinds[i] = EnvelopeValue::kNull;
            break;
          }
          kinds[i] = EnvelopeValue::kObject;
          rows[i] = in;
          FERRY_RETURN_IF_ERROR(avro::SkipDatum(*t, &in, s.name));
          break;
        }
        case Step::kOp:
          FERRY_RETURN_IF_ERROR(ReadEnvelopeValue(*s.type, &in, s.name, &op));
          if (EnvelopeValue* slot = envelope_.Find(EnvelopeScope::kTop, "op")) {
            *slot = op;
          }
          break;
        case Step::kTop:
          FERRY_RETURN_IF_ERROR(
              ReadEnvelopeValue(*s.type, &in, s.name, envelope_.Find(EnvelopeScope::kTop, s.name)));
          break;
        case Step::kScope:
          FERRY_RETURN_IF_ERROR(ReadScope(s, &in));
          break;
      }
    }
    if (!in.empty()) {
      return InvalidArgument("Avro datum: {} bytes left over after the envelope ({} bytes)",
                             in.size(), datum.size());
    }
    FERRY_ASSIGN_OR_RETURN(ChangeOp change, ChangeOpOf(op));
    const int i = change == ChangeOp::kDelete ? 0 : 1;
    FERRY_RETURN_IF_ERROR(CheckRowPresent(kinds[i], change, op.text));
    const int64_t base = batch->column(outputs_.front()).length();
    std::string_view row = rows[i];
    Status st = plan.reader(change)->AppendPrefix(&row, batch);
    if (!st.ok()) {
      return RowFieldError(RowFieldOf(change), "Avro datum: ", st);
    }
    st = envelope_.Append(batch);
    if (!st.ok()) {
      Truncate(batch, base);
      return st;
    }
    self_->last_op_ = change;
    return Status::OK();
  }

  // The fields of `source` or `transaction` that envelope columns name; the rest skipped.
  Status ReadScope(const Step& s, std::string_view* in) {
    const Node* t = s.type;
    if (t->type == AvroType::kUnion) {
      FERRY_RETURN_IF_ERROR(ReadBranch(*t, in, s.name, &t));
    }
    if (t->type != AvroType::kRecord) {
      return avro::SkipDatum(*t, in, s.name);  // null: every field absent
    }
    for (const avro::FieldDef& f : t->fields) {
      std::string path = JoinPath(s.name, f.name);
      if (EnvelopeValue* slot = envelope_.Find(s.scope, f.name)) {
        FERRY_RETURN_IF_ERROR(ReadEnvelopeValue(*f.type, in, path, slot));
      } else {
        FERRY_RETURN_IF_ERROR(avro::SkipDatum(*f.type, in, path));
      }
    }
    return Status::OK();
  }

  Result<const EnvelopePlan*> PlanFor(int32_t id) {
    auto it = plans_.find(id);
    if (it == plans_.end()) {
      Result<std::shared_ptr<const avro::Schema>> schema = options_.schemas->Get(id);
      if (!schema.ok() && schema.status().code() == StatusCode::kUnavailable) {
        return schema.status();  // not kept: the next message asks again
      }
      it = plans_.emplace(id, MakePlan(schema)).first;
    }
    if (!it->second.ok()) {
      return it->second.status();
    }
    return it->second->get();
  }

  static Status Unknown(const Status& st) {
    return st.code() == StatusCode::kNotFound
               ? InvalidArgument("unknown to the schema registry ({})", st.message())
               : InvalidArgument("{}", st.message());
  }

  Result<std::unique_ptr<EnvelopePlan>> MakePlan(
      const Result<std::shared_ptr<const avro::Schema>>& schema) const {
    if (!schema.ok()) {
      return Unknown(schema.status());
    }
    const Node& root = (*schema)->root();
    if (root.type != AvroType::kRecord) {
      return InvalidArgument(
          "field 'op': missing (not a Debezium change envelope: the writer schema is {}, not a "
          "record)",
          avro::AvroTypeName(root.type));
    }
    auto plan = std::make_unique<EnvelopePlan>();
    const Node* records[2] = {nullptr, nullptr};  // before, after
    bool has_op = false;
    for (const avro::FieldDef& f : root.fields) {
      Step step{.type = f.type, .name = f.name};
      if (f.name == "before" || f.name == "after") {
        const int i = f.name == "after" ? 1 : 0;
        records[i] = RecordOf(*f.type);
        if (records[i] == nullptr) {
          return InvalidArgument(
              "field '{}': the writer's type is neither a record nor a union of null and a "
              "record (not a Debezium change envelope)",
              f.name);
        }
        step.kind = i == 1 ? Step::kAfter : Step::kBefore;
      } else if (f.name == "op") {
        has_op = true;
        step.kind = Step::kOp;
      } else if ((f.name == "source" || f.name == "transaction")) {
        step.scope = f.name == "source" ? EnvelopeScope::kSource : EnvelopeScope::kTransaction;
        step.kind = envelope_.wants(step.scope) && RecordOf(*f.type) != nullptr ? Step::kScope
                                                                                : Step::kSkip;
      } else if (envelope_.wants(EnvelopeScope::kTop, f.name)) {
        step.kind = Step::kTop;
      }
      plan->steps.push_back(std::move(step));
    }
    if (!has_op) {
      return InvalidArgument(
          "field 'op': missing (not a Debezium change envelope: the writer's record \"{}\" has "
          "no field op)",
          root.name);
    }
    for (int i : {1, 0}) {
      if (records[i] == nullptr || (i == 0 && records[0] == records[1] && plan->after)) {
        continue;
      }
      auto made =
          avro::AvroRowReader::CreateForRecord(*schema, *records[i], *schema_, row_columns_);
      if (!made.ok()) {
        return InvalidArgument("field '{}': {}", i == 1 ? "after" : "before",
                               made.status().message());
      }
      if (i == 1 || plan->after == nullptr) {
        Skipped(**made, plan.get());
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

  // The row record's fields no column takes: observations (with a column type) and drops.
  void Skipped(const avro::AvroRowReader& reader, EnvelopePlan* plan) const {
    for (const avro::UnmatchedField& field : reader.unmatched_fields()) {
      std::string path = JoinPath(field.path);
      plan->dropped.fields.push_back(path);
      if (!options_.observe) {
        continue;
      }
      if (Result<avro::ColumnType> type = avro::ToColumnType(*field.type, path); type.ok()) {
        plan->new_fields.push_back({.path = field.path, .type = type->type, .missing = true});
      }
    }
  }

  Result<const KeyPlan*> KeyPlanFor(int32_t id) {
    auto it = keys_.find(id);
    if (it == keys_.end()) {
      Result<std::shared_ptr<const avro::Schema>> schema = options_.schemas->Get(id);
      if (!schema.ok() && schema.status().code() == StatusCode::kUnavailable) {
        return schema.status();
      }
      it = keys_.emplace(id, MakeKeyPlan(schema)).first;
    }
    if (!it->second.ok()) {
      return it->second.status();
    }
    return it->second->get();
  }

  Result<std::unique_ptr<KeyPlan>> MakeKeyPlan(
      const Result<std::shared_ptr<const avro::Schema>>& schema) const {
    if (!schema.ok()) {
      return Unknown(schema.status());
    }
    const Node& root = (*schema)->root();
    if (root.type != AvroType::kRecord) {
      return InvalidArgument("the key's writer schema is {}, not a record (Debezium's Key)",
                             avro::AvroTypeName(root.type));
    }
    auto plan = std::make_unique<KeyPlan>();
    std::vector<std::string_view> names;
    for (const avro::FieldDef& f : root.fields) {
      names.push_back(f.name);
    }
    std::vector<int> filled;
    SplitKeyColumns(*schema_, row_columns_, names, &filled, &plan->null_columns);
    if (!filled.empty()) {
      FERRY_ASSIGN_OR_RETURN(plan->reader,
                             avro::AvroRowReader::CreateForRecord(*schema, root, *schema_, filled));
    }
    return plan;
  }

  columnar::SchemaPtr schema_;
  DebeziumAvroOptions options_;
  EnvelopeColumns envelope_;
  std::vector<int> row_columns_;
  std::vector<int> outputs_;
  // By schema id; node-stable (last_dropped_ points into a plan).
  std::map<int32_t, Result<std::unique_ptr<EnvelopePlan>>> plans_;
  std::map<int32_t, Result<std::unique_ptr<KeyPlan>>> keys_;
};

Result<std::unique_ptr<DebeziumAvroDecoder>> DebeziumAvroDecoder::Create(
    columnar::SchemaPtr schema, DebeziumAvroOptions options) {
  if (options.schemas == nullptr) {
    return InvalidArgument(
        "Debezium Avro decoder: needs a schema registry (Debezium's AvroConverter frames every "
        "message with its writer schema's id)");
  }
  FERRY_ASSIGN_OR_RETURN(EnvelopeColumns envelope,
                         EnvelopeColumns::Create(*schema, options.envelope_columns));
  FERRY_ASSIGN_OR_RETURN(std::vector<std::string> names,
                         DebeziumRowColumns(*schema, options.columns, envelope));
  if (names.empty()) {
    return InvalidArgument(
        "Debezium Avro decoder: no row columns (every column is an envelope "
        "column)");
  }
  FERRY_ASSIGN_OR_RETURN(std::vector<int> row_columns,
                         OutputColumns(*schema, names, "Debezium Avro decoder"));
  std::vector<int> outputs = row_columns;
  outputs.insert(outputs.end(), envelope.columns().begin(), envelope.columns().end());
  std::sort(outputs.begin(), outputs.end());
  auto impl = std::make_unique<Impl>(std::move(schema), std::move(options), std::move(envelope),
                                     std::move(row_columns), std::move(outputs));
  return std::unique_ptr<DebeziumAvroDecoder>(new DebeziumAvroDecoder(std::move(impl)));
}

DebeziumAvroDecoder::DebeziumAvroDecoder(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {
  impl_->self_ = this;
}
DebeziumAvroDecoder::~DebeziumAvroDecoder() = default;

const std::vector<int>& DebeziumAvroDecoder::output_columns() const {
  return impl_->output_columns();
}

Status DebeziumAvroDecoder::Append(std::string_view payload, columnar::RecordBatch* batch) {
  return impl_->Append(payload, batch);
}

Status DebeziumAvroDecoder::AppendTombstone(std::string_view key, columnar::RecordBatch* batch) {
  return impl_->AppendTombstone(key, batch);
}

}  // namespace ferry::transform
