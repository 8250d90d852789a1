#include "ferry/delta/checkpoint_reader.h"

#include "ferry/columnar/column.h"
#include "ferry/delta/actions_json.h"
#include "ferry/delta/partition_values.h"
#include "ferry/parquet/file_reader.h"

namespace ferry::delta {
namespace {

using columnar::BinaryColumn;
using columnar::Column;
using columnar::ListColumn;
using columnar::MapColumn;
using columnar::StructColumn;
using columnar::TypeId;

// Typed, null-tolerant access to the fields of one struct column, by name.
class StructView {
 public:
  explicit StructView(const Column* column)
      : column_(column != nullptr && column->type_id() == TypeId::kStruct
                    ? column->As<StructColumn>()
                    : nullptr) {}

  bool Valid(int64_t row) const { return column_ != nullptr && column_->IsValid(row); }

  const Column* Child(std::string_view name) const {
    if (column_ == nullptr) {
      return nullptr;
    }
    auto index = column_->type()->FieldIndex(name);
    return index ? &column_->child(static_cast<int>(*index)) : nullptr;
  }
  StructView Struct(std::string_view name) const { return StructView(Child(name)); }

  std::optional<std::string> String(std::string_view name, int64_t row) const {
    const Column* c = Child(name);
    if (c == nullptr || c->IsNull(row) || !c->type()->is_binary_like()) {
      return std::nullopt;
    }
    return std::string(c->As<BinaryColumn>()->Value(row));
  }
  std::optional<int64_t> Int(std::string_view name, int64_t row) const {
    const Column* c = Child(name);
    if (c == nullptr || c->IsNull(row)) {
      return std::nullopt;
    }
    switch (c->type_id()) {
      case TypeId::kInt8:
        return c->As<columnar::Int8Column>()->Value(row);
      case TypeId::kInt16:
        return c->As<columnar::Int16Column>()->Value(row);
      case TypeId::kInt32:
        return c->As<columnar::Int32Column>()->Value(row);
      case TypeId::kInt64:
        return c->As<columnar::Int64Column>()->Value(row);
      default:
        return std::nullopt;
    }
  }
  std::optional<bool> Bool(std::string_view name, int64_t row) const {
    const Column* c = Child(name);
    if (c == nullptr || c->IsNull(row) || c->type_id() != TypeId::kBoolean) {
      return std::nullopt;
    }
    return c->As<columnar::BooleanColumn>()->Value(row) != 0;
  }
  // map<string,string>; null values kept as nullopt.
  std::optional<PartitionValues> Map(std::string_view name, int64_t row) const {
    const Column* c = Child(name);
    if (c == nullptr || c->IsNull(row) || c->type_id() != TypeId::kMap) {
      return std::nullopt;
    }
    const auto* map = c->As<MapColumn>();
    if (!map->keys().type()->is_binary_like() || !map->values().type()->is_binary_like()) {
      return std::nullopt;
    }
    const auto* keys = map->keys().As<BinaryColumn>();
    const auto* values = map->values().As<BinaryColumn>();
    PartitionValues out;
    for (int64_t i = map->offsets()[static_cast<size_t>(row)];
         i < map->offsets()[static_cast<size_t>(row) + 1]; ++i) {
      out[std::string(keys->Value(i))] =
          values->IsNull(i) ? std::nullopt : std::optional<std::string>(values->Value(i));
    }
    return out;
  }
  std::optional<StringMap> Strings(std::string_view name, int64_t row) const {
    auto map = Map(name, row);
    if (!map.has_value()) {
      return std::nullopt;
    }
    StringMap out;
    for (auto& [k, v] : *map) {
      if (v.has_value()) {
        out[k] = *v;
      }
    }
    return out;
  }
  std::optional<std::vector<std::string>> List(std::string_view name, int64_t row) const {
    const Column* c = Child(name);
    if (c == nullptr || c->IsNull(row) || c->type_id() != TypeId::kList) {
      return std::nullopt;
    }
    const auto* list = c->As<ListColumn>();
    if (!list->child().type()->is_binary_like()) {
      return std::nullopt;
    }
    const auto* items = list->child().As<BinaryColumn>();
    std::vector<std::string> out;
    for (int64_t i = list->offsets()[static_cast<size_t>(row)];
         i < list->offsets()[static_cast<size_t>(row) + 1]; ++i) {
      out.emplace_back(items->Value(i));
    }
    return out;
  }

 private:
  const StructColumn* column_;
};

// Returns DataLoss naming the action and field when a required field is null.
template <typename T>
Result<T> Required(std::optional<T> value, const char* action, const char* field) {
  if (!value.has_value()) {
    return DataLoss("{}.{} is null", action, field);
  }
  return std::move(*value);
}

std::optional<DeletionVector> ReadDeletionVector(const StructView& dv, int64_t row) {
  if (!dv.Valid(row)) {
    return std::nullopt;
  }
  DeletionVector out;
  out.storage_type = dv.String("storageType", row).value_or("");
  out.path_or_inline_dv = dv.String("pathOrInlineDv", row).value_or("");
  if (auto offset = dv.Int("offset", row)) {
    out.offset = static_cast<int32_t>(*offset);
  }
  out.size_in_bytes = static_cast<int32_t>(dv.Int("sizeInBytes", row).value_or(0));
  out.cardinality = dv.Int("cardinality", row).value_or(0);
  out.max_row_index = dv.Int("maxRowIndex", row);
  return out;
}

Result<Action> ReadAdd(const StructView& v, int64_t row) {
  AddFile a;
  FERRY_ASSIGN_OR_RETURN(a.path, Required(v.String("path", row), "add", "path"));
  a.partition_values = v.Map("partitionValues", row).value_or(PartitionValues{});
  FERRY_ASSIGN_OR_RETURN(a.size, Required(v.Int("size", row), "add", "size"));
  a.modification_time = v.Int("modificationTime", row).value_or(0);
  a.data_change = v.Bool("dataChange", row).value_or(false);
  a.stats = v.String("stats", row);
  a.tags = v.Strings("tags", row);
  a.deletion_vector = ReadDeletionVector(v.Struct("deletionVector"), row);
  a.base_row_id = v.Int("baseRowId", row);
  a.default_row_commit_version = v.Int("defaultRowCommitVersion", row);
  a.clustering_provider = v.String("clusteringProvider", row);
  return a;
}

Result<Action> ReadRemove(const StructView& v, int64_t row) {
  RemoveFile x;
  FERRY_ASSIGN_OR_RETURN(x.path, Required(v.String("path", row), "remove", "path"));
  x.deletion_timestamp = v.Int("deletionTimestamp", row);
  x.data_change = v.Bool("dataChange", row).value_or(false);
  x.extended_file_metadata = v.Bool("extendedFileMetadata", row);
  x.partition_values = v.Map("partitionValues", row);
  x.size = v.Int("size", row);
  x.deletion_vector = ReadDeletionVector(v.Struct("deletionVector"), row);
  x.base_row_id = v.Int("baseRowId", row);
  x.default_row_commit_version = v.Int("defaultRowCommitVersion", row);
  return x;
}

Result<Action> ReadMetadata(const StructView& v, int64_t row) {
  Metadata m;
  FERRY_ASSIGN_OR_RETURN(m.id, Required(v.String("id", row), "metaData", "id"));
  m.name = v.String("name", row);
  m.description = v.String("description", row);
  StructView format = v.Struct("format");
  if (format.Valid(row)) {
    m.format.provider = format.String("provider", row).value_or("parquet");
    m.format.options = format.Strings("options", row).value_or(StringMap{});
  }
  // Missing in checkpoints of early Delta test tools (see actions_json.cc): "no schema".
  m.schema_string = v.String("schemaString", row).value_or("");
  m.partition_columns = v.List("partitionColumns", row).value_or(std::vector<std::string>{});
  m.configuration = v.Strings("configuration", row).value_or(StringMap{});
  m.created_time = v.Int("createdTime", row);
  return m;
}

Result<Action> ReadProtocol(const StructView& v, int64_t row) {
  Protocol p;
  FERRY_ASSIGN_OR_RETURN(int64_t reader,
                         Required(v.Int("minReaderVersion", row), "protocol", "minReaderVersion"));
  FERRY_ASSIGN_OR_RETURN(int64_t writer,
                         Required(v.Int("minWriterVersion", row), "protocol", "minWriterVersion"));
  p.min_reader_version = static_cast<int32_t>(reader);
  p.min_writer_version = static_cast<int32_t>(writer);
  p.reader_features = v.List("readerFeatures", row);
  p.writer_features = v.List("writerFeatures", row);
  return p;
}

Result<std::optional<Action>> Some(Result<Action> action) {
  if (!action.ok()) {
    return action.status();
  }
  return std::optional<Action>(std::move(*action));
}

// The action in row `row`, if any column holds one.
Result<std::optional<Action>> ReadRow(const std::vector<std::pair<std::string, StructView>>& cols,
                                      int64_t row) {
  for (const auto& [name, v] : cols) {
    if (!v.Valid(row)) {
      continue;
    }
    if (name == "add") {
      return Some(ReadAdd(v, row));
    }
    if (name == "remove") {
      return Some(ReadRemove(v, row));
    }
    if (name == "metaData") {
      return Some(ReadMetadata(v, row));
    }
    if (name == "protocol") {
      return Some(ReadProtocol(v, row));
    }
    if (name == "txn") {
      FERRY_ASSIGN_OR_RETURN(std::string app_id, Required(v.String("appId", row), "txn", "appId"));
      FERRY_ASSIGN_OR_RETURN(int64_t version, Required(v.Int("version", row), "txn", "version"));
      return Txn{std::move(app_id), version, v.Int("lastUpdated", row)};
    }
    if (name == "domainMetadata") {
      FERRY_ASSIGN_OR_RETURN(std::string domain,
                             Required(v.String("domain", row), "domainMetadata", "domain"));
      return DomainMetadata{std::move(domain), v.String("configuration", row).value_or(""),
                            v.Bool("removed", row).value_or(false)};
    }
    if (name == "checkpointMetadata") {
      return CheckpointMetadata{v.Int("version", row).value_or(0), v.Strings("tags", row)};
    }
    if (name == "sidecar") {
      FERRY_ASSIGN_OR_RETURN(std::string path, Required(v.String("path", row), "sidecar", "path"));
      return Sidecar{std::move(path), v.Int("sizeInBytes", row).value_or(0),
                     v.Int("modificationTime", row).value_or(0), v.Strings("tags", row)};
    }
  }
  return std::optional<Action>();
}

constexpr const char* kActionColumns[] = {"add", "remove",         "metaData",           "protocol",
                                          "txn", "domainMetadata", "checkpointMetadata", "sidecar"};

// Reads the sidecars `actions` names and appends their actions.
Status ReadSidecars(storage::ObjectStore& store, const std::string& log_dir,
                    std::vector<Action>* actions) {
  std::vector<Sidecar> sidecars;
  for (const Action& action : *actions) {
    if (const auto* sidecar = std::get_if<Sidecar>(&action)) {
      sidecars.push_back(*sidecar);
    }
  }
  for (const Sidecar& sidecar : sidecars) {
    FERRY_ASSIGN_OR_RETURN(std::string name, DecodeUriPath(sidecar.path));
    if (size_t slash = name.rfind('/'); slash != std::string::npos) {
      name = name.substr(slash + 1);
    }
    std::string key = log_dir + "/" + std::string(kSidecarDirName) + "/" + name;
    auto file = store.OpenForRead(key);
    if (!file.ok()) {
      const std::string what =
          fmt::format("sidecar {} named by the checkpoint cannot be opened", store.Describe(key));
      return DataLossUnlessRetryable(file.status(), what);
    }
    auto sidecar_actions = ReadParquetActions(*file);
    if (!sidecar_actions.ok()) {
      return sidecar_actions.status().WithContext("sidecar {}", store.Describe(key));
    }
    for (Action& action : *sidecar_actions) {
      actions->push_back(std::move(action));
    }
  }
  return Status::OK();
}

}  // namespace

Result<std::vector<Action>> ReadParquetActions(std::shared_ptr<const RandomAccessFile> file) {
  FERRY_ASSIGN_OR_RETURN(auto reader, parquet::FileReader::Open(file));
  std::vector<int> projection;
  std::vector<std::string> names;
  for (const char* name : kActionColumns) {
    if (auto index = reader->schema()->FieldIndex(name)) {
      projection.push_back(*index);
      names.emplace_back(name);
    }
  }
  std::vector<Action> actions;
  if (projection.empty()) {
    return actions;
  }
  actions.reserve(static_cast<size_t>(reader->num_rows()));
  for (int rg = 0; rg < reader->num_row_groups(); ++rg) {
    FERRY_ASSIGN_OR_RETURN(columnar::RecordBatch batch, reader->ReadRowGroup(rg, projection));
    std::vector<std::pair<std::string, StructView>> cols;
    for (size_t i = 0; i < names.size(); ++i) {
      cols.emplace_back(names[i], StructView(&batch.column(static_cast<int>(i))));
    }
    for (int64_t row = 0; row < batch.num_rows(); ++row) {
      auto action = ReadRow(cols, row);
      if (!action.ok()) {
        return action.status().WithContext("row group {} row {}", rg, row);
      }
      if (action->has_value()) {
        actions.push_back(std::move(**action));
      }
    }
  }
  return actions;
}

Result<std::vector<Action>> ReadCheckpoint(storage::ObjectStore& store, const std::string& log_dir,
                                           const CheckpointFiles& checkpoint) {
  std::vector<Action> actions;
  for (const storage::ObjectInfo& info : checkpoint.files) {
    auto context = [&](const Status& st) {
      return st.WithContext("checkpoint of version {}: {}", checkpoint.version,
                            store.Describe(info.key));
    };
    auto file = store.OpenForRead(info.key);
    if (!file.ok()) {
      // A store that did not answer is retried by the caller; a missing part is lost data.
      return context(DataLossUnlessRetryable(file.status(), "cannot be opened"));
    }
    if (checkpoint.kind == LogFileKind::kV2CheckpointJson) {
      std::string text;
      Status st = (*file)->ReadAt(0, (*file)->size(), &text);
      auto parsed = st.ok() ? ParseActions(text) : Result<std::vector<Action>>(st);
      if (!parsed.ok()) {
        return context(parsed.status());
      }
      actions = std::move(*parsed);
    } else {
      auto parsed = ReadParquetActions(*file);
      if (!parsed.ok()) {
        return context(parsed.status().code() == StatusCode::kNotFound
                           ? DataLoss("{}", parsed.status().message())
                           : parsed.status());
      }
      if (actions.empty()) {
        actions = std::move(*parsed);
        continue;
      }
      actions.reserve(actions.size() + parsed->size());
      for (Action& action : *parsed) {
        actions.push_back(std::move(action));
      }
    }
  }
  Status st = ReadSidecars(store, log_dir, &actions);
  if (!st.ok()) {
    return st.WithContext("checkpoint of version {}", checkpoint.version);
  }
  return actions;
}

}  // namespace ferry::delta
