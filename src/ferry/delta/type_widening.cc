#include "ferry/delta/type_widening.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "ferry/columnar/column_conform.h"
#include "ferry/delta/schema_json.h"
#include "ferry/delta/table_features.h"

namespace ferry::delta {
namespace {

using columnar::DataType;
using columnar::TypeId;

bool WiderDecimal(const DataType& from, const DataType& to) {
  return to.scale() >= from.scale() &&
         to.precision() - to.scale() >= from.precision() - from.scale();
}

void AddUnique(std::vector<std::string>* list, const std::string& name) {
  if (std::find(list->begin(), list->end(), name) == list->end()) {
    list->push_back(name);
  }
}

Status CheckFields(const std::vector<columnar::Field>& fields, const std::string& parent) {
  for (const columnar::Field& field : fields) {
    std::string path = parent.empty() ? field.name : parent + "." + field.name;
    FERRY_ASSIGN_OR_RETURN(std::vector<TypeChange> changes, ReadTypeChanges(field));
    for (const TypeChange& change : changes) {
      auto from = ParseDeltaTypeName(change.from_type);
      auto to = ParseDeltaTypeName(change.to_type);
      bool strings = change.from_type == "string" && change.to_type == "string";
      if (!strings && (!from.ok() || !to.ok() || !IsSupportedTypeChange(**from, **to))) {
        return NotSupported(
            "column '{}{}{}': the table records a type change from {} to {}, which the Delta "
            "protocol's type widening does not support",
            path, change.field_path ? "." : "", change.field_path.value_or(""), change.from_type,
            change.to_type);
      }
    }
    // Structs nested in arrays and maps hold their own fields' changes.
    const DataType* type = field.type.get();
    std::string inner = path;
    while (type->id() == TypeId::kList || type->id() == TypeId::kMap) {
      if (type->id() == TypeId::kMap) {
        FERRY_RETURN_IF_ERROR(CheckFields({type->key()}, inner));
        type = type->value().type.get();
        inner += ".value";
      } else {
        type = type->element().type.get();
        inner += ".element";
      }
    }
    if (type->id() == TypeId::kStruct) {
      FERRY_RETURN_IF_ERROR(CheckFields(type->fields(), inner));
    }
  }
  return Status::OK();
}

}  // namespace

bool SupportsTypeWidening(const Protocol& protocol) {
  for (const char* name : {kTypeWideningFeature, kTypeWideningPreviewFeature}) {
    if (protocol.ReaderLists(name) && protocol.WriterLists(name)) {
      return true;
    }
  }
  return false;
}

bool SupportsTypeWideningPreview(const Protocol& protocol) {
  return protocol.WriterLists(kTypeWideningPreviewFeature);
}

bool IsSupportedTypeChange(const DataType& from, const DataType& to) {
  if (from.Equals(to)) {
    return true;
  }
  TypeId f = from.id();
  TypeId t = to.id();
  bool small = f == TypeId::kInt8 || f == TypeId::kInt16 || f == TypeId::kInt32;
  if (columnar::SignedIntegerWidth(f) > 0 && columnar::SignedIntegerWidth(t) > 0) {
    return columnar::SignedIntegerWidth(f) <= columnar::SignedIntegerWidth(t);
  }
  if (t == TypeId::kFloat64) {
    return f == TypeId::kFloat32 || small;
  }
  if (f == TypeId::kDate && t == TypeId::kTimestamp) {
    return !to.utc_adjusted() && to.unit() == columnar::TimeUnit::kMicros;
  }
  if (t == TypeId::kDecimal) {
    if (f == TypeId::kDecimal) {
      return WiderDecimal(from, to);
    }
    if (small) {
      return to.precision() - to.scale() >= 10;
    }
    if (f == TypeId::kInt64) {
      return to.precision() - to.scale() >= 20;
    }
  }
  return false;
}

bool IsEvolutionTypeChange(const DataType& from, const DataType& to) {
  if (!IsSupportedTypeChange(from, to)) {
    return false;
  }
  TypeId f = from.id();
  TypeId t = to.id();
  return (columnar::SignedIntegerWidth(f) > 0 && columnar::SignedIntegerWidth(t) > 0) ||
         (f == TypeId::kFloat32 && t == TypeId::kFloat64) ||
         (f == TypeId::kDecimal && t == TypeId::kDecimal) ||
         (f == TypeId::kDate && t == TypeId::kTimestamp);
}

Result<std::vector<TypeChange>> ReadTypeChanges(const columnar::Field& field) {
  std::vector<TypeChange> out;
  for (const auto& [key, raw] : field.metadata) {
    if (key != kTypeChangesKey) {
      continue;
    }
    nlohmann::json list = nlohmann::json::parse(raw, nullptr, /*allow_exceptions=*/false);
    if (!list.is_array()) {
      return DataLoss("column '{}': {} is not a list", field.name, kTypeChangesKey);
    }
    for (const nlohmann::json& entry : list) {
      if (!entry.is_object() || !entry.contains("fromType") || !entry.contains("toType") ||
          !entry["fromType"].is_string() || !entry["toType"].is_string()) {
        return DataLoss("column '{}': an entry of {} lacks fromType or toType", field.name,
                        kTypeChangesKey);
      }
      TypeChange change{.from_type = entry["fromType"].get<std::string>(),
                        .to_type = entry["toType"].get<std::string>()};
      if (entry.contains("fieldPath") && entry["fieldPath"].is_string()) {
        change.field_path = entry["fieldPath"].get<std::string>();
      }
      if (entry.contains("tableVersion") && entry["tableVersion"].is_number_integer()) {
        change.table_version = entry["tableVersion"].get<int64_t>();
      }
      out.push_back(std::move(change));
    }
  }
  return out;
}

Status AppendTypeChange(columnar::Field* field, const TypeChange& change) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  auto it = std::find_if(field->metadata.begin(), field->metadata.end(),
                         [](const auto& kv) { return kv.first == kTypeChangesKey; });
  if (it != field->metadata.end()) {
    list = nlohmann::ordered_json::parse(it->second, nullptr, /*allow_exceptions=*/false);
    if (!list.is_array()) {
      return DataLoss("column '{}': {} is not a list", field->name, kTypeChangesKey);
    }
  }
  nlohmann::ordered_json entry;
  entry["fromType"] = change.from_type;
  entry["toType"] = change.to_type;
  if (change.field_path) {
    entry["fieldPath"] = *change.field_path;
  }
  if (change.table_version) {
    entry["tableVersion"] = *change.table_version;
  }
  list.push_back(std::move(entry));
  std::string text = list.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  if (it != field->metadata.end()) {
    it->second = std::move(text);
  } else {
    field->metadata.emplace_back(kTypeChangesKey, std::move(text));
  }
  return Status::OK();
}

Status CheckTypeChangesReadable(const columnar::Schema& schema) {
  return CheckFields(schema.fields(), "");
}

Protocol WithFeatures(const Protocol& protocol, const std::vector<std::string>& reader_features,
                      const std::vector<std::string>& writer_features) {
  Protocol out = protocol;
  if (!writer_features.empty() || !reader_features.empty()) {
    if (out.min_writer_version < 7) {
      out.writer_features = EffectiveWriterFeatures(protocol);
      out.min_writer_version = 7;
    }
    if (!out.writer_features) {
      out.writer_features.emplace();
    }
    for (const std::string& f : writer_features) {
      AddUnique(&*out.writer_features, f);
    }
    // Every reader feature is a writer feature too.
    for (const std::string& f : reader_features) {
      AddUnique(&*out.writer_features, f);
    }
  }
  if (!reader_features.empty()) {
    if (out.min_reader_version < 3) {
      out.reader_features = EffectiveReaderFeatures(protocol);
      out.min_reader_version = 3;
    }
    if (!out.reader_features) {
      out.reader_features.emplace();
    }
    for (const std::string& f : reader_features) {
      AddUnique(&*out.reader_features, f);
    }
  }
  return out;
}

}  // namespace ferry::delta
