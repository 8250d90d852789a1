#include "ferry/pipeline/key_index.h"

#include <set>
#include <utility>

#include "ferry/base/log.h"
#include "ferry/delta/deletion_vector.h"
#include "ferry/delta/file_scan.h"

namespace ferry::pipeline {

void KeyIndex::Clear() {
  entries_.clear();
  files_.clear();
  file_ids_.clear();
  free_ids_.clear();
  live_ = 0;
  version_ = -1;
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
  for (const auto& [file_key, add] : snapshot.files()) {
    FERRY_RETURN_IF_ERROR(AddFile(table, snapshot, add));
  }
  version_ = snapshot.version();
  return Status::OK();
}

Status KeyIndex::AddFile(const delta::Table& table, const delta::Snapshot& snapshot,
                         const delta::AddFile& add) {
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
