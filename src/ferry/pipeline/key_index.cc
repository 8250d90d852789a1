#include "ferry/pipeline/key_index.h"

#include <algorithm>
#include <charconv>
#include <set>
#include <utility>

#include "ferry/base/check.h"
#include "ferry/base/log.h"
#include "ferry/base/varint.h"
#include "ferry/delta/column_mapping.h"
#include "ferry/delta/deletion_vector.h"
#include "ferry/delta/file_scan.h"
#include "ferry/delta/partition_values.h"

namespace ferry::pipeline {
namespace {

// One partition value in a form that does not depend on the writer's spelling: integers as
// ferry prints them ("007" and "7" are one partition), null (or "") apart from every value.
void AppendCanonicalPartitionValue(columnar::TypeId type, const std::optional<std::string>& value,
                                   std::string* out) {
  if (!value || value->empty()) {
    out->push_back('N');
    return;
  }
  std::string canonical = *value;
  if (columnar::IsIntegerType(type)) {
    int64_t n = 0;
    auto [end, ec] = std::from_chars(value->data(), value->data() + value->size(), n);
    if (ec == std::errc() && end == value->data() + value->size()) {
      canonical = std::to_string(n);
    }
  }
  out->push_back('V');
  AppendVarint(out, canonical.size());
  out->append(canonical);
}

}  // namespace

void KeyIndex::Clear() {
  entries_.clear();
  files_.clear();
  file_ids_.clear();
  free_ids_.clear();
  live_ = 0;
  version_ = -1;
  loaded_.clear();
  pending_.clear();
  pending_paths_.clear();
}

// ---- Partition pruning ----

void KeyIndex::UsePartitions(const columnar::Schema& schema,
                             const std::vector<std::string>& partition_columns) {
  partition_columns_.clear();
  partition_types_.clear();
  for (const std::string& name : partition_columns) {
    std::optional<int> i = schema.FieldIndex(name);
    const bool key_column =
        std::find(keys_.key().begin(), keys_.key().end(), name) != keys_.key().end();
    if (!i || !key_column) {
      partition_types_.clear();
      return;
    }
    columnar::TypeId type = schema.field(*i).type->id();
    if (!columnar::IsIntegerType(type) && type != columnar::TypeId::kString &&
        type != columnar::TypeId::kDate) {
      partition_types_.clear();
      return;
    }
    partition_types_.push_back(type);
  }
  if (!partition_types_.empty()) {
    partition_columns_ = partition_columns;
  }
}

std::string KeyIndex::FilePartition(const delta::Snapshot& snapshot,
                                    const delta::AddFile& add) const {
  delta::PartitionValues values = delta::LogicalPartitionValues(
      add.partition_values, *snapshot.schema(), snapshot.partition_columns());
  std::string out;
  for (size_t c = 0; c < partition_columns_.size(); ++c) {
    auto it = values.find(partition_columns_[c]);
    AppendCanonicalPartitionValue(partition_types_[c],
                                  it == values.end() ? std::nullopt : it->second, &out);
  }
  return out;
}

std::set<std::string> KeyIndex::RowPartitions(const columnar::RecordBatch& rows,
                                              const std::vector<int64_t>& which) const {
  std::vector<const columnar::Column*> columns;
  for (const std::string& name : partition_columns_) {
    std::optional<int> i = rows.schema().FieldIndex(name);
    FERRY_CHECK(i.has_value());  // a key column: Encode() found it
    columns.push_back(&rows.column(*i));
  }
  std::set<std::string> out;
  for (int64_t row : which) {
    std::string partition;
    for (size_t c = 0; c < columns.size(); ++c) {
      AppendCanonicalPartitionValue(partition_types_[c],
                                    delta::SerializePartitionValue(*columns[c], row).log_value,
                                    &partition);
    }
    out.insert(std::move(partition));
  }
  return out;
}

Status KeyIndex::LoadPartitions(const delta::Table& table, const delta::Snapshot& snapshot,
                                const std::set<std::string>& partitions) {
  for (const std::string& partition : partitions) {
    if (!loaded_.insert(partition).second) {
      continue;
    }
    auto it = pending_.find(partition);
    if (it == pending_.end()) {
      continue;  // no file yet: loaded, empty
    }
    std::set<std::string> paths = std::move(it->second);
    pending_.erase(it);
    for (const std::string& path : paths) {
      pending_paths_.erase(path);
      const std::string canonical = delta::CanonicalPath(path);
      auto live = snapshot.files().lower_bound(delta::FileKey{canonical, ""});
      if (live == snapshot.files().end() || live->first.path != canonical) {
        return Internal("upsert key index: {} (partition pending) is not live in version {}", path,
                        snapshot.version());
      }
      FERRY_RETURN_IF_ERROR(AddFile(table, snapshot, live->second));
    }
  }
  return Status::OK();
}

const KeyIndex::Entry* KeyIndex::Find(const std::string& key) const {
  auto it = entries_.find(key);
  return it == entries_.end() ? nullptr : &it->second;
}

void KeyIndex::NoteDeleted(const std::string& key, int64_t sequence) {
  Entry& entry = entries_[key];
  if (entry.file >= 0) {
    --live_;
  }
  entry = Entry{.file = -1, .row = 0, .sequence = sequence};
}

Status KeyIndex::Rebuild(const delta::Table& table, const delta::Snapshot& snapshot) {
  Clear();
  ++rebuilds_;
  for (const auto& [file_key, add] : snapshot.files()) {
    FERRY_RETURN_IF_ERROR(AddFile(table, snapshot, add));
  }
  version_ = snapshot.version();
  return Status::OK();
}

Status KeyIndex::AddFile(const delta::Table& table, const delta::Snapshot& snapshot,
                         const delta::AddFile& add) {
  if (prunes()) {
    std::string partition = FilePartition(snapshot, add);
    if (loaded_.count(partition) == 0) {
      DropFile(add.path);  // a file added again with another deletion vector: noted afresh
      pending_[partition].insert(add.path);
      pending_paths_[add.path] = std::move(partition);
      return Status::OK();
    }
  }
  // Physical rows: the file without its deletion vector, which is applied below.
  delta::AddFile whole = add;
  whole.deletion_vector.reset();
  File file{.path = add.path, .keys = {}};
  std::vector<int64_t> sequences;
  Status st = delta::ScanLiveFile(
      table, snapshot, whole, keys_.ScanColumns(), delta::kScanBatchRows,
      [&](columnar::RecordBatch& batch) -> Status {
        FERRY_ASSIGN_OR_RETURN(std::vector<std::string> keys, keys_.Encode(batch));
        FERRY_ASSIGN_OR_RETURN(std::vector<int64_t> seqs, keys_.Sequences(batch));
        for (std::string& key : keys) {
          file.keys.push_back(std::move(key));
        }
        sequences.insert(sequences.end(), seqs.begin(), seqs.end());
        return Status::OK();
      });
  FERRY_RETURN_IF_ERROR(st.WithContext("upsert key index"));
  ++files_read_;
  delta::RoaringBitmap64 deleted;
  if (add.deletion_vector) {
    FERRY_ASSIGN_OR_RETURN(
        deleted, delta::LoadDeletionVector(table, add, static_cast<uint64_t>(file.keys.size())));
  }
  DropFile(add.path);  // a file added again (another deletion vector): read afresh
  int32_t id;
  if (!free_ids_.empty()) {
    id = free_ids_.back();
    free_ids_.pop_back();
  } else {
    id = static_cast<int32_t>(files_.size());
    files_.emplace_back();
  }
  for (size_t row = 0; row < file.keys.size(); ++row) {
    if (deleted.Contains(row)) {
      file.keys[row].clear();
      continue;
    }
    Entry& entry = entries_[file.keys[row]];
    if (entry.file < 0) {
      ++live_;
    }
    entry = Entry{.file = id,
                  .row = static_cast<int64_t>(row),
                  .sequence = sequences.empty() ? kNoSequence : sequences[row]};
  }
  file_ids_[add.path] = id;
  files_[static_cast<size_t>(id)] = std::move(file);
  return Status::OK();
}

void KeyIndex::DropFile(const std::string& path) {
  if (auto pending = pending_paths_.find(path); pending != pending_paths_.end()) {
    auto paths = pending_.find(pending->second);
    if (paths != pending_.end()) {
      paths->second.erase(path);
      if (paths->second.empty()) {
        pending_.erase(paths);
      }
    }
    pending_paths_.erase(pending);
  }
  auto it = file_ids_.find(path);
  if (it == file_ids_.end()) {
    return;
  }
  int32_t id = it->second;
  File& file = files_[static_cast<size_t>(id)];
  for (size_t row = 0; row < file.keys.size(); ++row) {
    const std::string& key = file.keys[row];
    if (key.empty()) {
      continue;
    }
    auto entry = entries_.find(key);
    if (entry != entries_.end() && entry->second.file == id &&
        entry->second.row == static_cast<int64_t>(row)) {
      entries_.erase(entry);
      --live_;
    }
  }
  file = File{};
  file_ids_.erase(it);
  free_ids_.push_back(id);
}

void KeyIndex::DropRows(const std::string& path, const delta::RoaringBitmap64& deleted) {
  auto it = file_ids_.find(path);
  if (it == file_ids_.end()) {
    return;
  }
  int32_t id = it->second;
  File& file = files_[static_cast<size_t>(id)];
  for (uint64_t row : deleted.ToVector()) {
    if (row >= file.keys.size() || file.keys[row].empty()) {
      continue;
    }
    auto entry = entries_.find(file.keys[row]);
    if (entry != entries_.end() && entry->second.file == id &&
        entry->second.row == static_cast<int64_t>(row)) {
      entries_.erase(entry);
      --live_;
    }
    file.keys[row].clear();
  }
}

Status KeyIndex::CatchUp(const delta::Table& table, const delta::Snapshot& snapshot) {
  if (version_ < 0 || version_ > snapshot.version()) {
    return Rebuild(table, snapshot);
  }
  for (int64_t v = version_ + 1; v <= snapshot.version(); ++v) {
    Result<std::vector<delta::Action>> actions = table.ReadCommit(v);
    if (!actions.ok()) {
      if (actions.status().code() == StatusCode::kNotFound) {
        FERRY_LOG_INFO("upsert key index: version {} of {} is gone from the log; rebuilding", v,
                       table.Describe());
        return Rebuild(table, snapshot);
      }
      return actions.status();
    }
    // Removes before adds (as log replay applies them).
    std::map<std::string, const delta::AddFile*> added;
    for (const delta::Action& action : *actions) {
      if (const auto* add = std::get_if<delta::AddFile>(&action)) {
        added[add->path] = add;
      }
    }
    std::set<std::string> re_added;
    for (const delta::Action& action : *actions) {
      const auto* remove = std::get_if<delta::RemoveFile>(&action);
      if (remove == nullptr) {
        continue;
      }
      auto again = added.find(remove->path);
      if (again != added.end() && again->second->deletion_vector &&
          file_ids_.count(remove->path) != 0) {
        // The same file with another deletion vector: drop the rows it deletes now.
        const File& file = files_[static_cast<size_t>(file_ids_[remove->path])];
        FERRY_ASSIGN_OR_RETURN(delta::RoaringBitmap64 deleted,
                               delta::LoadDeletionVector(table, *again->second,
                                                         static_cast<uint64_t>(file.keys.size())));
        DropRows(remove->path, deleted);
        re_added.insert(remove->path);
      } else {
        DropFile(remove->path);
      }
    }
    for (const auto& [path, add] : added) {
      if (re_added.count(path) == 0) {
        FERRY_RETURN_IF_ERROR(AddFile(table, snapshot, *add));
      }
    }
    version_ = v;
  }
  return Status::OK();
}

}  // namespace ferry::pipeline
