// FileReader: a Parquet file → columnar record batches, with column projection (top-level fields)
// and row-group selection. The Delta layer reads checkpoints and data files through it; the CLI's
// `ferry parquet inspect` and `cat` too.
//
// Opening (Open):
//   1. the file must be at least 12 bytes and start and end with "PAR1" ("PARE", an encrypted
//      footer, is NotSupported);
//   2. the 4-byte little-endian footer length before the trailing magic must fit in the file
//      and in ReaderOptions::max_footer_size; the footer (FileMetaData, Thrift compact) is
//      parsed from those bytes only;
//   3. the schema is mapped to columnar types (schema_from_parquet.h).
// Reading (ReadRowGroup, ReadAll): for each selected field, each of its leaves' column chunks is
// decoded into the leaf's column (column_chunk_reader.h), then nested fields are assembled from
// the levels (record_assembly.h) and every field is checked to hold the row group's num_rows.
// ReadBatches reads the same in batches of about a given row count into one reused set of
// columns, flat fields a batch at a time (ColumnChunkReader::Begin/ReadRows).
//
// Errors name the file (RandomAccessFile::name()), the row group, the column and the page:
// DataLoss for a corrupt file, NotSupported for a feature ferry does not read (encryption,
// LZO, external column chunks), ResourceExhausted when a ReaderOptions limit is hit.
//
// Thread-safety: a FileReader may be used by one thread at a time (its reads reuse the reader's
// buffers); readers of distinct files are independent.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ferry/base/io.h"
#include "ferry/base/result.h"
#include "ferry/columnar/record_batch.h"
#include "ferry/columnar/types.h"
#include "ferry/parquet/column_chunk_reader.h"
#include "ferry/parquet/metadata.h"
#include "ferry/parquet/reader_options.h"
#include "ferry/parquet/schema_from_parquet.h"

namespace ferry::parquet {

class FileReader {
 public:
  static Result<std::unique_ptr<FileReader>> Open(std::shared_ptr<const RandomAccessFile> file,
                                                  ReaderOptions options = {});
  // Opens a local file.
  static Result<std::unique_ptr<FileReader>> OpenLocal(const std::string& path,
                                                       ReaderOptions options = {});

  const columnar::SchemaPtr& schema() const { return file_schema_.schema; }
  const FileMetaData& metadata() const { return metadata_; }
  // The leaf columns and level thresholds behind schema().
  const FileSchema& file_schema() const { return file_schema_; }
  const std::string& name() const { return file_->name(); }
  int num_row_groups() const { return static_cast<int>(metadata_.row_groups.size()); }
  // The sum of the row groups' row counts: what ReadAll returns. (FileMetaData.num_rows is
  // wrong in some files, e.g. 0 in parquet-testing's repeated_no_annotation.parquet.)
  int64_t num_rows() const { return num_rows_; }

  // `columns`: indices of top-level fields to read, in the order wanted; empty = all. The batch's
  // schema is the projection.
  Result<columnar::RecordBatch> ReadRowGroup(int row_group, std::span<const int> columns = {});
  // Every row group, concatenated.
  Result<columnar::RecordBatch> ReadAll(std::span<const int> columns = {});

  // Every row group in order, in batches of about `max_rows` rows, each passed to `fn`; an
  // error from `fn` ends the read and is returned. A batch never spans two row groups. One set
  // of columns is reused: cleared before each fill, so their capacity carries over and memory
  // stays at a few batches however large the file and its row groups (ReadRowGroup and ReadAll
  // hold everything they read, and a fresh process pays a page fault for every 4 KiB of it).
  // `fn` must not keep views into the batch. A row group of more than `max_rows` rows whose
  // fields in `columns` are flat is read in batches of exactly `max_rows` rows (the last one
  // shorter), its pages decoded in parts (ColumnChunkReader::ReadRows): a batch holds its own
  // rows only, even from a page of a whole row group (DuckDB writes a column chunk of 122,880
  // rows as one page). Any other row group is one batch: a nested field (struct, list, map) is
  // assembled from whole chunks.
  using BatchFn = std::function<Status(const columnar::RecordBatch&)>;
  Status ReadBatches(std::span<const int> columns, int64_t max_rows, const BatchFn& fn);

  // The indices of the top-level fields called `names` (NotFound naming the first missing one),
  // for ReadRowGroup/ReadAll: reader->ReadAll(*reader->FieldIndices({"id", "ts"})).
  Result<std::vector<int>> FieldIndices(const std::vector<std::string>& names) const;

 private:
  FileReader(std::shared_ptr<const RandomAccessFile> file, ReaderOptions options)
      : file_(std::move(file)), options_(options) {}
  Status ReadFooter();
  Result<std::vector<int>> Projection(std::span<const int> columns) const;
  columnar::SchemaPtr ProjectedSchema(const std::vector<int>& fields) const;
  // Appends row group `row_group` of `fields` to `columns` (one per field).
  Status ReadRowGroupInto(int row_group, const std::vector<int>& fields,
                          std::vector<std::unique_ptr<columnar::Column>>* columns,
                          DecodeBudget* budget);
  Status ReadField(int row_group, int field, columnar::Column* column, DecodeBudget* budget);
  // ReadBatches for one row group of flat fields larger than max_rows.
  Status StreamRowGroup(int row_group, const std::vector<int>& fields, int64_t max_rows,
                        columnar::RecordBatch* batch, const BatchFn& fn);

  std::shared_ptr<const RandomAccessFile> file_;
  ReaderOptions options_;
  FileMetaData metadata_;
  FileSchema file_schema_;
  // The bytes that may hold pages: after the leading magic, before the footer.
  ColumnChunkReader::FileLayout layout_;
  int64_t num_rows_ = 0;
  // Read and decode buffers kept from chunk to chunk and from call to call.
  ChunkScratch scratch_;
  // StreamRowGroup's: one per field (their chunks are read side by side).
  std::vector<ChunkScratch> field_scratch_;
};

}  // namespace ferry::parquet
