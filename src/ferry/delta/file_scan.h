// File scan: the rows of one live file of a snapshot as the table sees them, for the table
// maintenance commands (verify.h, optimize.h) and the dedup index. Data columns come from the
// Parquet file (matched by name, ignoring case as Delta does, or with column mapping by physical
// name or field id: column_mapping.h; a column or struct field the file lacks reads as nulls, as
// after adding a column; a narrower type written before the column widened is converted to the
// table's: column_conform.h, type_widening.h), partition columns are rebuilt from the log's
// partitionValues. Batches carry the table's names either way. Rows the file's deletion vector
// deletes are skipped (deletion_vector.h): only live rows reach the caller. Columns of the file
// the table does not name (row tracking's materialized columns, hidden from the schema) are not
// read, except by ScanLiveFileWithRowTracking.
//
// Errors name the table and the file: DataLoss when the file or its deletion vector is missing,
// unreadable or inconsistent, InvalidArgument for a column the table does not have; DataLoss too
// for a file without field ids in a table that maps columns by id.
//
// Thread-safety: stateless functions.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/columnar/record_batch.h"
#include "ferry/delta/actions.h"
#include "ferry/delta/snapshot.h"

namespace ferry::delta {

class Table;

// Rows per batch of the maintenance scans (ScanLiveFile's callers).
inline constexpr int64_t kScanBatchRows = 16384;

// The table-relative path of `add` (its URI encoding undone). InvalidArgument for a bad
// encoding or an absolute path (ferry only maintains files under the table root).
Result<std::string> RelativeFilePath(const AddFile& add);

// The columns `columns` (table column names, in that order; empty = every table column in
// schema order) of live file `add` of `snapshot`, in batches of about `max_rows` rows
// (parquet::FileReader::ReadBatches: a row group of up to 8 batches comes whole) passed to `fn`
// in order; an error from `fn` ends the scan and is returned as is. The batch's columns are
// reused for the next batch unless `fn` takes them (ReleaseColumns). Memory stays at a few
// batches whatever the file's size: optimize, verify and the dedup index read this way.
Status ScanLiveFile(const Table& table, const Snapshot& snapshot, const AddFile& add,
                    const std::vector<std::string>& columns, int64_t max_rows,
                    const std::function<Status(columnar::RecordBatch&)>& fn);

// Row tracking's materialized columns (PROTOCOL.md "Row Tracking": hidden from the schema, named
// by the table's configuration delta.rowTracking.materializedRowIdColumnName and
// delta.rowTracking.materializedRowCommitVersionColumnName).
struct RowTrackingColumns {
  std::string row_id;
  std::string row_commit_version;
};
// The table's names. NotSupported when the configuration lacks one of them.
Result<RowTrackingColumns> MaterializedRowTrackingColumns(const Metadata& metadata);

// ScanLiveFile with two more columns after the table's, int64 and never null, named as `names`:
// each live row's stable row id (the file's materialized row id when the file has that column
// and the row's value is not null, else the add's baseRowId + the row's physical position in
// the file, rows its deletion vector deletes counted) and stable row commit version (the
// materialized one, else the add's defaultRowCommitVersion). DataLoss when a row needs the
// add's baseRowId or defaultRowCommitVersion and the add has none, or when a materialized
// column is not a 64-bit integer.
Status ScanLiveFileWithRowTracking(const Table& table, const Snapshot& snapshot, const AddFile& add,
                                   const RowTrackingColumns& names, int64_t max_rows,
                                   const std::function<Status(columnar::RecordBatch&)>& fn);
// The same with the table columns `columns` only (empty: all), as ScanLiveFile: the upsert
// pipeline's copy of an updated row's id reads the key columns and the two ids.
Status ScanLiveFileWithRowTracking(const Table& table, const Snapshot& snapshot, const AddFile& add,
                                   const std::vector<std::string>& columns,
                                   const RowTrackingColumns& names, int64_t max_rows,
                                   const std::function<Status(columnar::RecordBatch&)>& fn);

// The same rows as one batch (the whole file in memory).
Result<columnar::RecordBatch> ReadLiveFile(const Table& table, const Snapshot& snapshot,
                                           const AddFile& add,
                                           const std::vector<std::string>& columns = {});

}  // namespace ferry::delta
