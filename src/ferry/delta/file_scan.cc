#include "ferry/delta/file_scan.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <utility>

#include "ferry/columnar/column.h"
#include "ferry/columnar/column_conform.h"
#include "ferry/delta/column_mapping.h"
#include "ferry/delta/deletion_vector.h"
#include "ferry/delta/partition_values.h"
#include "ferry/delta/table.h"
#include "ferry/parquet/file_reader.h"

namespace ferry::delta {

Result<std::string> RelativeFilePath(const AddFile& add) {
  FERRY_ASSIGN_OR_RETURN(std::string path, DecodeUriPath(add.path));
  if (path.empty() || path.front() == '/' || path.find(':') < path.find('/')) {
    return InvalidArgument("file {} is not under the table root", add.path);
  }
  return path;
}

Result<RowTrackingColumns> MaterializedRowTrackingColumns(const Metadata& metadata) {
  RowTrackingColumns names;
  for (auto [key, out] :
       {std::pair<const char*, std::string*>{"delta.rowTracking.materializedRowIdColumnName",
                                             &names.row_id},
        {"delta.rowTracking.materializedRowCommitVersionColumnName", &names.row_commit_version}}) {
    auto it = metadata.configuration.find(key);
    if (it == metadata.configuration.end() || it->second.empty()) {
      return NotSupported(
          "the table enables row tracking but its configuration does not name {}, so rows "
          "cannot keep their ids when copied",
          key);
    }
    *out = it->second;
  }
  return names;
}

namespace {

// The two columns ScanLiveFileWithRowTracking adds: where the file's materialized values are
// (-1: the file lacks the column) and what stands in for a null or absent one.
struct RowTrackingScan {
  int file_row_id = -1;
  int file_commit_version = -1;
};

// Appends rows [start, start + count) of the batch (file positions from `first_position`) to
// the row id and commit version columns.
Status AppendRowTracking(const AddFile& add, const columnar::Column* materialized_id,
                         const columnar::Column* materialized_version, int64_t start, int64_t count,
                         int64_t first_position, columnar::Column* ids,
                         columnar::Column* versions) {
  auto* id_out = ids->As<columnar::Int64Column>();
  auto* version_out = versions->As<columnar::Int64Column>();
  const auto* id_in =
      materialized_id != nullptr ? materialized_id->As<columnar::Int64Column>() : nullptr;
  const auto* version_in =
      materialized_version != nullptr ? materialized_version->As<columnar::Int64Column>() : nullptr;
  for (int64_t row = start; row < start + count; ++row) {
    if (id_in != nullptr && id_in->IsValid(row)) {
      id_out->Append(id_in->Value(row));
    } else if (add.base_row_id.has_value()) {
      id_out->Append(*add.base_row_id + first_position + row);
    } else {
      return DataLoss("the add has no baseRowId, so its rows have no row id");
    }
    if (version_in != nullptr && version_in->IsValid(row)) {
      version_out->Append(version_in->Value(row));
    } else if (add.default_row_commit_version.has_value()) {
      version_out->Append(*add.default_row_commit_version);
    } else {
      return DataLoss("the add has no defaultRowCommitVersion, so its rows have no commit version");
    }
  }
  return Status::OK();
}

Status Scan(const Table& table, const Snapshot& snapshot, const AddFile& add,
            const std::vector<std::string>& columns, int64_t max_rows,
            const RowTrackingColumns* row_tracking,
            const std::function<Status(columnar::RecordBatch&)>& fn) {
  const columnar::Schema& schema = *snapshot.schema();
  std::vector<columnar::Field> fields;
  if (columns.empty()) {
    fields = schema.fields();
  } else {
    for (const std::string& name : columns) {
      std::optional<int> index = schema.FieldIndex(name);
      if (!index) {
        return InvalidArgument("table {} has no column '{}'", table.Describe(), name);
      }
      fields.push_back(schema.field(*index));
    }
  }
  auto where = [&](const Status& st) {
    return st.WithContext("table {}, version {}, file {}", table.Describe(), snapshot.version(),
                          add.path);
  };
  auto mapping = GetColumnMappingMode(snapshot.protocol(), snapshot.metadata());
  if (!mapping.ok()) {
    return where(mapping.status());
  }
  auto path = RelativeFilePath(add);
  if (!path.ok()) {
    return where(path.status());
  }
  auto file = table.store().OpenForRead(table.Key(*path));
  // A store that did not answer keeps its code (the caller retries); a live file that is
  // missing or damaged is lost data.
  if (!file.ok()) {
    return where(DataLossUnlessRetryable(file.status(), "live file is unreadable"));
  }
  auto reader = parquet::FileReader::Open(*file);
  if (!reader.ok()) {
    return where(DataLossUnlessRetryable(reader.status(), "live file is not valid Parquet"));
  }
  // The rows the file's deletion vector deletes (none without one).
  const int64_t file_rows = (*reader)->num_rows();
  auto deleted =
      LoadDeletionVector(table, add, static_cast<uint64_t>(std::max<int64_t>(file_rows, 0)));
  if (!deleted.ok()) {
    return where(deleted.status());
  }
  int64_t next_row = 0;  // the file's index of the next batch's first row
  // Project the data columns the file has.
  const columnar::Schema& file_schema = *(*reader)->schema();
  if (*mapping == ColumnMappingMode::kId && !HasFieldIds(file_schema)) {
    return where(DataLoss(
        "the table maps columns by id but the file has no Parquet field ids; ferry refuses to "
        "read it as nulls"));
  }
  std::vector<int> projection;
  std::vector<int> batch_index(fields.size(), -1);
  for (size_t i = 0; i < fields.size(); ++i) {
    const bool is_partition =
        std::find(snapshot.partition_columns().begin(), snapshot.partition_columns().end(),
                  fields[i].name) != snapshot.partition_columns().end();
    std::optional<int> index;
    if (!is_partition) {
      // Delta matches names ignoring case; with column mapping, physical names or field ids.
      std::optional<size_t> found = FindFileField(file_schema.fields(), fields[i], *mapping);
      if (found) {
        index = static_cast<int>(*found);
      }
    }
    if (index) {
      batch_index[i] = static_cast<int>(projection.size());
      projection.push_back(*index);
    }
  }
  RowTrackingScan tracking;
  std::vector<columnar::Field> out_fields = fields;
  if (row_tracking != nullptr) {
    // The materialized columns by their exact names (they are not table columns, so neither
    // column mapping nor case folding applies).
    for (auto [name, index] :
         {std::pair<const std::string*, int*>{&row_tracking->row_id, &tracking.file_row_id},
          {&row_tracking->row_commit_version, &tracking.file_commit_version}}) {
      for (size_t f = 0; f < file_schema.fields().size(); ++f) {
        const columnar::Field& file_field = file_schema.field(static_cast<int>(f));
        if (file_field.name != *name) {
          continue;
        }
        if (file_field.type->id() != columnar::TypeId::kInt64) {
          return where(DataLoss("materialized row tracking column '{}' has type {}, not BIGINT",
                                *name, file_field.type->ToString()));
        }
        *index = static_cast<int>(projection.size());
        projection.push_back(static_cast<int>(f));
      }
      out_fields.push_back(columnar::Field{*name, columnar::DataType::Int64(), false, {}});
    }
  }
  auto out_schema = std::make_shared<const columnar::Schema>(std::move(out_fields));
  columnar::RecordBatch out = columnar::RecordBatch::MakeEmpty(out_schema);
  // Fills `out` from the file's rows (`data`, or `rows` rows of partition values only), then
  // hands it to `fn`. `out`'s columns are reused from batch to batch unless `fn` took them.
  auto emit = [&](const columnar::RecordBatch* data, int64_t rows) -> Status {
    // The batch's live rows as (start, count) ranges.
    std::vector<std::pair<int64_t, int64_t>> live;
    int64_t live_rows = 0;
    if (deleted->Empty()) {
      live.emplace_back(0, rows);
      live_rows = rows;
    } else {
      for (int64_t row = 0; row < rows; ++row) {
        if (deleted->Contains(static_cast<uint64_t>(next_row + row))) {
          continue;
        }
        if (!live.empty() && live.back().first + live.back().second == row) {
          ++live.back().second;
        } else {
          live.emplace_back(row, 1);
        }
        ++live_rows;
      }
    }
    const int64_t first_position = next_row;
    next_row += rows;
    if (live_rows == 0) {
      return Status::OK();
    }
    if (out.num_columns() != out_schema->num_fields()) {
      out = columnar::RecordBatch::MakeEmpty(out_schema);
    }
    std::vector<std::unique_ptr<columnar::Column>> cols = out.ReleaseColumns();
    for (size_t i = 0; i < fields.size(); ++i) {
      const columnar::Field& field = fields[i];
      std::unique_ptr<columnar::Column>& column = cols[i];
      column->Clear();
      if (batch_index[i] >= 0) {
        const columnar::Column& from = data->column(batch_index[i]);
        if (field.type->Equals(*from.type())) {
          for (const auto& [start, count] : live) {
            column->AppendRange(from, start, start + count);
          }
          continue;
        }
        auto copy = columnar::MakeColumn(from.type());
        for (const auto& [start, count] : live) {
          copy->AppendRange(from, start, start + count);
        }
        if (*mapping != ColumnMappingMode::kNone) {
          // Physical names inside structs become the table's (dropped fields left out).
          copy = RenameFileColumn(std::move(copy), *field.type, *mapping);
          if (field.type->Equals(*copy->type())) {
            column = std::move(copy);
            continue;
          }
        }
        // Written before the column widened or its structs gained fields (type_widening.h).
        if (!columnar::CanConform(*copy->type(), *field.type)) {
          return where(NotSupported("column '{}' has type {} in the file but {} in the table",
                                    field.name, copy->type()->ToString(), field.type->ToString()));
        }
        auto conformed = columnar::ConformColumn(std::move(copy), field.type, field.name);
        if (!conformed.ok()) {
          return where(conformed.status());
        }
        column = std::move(*conformed);
        continue;
      }
      auto it = add.partition_values.find(*mapping == ColumnMappingMode::kNone
                                              ? field.name
                                              : PhysicalColumnName(schema, field.name));
      const bool known = it != add.partition_values.end();
      for (int64_t row = 0; row < live_rows; ++row) {
        if (known) {
          Status st = AppendPartitionValue(it->second, column.get());
          if (!st.ok()) {
            return where(st);
          }
        } else {
          column->AppendNull();
        }
      }
    }
    if (row_tracking != nullptr) {
      columnar::Column* ids = cols[fields.size()].get();
      columnar::Column* versions = cols[fields.size() + 1].get();
      ids->Clear();
      versions->Clear();
      auto file_column = [&](int index) {
        return index >= 0 && data != nullptr ? &data->column(index) : nullptr;
      };
      for (const auto& [start, count] : live) {
        Status st = AppendRowTracking(add, file_column(tracking.file_row_id),
                                      file_column(tracking.file_commit_version), start, count,
                                      first_position, ids, versions);
        if (!st.ok()) {
          return where(st);
        }
      }
    }
    out = columnar::RecordBatch(out_schema, std::move(cols));
    return fn(out);
  };
  if (projection.empty()) {
    // Partition columns only: the file's row count, in batches.
    const int64_t total = file_rows;
    for (int64_t done = 0; done < total;) {
      const int64_t n = std::min(max_rows, total - done);
      FERRY_RETURN_IF_ERROR(emit(nullptr, n));
      done += n;
    }
    return Status::OK();
  }
  bool from_fn = false;
  Status read = (*reader)->ReadBatches(projection, max_rows, [&](const columnar::RecordBatch& b) {
    Status st = emit(&b, b.num_rows());
    from_fn = !st.ok();
    return st;
  });
  if (!read.ok() && !from_fn) {
    return where(DataLossUnlessRetryable(read, "live file is unreadable"));
  }
  return read;
}

}  // namespace

Status ScanLiveFile(const Table& table, const Snapshot& snapshot, const AddFile& add,
                    const std::vector<std::string>& columns, int64_t max_rows,
                    const std::function<Status(columnar::RecordBatch&)>& fn) {
  return Scan(table, snapshot, add, columns, max_rows, nullptr, fn);
}

Status ScanLiveFileWithRowTracking(const Table& table, const Snapshot& snapshot, const AddFile& add,
                                   const RowTrackingColumns& names, int64_t max_rows,
                                   const std::function<Status(columnar::RecordBatch&)>& fn) {
  return Scan(table, snapshot, add, {}, max_rows, &names, fn);
}

Status ScanLiveFileWithRowTracking(const Table& table, const Snapshot& snapshot, const AddFile& add,
                                   const std::vector<std::string>& columns,
                                   const RowTrackingColumns& names, int64_t max_rows,
                                   const std::function<Status(columnar::RecordBatch&)>& fn) {
  return Scan(table, snapshot, add, columns, max_rows, &names, fn);
}

Result<columnar::RecordBatch> ReadLiveFile(const Table& table, const Snapshot& snapshot,
                                           const AddFile& add,
                                           const std::vector<std::string>& columns) {
  std::optional<columnar::RecordBatch> all;
  FERRY_RETURN_IF_ERROR(
      ScanLiveFile(table, snapshot, add, columns, std::numeric_limits<int64_t>::max() / 16,
                   [&](columnar::RecordBatch& batch) {
                     if (!all.has_value()) {
                       all = columnar::RecordBatch(batch.schema_ptr(), batch.ReleaseColumns());
                       return Status::OK();
                     }
                     for (int c = 0; c < batch.num_columns(); ++c) {
                       all->mutable_column(c)->AppendRange(batch.column(c), 0, batch.num_rows());
                     }
                     return Status::OK();
                   }));
  if (!all.has_value()) {
    // An empty file (or no row groups).
    std::vector<columnar::Field> fields;
    if (columns.empty()) {
      fields = snapshot.schema()->fields();
    } else {
      for (const std::string& name : columns) {
        fields.push_back(snapshot.schema()->field(*snapshot.schema()->FieldIndex(name)));
      }
    }
    return columnar::RecordBatch::MakeEmpty(
        std::make_shared<const columnar::Schema>(std::move(fields)));
  }
  return std::move(*all);
}

}  // namespace ferry::delta
