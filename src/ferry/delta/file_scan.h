// File scan: the rows of one live file of a snapshot as the table sees them, for the table
// maintenance commands (verify.h, optimize.h) and the dedup index. Data columns come from the
// Parquet file (matched by name, ignoring case as Delta does; a column or struct field the file
// lacks reads as nulls, as after adding a column; a narrower type written before the column
// widened is converted to the table's: column_conform.h, type_widening.h), partition columns are
// rebuilt from the log's partitionValues.
//
// Errors name the table and the file: DataLoss when the file is missing or unreadable,
// NotSupported for a file with a deletion vector (ferry does not apply them), InvalidArgument
// for a column the table does not have.
//
// Thread-safety: stateless functions.
#pragma once

#include <string>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/columnar/record_batch.h"
#include "ferry/delta/actions.h"
#include "ferry/delta/snapshot.h"

namespace ferry::delta {

class Table;

// The table-relative path of `add` (its URI encoding undone). InvalidArgument for a bad
// encoding or an absolute path (ferry only maintains files under the table root).
Result<std::string> RelativeFilePath(const AddFile& add);

// The columns `columns` (table column names, in that order; empty = every table column in
// schema order) of live file `add` of `snapshot`.
Result<columnar::RecordBatch> ReadLiveFile(const Table& table, const Snapshot& snapshot,
                                           const AddFile& add,
                                           const std::vector<std::string>& columns = {});

}  // namespace ferry::delta
