#include "ferry/pipeline/routing_fields.h"

#include <string>
#include <utility>

#include "ferry/columnar/column.h"

namespace ferry::pipeline {

namespace {

// The fields of `paths` (relative to one struct level), each leaf a STRING, nested by '.'.
std::vector<columnar::Field> StringFields(const std::vector<std::string_view>& paths) {
  std::vector<std::string_view> names;  // in order of first use
  std::vector<std::vector<std::string_view>> rests;
  for (std::string_view path : paths) {
    size_t dot = path.find('.');
    std::string_view name = path.substr(0, dot);
    size_t i = 0;
    while (i < names.size() && names[i] != name) {
      ++i;
    }
    if (i == names.size()) {
      names.push_back(name);
      rests.emplace_back();
    }
    if (dot != std::string_view::npos) {
      rests[i].push_back(path.substr(dot + 1));
    }
  }
  std::vector<columnar::Field> fields;
  for (size_t i = 0; i < names.size(); ++i) {
    // A name used both as a leaf and as a struct ("a" and "a.b") is a struct: "a" alone then
    // has no text (Text returns nullopt for a struct).
    fields.push_back({.name = std::string(names[i]),
                      .type = rests[i].empty()
                                  ? columnar::DataType::String()
                                  : columnar::DataType::Struct(StringFields(rests[i]))});
  }
  return fields;
}

}  // namespace

columnar::SchemaPtr RoutingFields::StringSchema(const std::vector<std::string>& paths) {
  std::vector<std::string_view> views(paths.begin(), paths.end());
  return std::make_shared<const columnar::Schema>(StringFields(views));
}

Status RoutingFields::Decode(std::span<const source::Message> messages) {
  batch_ = columnar::RecordBatch::MakeEmpty(schema_);
  rows_.assign(messages.size(), -1);
  errors_.assign(messages.size(), std::string());
  for (size_t i = 0; i < messages.size(); ++i) {
    Status st = decoder_->Append(messages[i].payload, &batch_);
    if (st.ok()) {
      rows_[i] = batch_.num_rows() - 1;
    } else if (st.code() == StatusCode::kUnavailable) {
      return st;
    } else {
      errors_[i] = st.message();
    }
  }
  return Status::OK();
}

std::optional<std::string> RoutingFields::Text(size_t message, std::string_view path) const {
  int64_t row = rows_[message];
  if (row < 0) {
    return std::nullopt;
  }
  const columnar::Column* column = nullptr;
  const columnar::DataType* type = nullptr;
  std::string_view rest = path;
  while (true) {
    size_t dot = rest.find('.');
    std::string_view name = rest.substr(0, dot);
    if (column == nullptr) {
      std::optional<int> index = schema_->FieldIndex(name);
      if (!index) {
        return std::nullopt;
      }
      column = &batch_.column(*index);
    } else {
      std::optional<size_t> index = type->FieldIndex(name);
      if (!index) {
        return std::nullopt;
      }
      column = &column->As<columnar::StructColumn>()->child(static_cast<int>(*index));
    }
    type = column->type().get();
    if (column->IsNull(row)) {
      return std::nullopt;
    }
    if (dot == std::string_view::npos) {
      break;
    }
    if (type->id() != columnar::TypeId::kStruct) {
      return std::nullopt;
    }
    rest.remove_prefix(dot + 1);
  }
  switch (type->id()) {
    case columnar::TypeId::kString:
      return std::string(column->As<columnar::BinaryColumn>()->Value(row));
    case columnar::TypeId::kBoolean:
      return column->As<columnar::BooleanColumn>()->Value(row) != 0 ? "true" : "false";
    case columnar::TypeId::kInt8:
      return std::to_string(column->As<columnar::Int8Column>()->Value(row));
    case columnar::TypeId::kInt16:
      return std::to_string(column->As<columnar::Int16Column>()->Value(row));
    case columnar::TypeId::kInt32:
      return std::to_string(column->As<columnar::Int32Column>()->Value(row));
    case columnar::TypeId::kInt64:
      return std::to_string(column->As<columnar::Int64Column>()->Value(row));
    case columnar::TypeId::kUInt8:
      return std::to_string(column->As<columnar::UInt8Column>()->Value(row));
    case columnar::TypeId::kUInt16:
      return std::to_string(column->As<columnar::UInt16Column>()->Value(row));
    case columnar::TypeId::kUInt32:
      return std::to_string(column->As<columnar::UInt32Column>()->Value(row));
    case columnar::TypeId::kUInt64:
      return std::to_string(column->As<columnar::UInt64Column>()->Value(row));
    default:
      return std::nullopt;
  }
}

}  // namespace ferry::pipeline
