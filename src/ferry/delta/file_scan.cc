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

Status ScanLiveFile(const Table& table, const Snapshot& snapshot, const AddFile& add,
                    const std::vector<std::string>& columns, int64_t max_rows,
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
  auto out_schema = std::make_shared<const columnar::Schema>(fields);
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
    next_row += rows;
    if (live_rows == 0) {
      return Status::OK();
    }
    if (out.num_columns() != static_cast<int>(fields.size())) {
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
