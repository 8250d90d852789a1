// `ferry parquet from-json`: the write side of the `parquet` command group. JSON lines (one
// object per line) are decoded against a Spark DDL schema (columnar/ddl.h) by the transform
// layer's JsonDecoder, gathered into record batches and written by the Parquet writer.
//
//   ferry parquet from-json --schema DDL [--codec zstd|snappy|gzip|lz4_raw|brotli|uncompressed]
//                           [--level N] [--no-dictionary] [--page-v2] [--batch-rows N]
//                           IN.jsonl|- OUT.parquet
//
// Blank lines are skipped. A line that does not decode stops the command with an error naming
// the input and the 1-based line number (`in.jsonl:3: field 'id': ...`) and exit code 1; OUT is
// written through an atomic file (parquet/atomic_file.h), so nothing is left under OUT (an
// existing OUT stays as it was). Exit code 2 for bad usage (a DDL error, an unknown codec).
//
// Thread-safety: run from main() only.
#pragma once

namespace CLI {
class App;
}  // namespace CLI

namespace ferry::app {

void RegisterParquetFromJson(CLI::App* parquet, int* exit_code);

}  // namespace ferry::app
