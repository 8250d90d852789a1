// `ferry parquet cat FILE [--columns a,b] [--limit N]`: rows as JSON lines (parquet_cat_json.h),
// read one row group at a time.
#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "ferry/app/parquet_cat_json.h"
#include "ferry/app/parquet_read_commands.h"
#include "ferry/parquet/file_reader.h"

namespace ferry::app {
namespace {

struct CatOptions {
  std::string file;
  std::vector<std::string> columns;
  int64_t limit = -1;
  bool verify_checksums = false;
};

Status WriteOut(std::string* buffer) {
  if (!buffer->empty() &&
      std::fwrite(buffer->data(), 1, buffer->size(), stdout) != buffer->size()) {
    return IOError("writing to stdout failed");
  }
  buffer->clear();
  return Status::OK();
}

Status Cat(const CatOptions& options) {
  parquet::ReaderOptions reader_options;
  reader_options.verify_checksums = options.verify_checksums;
  FERRY_ASSIGN_OR_RETURN(auto reader, parquet::FileReader::OpenLocal(options.file, reader_options));
  std::vector<int> fields;
  if (!options.columns.empty()) {
    FERRY_ASSIGN_OR_RETURN(fields, reader->FieldIndices(options.columns));
  }
  std::string buffer;
  int64_t printed = 0;
  for (int rg = 0; rg < reader->num_row_groups(); rg++) {
    if (options.limit >= 0 && printed >= options.limit) {
      break;
    }
    FERRY_ASSIGN_OR_RETURN(columnar::RecordBatch batch, reader->ReadRowGroup(rg, fields));
    for (int64_t row = 0; row < batch.num_rows(); row++) {
      if (options.limit >= 0 && printed >= options.limit) {
        break;
      }
      AppendJsonRow(batch, row, &buffer);
      buffer.push_back('\n');
      printed++;
      if (buffer.size() >= (1 << 20)) {
        FERRY_RETURN_IF_ERROR(WriteOut(&buffer));
      }
    }
  }
  FERRY_RETURN_IF_ERROR(WriteOut(&buffer));
  if (std::fflush(stdout) != 0) {
    return IOError("writing to stdout failed");
  }
  return Status::OK();
}

}  // namespace

void RegisterParquetCat(CLI::App* parquet, int* exit_code) {
  auto options = std::make_shared<CatOptions>();
  CLI::App* cat = parquet->add_subcommand("cat", "Print a Parquet file's rows as JSON lines");
  cat->add_option("file", options->file, "Parquet file")->required();
  cat->add_option("--columns", options->columns, "Top-level columns to print (a,b,c)")
      ->delimiter(',');
  cat->add_option("--limit", options->limit, "Print at most N rows");
  cat->add_flag("--verify-checksums", options->verify_checksums,
                "Check the CRC-32 of pages that carry one");
  cat->callback([options, exit_code] {
    Status status = Cat(*options);
    if (!status.ok()) {
      std::fprintf(stderr, "ferry parquet cat: %s\n", status.ToString().c_str());
      *exit_code = 1;
    }
  });
}

}  // namespace ferry::app
