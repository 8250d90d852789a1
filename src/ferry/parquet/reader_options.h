// Limits of the Parquet reader (file_reader.h) and the budget that enforces the memory one read
// may fill. Every limit exists so that a hostile or corrupt file cannot make the reader allocate
// more than its own size justifies: sizes a file declares are checked against these before any
// buffer is sized from them. Exceeding a limit is ResourceExhausted, naming the option to raise.
//
// Thread-safety: ReaderOptions is a value; a DecodeBudget belongs to one read.
#pragma once

#include <cstdint>
#include <string_view>

#include "ferry/base/status.h"

namespace ferry::parquet {

struct ReaderOptions {
  // The largest page accepted, compressed or decompressed, and the most bytes one page's values
  // may decode to (DELTA_BYTE_ARRAY). Bounds what a lying page header or a decompression bomb
  // can cost. Writers use about 1 MiB; Parquet caps pages at 2 GiB.
  int64_t max_page_size = int64_t{256} << 20;
  // The largest footer (FileMetaData) accepted.
  int64_t max_footer_size = int64_t{64} << 20;
  // The most decoded data (values, offsets, validity, retained levels) one ReadRowGroup or ReadAll
  // call may produce. Row groups decode to several times their compressed size.
  int64_t max_batch_bytes = int64_t{2} << 30;
  // The most rows one ReadRowGroup or ReadAll call may return.
  int64_t max_batch_rows = (int64_t{1} << 31) - 1;
  // The least bytes read from the file at once. Column chunks are read a window at a time (a
  // page, or this many bytes of small pages), not whole: only the page being decoded is held.
  // Values below 1 count as 1.
  int64_t min_read_size = int64_t{256} << 10;
  // Check the CRC-32 of pages that carry one (DataLoss on a mismatch). Off by default, as in
  // parquet-mr and Arrow: the data itself is still checked by decoding.
  bool verify_checksums = false;
};

// Counts the bytes one read decodes against ReaderOptions::max_batch_bytes.
class DecodeBudget {
 public:
  explicit DecodeBudget(int64_t limit) : left_(limit) {}
  // Takes `bytes` from the budget, or fails with ResourceExhausted if it is spent.
  Status Charge(int64_t bytes) {
    if (bytes < 0 || bytes > left_) {
      return ResourceExhausted(
          "the data decodes to more than ReaderOptions::max_batch_bytes allows (raise it, or "
          "read fewer columns or one row group at a time)");
    }
    left_ -= bytes;
    return Status::OK();
  }
  // Whether `bytes` of capacity may be reserved ahead of decoding, on the strength of what a
  // file's metadata says a chunk holds. Reservations draw on an allowance of their own (the same
  // limit), so metadata that lies can make one read reserve at most max_batch_bytes that it never
  // fills. false is not an error: the reader then grows its columns as the data arrives.
  bool Reserve(int64_t bytes) {
    if (bytes <= 0 || bytes > reserve_left_) {
      return false;
    }
    reserve_left_ -= bytes;
    return true;
  }

 private:
  int64_t left_;
  int64_t reserve_left_ = left_;
};

}  // namespace ferry::parquet
