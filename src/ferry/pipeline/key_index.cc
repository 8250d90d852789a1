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
#include "ferry/delta/stats.h"
#include "ferry/pipeline/key_index_writer.h"

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

// The encoded size of a key of `key` (change_keys.h: a tag byte and 8 bytes an integer-like
// value, 16 a decimal, a 4-byte length and the bytes a string: 16 bytes guessed).
size_t EstimatedKeyBytes(const columnar::Schema& schema, const std::vector<std::string>& key) {
  size_t bytes = 0;
  for (const std::string& name : key) {
    std::optional<int> i = schema.FieldIndex(name);
    const columnar::TypeId type = i ? schema.field(*i).type->id() : columnar::TypeId::kString;
    if (type == columnar::TypeId::kDecimal) {
      bytes += 17;
    } else if (type == columnar::TypeId::kString || type == columnar::TypeId::kBinary ||
               type == columnar::TypeId::kJson || type == columnar::TypeId::kFixedBinary) {
      bytes += 21;
    } else {
      bytes += 9;
    }
  }
  return bytes;
}

}  // namespace

KeyIndex::KeyIndex(ChangeKeys keys, KeyIndexOptions options)
    : keys_(std::move(keys)),
      options_(std::move(options)),
      writer_(std::make_unique<KeyIndexWriter>()) {}

KeyIndex::~KeyIndex() = default;

void KeyIndex::Clear() {
  table_.Clear();
  entries_ = {};
  files_ = {};
  file_ids_ = {};
  free_ids_.clear();
  live_ = 0;
  high_sequence_ = kNoSequence;
  version_ = -1;
  loaded_.clear();
  pending_.clear();
  pending_paths_.clear();
}

size_t KeyIndex::MemoryBytes() const {
  size_t bytes = table_.MemoryBytes() + entries_.capacity() * sizeof(Entry);
  for (const File& file : files_) {
    bytes += file.ids.capacity() * sizeof(uint32_t);
  }
  return bytes;
}

void KeyIndex::Publish() const {
  const KeyIndexMetrics& m = options_.metrics;
  if (m.keys != nullptr) {
    m.keys->Set(static_cast<double>(live_));
  }
  if (m.tombstones != nullptr) {
    m.tombstones->Set(static_cast<double>(tombstones()));
  }
  if (m.bytes != nullptr) {
    m.bytes->Set(static_cast<double>(MemoryBytes()));
  }
}

uint32_t KeyIndex::SetEntry(std::string_view key, Entry entry) {
  bool inserted = false;
  const uint32_t id = table_.Insert(key, &inserted);
  if (id >= entries_.size()) {
    entries_.resize(static_cast<size_t>(id) + 1);
  }
  Entry& slot = entries_[id];
  const bool was_live = !inserted && slot.file >= 0;
  if (was_live != (entry.file >= 0)) {
    if (was_live) {
      --live_;
    } else {
      ++live_;
    }
  }
  slot = entry;
  high_sequence_ = std::max(high_sequence_, entry.sequence);
  return id;
}

void KeyIndex::EraseLive(uint32_t id) {
  table_.Erase(id);
  entries_[id] = Entry{};
  --live_;
}

bool KeyIndex::LiveRow(int32_t file, size_t row) const {
  const uint32_t id = files_[static_cast<size_t>(file)].ids[row];
  if (id == KeyTable::kNoKey || !table_.live(id)) {
    return false;
  }
  const Entry& entry = entries_[id];
  return entry.file == file && entry.row == row;
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

const KeyIndex::Entry* KeyIndex::Find(std::string_view key) const {
  const uint32_t id = table_.Find(key);
  return id == KeyTable::kNoKey ? nullptr : &entries_[id];
}

void KeyIndex::NoteDeleted(std::string_view key, int64_t sequence) {
  if (sequence == kNoSequence) {
    // Nothing is older: the tombstone would guard nothing.
    const uint32_t id = table_.Find(key);
    if (id != KeyTable::kNoKey) {
      if (entries_[id].file >= 0) {
        EraseLive(id);
      } else {
        table_.Erase(id);
        entries_[id] = Entry{};
      }
    }
    return;
  }
  SetEntry(key, Entry{.file = -1, .row = 0, .sequence = sequence});
}

int64_t KeyIndex::DropOldTombstones() {
  if (tombstones() == 0) {
    return 0;
  }
  int64_t floor = INT64_MIN;
  if (options_.tombstone_retention && high_sequence_ != kNoSequence) {
    const int64_t retention = std::max<int64_t>(0, *options_.tombstone_retention);
    floor = high_sequence_ < INT64_MIN + retention ? INT64_MIN : high_sequence_ - retention;
  }
  int64_t dropped = 0;
  std::vector<std::pair<int64_t, uint32_t>> kept;  // (sequence, id)
  for (uint32_t id = 0; id < table_.id_limit(); ++id) {
    if (!table_.live(id) || entries_[id].file >= 0) {
      continue;
    }
    if (entries_[id].sequence < floor) {
      table_.Erase(id);
      entries_[id] = Entry{};
      ++dropped;
    } else {
      kept.emplace_back(entries_[id].sequence, id);
    }
  }
  const auto cap = static_cast<size_t>(std::max<int64_t>(0, options_.max_tombstones));
  if (kept.size() > cap) {
    const auto excess = static_cast<std::ptrdiff_t>(kept.size() - cap);
    std::nth_element(kept.begin(), kept.begin() + excess, kept.end());
    for (auto it = kept.begin(); it != kept.begin() + excess; ++it) {
      table_.Erase(it->second);
      entries_[it->second] = Entry{};
      ++dropped;
    }
  }
  if (dropped > 0) {
    table_.MaybeCompact();
    FERRY_LOG_DEBUG("upsert key index: {} tombstones dropped (watermark {}, {} kept)", dropped,
                    floor, tombstones());
    if (options_.metrics.tombstones_dropped != nullptr) {
      options_.metrics.tombstones_dropped->Increment(static_cast<double>(dropped));
    }
  }
  return dropped;
}

Status KeyIndex::Rebuild(const delta::Table& table, const delta::Snapshot& snapshot) {
  Clear();
  ++rebuilds_;
  if (!prunes()) {
    // Room for every live row up front: growing a table of millions of keys rehashes it.
    // numRecords counts physical rows, so the rows a file's deletion vector deletes are taken
    // off (an upsert table with deletion vectors holds one dead row per update until an
    // optimize); capped, so that a huge table grows as it goes instead of reserving it all.
    constexpr size_t kMaxReservedRows = size_t{1} << 30;
    size_t rows = 0;
    for (const auto& [file_key, add] : snapshot.files()) {
      std::optional<int64_t> n = add.stats ? delta::StatsNumRecords(*add.stats) : std::nullopt;
      int64_t live = n.value_or(0) - (add.deletion_vector ? add.deletion_vector->cardinality : 0);
      rows += static_cast<size_t>(std::max<int64_t>(0, live));
    }
    rows = std::min(rows, kMaxReservedRows);
    table_.Reserve(rows, rows * EstimatedKeyBytes(*snapshot.schema(), keys_.key()));
    entries_.reserve(rows);
  }
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
  // Physical rows: the file without its deletion vector, which is applied below. The keys are
  // gathered first (one buffer), and enter the index only after the file's old version left it.
  delta::AddFile whole = add;
  whole.deletion_vector.reset();
  std::string key_bytes;
  std::vector<size_t> key_ends;
  std::vector<int64_t> sequences;
  Status st = delta::ScanLiveFile(
      table, snapshot, whole, keys_.ScanColumns(), delta::kScanBatchRows,
      [&](columnar::RecordBatch& batch) -> Status {
        FERRY_ASSIGN_OR_RETURN(std::vector<std::string> keys, keys_.Encode(batch));
        FERRY_ASSIGN_OR_RETURN(std::vector<int64_t> seqs, keys_.Sequences(batch));
        for (const std::string& key : keys) {
          key_bytes += key;
          key_ends.push_back(key_bytes.size());
        }
        sequences.insert(sequences.end(), seqs.begin(), seqs.end());
        return Status::OK();
      });
  FERRY_RETURN_IF_ERROR(st.WithContext("upsert key index"));
  ++files_read_;
  const size_t rows = key_ends.size();
  if (rows > UINT32_MAX) {
    return NotSupported("upsert key index: {} has {} rows (at most {} a file)", add.path, rows,
                        UINT32_MAX);
  }
  delta::RoaringBitmap64 deleted;
  if (add.deletion_vector) {
    FERRY_ASSIGN_OR_RETURN(deleted,
                           delta::LoadDeletionVector(table, add, static_cast<uint64_t>(rows)));
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
  File file{.path = add.path, .ids = std::vector<uint32_t>(rows, KeyTable::kNoKey)};
  size_t begin = 0;
  for (size_t row = 0; row < rows; ++row) {
    const std::string_view key(key_bytes.data() + begin, key_ends[row] - begin);
    begin = key_ends[row];
    if (deleted.Contains(row)) {
      ++file.deleted_rows;
      continue;
    }
    file.ids[row] =
        SetEntry(key, Entry{.file = id,
                            .row = static_cast<uint32_t>(row),
                            .sequence = sequences.empty() ? kNoSequence : sequences[row]});
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
  const int32_t id = it->second;
  File& file = files_[static_cast<size_t>(id)];
  for (size_t row = 0; row < file.ids.size(); ++row) {
    if (LiveRow(id, row)) {
      EraseLive(file.ids[row]);
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
  const int32_t id = it->second;
  File& file = files_[static_cast<size_t>(id)];
  for (uint64_t row : deleted.ToVector()) {
    if (row >= file.ids.size()) {
      continue;
    }
    if (LiveRow(id, row)) {
      EraseLive(file.ids[row]);
    }
    if (file.ids[row] != KeyTable::kNoKey) {
      file.ids[row] = KeyTable::kNoKey;
      ++file.deleted_rows;
    }
  }
}

bool KeyIndex::Revives(int32_t file, const delta::RoaringBitmap64& deleted) const {
  // The rows held as deleted that the vector deletes too, against all rows held as deleted.
  const File& f = files_[static_cast<size_t>(file)];
  size_t still_deleted = 0;
  for (uint64_t row : deleted.ToVector()) {
    if (row < f.ids.size() && f.ids[row] == KeyTable::kNoKey) {
      ++still_deleted;
    }
  }
  return still_deleted < f.deleted_rows;
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
      auto indexed = file_ids_.find(remove->path);
      if (again != added.end() && again->second->deletion_vector && indexed != file_ids_.end()) {
        // The same file with another deletion vector. Usually (a DELETE, an upsert) it deletes
        // every row deleted before and some more: only those leave. When it keeps a row the
        // index holds as deleted (a RESTORE to a version with a smaller vector), that row is
        // live again: the file is read afresh, its new vector applied, as an added file is.
        const int32_t id = indexed->second;
        FERRY_ASSIGN_OR_RETURN(
            delta::RoaringBitmap64 deleted,
            delta::LoadDeletionVector(
                table, *again->second,
                static_cast<uint64_t>(files_[static_cast<size_t>(id)].ids.size())));
        if (!Revives(id, deleted)) {
          DropRows(remove->path, deleted);
          re_added.insert(remove->path);
          continue;
        }
        FERRY_LOG_INFO(
            "upsert key index of {}: {} is added again in version {} with a deletion vector that "
            "keeps rows deleted before (a RESTORE?); reading its keys again",
            table.Describe(), remove->path, v);
      }
      DropFile(remove->path);
    }
    for (const auto& [path, add] : added) {
      if (re_added.count(path) == 0) {
        FERRY_RETURN_IF_ERROR(AddFile(table, snapshot, *add));
      }
    }
    version_ = v;
  }
  table_.MaybeCompact();
  return Status::OK();
}

}  // namespace ferry::pipeline
