// TableWriter: record batches -> Parquet data files under a Delta table -> `add` actions for a
// Transaction (transaction.h). Nothing it writes is part of the table until a commit names it.
//
//   FERRY_ASSIGN_OR_RETURN(auto writer, delta::TableWriter::Create(*table, snapshot));
//   FERRY_RETURN_IF_ERROR(writer->Write(batch));        // as often as needed
//   FERRY_ASSIGN_OR_RETURN(std::vector<delta::AddFile> adds, writer->Finish());
//
// Writing, numbered:
//   1. Check the batch against the table schema: same column names and types in the same order
//      (nullability may differ, but a NOT NULL column must hold no null), then the hidden
//      columns if the options name any, and that ferry may write the table at all
//      (table_features.h). InvalidArgument / NotSupported otherwise.
//   2. Split the rows by their partition values (partition_values.h). Each partition has one
//      open file `<col>=<value>/.../part-NNNNN-<uuid>-c000.<codec>.parquet` whose columns are
//      the table's minus the partition columns (as Spark writes them); the rows go there and
//      into the file's statistics (stats.h: most leaves' null counts and bounds are the Parquet
//      writer's own, taken when the file is closed, not computed twice). With column mapping
//      (column_mapping.h) the directories, the file's columns (with their field ids),
//      partitionValues and stats use the physical names.
//   3. When a file's estimated size reaches target_file_size, close it: the Parquet footer is
//      written and the store's atomic writer fsyncs the file and publishes it (the file exists
//      complete or not at all). Its AddFile records the URI-encoded path, partitionValues, size,
//      modificationTime, dataChange=true and the stats JSON. [delta.write.after_file]
//   4. Finish() closes every open file the same way and returns all AddFiles.
// A failure leaves the writer unusable; files it already published are orphans no commit names
// (VACUUM removes such files). Destroying a writer without Finish() abandons its open files.
//
// Thread-safety: a TableWriter is used by one thread.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/columnar/record_batch.h"
#include "ferry/delta/actions.h"
#include "ferry/delta/column_mapping.h"
#include "ferry/delta/snapshot.h"
#include "ferry/delta/stats.h"
#include "ferry/parquet/writer.h"

namespace ferry::delta {

class Table;

struct TableWriterOptions {
  // A file is closed once its estimated size reaches this (Spark's default target is 128 MiB).
  int64_t target_file_size = int64_t{128} << 20;
  // Row groups, pages, dictionary. The codec is the table's delta.parquet.compression.codec
  // (default zstd) unless `codec_override` is set.
  parquet::WriterOptions parquet;
  std::string codec_override;
  // The schema the commit of these files will set (a schema change, schema_evolution.h); null:
  // the snapshot's. Partition columns are the snapshot's either way.
  columnar::SchemaPtr schema;
  // Columns the data files carry that are not in the table's schema: row tracking's
  // materialized row id and row commit version columns (PROTOCOL.md "Row Tracking": hidden from
  // the schemaString, named by the table's configuration), written by optimize. Batches hold
  // them after the table's columns; the files hold them after the data columns, by these names
  // (no physical name, no field id), and they get no stats.
  std::vector<columnar::Field> hidden_columns;
};

class TableWriter {
 public:
  static Result<std::unique_ptr<TableWriter>> Create(const Table& table, const Snapshot& snapshot,
                                                     TableWriterOptions options = {});
  ~TableWriter();

  // Step 1-3. REQUIRES: Finish() not called.
  Status Write(const columnar::RecordBatch& batch);
  // Step 4. Returns the adds of every file written, in the order they were closed.
  Result<std::vector<AddFile>> Finish();

  int64_t rows_written() const { return rows_written_; }
  int64_t files_written() const { return static_cast<int64_t>(adds_.size()); }

  struct OpenFile;

 private:
  TableWriter(const Table& table, Snapshot snapshot, TableWriterOptions options,
              parquet::CompressionCodec codec, StatsOptions stats_options,
              ColumnMappingMode mapping);
  Status CheckBatch(const columnar::RecordBatch& batch) const;
  Result<OpenFile*> FileFor(const std::string& partition_key,
                            const std::vector<std::optional<std::string>>& log_values,
                            const std::vector<std::string>& directory_values);
  Status WriteToFile(OpenFile* file, const columnar::RecordBatch& batch);
  Status CloseFile(const std::string& partition_key);
  Status Fail(Status st);

  const Table& table_;
  Snapshot snapshot_;
  TableWriterOptions options_;
  parquet::CompressionCodec codec_;
  StatsOptions stats_options_;
  columnar::SchemaPtr schema_;        // options_.schema, else the snapshot's
  columnar::SchemaPtr batch_schema_;  // schema_ plus the hidden columns
  // The columns written to the files (the table's minus the partition columns, plus the hidden
  // ones) and those of them that get stats (the hidden ones left out).
  columnar::SchemaPtr data_schema_;
  columnar::SchemaPtr stats_schema_;
  // The data files' schema: data_schema_ itself, or its physical names and field ids.
  columnar::SchemaPtr file_schema_;
  std::vector<int> partition_indices_;  // in the table schema, in partition-column order
  // The partition columns' names in directories and partitionValues (physical with mapping).
  std::vector<std::string> partition_keys_;
  std::vector<int> data_indices_;                          // the other columns
  std::map<std::string, std::unique_ptr<OpenFile>> open_;  // by partition key
  std::vector<AddFile> adds_;
  int64_t next_file_number_ = 0;
  int64_t rows_written_ = 0;
  Status error_;
  bool finished_ = false;
};

}  // namespace ferry::delta
