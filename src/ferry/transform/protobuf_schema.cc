#include "ferry/transform/protobuf_schema.h"

#include <fmt/format.h>
#include <google/protobuf/compiler/parser.h>
#include <google/protobuf/descriptor.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <algorithm>
#include <array>
#include <functional>
#include <limits>
#include <map>
#include <set>

#include <google/protobuf/descriptor.pb.h>

#include "ferry/transform/field_path.h"

namespace ferry::transform::protobuf {

namespace gp = google::protobuf;

using columnar::DataType;

namespace {

constexpr int kMaxDepth = 64;  // nested message types in one column type

// Keeps the first error libprotobuf reports while building a file.
class PoolErrors final : public gp::DescriptorPool::ErrorCollector {
 public:
  void AddError(const std::string& filename, const std::string& element_name,
                const gp::Message* /*descriptor*/, ErrorLocation /*location*/,
                const std::string& message) override {
    if (first_.empty()) {
      first_ = fmt::format("{}: {}: {}", filename, element_name, message);
    }
  }
  void AddWarning(const std::string& /*filename*/, const std::string& /*element_name*/,
                  const gp::Message* /*descriptor*/, ErrorLocation /*location*/,
                  const std::string& /*message*/) override {}
  const std::string& first() const { return first_; }

 private:
  std::string first_;
};

// Keeps the first syntax error of a .proto text (line and column 1-based).
class SyntaxErrors final : public gp::io::ErrorCollector {
 public:
  void AddError(int line, gp::io::ColumnNumber column, const std::string& message) override {
    if (first_.empty()) {
      first_ = fmt::format("line {}, column {}: {}", line + 1, column + 1, message);
    }
  }
  const std::string& first() const { return first_; }

 private:
  std::string first_;
};

Kind KindOf(gp::FieldDescriptor::Type t) {
  using F = gp::FieldDescriptor;
  switch (t) {
    case F::TYPE_DOUBLE:
      return Kind::kDouble;
    case F::TYPE_FLOAT:
      return Kind::kFloat;
    case F::TYPE_INT64:
      return Kind::kInt64;
    case F::TYPE_UINT64:
      return Kind::kUInt64;
    case F::TYPE_INT32:
      return Kind::kInt32;
    case F::TYPE_FIXED64:
      return Kind::kFixed64;
    case F::TYPE_FIXED32:
      return Kind::kFixed32;
    case F::TYPE_BOOL:
      return Kind::kBool;
    case F::TYPE_STRING:
      return Kind::kString;
    case F::TYPE_GROUP:
      return Kind::kGroup;
    case F::TYPE_MESSAGE:
      return Kind::kMessage;
    case F::TYPE_BYTES:
      return Kind::kBytes;
    case F::TYPE_UINT32:
      return Kind::kUInt32;
    case F::TYPE_ENUM:
      return Kind::kEnum;
    case F::TYPE_SFIXED32:
      return Kind::kSFixed32;
    case F::TYPE_SFIXED64:
      return Kind::kSFixed64;
    case F::TYPE_SINT32:
      return Kind::kSInt32;
    case F::TYPE_SINT64:
      return Kind::kSInt64;
  }
  return Kind::kGroup;
}

WellKnown WellKnownOf(const std::string& name) {
  static constexpr std::array<std::string_view, 9> kWrappers = {
      "google.protobuf.DoubleValue", "google.protobuf.FloatValue",  "google.protobuf.Int64Value",
      "google.protobuf.UInt64Value", "google.protobuf.Int32Value",  "google.protobuf.UInt32Value",
      "google.protobuf.BoolValue",   "google.protobuf.StringValue", "google.protobuf.BytesValue"};
  if (name == "google.protobuf.Timestamp") {
    return WellKnown::kTimestamp;
  }
  if (name == "google.protobuf.Struct") {
    return WellKnown::kStruct;
  }
  if (name == "google.protobuf.Value") {
    return WellKnown::kValue;
  }
  if (name == "google.protobuf.ListValue") {
    return WellKnown::kListValue;
  }
  if (name == "google.protobuf.Any") {
    return WellKnown::kAny;
  }
  return std::find(kWrappers.begin(), kWrappers.end(), name) != kWrappers.end()
             ? WellKnown::kWrapper
             : WellKnown::kNone;
}

Result<ColumnType> ScalarType(Kind k) {
  switch (k) {
    case Kind::kInt32:
    case Kind::kSInt32:
    case Kind::kSFixed32:
      return ColumnType{DataType::Int32()};
    case Kind::kInt64:
    case Kind::kSInt64:
    case Kind::kSFixed64:
    case Kind::kUInt32:
    case Kind::kFixed32:
      return ColumnType{DataType::Int64()};
    case Kind::kUInt64:
    case Kind::kFixed64:
      return ColumnType{DataType::Decimal(20, 0)};
    case Kind::kFloat:
      return ColumnType{DataType::Float32()};
    case Kind::kDouble:
      return ColumnType{DataType::Float64()};
    case Kind::kBool:
      return ColumnType{DataType::Boolean()};
    case Kind::kString:
    case Kind::kEnum:
      return ColumnType{DataType::String()};
    case Kind::kBytes:
      return ColumnType{DataType::Binary()};
    default:
      break;
  }
  return InvalidArgument("not a scalar");
}

Result<ColumnType> ValueType(const MessageSchema& schema, const FieldDef& field,
                             std::string_view path, std::vector<int32_t>* stack);

Result<columnar::DataTypePtr> StructOf(const MessageSchema& schema, int32_t message,
                                       std::string_view path, std::vector<int32_t>* stack) {
  const MessageDef& m = schema.messages[static_cast<size_t>(message)];
  if (std::find(stack->begin(), stack->end(), message) != stack->end()) {
    return InvalidArgument(
        "Protobuf: field '{}': the message \"{}\" contains itself: a recursive message has no "
        "column type",
        path, m.full_name);
  }
  if (stack->size() >= static_cast<size_t>(kMaxDepth)) {
    return InvalidArgument("Protobuf: field '{}': nested deeper than {} messages", path, kMaxDepth);
  }
  stack->push_back(message);
  std::vector<columnar::Field> fields;
  for (const FieldDef& f : m.fields) {
    if (f.kind == Kind::kGroup) {
      continue;
    }
    std::string child = JoinPath(path, f.name);
    FERRY_ASSIGN_OR_RETURN(ColumnType t, ValueType(schema, f, child, stack));
    if (f.repeated &&
        !(f.kind == Kind::kMessage && schema.messages[static_cast<size_t>(f.type)].map_entry)) {
      t.type = DataType::List(t.type, true);
    }
    fields.push_back({.name = f.name, .type = t.type, .nullable = true});
  }
  stack->pop_back();
  return DataType::Struct(std::move(fields));
}

// The type of one value of `field` (an element when repeated; a MAP for a map field).
Result<ColumnType> ValueType(const MessageSchema& schema, const FieldDef& field,
                             std::string_view path, std::vector<int32_t>* stack) {
  if (field.kind != Kind::kMessage) {
    return ScalarType(field.kind);
  }
  const MessageDef& m = schema.messages[static_cast<size_t>(field.type)];
  switch (m.well_known) {
    case WellKnown::kTimestamp:
      return ColumnType{DataType::Timestamp()};
    case WellKnown::kWrapper:
      return ScalarType(m.fields.front().kind);
    case WellKnown::kStruct:
    case WellKnown::kValue:
    case WellKnown::kListValue:
    case WellKnown::kAny:
      return ColumnType{DataType::String()};
    case WellKnown::kNone:
      break;
  }
  if (m.map_entry) {
    FERRY_ASSIGN_OR_RETURN(ColumnType key, ScalarType(m.fields[0].kind));
    FERRY_ASSIGN_OR_RETURN(ColumnType value,
                           ValueType(schema, m.fields[1], JoinPath(path, "value"), stack));
    return ColumnType{DataType::Map(key.type, value.type, true)};
  }
  FERRY_ASSIGN_OR_RETURN(columnar::DataTypePtr s, StructOf(schema, field.type, path, stack));
  return ColumnType{s};
}

// Appends the message or enum `d` to `out` unless there, returning its index.
template <typename D, typename Defs>
int32_t IndexOf(const D* d, std::map<const D*, int32_t>* seen, Defs* out, bool* added) {
  auto it = seen->find(d);
  *added = it == seen->end();
  if (!*added) {
    return it->second;
  }
  auto index = static_cast<int32_t>(out->size());
  seen->emplace(d, index);
  out->emplace_back();
  return index;
}

}  // namespace

std::shared_ptr<const MessageSchema> MessageSchema::FromDescriptor(const gp::Descriptor& message) {
  auto schema = std::make_shared<MessageSchema>();
  std::map<const gp::Descriptor*, int32_t> messages;
  std::map<const gp::EnumDescriptor*, int32_t> enums;
  std::vector<const gp::Descriptor*> todo = {&message};
  bool added = false;
  IndexOf(&message, &messages, &schema->messages, &added);
  for (size_t next = 0; next < todo.size(); ++next) {
    const gp::Descriptor* d = todo[next];
    MessageDef def;
    def.full_name = d->full_name();
    def.map_entry = d->options().map_entry();
    def.well_known = WellKnownOf(def.full_name);
    for (int i = 0; i < d->field_count(); ++i) {
      const gp::FieldDescriptor* f = d->field(i);
      FieldDef field{.name = f->name(),
                     .number = f->number(),
                     .kind = KindOf(f->type()),
                     .repeated = f->is_repeated()};
      if (f->containing_oneof() != nullptr) {
        field.oneof = f->containing_oneof()->index();
      }
      if (field.kind == Kind::kMessage) {
        field.type = IndexOf(f->message_type(), &messages, &schema->messages, &added);
        if (added) {
          todo.push_back(f->message_type());
        }
      } else if (field.kind == Kind::kEnum) {
        const gp::EnumDescriptor* e = f->enum_type();
        field.type = IndexOf(e, &enums, &schema->enums, &added);
        if (added) {
          EnumDef& ed = schema->enums[static_cast<size_t>(field.type)];
          ed.full_name = e->full_name();
          for (int v = 0; v < e->value_count(); ++v) {
            ed.values.emplace_back(e->value(v)->number(), e->value(v)->name());
          }
          // The first name of each number (allow_alias).
          std::stable_sort(ed.values.begin(), ed.values.end(),
                           [](const auto& a, const auto& b) { return a.first < b.first; });
          ed.values.erase(
              std::unique(ed.values.begin(), ed.values.end(),
                          [](const auto& a, const auto& b) { return a.first == b.first; }),
              ed.values.end());
        }
      }
      def.fields.push_back(std::move(field));
    }
    schema->messages[static_cast<size_t>(messages.at(d))] = std::move(def);
  }
  return schema;
}

ProtoSchema::ProtoSchema() : pool_(std::make_unique<gp::DescriptorPool>()) {}
ProtoSchema::~ProtoSchema() = default;

Result<std::shared_ptr<const ProtoSchema>> ProtoSchema::FromDescriptorSet(std::string_view bytes,
                                                                          std::string_view origin) {
  gp::FileDescriptorSet set;
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()) ||
      !set.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return InvalidArgument("{}: not a FileDescriptorSet (protoc --descriptor_set_out)", origin);
  }
  if (set.file_size() == 0) {
    return InvalidArgument("{}: the FileDescriptorSet holds no file", origin);
  }
  std::shared_ptr<ProtoSchema> schema(new ProtoSchema());
  for (const gp::FileDescriptorProto& file : set.file()) {
    PoolErrors errors;
    const gp::FileDescriptor* built = schema->pool_->BuildFileCollectingErrors(file, &errors);
    if (built == nullptr) {
      return InvalidArgument("{}: {} (give protoc --include_imports)", origin, errors.first());
    }
    schema->main_ = built;
  }
  return std::shared_ptr<const ProtoSchema>(std::move(schema));
}

Result<std::shared_ptr<const ProtoSchema>> ProtoSchema::FromProtoFiles(
    const std::vector<std::pair<std::string, std::string>>& files) {
  if (files.empty()) {
    return InvalidArgument("Protobuf schema: no .proto text");
  }
  std::vector<gp::FileDescriptorProto> parsed(files.size());
  std::set<std::string> names;
  for (size_t i = 0; i < files.size(); ++i) {
    const auto& [name, text] = files[i];
    if (text.size() > static_cast<size_t>(std::numeric_limits<int>::max())) {
      return InvalidArgument("Protobuf schema {}: too large", name);
    }
    gp::io::ArrayInputStream input(text.data(), static_cast<int>(text.size()));
    SyntaxErrors errors;
    gp::io::Tokenizer tokenizer(&input, &errors);
    gp::compiler::Parser parser;
    parser.RecordErrorsTo(&errors);
    if (!parser.Parse(&tokenizer, &parsed[i]) || !errors.first().empty()) {
      return InvalidArgument("Protobuf schema {}: {}", name, errors.first());
    }
    parsed[i].set_name(name);
    names.insert(name);
  }
  std::shared_ptr<ProtoSchema> schema(new ProtoSchema());
  // The well-known types' files, when imported and not given (their own imports first).
  std::set<std::string> added;
  std::function<Status(const std::string&)> add_own = [&](const std::string& dep) -> Status {
    if (names.count(dep) != 0 || added.count(dep) != 0 || dep.rfind("google/protobuf/", 0) != 0) {
      return Status::OK();
    }
    const gp::FileDescriptor* own = gp::DescriptorPool::generated_pool()->FindFileByName(dep);
    if (own == nullptr) {
      return Status::OK();  // BuildFile names it below
    }
    added.insert(dep);
    for (int d = 0; d < own->dependency_count(); ++d) {
      FERRY_RETURN_IF_ERROR(add_own(own->dependency(d)->name()));
    }
    gp::FileDescriptorProto proto;
    own->CopyTo(&proto);
    PoolErrors errors;
    if (schema->pool_->BuildFileCollectingErrors(proto, &errors) == nullptr) {
      return InvalidArgument("Protobuf schema: {}", errors.first());
    }
    return Status::OK();
  };
  for (const auto& file : parsed) {
    for (const std::string& dep : file.dependency()) {
      FERRY_RETURN_IF_ERROR(add_own(dep));
    }
  }
  for (const auto& file : parsed) {
    PoolErrors errors;
    const gp::FileDescriptor* built = schema->pool_->BuildFileCollectingErrors(file, &errors);
    if (built == nullptr) {
      return InvalidArgument("Protobuf schema {}", errors.first());
    }
    schema->main_ = built;
  }
  return std::shared_ptr<const ProtoSchema>(std::move(schema));
}

Result<std::shared_ptr<const MessageSchema>> ProtoSchema::Message(
    std::string_view full_name) const {
  std::string name(full_name);
  if (!name.empty() && name.front() == '.') {
    name.erase(0, 1);
  }
  const gp::Descriptor* d = pool_->FindMessageTypeByName(name);
  if (d == nullptr) {
    return InvalidArgument("Protobuf schema: no message \"{}\"", name);
  }
  return MessageSchema::FromDescriptor(*d);
}

Result<std::shared_ptr<const MessageSchema>> ProtoSchema::MessageAt(
    const std::vector<int32_t>& indexes) const {
  std::vector<int32_t> path = indexes.empty() ? std::vector<int32_t>{0} : indexes;
  const gp::Descriptor* d = nullptr;
  for (size_t i = 0; i < path.size(); ++i) {
    const int count = i == 0 ? main_->message_type_count() : d->nested_type_count();
    if (path[i] < 0 || path[i] >= count) {
      return InvalidArgument("Protobuf schema {}: no message at index {} (depth {}; {} there)",
                             main_->name(), path[i], i, count);
    }
    d = i == 0 ? main_->message_type(path[i]) : d->nested_type(path[i]);
  }
  return MessageSchema::FromDescriptor(*d);
}

std::string ProtoSchema::FirstMessageName() const {
  return main_->message_type_count() == 0 ? std::string() : main_->message_type(0)->full_name();
}

Result<ColumnType> FieldColumnType(const MessageSchema& schema, const FieldDef& field,
                                   std::string_view path) {
  std::vector<int32_t> stack = {0};
  FERRY_ASSIGN_OR_RETURN(ColumnType t, ValueType(schema, field, path, &stack));
  if (field.repeated && !(field.kind == Kind::kMessage &&
                          schema.messages[static_cast<size_t>(field.type)].map_entry)) {
    t.type = DataType::List(t.type, true);
  }
  return t;
}

Result<columnar::DataTypePtr> ToStructType(const MessageSchema& schema) {
  std::vector<int32_t> stack;
  return StructOf(schema, 0, "", &stack);
}

Result<columnar::SchemaPtr> ToTableSchema(const MessageSchema& schema) {
  if (schema.root().well_known != WellKnown::kNone) {
    return InvalidArgument("Protobuf schema: {} cannot be a table's row", schema.root().full_name);
  }
  FERRY_ASSIGN_OR_RETURN(columnar::DataTypePtr s, ToStructType(schema));
  return std::make_shared<const columnar::Schema>(s->fields());
}

}  // namespace ferry::transform::protobuf
