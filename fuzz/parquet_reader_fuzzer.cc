// libFuzzer target: arbitrary bytes as a Parquet file. The reader must return an error or a
// valid batch: never crash, hang, or allocate beyond the limits below (run with
// -malloc_limit_mb, tools/run_fuzzers.sh). Seeds: the parquet-testing files.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "ferry/base/check.h"
#include "ferry/base/io.h"
#include "ferry/parquet/file_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto file = std::make_shared<ferry::StringRandomAccessFile>(
      std::string(reinterpret_cast<const char*>(data), size), "fuzz.parquet");
  ferry::parquet::ReaderOptions options;
  options.max_page_size = int64_t{16} << 20;
  options.max_footer_size = int64_t{16} << 20;
  options.max_batch_bytes = int64_t{64} << 20;
  options.max_batch_rows = int64_t{1} << 20;
  options.verify_checksums = (size & 1) != 0;
  auto reader = ferry::parquet::FileReader::Open(file, options);
  if (!reader.ok()) {
    return 0;
  }
  // Column chunks are read a window at a time: with windows of a few bytes (page headers and
  // bodies across every window edge) a file must read exactly as with the default windows.
  ferry::parquet::ReaderOptions small_reads = options;
  small_reads.min_read_size = static_cast<int64_t>(size % 64);
  auto small = ferry::parquet::FileReader::Open(file, small_reads);
  FERRY_CHECK(small.ok());
  for (int rg = 0; rg < (*reader)->num_row_groups(); rg++) {
    auto batch = (*reader)->ReadRowGroup(rg);
    auto same = (*small)->ReadRowGroup(rg);
    FERRY_CHECK(batch.ok() == same.ok());
    if (batch.ok()) {
      // What the reader returns must be a consistent batch.
      FERRY_CHECK(batch->Validate().ok());
      FERRY_CHECK(batch->num_rows() == same->num_rows());
    } else {
      FERRY_CHECK(batch.status().ToString() == same.status().ToString());
    }
  }
  // Small batches (ReadBatches) cut row groups in the middle of pages: every batch must be
  // consistent, and a file that reads whole must read to as many rows in batches.
  int64_t batched_rows = 0;
  ferry::Status batched = (*reader)->ReadBatches({}, 1 + static_cast<int64_t>(size % 7),
                                                 [&](const ferry::columnar::RecordBatch& b) {
                                                   FERRY_CHECK(b.Validate().ok());
                                                   batched_rows += b.num_rows();
                                                   return ferry::Status::OK();
                                                 });
  auto all = (*small)->ReadAll();
  if (batched.ok() && all.ok() && all->num_columns() > 0) {
    FERRY_CHECK(batched_rows == all->num_rows());
  }
  return 0;
}
