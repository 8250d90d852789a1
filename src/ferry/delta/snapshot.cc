#include "ferry/delta/snapshot.h"

#include <algorithm>

#include "ferry/delta/schema_json.h"
#include "ferry/delta/snapshot_internal.h"
#include "ferry/delta/stats.h"
#include "ferry/delta/table_features.h"
#include "ferry/delta/type_widening.h"

namespace ferry::delta {
namespace {

const Protocol kNoProtocol{};
const Metadata kNoMetadata{};
const columnar::SchemaPtr kNoSchema = std::make_shared<const columnar::Schema>();

}  // namespace

Snapshot::Snapshot() : state_(std::make_shared<SnapshotState>()) {}

int64_t Snapshot::version() const {
  return state_->version;
}
const Protocol& Snapshot::protocol() const {
  return state_->protocol ? *state_->protocol : kNoProtocol;
}
const Metadata& Snapshot::metadata() const {
  return state_->metadata ? *state_->metadata : kNoMetadata;
}
const columnar::SchemaPtr& Snapshot::schema() const {
  return state_->schema ? state_->schema : kNoSchema;
}

columnar::SchemaPtr Snapshot::data_schema() const {
  const auto& partition = partition_columns();
  std::vector<columnar::Field> fields;
  for (const columnar::Field& field : schema()->fields()) {
    if (std::find(partition.begin(), partition.end(), field.name) == partition.end()) {
      fields.push_back(field);
    }
  }
  return std::make_shared<const columnar::Schema>(std::move(fields));
}

const std::map<FileKey, AddFile>& Snapshot::files() const {
  return state_->files;
}
const std::map<FileKey, RemoveFile>& Snapshot::tombstones() const {
  return state_->tombstones;
}
const std::map<std::string, Txn>& Snapshot::txns() const {
  return state_->txns;
}
const std::map<std::string, DomainMetadata>& Snapshot::domain_metadata() const {
  return state_->domains;
}

std::optional<int64_t> Snapshot::position(std::string_view app_id) const {
  auto it = state_->txns.find(std::string(app_id));
  if (it == state_->txns.end()) {
    return std::nullopt;
  }
  return it->second.version;
}

int64_t Snapshot::timestamp_ms() const {
  return state_->timestamp_ms;
}
std::optional<int64_t> Snapshot::in_commit_timestamp() const {
  return state_->in_commit_timestamp;
}
std::optional<int64_t> Snapshot::newest_checkpoint_version() const {
  return state_->newest_checkpoint_version;
}

Result<TableProperties> Snapshot::properties() const {
  return ParseTableProperties(metadata().configuration);
}

int64_t Snapshot::num_files() const {
  return static_cast<int64_t>(state_->files.size());
}
int64_t Snapshot::size_bytes() const {
  return state_->total_size;
}

std::optional<int64_t> Snapshot::num_records() const {
  int64_t total = 0;
  for (const auto& [key, add] : state_->files) {
    std::optional<int64_t> n = add.stats ? StatsNumRecords(*add.stats) : std::optional<int64_t>();
    if (!n.has_value()) {
      return std::nullopt;
    }
    total += *n - (add.deletion_vector ? add.deletion_vector->cardinality : 0);
  }
  return total;
}

SnapshotState* MutableState(Snapshot* snapshot) {
  if (snapshot->state_.use_count() != 1) {
    snapshot->state_ = std::make_shared<SnapshotState>(*snapshot->state_);
  }
  return snapshot->state_.get();
}

void ApplyActions(std::vector<Action>&& actions, int64_t version, SnapshotState* state) {
  state->in_commit_timestamp = std::nullopt;
  for (Action& action : actions) {
    if (auto* remove = std::get_if<RemoveFile>(&action)) {
      FileKey key = KeyOf(*remove);
      auto it = state->files.find(key);
      if (it != state->files.end()) {
        state->total_size -= it->second.size;
        state->files.erase(it);
      }
      state->tombstones.insert_or_assign(std::move(key), std::move(*remove));
    }
  }
  for (Action& action : actions) {
    if (auto* add = std::get_if<AddFile>(&action)) {
      FileKey key = KeyOf(*add);
      state->tombstones.erase(key);
      auto [it, inserted] = state->files.try_emplace(std::move(key));
      if (!inserted) {
        state->total_size -= it->second.size;
      }
      state->total_size += add->size;
      it->second = std::move(*add);
    } else if (auto* txn = std::get_if<Txn>(&action)) {
      std::string app_id = txn->app_id;
      state->txns.insert_or_assign(std::move(app_id), std::move(*txn));
    } else if (auto* protocol = std::get_if<Protocol>(&action)) {
      state->protocol = std::move(*protocol);
    } else if (auto* metadata = std::get_if<Metadata>(&action)) {
      state->metadata = std::move(*metadata);
      state->metadata_version = version;
      state->schema = nullptr;
    } else if (auto* domain = std::get_if<DomainMetadata>(&action)) {
      if (domain->removed) {
        state->domains.erase(domain->domain);
      } else {
        std::string name = domain->domain;
        state->domains.insert_or_assign(std::move(name), std::move(*domain));
      }
    } else if (auto* info = std::get_if<CommitInfo>(&action)) {
      if (info->in_commit_timestamp.has_value()) {
        state->timestamp_ms = *info->in_commit_timestamp;
        state->in_commit_timestamp = info->in_commit_timestamp;
      }
    }
  }
  state->version = version;
}

Status FinishReplay(const std::string& where, SnapshotState* state) {
  if (!state->protocol.has_value()) {
    return DataLoss("{} at version {}: no protocol action in the log", where, state->version);
  }
  if (!state->metadata.has_value()) {
    return DataLoss("{} at version {}: no metaData action in the log", where, state->version);
  }
  FERRY_RETURN_IF_ERROR(
      CheckReadSupported(*state->protocol).WithContext("{} at version {}", where, state->version));
  if (state->schema == nullptr && state->metadata->schema_string.empty()) {
    state->schema = std::make_shared<const columnar::Schema>();
  } else if (state->schema == nullptr) {
    auto schema = ParseSchemaJson(state->metadata->schema_string);
    if (!schema.ok()) {
      return schema.status().WithContext(
          "{}: schemaString of the metaData in version {}{}", where, state->metadata_version,
          state->metadata_file.empty() ? std::string() : " (" + state->metadata_file + ")");
    }
    state->schema = *schema;
    if (SupportsTypeWidening(*state->protocol)) {
      FERRY_RETURN_IF_ERROR(CheckTypeChangesReadable(*state->schema)
                                .WithContext("{} at version {}", where, state->version));
    }
  }
  for (const std::string& column : state->metadata->partition_columns) {
    if (state->schema->num_fields() > 0 && !state->schema->FieldIndex(column).has_value()) {
      return DataLoss("{}: partition column '{}' (metaData of version {}) is not in the schema",
                      where, column, state->metadata_version);
    }
  }
  return Status::OK();
}

}  // namespace ferry::delta
