// FileWriter: columnar record batches → one Parquet file (layout in metadata.h).
//
// Writing a file:
//   1. Open() maps the schema (schema_writer.h), makes one ColumnWriter per leaf and writes
//      the "PAR1" magic.
//   2. Write() cuts each batch into slices of at most kSliceRows rows, shreds every leaf of the
//      slice into levels (shredder.h) and hands them to its ColumnWriter, which cuts pages at the
//      page limits. After each slice, a row group that reached row_group_max_rows or
//      row_group_max_bytes (its buffered, mostly compressed, bytes) is flushed: its column
//      chunks go to the sink one after the other and its RowGroup is kept for the footer.
//   3. Close() flushes the last row group, appends the FileMetaData (with column_orders,
//      key-value metadata and created_by), its 4-byte length and "PAR1", and closes the sink.
//      Close() is the commit point: with an atomic sink (atomic_file.h or the object store's
//      atomic writer) the file appears, complete, only then; a crash before leaves nothing
//      readable under the final name.
//
// Memory is bounded by the row-group limits (pages wait in memory until their row group is
// flushed, because a column chunk's dictionary page goes first), not by the file size. Without
// a compression pool the waiting pages are kept in a PageArena (page_arena.h) that the row
// groups of the file reuse.
// After any error the writer is unusable: every later call returns that error.
//
// Thread-safety: not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ferry/base/io.h"
#include "ferry/base/result.h"
#include "ferry/columnar/record_batch.h"
#include "ferry/parquet/metadata.h"
#include "ferry/parquet/statistics.h"

namespace ferry::parquet {

class Codec;
class ColumnWriter;
class CompressionPool;
class FileSeries;
class PageArena;
struct ParquetSchema;
struct ShreddedLeaf;

// Defaults follow parquet-mr's (Spark's) sizes, with zstd as Delta recommends for new tables.
struct WriterOptions {
  CompressionCodec codec = CompressionCodec::kZstd;
  int compression_level = 0;  // 0: the codec's default (Codec::Create: zstd 1, gzip 6)
  // 1: pages are compressed on the calling thread. N > 1: on a pool of N threads while the
  // caller encodes the next pages (compression_pool.h); the file's bytes are the same.
  int compression_threads = 1;
  int64_t row_group_max_rows = 1 << 20;     // rows per row group
  int64_t row_group_max_bytes = 128 << 20;  // buffered bytes per row group
  int64_t page_max_rows = 20000;
  int64_t page_max_bytes = 1 << 20;        // values + levels, before compression
  int64_t dictionary_max_bytes = 1 << 20;  // per column chunk; then PLAIN
  bool enable_dictionary = true;
  bool data_page_v2 = false;
  std::vector<std::pair<std::string, std::string>> key_value_metadata;
  std::string created_by;  // empty: "ferry version <version>"
  // Shared by the files of one stream of rows (file_series.h): which columns start PLAIN. Null:
  // every file decides alone.
  std::shared_ptr<FileSeries> series;
  // Write() accepts batches whose field names (at any depth) differ from the file schema's, as
  // long as the types, nullability and nesting agree: a Delta table with column mapping writes
  // batches named as the table shows them into files named with the physical names.
  bool match_fields_by_position = false;
  // column_statistics() keeps byte bounds of any length (the Delta layer cuts string bounds to
  // a prefix itself); without it they are left out past kMaxStatisticsValueBytes, as in the file.
  bool whole_statistics_bounds = false;

  // InvalidArgument naming the first bad limit.
  Status Validate() const;
};

class FileWriter {
 public:
  // Slices of a batch handed to the column writers: at most kSliceRows rows, fewer when the
  // widest column's bytes per row would make a slice more than 1/8 of a page (pages exceed
  // their byte limit by at most about one slice). The first slice has kFirstSliceRows rows.
  static constexpr int64_t kSliceRows = 2048;
  static constexpr int64_t kFirstSliceRows = 64;

  // Writes to `sink`, which Close() closes. Errors: InvalidArgument for bad options or a schema
  // without fields; NotSupported for types Parquet cannot hold (decimal precision > 38).
  static Result<std::unique_ptr<FileWriter>> Open(std::unique_ptr<OutputStream> sink,
                                                  columnar::SchemaPtr schema,
                                                  WriterOptions options);
  ~FileWriter();
  FileWriter(const FileWriter&) = delete;
  FileWriter& operator=(const FileWriter&) = delete;

  // Appends the rows of `batch`, whose schema must equal the writer's (names, types,
  // nullability; names aside with WriterOptions::match_fields_by_position). Errors: InvalidArgument
  // for another schema or a null in a non-nullable column; IOError from the sink.
  Status Write(const columnar::RecordBatch& batch);
  // Bytes written so far plus the buffered row group and an estimate of the footer: what the
  // file would take if closed now (for rolling files at a target size).
  int64_t estimated_file_size() const;
  int64_t num_rows() const { return num_rows_; }
  // Flushes, writes the footer and closes the sink: the commit point.
  Status Close();

  // After Close(): the footer as written, and typed statistics per leaf column (depth-first).
  const FileMetaData& metadata() const { return metadata_; }
  const std::vector<ColumnStatistics>& column_statistics() const { return statistics_; }

 private:
  FileWriter(std::unique_ptr<OutputStream> sink, columnar::SchemaPtr schema, WriterOptions options);
  Status Init();
  Status WriteSlice(const columnar::RecordBatch& batch, int64_t begin, int64_t end);
  Status FlushRowGroup();
  void AdaptSliceRows();
  Status Fail(Status s);

  std::unique_ptr<OutputStream> sink_;
  columnar::SchemaPtr schema_;
  WriterOptions options_;
  std::unique_ptr<ParquetSchema> parquet_schema_;
  std::unique_ptr<Codec> codec_;
  // The row group's compressed data pages when there is no pool (page_arena.h); outlives the
  // column writers, whose pages point into it.
  std::unique_ptr<PageArena> arena_;
  std::vector<std::unique_ptr<ColumnWriter>> columns_;
  // Per column: its name in options_.series (ColumnDescriptor::PathString) when its dictionary
  // was on at the start, so that Close() tells the series how it went; else empty.
  std::vector<std::string> series_keys_;
  // Declared after columns_, so destroyed before them: it finishes the jobs that write into
  // their pages first.
  std::unique_ptr<CompressionPool> pool_;
  std::unique_ptr<ShreddedLeaf> shredded_;  // reused for every leaf and slice

  FileMetaData metadata_;
  std::vector<ColumnStatistics> statistics_;
  int64_t num_rows_ = 0;
  int64_t row_group_rows_ = 0;
  int64_t slice_rows_ = kFirstSliceRows;
  bool closed_ = false;
  Status error_;
};

}  // namespace ferry::parquet
