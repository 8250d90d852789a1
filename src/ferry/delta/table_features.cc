#include "ferry/delta/table_features.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "ferry/delta/column_mapping.h"
#include "ferry/delta/column_rules.h"

namespace ferry::delta {
namespace {

bool Contains(const std::vector<std::string>& list, std::string_view name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

void AddUnique(std::vector<std::string>* list, std::string name) {
  if (!Contains(*list, name)) {
    list->push_back(std::move(name));
  }
}

constexpr const char* kReadable[] = {"columnMapping",       "deletionVectors",     "timestampNtz",
                                     "v2Checkpoint",        "vacuumProtocolCheck", "typeWidening",
                                     "typeWidening-preview"};

// Writer features an append can honour unconditionally.
// Writer features an append honours (the ones that need work are done by transaction.h and
// table_writer.h, see the header).
constexpr const char* kWritable[] = {"appendOnly",        "changeDataFeed", "deletionVectors",
                                     "domainMetadata",    "timestampNtz",   "vacuumProtocolCheck",
                                     "v2Checkpoint",      "typeWidening",   "typeWidening-preview",
                                     "inCommitTimestamp", "rowTracking",    "clustering"};

// Writer features an append honours as long as the schema or configuration does not use them
// (columnMapping: as long as the schema carries its ids and physical names).
constexpr const char* kWritableIfUnused[] = {"invariants",          "checkConstraints",
                                             "generatedColumns",    "identityColumns",
                                             "allowColumnDefaults", "columnMapping"};

bool PropertyTrue(const Metadata& metadata, const char* key) {
  auto it = metadata.configuration.find(key);
  if (it == metadata.configuration.end()) {
    return false;
  }
  std::string value = it->second;
  std::transform(value.begin(), value.end(), value.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return value == "true";
}

bool In(const char* const* begin, const char* const* end, std::string_view name) {
  return std::any_of(begin, end, [&](const char* f) { return name == f; });
}

// Finds a field (at any depth) whose metadata has a key starting with `prefix`; with
// `structs_allowed`, only one below an array or a map.
const columnar::Field* FindMetadata(const std::vector<columnar::Field>& fields,
                                    std::string_view prefix, bool structs_allowed,
                                    std::string* path) {
  for (const columnar::Field& field : fields) {
    for (const auto& [key, value] : field.metadata) {
      if (!structs_allowed && key.compare(0, prefix.size(), prefix) == 0) {
        *path = field.name;
        return &field;
      }
    }
    if (field.type->is_nested()) {
      std::string child_path;
      const bool below_collection = field.type->id() != columnar::TypeId::kStruct;
      if (const auto* found = FindMetadata(field.type->fields(), prefix,
                                           structs_allowed && !below_collection, &child_path)) {
        *path = field.name + "." + child_path;
        return found;
      }
    }
  }
  return nullptr;
}

Status CheckFeatureUnused(const std::string& feature, const Metadata& metadata,
                          const columnar::Schema& schema) {
  std::string path;
  auto refuse_column = [&](const std::string& what) {
    return NotSupported(
        "writer feature '{}': column '{}' has {}, which ferry does not evaluate; ferry refuses "
        "to write rather than ignore it",
        feature, path, what);
  };
  // Implemented for top-level columns (column_rules.h, evaluated by pipeline/table_rules.h);
  // refused when a nested field carries the metadata, except invariants, which are implemented
  // for fields inside structs (as Spark, which does not look below arrays and maps).
  const char* nested_key = feature == "invariants"            ? kInvariantsKey
                           : feature == "generatedColumns"    ? kGenerationExpressionKey
                           : feature == "identityColumns"     ? "delta.identity."
                           : feature == "allowColumnDefaults" ? kCurrentDefaultKey
                                                              : nullptr;
  if (nested_key != nullptr) {
    const bool structs_allowed = feature == "invariants";
    for (const columnar::Field& field : schema.fields()) {
      const bool struct_column = field.type->id() == columnar::TypeId::kStruct;
      if (field.type->is_nested() &&
          FindMetadata(field.type->fields(), nested_key, structs_allowed && struct_column, &path) !=
              nullptr) {
        path = field.name + "." + path;
        return refuse_column(
            "metadata " + std::string(nested_key) +
            (structs_allowed ? " below an array or a map (ferry implements it for columns and "
                               "fields inside structs)"
                             : " on a nested field (ferry implements it for top-level columns)"));
      }
    }
    return Status::OK();
  }
  if (feature == "columnMapping") {
    // Implemented (column_mapping.h): the schema must carry every id and physical name.
    auto mode = metadata.configuration.find(kColumnMappingModeProperty);
    if (mode != metadata.configuration.end()) {
      Result<ColumnMappingMode> parsed = ParseColumnMappingMode(mode->second);
      if (!parsed.ok()) {
        return NotSupported("writer feature 'columnMapping': mode '{}' is not none, name or id",
                            mode->second);
      }
      return CheckColumnMappingSchema(schema, metadata, *parsed);
    }
  }
  return Status::OK();
}

}  // namespace

std::vector<std::string> EffectiveReaderFeatures(const Protocol& protocol) {
  std::vector<std::string> out;
  if (protocol.min_reader_version >= 3) {
    if (protocol.reader_features) {
      out = *protocol.reader_features;
    }
  } else if (protocol.min_reader_version == 2) {
    out.push_back("columnMapping");
  }
  return out;
}

std::vector<std::string> EffectiveWriterFeatures(const Protocol& protocol) {
  std::vector<std::string> out;
  int32_t v = protocol.min_writer_version;
  if (v >= 7) {
    if (protocol.writer_features) {
      out = *protocol.writer_features;
    }
    return out;
  }
  if (v >= 2) {
    AddUnique(&out, "appendOnly");
    AddUnique(&out, "invariants");
  }
  if (v >= 3) {
    AddUnique(&out, "checkConstraints");
  }
  if (v >= 4) {
    AddUnique(&out, "changeDataFeed");
    AddUnique(&out, "generatedColumns");
  }
  if (v >= 5) {
    AddUnique(&out, "columnMapping");
  }
  if (v >= 6) {
    AddUnique(&out, "identityColumns");
  }
  return out;
}

Status CheckReadSupported(const Protocol& protocol) {
  if (protocol.min_reader_version > kMaxReaderVersion || protocol.min_reader_version < 1) {
    return NotSupported(
        "the table requires Delta reader version {} (minReaderVersion); ferry reads versions 1 "
        "to {}",
        protocol.min_reader_version, kMaxReaderVersion);
  }
  for (const std::string& feature : EffectiveReaderFeatures(protocol)) {
    if (!In(std::begin(kReadable), std::end(kReadable), feature)) {
      return NotSupported("the table requires reader feature '{}', which ferry does not support",
                          feature);
    }
  }
  return Status::OK();
}

Status CheckWriteSupported(const Protocol& protocol, const Metadata& metadata,
                           const columnar::Schema& schema) {
  FERRY_RETURN_IF_ERROR(CheckReadSupported(protocol));
  if (protocol.min_writer_version > kMaxWriterVersion || protocol.min_writer_version < 1) {
    return NotSupported(
        "the table requires Delta writer version {} (minWriterVersion); ferry writes versions 1 "
        "to {}",
        protocol.min_writer_version, kMaxWriterVersion);
  }
  for (const std::string& feature : EffectiveWriterFeatures(protocol)) {
    if (In(std::begin(kWritable), std::end(kWritable), feature)) {
      continue;
    }
    if (In(std::begin(kWritableIfUnused), std::end(kWritableIfUnused), feature)) {
      FERRY_RETURN_IF_ERROR(CheckFeatureUnused(feature, metadata, schema));
      continue;
    }
    return NotSupported("the table requires writer feature '{}', which ferry does not implement",
                        feature);
  }
  // Invariants and constraints apply on writer versions that imply them; on writer version 7
  // without the feature listed they cannot exist. Either way a present one is refused above.
  return Status::OK();
}

bool InCommitTimestampsEnabled(const Protocol& protocol, const Metadata& metadata) {
  return protocol.WriterLists("inCommitTimestamp") &&
         PropertyTrue(metadata, "delta.enableInCommitTimestamps");
}

bool RowTrackingActive(const Protocol& protocol, const Metadata& metadata) {
  return protocol.WriterLists("rowTracking") &&
         !PropertyTrue(metadata, "delta.rowTrackingSuspended");
}

bool RowTrackingEnabled(const Protocol& protocol, const Metadata& metadata) {
  return RowTrackingActive(protocol, metadata) && PropertyTrue(metadata, "delta.enableRowTracking");
}

Result<int64_t> RowIdHighWaterMark(const std::map<std::string, DomainMetadata>& domains) {
  auto it = domains.find(kRowTrackingDomain);
  if (it == domains.end()) {
    return int64_t{-1};
  }
  nlohmann::json config = nlohmann::json::parse(it->second.configuration, nullptr, false);
  if (!config.is_object() || !config.contains("rowIdHighWaterMark") ||
      !config["rowIdHighWaterMark"].is_number_integer()) {
    return DataLoss("domain {}: configuration {} holds no integer rowIdHighWaterMark",
                    kRowTrackingDomain, it->second.configuration);
  }
  return config["rowIdHighWaterMark"].get<int64_t>();
}

DomainMetadata RowIdHighWaterMarkDomain(int64_t high_water_mark) {
  return DomainMetadata{kRowTrackingDomain,
                        "{\"rowIdHighWaterMark\":" + std::to_string(high_water_mark) + "}", false};
}

Result<std::vector<std::string>> ClusteringColumns(
    const Protocol& protocol, const std::map<std::string, DomainMetadata>& domains) {
  std::vector<std::string> out;
  auto it = domains.find(kClusteringDomain);
  if (!protocol.WriterLists("clustering") || it == domains.end()) {
    return out;
  }
  auto bad = [&] {
    return DataLoss("domain {}: configuration {} is not {{\"clusteringColumns\": [...]}}",
                    kClusteringDomain, it->second.configuration);
  };
  nlohmann::json config = nlohmann::json::parse(it->second.configuration, nullptr, false);
  if (!config.is_object() || !config.contains("clusteringColumns") ||
      !config["clusteringColumns"].is_array()) {
    return bad();
  }
  for (const nlohmann::json& column : config["clusteringColumns"]) {
    if (column.is_string()) {
      out.push_back(column.get<std::string>());
      continue;
    }
    if (!column.is_array() || column.empty()) {
      return bad();
    }
    std::string path;
    for (const nlohmann::json& part : column) {
      if (!part.is_string()) {
        return bad();
      }
      path += (path.empty() ? "" : ".") + part.get<std::string>();
    }
    out.push_back(std::move(path));
  }
  return out;
}

}  // namespace ferry::delta
