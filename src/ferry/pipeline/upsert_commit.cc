#include "ferry/pipeline/upsert_commit.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <iterator>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "ferry/base/clock.h"
#include "ferry/base/log.h"
#include "ferry/delta/deletion_vector.h"
#include "ferry/delta/file_scan.h"
#include "ferry/delta/stats.h"
#include "ferry/delta/table_features.h"
#include "ferry/delta/uuid.h"
#include "ferry/pipeline/schema_evolver.h"
#include "ferry/transform/expression.h"

namespace ferry::pipeline {

namespace {

// The touched rows of one file (step 3).
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

// Where the rows of one plan go (the copies of step 3, the new versions of step 4): the table's
// columns of this attempt (a schema change of the commit included), then, when the table keeps
// row ids and names the materialized columns, those two (PROTOCOL.md "Row Tracking"): a copied
// row carries its stable row id and row commit version there, an updated row its old row id
// (its commit version null: the new file's defaultRowCommitVersion, this commit's), a new row
// neither.
struct Output {
  columnar::SchemaPtr table;
  columnar::SchemaPtr batch;  // `table` plus the hidden columns
  std::optional<delta::RowTrackingColumns> tracking;
  std::vector<columnar::Field> hidden;
};

Output MakeOutput(const delta::Snapshot& snapshot, const columnar::SchemaPtr& table) {
  Output out{.table = table, .batch = table, .tracking = std::nullopt, .hidden = {}};
  if (!delta::RowTrackingEnabled(snapshot.protocol(), snapshot.metadata())) {
    return out;
  }
  // A table that does not name the columns: its copied and updated rows get fresh ids.
  Result<delta::RowTrackingColumns> names =
      delta::MaterializedRowTrackingColumns(snapshot.metadata());
  if (!names.ok()) {
    return out;
  }
  out.tracking = std::move(*names);
  out.hidden = {
      columnar::Field{out.tracking->row_id, columnar::DataType::Int64(), true, {}},
      columnar::Field{out.tracking->row_commit_version, columnar::DataType::Int64(), true, {}}};
  std::vector<columnar::Field> fields = table->fields();
  fields.insert(fields.end(), out.hidden.begin(), out.hidden.end());
  out.batch = std::make_shared<const columnar::Schema>(std::move(fields));
  return out;
}

// `rows` of a scan (the snapshot's columns, then the two row tracking columns when out.tracking)
// as out.batch holds them: a column the commit adds is null, a widened one widened.
Result<columnar::RecordBatch> ToOutput(const Output& out, columnar::RecordBatch rows) {
  const size_t hidden = out.tracking ? 2 : 0;
  const std::vector<columnar::Field>& scanned = rows.schema().fields();
  std::vector<columnar::Field> fields(scanned.begin(),
                                      scanned.end() - static_cast<std::ptrdiff_t>(hidden));
  std::vector<std::unique_ptr<columnar::Column>> columns = rows.ReleaseColumns();
  std::vector<std::unique_ptr<columnar::Column>> ids;
  for (size_t i = columns.size() - hidden; i < columns.size(); ++i) {
    ids.push_back(std::move(columns[i]));
  }
  columns.resize(columns.size() - hidden);
  columnar::RecordBatch data(std::make_shared<const columnar::Schema>(std::move(fields)),
                             std::move(columns));
  FERRY_RETURN_IF_ERROR(ConformBatch(&data, out.table));
  columns = data.ReleaseColumns();
  for (auto& column : ids) {
    columns.push_back(std::move(column));
  }
  return columnar::RecordBatch(out.batch, std::move(columns));
}

// Step 3 by copy-on-write for one file: its live rows whose keys are not in `keys` are written
// to `writer`; with row tracking the stable row ids of the rows left out go to `ids`.
Status RewriteFile(const delta::Table& table, const delta::Snapshot& snapshot,
                   const delta::AddFile& add, const ChangeKeys& change_keys,
                   const std::vector<std::string>& keys, const Output& output,
                   delta::TableWriter* writer, std::unordered_map<std::string, int64_t>* ids) {
  std::unordered_set<std::string> drop(keys.begin(), keys.end());
  auto copy = [&](columnar::RecordBatch& batch) -> Status {
    FERRY_ASSIGN_OR_RETURN(std::vector<std::string> encoded, change_keys.Encode(batch));
    std::vector<int64_t> keep;
    keep.reserve(encoded.size());
    const auto* row_ids =
        output.tracking ? batch.GetColumn(output.tracking->row_id)->As<columnar::Int64Column>()
                        : nullptr;
    for (size_t row = 0; row < encoded.size(); ++row) {
      if (drop.count(encoded[row]) == 0) {
        keep.push_back(static_cast<int64_t>(row));
      } else if (row_ids != nullptr) {
        (*ids)[encoded[row]] = row_ids->Value(static_cast<int64_t>(row));
      }
    }
    if (keep.empty()) {
      return Status::OK();
    }
    FERRY_ASSIGN_OR_RETURN(
        columnar::RecordBatch rows,
        ToOutput(output, keep.size() == encoded.size()
                             ? columnar::RecordBatch(batch.schema_ptr(), batch.ReleaseColumns())
                             : batch.Take(keep)));
    return writer->Write(rows);
  };
  Status st = output.tracking
                  ? delta::ScanLiveFileWithRowTracking(table, snapshot, add, *output.tracking,
                                                       delta::kScanBatchRows, copy)
                  : delta::ScanLiveFile(table, snapshot, add, {}, delta::kScanBatchRows, copy);
  return st.WithContext("upsert: rewriting {}", add.path);
}

// The stable row ids of the live rows of `add` whose keys are in `keys` (a file that keeps its
// other rows under a deletion vector: only the key columns and the ids are read).
Status ReadRowIds(const delta::Table& table, const delta::Snapshot& snapshot,
                  const delta::AddFile& add, const ChangeKeys& change_keys,
                  const std::vector<std::string>& keys, const delta::RowTrackingColumns& tracking,
                  std::unordered_map<std::string, int64_t>* ids) {
  std::unordered_set<std::string> wanted(keys.begin(), keys.end());
  Status st = delta::ScanLiveFileWithRowTracking(
      table, snapshot, add, change_keys.key(), tracking, delta::kScanBatchRows,
      [&](columnar::RecordBatch& batch) -> Status {
        FERRY_ASSIGN_OR_RETURN(std::vector<std::string> encoded, change_keys.Encode(batch));
        const auto* row_ids = batch.GetColumn(tracking.row_id)->As<columnar::Int64Column>();
        for (size_t row = 0; row < encoded.size(); ++row) {
          if (wanted.count(encoded[row]) != 0) {
            (*ids)[encoded[row]] = row_ids->Value(static_cast<int64_t>(row));
          }
        }
        return Status::OK();
      });
  return st.WithContext("upsert: reading the row ids of {}", add.path);
}

}  // namespace

bool UsesDeletionVectors(const delta::Snapshot& snapshot) {
  std::vector<std::string> features = delta::EffectiveWriterFeatures(snapshot.protocol());
  return std::find(features.begin(), features.end(), "deletionVectors") != features.end();
}

std::vector<std::string> KeyDerivedPartitions(const columnar::Schema& schema,
                                              const std::vector<std::string>& partition_columns,
                                              const std::vector<std::string>& key,
                                              const std::vector<DerivedColumnSpec>& derived,
                                              const std::string& time_zone) {
  // The key columns alone: an expression reading any other column does not compile here.
  std::vector<columnar::Field> fields;
  for (const std::string& name : key) {
    std::optional<int> i = schema.FieldIndex(name);
    if (!i) {
      return {};
    }
    fields.push_back(schema.field(*i));
  }
  const columnar::Schema key_schema(std::move(fields));
  std::vector<std::string> out;
  for (const std::string& column : partition_columns) {
    if (std::find(key.begin(), key.end(), column) != key.end()) {
      continue;
    }
    auto spec = std::find_if(derived.begin(), derived.end(),
                             [&](const DerivedColumnSpec& d) { return d.name == column; });
    if (spec == derived.end()) {
      return {};
    }
    // The words of the expression (identifiers lowercased; inside string literals too, which
    // at worst turns pruning off): no clock.
    std::string word;
    bool clock = false;
    for (size_t i = 0; i <= spec->expr.size(); ++i) {
      const char c = i < spec->expr.size() ? spec->expr[i] : ' ';
      if (std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_') {
        word.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
        continue;
      }
      clock = clock || word == "current_timestamp" || word == "current_date" || word == "now" ||
              word == "unix_timestamp" || word == "localtimestamp";
      word.clear();
    }
    if (clock ||
        !transform::Expression::Compile(spec->expr, key_schema, {.time_zone = time_zone}).ok()) {
      return {};
    }
    out.push_back(column);
  }
  return out;
}

std::map<std::string, std::string> KeyPartitionDefinitions(
    const std::vector<std::string>& key_partitions, const std::vector<DerivedColumnSpec>& derived,
    const std::string& time_zone) {
  std::map<std::string, std::string> out;
  for (const std::string& column : key_partitions) {
    auto spec = std::find_if(derived.begin(), derived.end(),
                             [&](const DerivedColumnSpec& d) { return d.name == column; });
    if (spec != derived.end()) {
      out[column] = fmt::format("{} (time zone {})", spec->expr, time_zone);
    }
  }
  return out;
}

Result<std::unique_ptr<UpsertCommit>> UpsertCommit::Create(const columnar::Schema& table_schema,
                                                           const UpsertSpec& spec) {
  for (const std::string& column : spec.key_partitions) {
    if (spec.key_partition_definitions.count(column) == 0) {
      return Internal(
          "upsert: partition column '{}' is derived from the key by no known expression", column);
    }
  }
  // The index's key: the key columns, then the partition columns the key determines.
  std::vector<std::string> index_key = spec.key;
  index_key.insert(index_key.end(), spec.key_partitions.begin(), spec.key_partitions.end());
  FERRY_ASSIGN_OR_RETURN(ChangeKeys keys,
                         ChangeKeys::Create(table_schema, index_key, spec.sequence));
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
  index_.UsePartitions(*snapshot.schema(), snapshot.partition_columns());
  return index_.Load(table, snapshot);
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
  std::map<int32_t, Touched> touched;       // index file id -> rows
  std::unordered_set<std::string> updated;  // keys of upserts that replace a live row
  for (int64_t row : winners) {
    const auto r = static_cast<size_t>(row);
    const int64_t sequence = sequences.empty() ? kNoSequence : sequences[r];
    const KeyIndex::Entry* entry = index_.Find(encoded[r]);
    if (entry != nullptr && keys.has_sequence() && sequence < entry->sequence) {
      ++out.stale;
      continue;
    }
    const bool live = entry != nullptr && entry->file >= 0;
    if (live) {
      Touched& t = touched[entry->file];
      t.rows.push_back(entry->row);
      t.keys.push_back(encoded[r]);
    }
    if (ops[r] == transform::ChangeOp::kDelete) {
      ++out.deletes;
      pending_deletes_.emplace_back(encoded[r], sequence);
    } else {
      upserts.push_back(row);
      if (live) {
        updated.insert(encoded[r]);
      }
    }
  }
  // The files of steps 3 and 4 (one writer: copied rows and new versions share files).
  const Output output = MakeOutput(snapshot, rows.schema_ptr());
  delta::TableWriterOptions options = writer_options;
  options.hidden_columns = output.hidden;
  FERRY_ASSIGN_OR_RETURN(auto writer, delta::TableWriter::Create(table, snapshot, options));
  // 3. (before the new versions: with row tracking they take the ids of the rows they replace)
  std::unordered_map<std::string, int64_t> row_ids;  // key -> stable row id (row tracking)
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
    std::optional<int64_t> num_rows =
        add->stats ? delta::StatsNumRecords(*add->stats) : std::nullopt;
    // Without numRecords a DV cannot be checked against the file: rewrite it instead.
    if (!dv || !num_rows) {
      FERRY_RETURN_IF_ERROR(
          RewriteFile(table, snapshot, *add, keys, t.keys, output, writer.get(), &row_ids));
      ++out.rewritten_files;
      continue;
    }
    if (output.tracking) {
      std::vector<std::string> ids_of;
      for (const std::string& key : t.keys) {
        if (updated.count(key) != 0) {
          ids_of.push_back(key);
        }
      }
      if (!ids_of.empty()) {
        FERRY_RETURN_IF_ERROR(
            ReadRowIds(table, snapshot, *add, keys, ids_of, *output.tracking, &row_ids));
      }
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
  // 4.
  if (!upserts.empty()) {
    columnar::RecordBatch changed = rows.Take(upserts);
    if (output.tracking) {
      std::vector<std::unique_ptr<columnar::Column>> columns = changed.ReleaseColumns();
      auto ids = columnar::MakeColumn(columnar::DataType::Int64());
      auto versions = columnar::MakeColumn(columnar::DataType::Int64());
      for (int64_t row : upserts) {
        auto it = row_ids.find(encoded[static_cast<size_t>(row)]);
        if (it != row_ids.end()) {
          ids->As<columnar::Int64Column>()->Append(it->second);
        } else {
          ids->AppendNull();
        }
        versions->AppendNull();
      }
      columns.push_back(std::move(ids));
      columns.push_back(std::move(versions));
      changed = columnar::RecordBatch(output.batch, std::move(columns));
    }
    FERRY_RETURN_IF_ERROR(writer->Write(changed));
  }
  out.upserts = static_cast<int64_t>(upserts.size());
  FERRY_ASSIGN_OR_RETURN(out.adds, writer->Finish());
  for (const delta::AddFile& add : out.adds) {
    out.bytes += add.size;
  }
  out.preserves_row_ids = output.tracking.has_value();
  if (dv_file) {
    // One DV file for the batch; unnamed by any commit until this one lands.
    FERRY_RETURN_IF_ERROR(table.store().Put(table.Key(dv_file->relative_path()), dv_file->bytes()));
  }
  for (delta::AddFile& add : dv_adds) {
    out.adds.push_back(std::move(add));
  }
  return out;
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
                     .bytes = actions.bytes,
                     .preserves_row_ids = actions.preserves_row_ids};
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
  return index_.Committed(table, snapshot);  // writes the index every spec_.persist_every
}

}  // namespace ferry::pipeline
