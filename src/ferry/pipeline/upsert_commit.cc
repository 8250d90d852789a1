#include "ferry/pipeline/upsert_commit.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "ferry/base/clock.h"
#include "ferry/base/log.h"
#include "ferry/delta/deletion_vector.h"
#include "ferry/delta/file_scan.h"
#include "ferry/delta/stats.h"
#include "ferry/delta/table_features.h"
#include "ferry/delta/uuid.h"

namespace ferry::pipeline {

namespace {

// The touched rows of one file (step 4).
struct Touched {
  std::vector<int64_t> rows;  // physical row indexes
  std::vector<std::string> keys;
};

// The live add of `path` in `snapshot` (nullptr when it is not live).
const delta::AddFile* LiveAdd(const delta::Snapshot& snapshot, const std::string& path) {
  const std::string canonical = delta::CanonicalPath(path);
  auto it = snapshot.files().lower_bound(delta::FileKey{canonical, ""});
  if (it == snapshot.files().end() || it->first.path != canonical) {
    return nullptr;
  }
  return &it->second;
}

delta::RemoveFile RemoveOf(const delta::AddFile& add, int64_t now_ms) {
  return delta::RemoveFile{.path = add.path,
                           .deletion_timestamp = now_ms,
                           .data_change = true,
                           .extended_file_metadata = true,
                           .partition_values = add.partition_values,
                           .size = add.size,
                           .stats = std::nullopt,
                           .tags = add.tags,
                           .deletion_vector = add.deletion_vector};
}

// Stats of a file that now has a deletion vector: min/max/nullCount still describe the
// physical rows, so they are wide bounds (PROTOCOL.md "Per-file Statistics": tightBounds).
std::optional<std::string> WideStats(const std::optional<std::string>& stats) {
  if (!stats) {
    return stats;
  }
  nlohmann::json json = nlohmann::json::parse(*stats, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) {
    return stats;
  }
  json["tightBounds"] = false;
  return json.dump();
}

}  // namespace

bool UsesDeletionVectors(const delta::Snapshot& snapshot) {
  std::vector<std::string> features = delta::EffectiveWriterFeatures(snapshot.protocol());
  return std::find(features.begin(), features.end(), "deletionVectors") != features.end();
}

Result<std::unique_ptr<UpsertCommit>> UpsertCommit::Create(const columnar::Schema& table_schema,
                                                           const UpsertSpec& spec) {
  FERRY_ASSIGN_OR_RETURN(ChangeKeys keys,
                         ChangeKeys::Create(table_schema, spec.key, spec.sequence));
  return std::unique_ptr<UpsertCommit>(new UpsertCommit(std::move(keys), spec));
}

Status UpsertCommit::Load(const delta::Table& table, const delta::Snapshot& snapshot) {
  FERRY_ASSIGN_OR_RETURN(delta::TableProperties properties, snapshot.properties());
  if (properties.append_only) {
    return InvalidArgument(
        "{} sets delta.appendOnly = true: an upsert pipeline removes rows, which the table "
        "forbids",
        table.Describe());
  }
  if (properties.change_data_feed) {
    // The commit would refuse too (transaction.h step 1): say so before reading anything.
    return InvalidArgument(
        "{} sets delta.enableChangeDataFeed = true: an upsert pipeline replaces and deletes "
        "rows, and ferry does not write the change data files (`cdc`) the feed needs (docs/"
        "cdc.md, \"Limits\"); unset the property (ALTER TABLE ... SET TBLPROPERTIES "
        "('delta.enableChangeDataFeed' = 'false')) or use an append pipeline",
        table.Describe());
  }
  pending_deletes_.clear();
  commits_since_persist_ = 0;
  index_.UsePartitions(*snapshot.schema(), snapshot.partition_columns());
  return index_.Load(table, snapshot, spec_.index_name);
}

Result<UpsertActions> UpsertCommit::PlanChanges(const delta::Table& table,
                                                const delta::Snapshot& snapshot,
                                                const columnar::RecordBatch& rows,
                                                const std::vector<transform::ChangeOp>& ops,
                                                const delta::TableWriterOptions& writer_options) {
  if (static_cast<int64_t>(ops.size()) != rows.num_rows()) {
    return Internal("upsert: {} rows but {} change kinds", rows.num_rows(), ops.size());
  }
  UpsertActions out;
  pending_deletes_.clear();
  // 1.
  const ChangeKeys& keys = index_.keys();
  FERRY_ASSIGN_OR_RETURN(std::vector<std::string> encoded, keys.Encode(rows));
  FERRY_ASSIGN_OR_RETURN(std::vector<int64_t> sequences, keys.Sequences(rows));
  std::vector<int64_t> winners = CollapseChanges(encoded, sequences);
  out.collapsed = rows.num_rows() - static_cast<int64_t>(winners.size());
  // 2.
  FERRY_RETURN_IF_ERROR(index_.CatchUp(table, snapshot));
  if (index_.prunes()) {
    // Only the files of the partitions the batch's keys live in.
    FERRY_RETURN_IF_ERROR(
        index_.LoadPartitions(table, snapshot, index_.RowPartitions(rows, winners)));
  }
  std::vector<int64_t> upserts;
  std::map<int32_t, Touched> touched;  // index file id -> rows
  for (int64_t row : winners) {
    const auto r = static_cast<size_t>(row);
    const int64_t sequence = sequences.empty() ? kNoSequence : sequences[r];
    const KeyIndex::Entry* entry = index_.Find(encoded[r]);
    if (entry != nullptr && keys.has_sequence() && sequence < entry->sequence) {
      ++out.stale;
      continue;
    }
    if (entry != nullptr && entry->file >= 0) {
      Touched& t = touched[entry->file];
      t.rows.push_back(entry->row);
      t.keys.push_back(encoded[r]);
    }
    if (ops[r] == transform::ChangeOp::kDelete) {
      ++out.deletes;
      pending_deletes_.emplace_back(encoded[r], sequence);
    } else {
      upserts.push_back(row);
    }
  }
  // 3.
  FERRY_ASSIGN_OR_RETURN(auto writer, delta::TableWriter::Create(table, snapshot, writer_options));
  if (!upserts.empty()) {
    FERRY_RETURN_IF_ERROR(writer->Write(rows.Take(upserts)));
  }
  out.upserts = static_cast<int64_t>(upserts.size());
  // 4.
  const int64_t now = WallMillis();
  const bool dv = UsesDeletionVectors(snapshot);
  std::optional<delta::DeletionVectorFileWriter> dv_file;
  std::vector<delta::AddFile> dv_adds;
  for (auto& [file, t] : touched) {
    const std::string& path = index_.path(file);
    const delta::AddFile* add = LiveAdd(snapshot, path);
    if (add == nullptr) {
      return Internal("upsert: the key index points at {}, which is not live in version {}", path,
                      snapshot.version());
    }
    out.replaced += static_cast<int64_t>(t.rows.size());
    out.removes.push_back(RemoveOf(*add, now));
    if (!dv) {
      FERRY_RETURN_IF_ERROR(RewriteFile(table, snapshot, *add, t.keys, writer.get(), &out));
      continue;
    }
    std::optional<int64_t> num_rows =
        add->stats ? delta::StatsNumRecords(*add->stats) : std::nullopt;
    if (!num_rows) {
      // Without numRecords the DV cannot be checked against the file: rewrite it instead.
      FERRY_RETURN_IF_ERROR(RewriteFile(table, snapshot, *add, t.keys, writer.get(), &out));
      continue;
    }
    FERRY_ASSIGN_OR_RETURN(
        delta::RoaringBitmap64 deleted,
        delta::LoadDeletionVector(table, *add, static_cast<uint64_t>(*num_rows)));
    for (int64_t row : t.rows) {
      deleted.Add(static_cast<uint64_t>(row));
    }
    if (!dv_file) {
      FERRY_ASSIGN_OR_RETURN(dv_file, delta::DeletionVectorFileWriter::Create(delta::RandomUuid()));
    }
    delta::AddFile again = *add;
    again.deletion_vector = dv_file->Append(deleted);
    again.data_change = true;
    again.modification_time = now;
    again.stats = WideStats(add->stats);
    // baseRowId and defaultRowCommitVersion stay the live file's: the rows it keeps keep their
    // row ids (the commit checks them against the snapshot, transaction.h step 2).
    dv_adds.push_back(std::move(again));
    ++out.dv_files;
  }
  FERRY_ASSIGN_OR_RETURN(out.adds, writer->Finish());
  for (const delta::AddFile& add : out.adds) {
    out.bytes += add.size;
  }
  if (dv_file) {
    // One DV file for the batch; unnamed by any commit until this one lands.
    FERRY_RETURN_IF_ERROR(table.store().Put(table.Key(dv_file->relative_path()), dv_file->bytes()));
  }
  for (delta::AddFile& add : dv_adds) {
    out.adds.push_back(std::move(add));
  }
  return out;
}

Status UpsertCommit::RewriteFile(const delta::Table& table, const delta::Snapshot& snapshot,
                                 const delta::AddFile& add, const std::vector<std::string>& keys,
                                 delta::TableWriter* writer, UpsertActions* out) {
  std::unordered_set<std::string> drop(keys.begin(), keys.end());
  const ChangeKeys& change_keys = index_.keys();
  Status st = delta::ScanLiveFile(
      table, snapshot, add, {}, delta::kScanBatchRows, [&](columnar::RecordBatch& batch) -> Status {
        FERRY_ASSIGN_OR_RETURN(std::vector<std::string> encoded, change_keys.Encode(batch));
        std::vector<int64_t> keep;
        keep.reserve(encoded.size());
        for (size_t row = 0; row < encoded.size(); ++row) {
          if (drop.count(encoded[row]) == 0) {
            keep.push_back(static_cast<int64_t>(row));
          }
        }
        if (keep.empty()) {
          return Status::OK();
        }
        if (keep.size() == encoded.size()) {
          return writer->Write(batch);
        }
        return writer->Write(batch.Take(keep));
      });
  FERRY_RETURN_IF_ERROR(st.WithContext("upsert: rewriting {}", add.path));
  ++out->rewritten_files;
  return Status::OK();
}

Result<CommitFiles> UpsertCommit::Plan(const delta::Table& table, const delta::Snapshot& snapshot,
                                       const RowsToCommit& rows,
                                       const delta::TableWriterOptions& writer_options) {
  if (rows.filtered > 0) {
    return Internal("an upsert pipeline cannot filter rows (`where`)");
  }
  FERRY_ASSIGN_OR_RETURN(UpsertActions actions,
                         PlanChanges(table, snapshot, rows.rows, rows.ops, writer_options));
  FERRY_LOG_DEBUG(
      "upsert plan against version {} of {}: {} upserts, {} deletes, {} rows replaced, {} "
      "collapsed, {} stale, {} files rewritten, {} deletion vectors",
      snapshot.version(), table.Describe(), actions.upserts, actions.deletes, actions.replaced,
      actions.collapsed, actions.stale, actions.rewritten_files, actions.dv_files);
  return CommitFiles{.adds = std::move(actions.adds),
                     .removes = std::move(actions.removes),
                     .rows_written = actions.upserts,
                     .skipped = actions.collapsed + actions.stale,
                     .deletes = actions.deletes,
                     .replaced = actions.replaced,
                     .bytes = actions.bytes};
}

void UpsertCommit::DescribeCommit(delta::StringMap* parameters) const {
  (*parameters)["outputMode"] = "Update";
  (*parameters)["upsertKey"] = fmt::format("{}", fmt::join(spec_.key, ","));
}

bool UpsertCommit::Replans(delta::Conflict conflict) const {
  // Another writer removed a file the plan marks: the index finds the keys' rows again in the
  // files that replaced it.
  return conflict == delta::Conflict::kDeleteRead || conflict == delta::Conflict::kDeleteDelete;
}

Status UpsertCommit::Recovered(const delta::Table& table, const delta::Snapshot& snapshot) {
  return Committed(table, snapshot, snapshot.version());
}

Status UpsertCommit::Committed(const delta::Table& table, const delta::Snapshot& snapshot,
                               int64_t /*version*/) {
  FERRY_RETURN_IF_ERROR(index_.CatchUp(table, snapshot));
  if (index_.keys().has_sequence()) {
    for (const auto& [key, sequence] : pending_deletes_) {
      const KeyIndex::Entry* entry = index_.Find(key);
      if (entry == nullptr || entry->file < 0) {
        index_.NoteDeleted(key, sequence);
      }
    }
  }
  pending_deletes_.clear();
  if (!spec_.index_name.empty() && ++commits_since_persist_ >= spec_.persist_every) {
    commits_since_persist_ = 0;
    Status written = index_.Persist(table, snapshot, spec_.index_name);
    if (!written.ok()) {
      FERRY_LOG_WARN(
          "upsert key index of {}: could not write it at version {} (a restart reads more of "
          "the log): {}",
          table.Describe(), index_.version(), written.ToString());
    }
  }
  return Status::OK();
}

}  // namespace ferry::pipeline
