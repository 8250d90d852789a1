#include "ferry/delta/table.h"

#include <algorithm>
#include <cctype>

#include "ferry/base/clock.h"
#include "ferry/delta/actions_json.h"
#include "ferry/delta/checkpoint_reader.h"
#include "ferry/delta/column_mapping.h"
#include "ferry/delta/log_segment.h"
#include "ferry/delta/partition_values.h"
#include "ferry/delta/schema_json.h"
#include "ferry/delta/snapshot_internal.h"
#include "ferry/delta/table_properties.h"
#include "ferry/delta/transaction.h"
#include "ferry/delta/type_widening.h"
#include "ferry/delta/uuid.h"

namespace ferry::delta {
namespace {

bool UsesTimestampNtz(const columnar::DataType& type) {
  if (type.id() == columnar::TypeId::kTimestamp && !type.utc_adjusted()) {
    return true;
  }
  for (const columnar::Field& field : type.fields()) {
    if (UsesTimestampNtz(*field.type)) {
      return true;
    }
  }
  return false;
}

Status ValidateSpec(const TableSpec& spec) {
  if (spec.schema == nullptr || spec.schema->num_fields() == 0) {
    return InvalidArgument("a table needs a schema with at least one column");
  }
  std::vector<std::string> seen;
  for (const columnar::Field& field : spec.schema->fields()) {
    std::string lower = field.name;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (std::find(seen.begin(), seen.end(), lower) != seen.end()) {
      return InvalidArgument("column name '{}' appears twice (Delta names are case-insensitive)",
                             field.name);
    }
    seen.push_back(lower);
  }
  for (const std::string& column : spec.partition_columns) {
    auto index = spec.schema->FieldIndex(column);
    if (!index.has_value()) {
      return InvalidArgument("partition column '{}' is not in the schema", column);
    }
    FERRY_RETURN_IF_ERROR(CheckPartitionColumnType(spec.schema->field(*index)));
  }
  if (spec.partition_columns.size() >= static_cast<size_t>(spec.schema->num_fields())) {
    return InvalidArgument("a table needs at least one column that is not a partition column");
  }
  FERRY_RETURN_IF_ERROR(ParseTableProperties(spec.configuration).status());
  // ferry evaluates no SQL: a table it creates must not promise constraints it cannot keep.
  for (const auto& [key, value] : spec.configuration) {
    if (key.rfind("delta.constraints.", 0) == 0) {
      return NotSupported("CHECK constraint '{}' ({}): ferry cannot enforce constraints",
                          key.substr(18), value);
    }
  }
  for (const columnar::Field& field : spec.schema->fields()) {
    for (const auto& [key, value] : field.metadata) {
      if (key == "delta.invariants" || key == "delta.generationExpression" ||
          key.rfind("delta.identity.", 0) == 0) {
        return NotSupported("column '{}' has {}: ferry cannot enforce it", field.name, key);
      }
    }
  }
  return Status::OK();
}

Status ApplyCommit(const Table& table, const CommitFile& commit, SnapshotState* state) {
  state->timestamp_ms = commit.info.modification_time_ms;
  FERRY_ASSIGN_OR_RETURN(auto actions, table.ReadCommit(commit.version));
  ApplyActions(std::move(actions), commit.version, state);
  if (state->metadata_version == commit.version) {
    state->metadata_file = CommitFileName(commit.version);
  }
  return Status::OK();
}

}  // namespace

Table::Table(std::shared_ptr<storage::ObjectStore> store, std::string path)
    : store_(std::move(store)), path_(std::move(path)) {
  log_dir_ = storage::JoinKey(path_, kLogDirName);
}

Result<std::unique_ptr<Table>> Table::Open(std::shared_ptr<storage::ObjectStore> store,
                                           std::string path) {
  while (!path.empty() && path.back() == '/') {
    path.pop_back();
  }
  if (!path.empty()) {
    FERRY_RETURN_IF_ERROR(storage::ValidateKey(path));
  }
  return std::unique_ptr<Table>(new Table(std::move(store), std::move(path)));
}

std::string Table::Key(std::string_view relative_path) const {
  return storage::JoinKey(path_, relative_path);
}

Result<std::vector<Action>> Table::ReadCommit(int64_t version) const {
  std::string key = log_dir_ + "/" + CommitFileName(version);
  auto text = store_->Read(key);
  if (!text.ok()) {
    return text.status().WithContext("version {}", version);
  }
  auto actions = ParseActions(*text);
  if (!actions.ok()) {
    return actions.status().WithContext("version {}: {}", version, store_->Describe(key));
  }
  return actions;
}

Result<Snapshot> Table::LoadSnapshot(std::optional<int64_t> version) const {
  if (version.has_value() && *version < 0) {
    return InvalidArgument("version {} is negative", *version);
  }
  auto segment = ListLogSegment(*store_, log_dir_, version);
  if (!segment.ok()) {
    return segment.status().WithContext("table {}", Describe());
  }
  auto state = std::make_shared<SnapshotState>();
  state->newest_checkpoint_version = segment->newest_checkpoint_version;
  if (segment->checkpoint.has_value()) {
    auto actions = ReadCheckpoint(*store_, log_dir_, *segment->checkpoint);
    if (!actions.ok()) {
      return actions.status().WithContext("table {}", Describe());
    }
    ApplyActions(std::move(*actions), segment->checkpoint->version, state.get());
    state->metadata_file = segment->checkpoint->files.front().key;
    state->timestamp_ms = segment->checkpoint->files.front().modification_time_ms;
  }
  for (const CommitFile& commit : segment->commits) {
    FERRY_RETURN_IF_ERROR(
        ApplyCommit(*this, commit, state.get()).WithContext("table {}", Describe()));
  }
  FERRY_RETURN_IF_ERROR(FinishReplay(store_->Describe(log_dir_), state.get()));
  return Snapshot(std::move(state));
}

Result<Snapshot> Table::Update(Snapshot snapshot) const {
  if (snapshot.version() < 0) {
    return LoadSnapshot();
  }
  std::optional<int64_t> newest = snapshot.newest_checkpoint_version();
  FERRY_ASSIGN_OR_RETURN(auto commits,
                         ListCommitsAfter(*store_, log_dir_, snapshot.version(), &newest));
  if (commits.empty() && newest == snapshot.newest_checkpoint_version()) {
    return snapshot;
  }
  SnapshotState* state = MutableState(&snapshot);
  state->newest_checkpoint_version = newest;
  for (const CommitFile& commit : commits) {
    FERRY_RETURN_IF_ERROR(ApplyCommit(*this, commit, state).WithContext("table {}", Describe()));
  }
  FERRY_RETURN_IF_ERROR(FinishReplay(store_->Describe(log_dir_), state));
  return snapshot;
}

Result<Snapshot> Table::Create(const TableSpec& spec) const {
  FERRY_RETURN_IF_ERROR(ValidateSpec(spec));
  auto existing = ListLogSegment(*store_, log_dir_, std::nullopt);
  if (existing.ok()) {
    return AlreadyExists("{}: a Delta table exists already (version {})", Describe(),
                         existing->version);
  }
  if (existing.status().code() != StatusCode::kNotFound) {
    return existing.status();
  }
  Protocol protocol;
  if (UsesTimestampNtz(*columnar::DataType::Struct(spec.schema->fields()))) {
    // Writer version 7 keeps the features writer version 2 implied (appendOnly, invariants), as
    // Spark's upgrade does: without `invariants` listed, Delta (Spark) refuses to read a table
    // with a NOT NULL column ("enabled in metadata but not listed in protocol").
    protocol = WithFeatures(protocol, {"timestampNtz"}, {"timestampNtz"});
  }
  StringMap configuration = spec.configuration;
  // Writer features the configuration enables (table_features.h says what ferry does).
  auto enables = [&](const char* key) {
    auto it = configuration.find(key);
    // Case-insensitive, as table_features.cc reads the property back ("True" enables too).
    return it != configuration.end() && it->second.size() == 4 &&
           std::equal(it->second.begin(), it->second.end(), "true", [](char a, char b) {
             return std::tolower(static_cast<unsigned char>(a)) == b;
           });
  };
  // Through WithFeatures, so that the upgrade to writer version 7 keeps the features writer
  // version 2 implied (appendOnly, invariants), which Spark requires (see timestampNtz above).
  auto add_writer_feature = [&](const char* feature) {
    protocol = WithFeatures(protocol, {}, {feature});
  };
  if (enables("delta.enableInCommitTimestamps")) {
    add_writer_feature("inCommitTimestamp");
  }
  if (enables("delta.enableDeletionVectors")) {
    // Reader and writer feature (reader version 3): upsert pipelines mark rows with deletion
    // vectors (pipeline/upsert_commit.h); Spark's DELETE/UPDATE/MERGE do too.
    protocol = WithFeatures(protocol, {"deletionVectors"}, {"deletionVectors"});
  }
  if (enables("delta.enableRowTracking")) {
    add_writer_feature("rowTracking");
    add_writer_feature("domainMetadata");
    // Spark's names for the hidden columns rewrites use to keep row ids stable.
    configuration.try_emplace("delta.rowTracking.materializedRowIdColumnName",
                              "_row-id-col-" + RandomUuid());
    configuration.try_emplace("delta.rowTracking.materializedRowCommitVersionColumnName",
                              "_row-commit-version-col-" + RandomUuid());
  }
  columnar::SchemaPtr schema = spec.schema;
  FERRY_RETURN_IF_ERROR(ApplyColumnMappingToNewTable(&schema, &configuration, &protocol));
  Metadata metadata;
  metadata.id = RandomUuid();
  metadata.name = spec.name;
  metadata.description = spec.description;
  FERRY_ASSIGN_OR_RETURN(metadata.schema_string, SchemaToJson(*schema));
  metadata.partition_columns = spec.partition_columns;
  metadata.configuration = std::move(configuration);
  metadata.created_time = WallMillis();
  Transaction txn(*this, Snapshot(), CommitOptions{});
  txn.SetProtocol(protocol);
  txn.SetMetadata(std::move(metadata));
  StringMap params = {{"mode", "ErrorIfExists"}};
  std::string partition_by = "[";
  for (size_t i = 0; i < spec.partition_columns.size(); ++i) {
    partition_by += (i > 0 ? ",\"" : "\"") + spec.partition_columns[i] + "\"";
  }
  params["partitionBy"] = partition_by + "]";
  txn.SetOperation("CREATE TABLE", std::move(params));
  FERRY_ASSIGN_OR_RETURN(CommitResult result, txn.Commit());
  return std::move(result.snapshot);
}

}  // namespace ferry::delta
