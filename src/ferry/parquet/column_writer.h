// ColumnWriter: builds the column chunks of one leaf column, row group after row group.
//
// A chunk, as written by FlushChunk():
//   1. the dictionary page, if any data page of the chunk is dictionary-encoded
//      (PageHeader{DICTIONARY_PAGE} + PLAIN entries, compressed);
//   2. the data pages in order. A v1 page (DATA_PAGE) is
//      [4-byte length + RLE repetition levels] [4-byte length + RLE definition levels] [values],
//      compressed as a whole; a v2 page (DATA_PAGE_V2) keeps the levels uncompressed and without
//      length prefixes (their lengths are in the header) and compresses only the values.
// Levels are written only when the maximum level is above 0. Every page starts at a row boundary
// and carries statistics (min/max, null_count) in its header.
//
// Pages are cut before a slice that would take the page past page_max_rows, and after a slice
// that took it to page_max_bytes (or when the bytes the page holds per row predict that the next
// slice would), so pages stay within about one slice of their limits. Compressed pages wait in
// memory until FlushChunk, because the dictionary page goes first; the row-group limits of the
// FileWriter therefore bound the memory.
//
// With a CompressionPool (compression_pool.h), a finished page is compressed by a pool job while
// the writer encodes the next one; FlushChunk waits for the chunk's jobs in page order. The
// bytes written are the same; EstimatedChunkBytes counts a page still in the pool at its
// uncompressed size.
//
// Thread-safety: not thread-safe (pool jobs touch only their own page and an atomic counter).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ferry/base/io.h"
#include "ferry/base/result.h"
#include "ferry/parquet/column_descriptor.h"
#include "ferry/parquet/column_writer_internal.h"
#include "ferry/parquet/compression.h"
#include "ferry/parquet/compression_pool.h"
#include "ferry/parquet/metadata.h"
#include "ferry/parquet/page_arena.h"
#include "ferry/parquet/shredder.h"
#include "ferry/parquet/statistics.h"

namespace ferry::parquet {

struct ColumnWriterOptions {
  int64_t page_max_rows = 20000;
  int64_t page_max_bytes = 1 << 20;
  bool data_page_v2 = false;
  internal::ValueWriterOptions values;
};

class ColumnWriter {
 public:
  // `codec` is shared by the columns of a file and must outlive the writer. `pool`, if not
  // null, compresses the data pages (same codec and level) and must outlive the writer's
  // pending pages: destroy it (it finishes its jobs) before the writer. `arena`, if not null
  // and there is no pool, holds the compressed data pages of a codec that can compress into it
  // (page_arena.h); its owner resets it once every column of the row group was flushed.
  static Result<std::unique_ptr<ColumnWriter>> Create(const ColumnDescriptor& column,
                                                      columnar::DataTypePtr type, bool repeated,
                                                      const ColumnWriterOptions& options,
                                                      Codec* codec, CompressionPool* pool = nullptr,
                                                      PageArena* arena = nullptr);

  // Appends a shredded slice of rows to the chunk being built.
  Status Write(const ShreddedLeaf& slice);
  // Bytes the chunk would take if flushed now.
  int64_t EstimatedChunkBytes() const;
  // Encoded bytes per row seen so far (before compression), at least 1: the FileWriter sizes
  // its slices with it so that a slice stays a small part of a page.
  int64_t BytesPerRow() const {
    return written_rows_ == 0 ? 1 : std::max<int64_t>(1, written_bytes_ / written_rows_);
  }
  // Writes the chunk (dictionary page, data pages) to `sink` and describes it in *chunk; the
  // writer then starts the next chunk.
  Status FlushChunk(OutputStream* sink, ColumnChunk* chunk);
  // Statistics over every chunk flushed so far; with `whole_bounds`, byte bounds of any length
  // (WriterOptions::whole_statistics_bounds).
  ColumnStatistics FileStatistics(bool whole_bounds = false) const;
  // The column's dictionary did not pay (it outgrew dictionary_max_bytes or was no smaller than
  // PLAIN): the rest of the file is PLAIN.
  bool FellBackToPlain() const;

 private:
  // One data page of the chunk being built. Written to the sink as header, prefix, data.
  struct ChunkPage {
    std::string header;              // the serialized PageHeader
    std::string prefix;              // a v2 page's levels (never compressed)
    std::string_view data;           // the (compressed) page body: in `owned` or the arena
    ByteBuffer owned;                // the body when it is not in the arena
    int64_t uncompressed_size = 0;   // header.uncompressed_page_size
    std::future<Status> compressed;  // valid while a pool job fills header and data

    int64_t size() const {
      return static_cast<int64_t>(header.size() + prefix.size() + data.size());
    }
  };

  ColumnWriter(const ColumnDescriptor& column, columnar::DataTypePtr type, bool repeated,
               const ColumnWriterOptions& options, Codec* codec, CompressionPool* pool,
               PageArena* arena, std::unique_ptr<internal::ValueWriter> values);
  Status FlushPage();
  int64_t PageBytesEstimate() const;
  void AppendLevels(const std::vector<int16_t>& levels, int16_t max_level, bool length_prefix,
                    std::string* out);
  // Compresses `input` into page->data (in `arena` when it is not null and the codec can write
  // there, else in page->owned) and serializes `header`, its compressed size now that of
  // page->prefix plus page->data, into page->header.
  static Status CompressPage(Codec* codec, PageArena* arena, PageHeader header,
                             std::string_view input, ChunkPage* page);
  // Adds a data page to the chunk: `prefix` as is (a v2 page's levels), then `input`
  // compressed, here or by a pool job (which takes *input over; it is left empty).
  Status AddPage(PageHeader header, std::string_view prefix, internal::PageBuffer* input);

  const ColumnDescriptor column_;
  const columnar::DataTypePtr type_;
  const bool repeated_;
  const ColumnWriterOptions options_;
  Codec* const codec_;
  CompressionPool* const pool_;  // null: pages are compressed inline
  PageArena* const arena_;       // null: pages are compressed into blocks of their own
  std::unique_ptr<internal::ValueWriter> values_;

  // The page being filled.
  std::vector<int16_t> page_def_;
  std::vector<int16_t> page_rep_;
  int64_t page_levels_ = 0;
  int64_t page_values_ = 0;
  int64_t page_rows_ = 0;

  // The chunk being built: its data pages, compressed, with their headers, one buffer each: a
  // page is never copied again until the chunk goes to the sink (one growing string copied the
  // chunk at each doubling).
  std::vector<std::unique_ptr<ChunkPage>> chunk_pages_;
  std::atomic<int64_t> chunk_pages_bytes_ = 0;  // pool jobs correct their page's estimate
  int64_t chunk_levels_ = 0;
  int64_t chunk_nulls_ = 0;
  std::map<std::pair<PageType, Encoding>, int32_t> chunk_page_encodings_;

  int64_t written_bytes_ = 0;
  int64_t written_rows_ = 0;
  int64_t file_levels_ = 0;
  int64_t file_nulls_ = 0;

  // Reused buffers.
  internal::PageBuffer body_;
  internal::PageBuffer values_buffer_;
};

}  // namespace ferry::parquet
