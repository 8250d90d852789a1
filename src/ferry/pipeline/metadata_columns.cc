#include "ferry/pipeline/metadata_columns.h"

#include <array>
#include <utility>

#include "ferry/columnar/column.h"

namespace ferry::pipeline {
namespace {

using columnar::DataType;
using columnar::DataTypePtr;
using columnar::TypeId;

constexpr std::array<std::pair<MetadataKind, std::string_view>, 10> kNames = {{
    {MetadataKind::kKey, "key"},
    {MetadataKind::kTopic, "topic"},
    {MetadataKind::kPartition, "partition"},
    {MetadataKind::kOffset, "offset"},
    {MetadataKind::kSequence, "sequence"},
    {MetadataKind::kTimestamp, "timestamp"},
    {MetadataKind::kHeaders, "headers"},
    {MetadataKind::kSubject, "subject"},
    {MetadataKind::kMsgId, "msg_id"},
    {MetadataKind::kStream, "stream"},
}};

DataTypePtr DefaultType(MetadataKind kind) {
  switch (kind) {
    case MetadataKind::kPartition:
      return DataType::Int32();
    case MetadataKind::kOffset:
    case MetadataKind::kSequence:
      return DataType::Int64();
    case MetadataKind::kTimestamp:
      return DataType::Timestamp();
    case MetadataKind::kHeaders:
      return DataType::Map(DataType::String(), DataType::String());
    default:
      return DataType::String();
  }
}

bool Fits(MetadataKind kind, const DataType& type) {
  TypeId id = type.id();
  switch (kind) {
    case MetadataKind::kKey:
      return id == TypeId::kString || id == TypeId::kBinary;
    case MetadataKind::kPartition:
      return id == TypeId::kInt32 || id == TypeId::kInt64;
    case MetadataKind::kOffset:
    case MetadataKind::kSequence:
      return id == TypeId::kInt64;
    case MetadataKind::kTimestamp:
      return id == TypeId::kTimestamp || id == TypeId::kInt64;
    case MetadataKind::kHeaders:
      return id == TypeId::kMap && type.key().type->id() == TypeId::kString &&
             (type.value().type->id() == TypeId::kString ||
              type.value().type->id() == TypeId::kBinary);
    default:
      return id == TypeId::kString;
  }
}

void AppendText(columnar::Column* column, std::string_view text, bool null_if_empty) {
  auto* c = column->As<columnar::BinaryColumn>();
  if (null_if_empty && text.empty()) {
    c->AppendNull();
  } else {
    c->Append(text);
  }
}

void AppendInt(columnar::Column* column, TypeId type, int64_t value) {
  if (type == TypeId::kInt32) {
    column->As<columnar::Int32Column>()->Append(static_cast<int32_t>(value));
  } else {
    column->As<columnar::Int64Column>()->Append(value);
  }
}

}  // namespace

Result<MetadataKind> ParseMetadataKind(std::string_view name) {
  for (const auto& [kind, kind_name] : kNames) {
    if (kind_name == name) {
      return kind;
    }
  }
  std::string valid;
  for (const auto& entry : kNames) {
    valid += (valid.empty() ? "" : ", ") + std::string(entry.second);
  }
  return InvalidArgument("unknown metadata column kind '{}' (valid: {})", name, valid);
}

std::string_view MetadataKindName(MetadataKind kind) {
  for (const auto& [k, name] : kNames) {
    if (k == kind) {
      return name;
    }
  }
  return "?";
}

Result<columnar::SchemaPtr> ResolveSchema(const columnar::Schema& declared,
                                          const std::map<std::string, std::string>& requested) {
  std::vector<columnar::Field> fields = declared.fields();
  std::map<std::string, std::string> kind_of_column;
  for (const auto& [kind_name, column] : requested) {
    FERRY_ASSIGN_OR_RETURN(MetadataKind kind, ParseMetadataKind(kind_name));
    if (column.empty()) {
      return InvalidArgument("metadata column '{}' has an empty column name", kind_name);
    }
    auto [it, inserted] = kind_of_column.emplace(column, kind_name);
    if (!inserted) {
      return InvalidArgument("metadata columns '{}' and '{}' both write column '{}'", it->second,
                             kind_name, column);
    }
    std::optional<int> index = declared.FieldIndex(column);
    if (index) {
      const columnar::Field& field = declared.field(*index);
      if (!Fits(kind, *field.type)) {
        return InvalidArgument(
            "column '{}' holds the {} metadata but is declared {}; use {} (the default)", column,
            kind_name, field.type->ToString(), DefaultType(kind)->ToString());
      }
      continue;
    }
    // The key, msg_id and headers may be absent from a message: nullable like every metadata
    // column, so a table stays appendable by other writers.
    fields.push_back({.name = column, .type = DefaultType(kind), .nullable = true});
  }
  return std::make_shared<const columnar::Schema>(std::move(fields));
}

Result<MetadataWriter> MetadataWriter::Create(const columnar::Schema& schema,
                                              const std::map<std::string, std::string>& requested) {
  MetadataWriter writer;
  for (const auto& [kind_name, column] : requested) {
    FERRY_ASSIGN_OR_RETURN(MetadataKind kind, ParseMetadataKind(kind_name));
    std::optional<int> index = schema.FieldIndex(column);
    if (!index) {
      return InvalidArgument("the table has no column '{}' for the {} metadata", column, kind_name);
    }
    const columnar::Field& field = schema.field(*index);
    if (!Fits(kind, *field.type)) {
      return InvalidArgument("column '{}' holds the {} metadata but the table declares it {}",
                             column, kind_name, field.type->ToString());
    }
    writer.slots_.push_back({.kind = kind, .column = *index, .type = field.type->id()});
    writer.names_.push_back(column);
  }
  return writer;
}

void MetadataWriter::Append(const source::Message& m, columnar::RecordBatch* batch) const {
  for (const Slot& slot : slots_) {
    columnar::Column* column = batch->mutable_column(slot.column);
    switch (slot.kind) {
      case MetadataKind::kKey:
        AppendText(column, m.key, /*null_if_empty=*/true);
        break;
      case MetadataKind::kTopic:
      case MetadataKind::kStream:
        AppendText(column, m.topic, false);
        break;
      case MetadataKind::kSubject:
        AppendText(column, m.subject, true);
        break;
      case MetadataKind::kMsgId:
        AppendText(column, m.msg_id, true);
        break;
      case MetadataKind::kPartition:
        AppendInt(column, slot.type, m.kafka_partition);
        break;
      case MetadataKind::kOffset:
      case MetadataKind::kSequence:
        AppendInt(column, slot.type, m.position);
        break;
      case MetadataKind::kTimestamp:
        if (m.timestamp_us == 0) {
          column->AppendNull();
        } else {
          column->As<columnar::Int64Column>()->Append(m.timestamp_us);
        }
        break;
      case MetadataKind::kHeaders: {
        auto* map = column->As<columnar::MapColumn>();
        for (const source::Header& h : m.headers) {
          map->mutable_keys()->As<columnar::BinaryColumn>()->Append(h.name);
          map->mutable_values()->As<columnar::BinaryColumn>()->Append(h.value);
        }
        map->FinishRow();
        break;
      }
    }
  }
}

}  // namespace ferry::pipeline
