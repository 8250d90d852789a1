// TableVerifier helpers: read a Delta table back the way a query engine would, for tests that
// check what ferry wrote (round trips, crash and concurrency tests). Every live file of a
// snapshot is read with the Parquet reader, the partition columns are rebuilt from the log's
// partitionValues (column mapping followed: delta/column_mapping.h), and each row is rendered
// as text, so two tables (or a table and the batches that were written to it) compare as sorted
// lists of strings.
//
// Thread-safety: stateless functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/columnar/record_batch.h"
#include "ferry/delta/snapshot.h"
#include "ferry/delta/table.h"

namespace ferry::testing {

// One row as text: "id=1|name=a b|tags=[x,y]|ts=1631099471000000|p=null".
std::string RenderRow(const columnar::RecordBatch& batch, int64_t row);
// Every row of `batch`, rendered.
std::vector<std::string> RenderRows(const columnar::RecordBatch& batch);

// The rows of every live file of `snapshot`, in table-schema column order, sorted.
// DataLoss naming the file when a file is missing or unreadable.
Result<std::vector<std::string>> ReadTableRows(const delta::Table& table,
                                               const delta::Snapshot& snapshot);

// Checks every live file: it exists, its size equals add.size, and stats.numRecords equals the
// rows in its footer. DataLoss naming the first file that disagrees.
Status VerifyFiles(const delta::Table& table, const delta::Snapshot& snapshot);

}  // namespace ferry::testing
