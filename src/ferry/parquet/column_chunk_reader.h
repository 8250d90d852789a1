// Reads one column chunk (one leaf column of one row group) into the leaf's columnar column:
// pages → levels and values → rows. Used by FileReader (file_reader.h) for each selected leaf.
//
// Steps:
//   1. The chunk's bytes: from the dictionary page (dictionary_page_offset when set, > 0 and
//      below data_page_offset) or else data_page_offset, total_compressed_size long, inside the
//      file's data area (between the leading magic and the footer). A chunk of no values is not
//      read at all. parquet-mr before 1.2.9 left the dictionary page header out of
//      total_compressed_size (PARQUET-816): for its files up to 100 more bytes are read. The
//      chunk is read a window at a time (ReaderOptions::min_read_size, or a whole page and the
//      next header), not in one piece: only the page being decoded is in memory.
//   2. Pages one after another: a Thrift PageHeader, then compressed_page_size bytes. Sizes are
//      checked against the chunk and ReaderOptions::max_page_size before any buffer is sized from
//      them; a page CRC is checked when ReaderOptions::verify_checksums is set.
//   3. A dictionary page (at most one, before the data pages) is recognised by its header, not
//      by dictionary_page_offset (some writers omit the offset), decoded (PLAIN) and converted
//      to the leaf's type once.
//   4. Data page v1: the page is decompressed; it holds [repetition levels][definition levels]
//      [values], each level run a 4-byte length + RLE/bit-packed hybrid (or the deprecated
//      BIT_PACKED, no length). Data page v2: the levels come first, uncompressed and without a
//      length prefix (their byte lengths are in the header); the values follow, compressed
//      unless is_compressed is false; an empty values section is never handed to the codec.
//   5. Values are decoded (value_decoder.h), converted (value_conversion.h) and spread over the
//      leaf's rows (record_assembly.h AppendLeafSlots); levels above the column's maximum are
//      corrupt. Index pages and unknown page types are skipped.
//   6. Reading stops once the data pages hold ColumnMetaData.num_values level positions; fewer
//      before the chunk ends, or more, is corrupt.
// Errors name the page and its file offset; the caller adds the file, row group and column.
//
// Buffers: the chunk's bytes, decompressed pages, levels and dictionary indices live in a
// ChunkScratch that the caller may keep from chunk to chunk (FileReader keeps one per reader), so
// a row group's chunks reuse the memory the previous one grew instead of each allocating and
// page-faulting its own.
//
// Thread-safety: not thread-safe; one reader per chunk at a time, one user of a scratch at a time.
//
// WriterSizesChunksShort(created_by) says whether a file's writer has the PARQUET-816 bug.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/base/io.h"
#include "ferry/base/status.h"
#include "ferry/columnar/column.h"
#include "ferry/parquet/compression.h"
#include "ferry/parquet/metadata.h"
#include "ferry/parquet/reader_options.h"
#include "ferry/parquet/record_assembly.h"
#include "ferry/parquet/schema_from_parquet.h"

namespace ferry::parquet {

// Buffers reused from page to page and chunk to chunk. Their contents are meaningless between
// reads; only their capacity carries over.
struct ChunkScratch {
  ByteBuffer bytes;         // the window of the column chunk read from the file
  ByteBuffer decompressed;  // one page
  std::vector<int16_t> def;
  std::vector<int16_t> rep;
  std::vector<uint32_t> indices;
  // The last chunk's codec, kept with its (de)compression context for the next chunk.
  std::unique_ptr<Codec> codec;
  // Dense values of a page with nulls, before they are spread over the rows; recreated when a
  // chunk needs another type.
  std::unique_ptr<columnar::Column> raw;        // physical storage
  std::unique_ptr<columnar::Column> converted;  // leaf type, when a conversion applies
};

// The bytes of a column chunk [begin, end), read a window at a time into a reused buffer: a chunk
// can be tens of megabytes and its pages are consumed once, in order, so holding only the current
// page keeps the buffer small (and in cache) instead of faulting in the whole chunk. The buffer
// only grows, to a quarter more than asked at least (the next row group's page is often a little
// longer: a new block is a page fault per 4 KiB touched), and is read into without being cleared.
class ChunkWindow {
 public:
  // Reads are at least `min_read` bytes (several small pages at once); a page body is read with
  // `lookahead` more bytes so that the next page header usually comes with it.
  ChunkWindow(const RandomAccessFile* file, uint64_t begin, uint64_t end, uint64_t min_read,
              ByteBuffer* buffer)
      : file_(file),
        buffer_(buffer),
        pos_(begin),
        end_(end),
        buffer_begin_(begin),
        min_read_(std::max<uint64_t>(min_read, 1)),
        lookahead_(std::min<uint64_t>(min_read_, 4096)) {}

  uint64_t lookahead() const { return lookahead_; }
  uint64_t position() const { return pos_; }
  // Bytes of the chunk after position().
  uint64_t left() const { return end_ - pos_; }
  // The bytes from position() that are in memory.
  std::string_view available() const {
    return buffer_->view()
        .substr(0, static_cast<size_t>(buffer_len_))
        .substr(static_cast<size_t>(pos_ - buffer_begin_));
  }
  // Makes at least min(n, left()) bytes from position() available.
  Status Ensure(uint64_t n) {
    n = std::min(n, left());
    if (available().size() >= n) {
      return Status::OK();
    }
    uint64_t len = std::min(left(), std::max(n, min_read_));
    if (buffer_->size() < len) {
      FERRY_RETURN_IF_ERROR(buffer_->Allocate(std::max(len + len / 4, buffer_->size() * 3 / 2)));
    }
    buffer_len_ = 0;
    FERRY_RETURN_IF_ERROR(file_->ReadInto(pos_, len, buffer_->data()));
    buffer_begin_ = pos_;
    buffer_len_ = len;
    return Status::OK();
  }
  // REQUIRES: n <= available().size()
  void Skip(uint64_t n) { pos_ += n; }

 private:
  const RandomAccessFile* file_;
  ByteBuffer* buffer_;  // the file's bytes from buffer_begin_, buffer_len_ of them
  uint64_t buffer_len_ = 0;
  uint64_t pos_;
  uint64_t end_;
  uint64_t buffer_begin_;
  uint64_t min_read_;
  uint64_t lookahead_;
};

class ColumnChunkReader {
 public:
  // Where a file's pages may be and how its writer sized chunks.
  struct FileLayout {
    uint64_t data_begin = 4;         // after the leading magic
    uint64_t data_end = 0;           // the footer's offset
    bool short_chunk_sizes = false;  // PARQUET-816 (see step 1)
  };

  // All pointers must outlive the reader.
  ColumnChunkReader(const RandomAccessFile* file, FileLayout layout, const LeafColumn* leaf,
                    const ReaderOptions* options, DecodeBudget* budget, ChunkScratch* scratch);

  // Decodes `chunk`, appending one row per slot to `out` (a column of leaf->type) and, when
  // `levels` is not null, the chunk's levels to *levels.
  Status Read(const ColumnChunk& chunk, columnar::Column* out, LeafLevels* levels);

  // The same a batch at a time, for a flat leaf (max_rep 0: one row per level position):
  // Begin(chunk), then ReadRows until done(). Each ReadRows call appends `rows` rows to `out`,
  // fewer only when the chunk ends. A page is decoded in parts (PartPage): its levels, dictionary
  // indices or non-PLAIN values whole, its PLAIN values a batch's worth at a time straight into
  // `out`, so a batch holds its own rows only, however long the page (DuckDB writes a chunk of
  // 122,880 rows as one page). The reader keeps its window, dictionary and the page in progress
  // between calls, so each leaf read this way needs a ChunkScratch of its own. `budget` may be
  // replaced between calls.
  Status Begin(const ColumnChunk& chunk);
  Status ReadRows(columnar::Column* out, int64_t rows);
  bool done() const { return values_seen_ >= chunk_values_ && part_.next == part_.positions; }
  void set_budget(DecodeBudget* budget) { budget_ = budget; }

 private:
  struct Page {
    int index = 0;
    uint64_t offset = 0;  // of the header, in the file
    const PageHeader* header = nullptr;
    std::string_view body;  // compressed_page_size bytes as stored
  };

  // The data page in progress: Read takes it whole as one part, ReadRows a batch's worth at a
  // time. Its levels are in scratch_->def; its values are dictionary indices (scratch_->indices),
  // PLAIN bytes not taken yet (in scratch_->decompressed, or the window for an uncompressed page:
  // neither changes until the next page), the bytes of another encoding not decoded yet, or
  // those values decoded whole (scratch_->raw or converted).
  struct PartPage {
    enum class Values { kIndices, kPlain, kEncoded, kDense };
    Values kind = Values::kDense;
    int index = 0;  // for errors
    uint64_t offset = 0;
    int64_t positions = 0;                 // level positions on the page: its rows
    int64_t non_null = 0;                  // values on the page
    int64_t next = 0;                      // positions appended so far
    bool all_valid = true;                 // every position a value (the levels need not be read)
    Encoding encoding = Encoding::kPlain;  // kEncoded
    std::string_view encoded;              // kPlain, kEncoded
    int64_t next_value = 0;                // kIndices, kDense: the first value not taken
    const columnar::Column* dense = nullptr;  // kDense
  };

  // Decodes pages into `out` (and `levels`) while `more()` holds and values remain.
  template <typename More>
  Status ReadPagesWhile(columnar::Column* out, LeafLevels* levels, More more);
  // Makes room in `out` for the chunk's rows (and binary data), as far as the budget allows.
  void ReserveOutput(const ColumnMetaData& meta, columnar::Column* out);
  Status ReadPage(const Page& page, columnar::Column* out, LeafLevels* levels);
  Status ReadDictionaryPage(const Page& page);
  Status ReadDataPageV1(const Page& page, columnar::Column* out, LeafLevels* levels);
  Status ReadDataPageV2(const Page& page, columnar::Column* out, LeafLevels* levels);
  // One data page, once its sections are separated: BeginPart, then (Read) its levels to
  // `levels` and all its rows to `out` with AppendPart; ReadRows appends its rows later.
  Status DecodeDataPage(int64_t num_values, Encoding encoding, std::string_view values,
                        columnar::Column* out, LeafLevels* levels);
  // Makes the decoded data page the one in progress (part_).
  Status BeginPart(int64_t num_values, int64_t non_null, Encoding encoding,
                   std::string_view values);
  // Appends up to `rows` of the page's rows to `out`: PLAIN values straight into `out` when every
  // position is a value and no conversion applies, so are another encoding's when the part is the
  // whole page; else through scratch_->raw.
  Status AppendPart(int64_t rows, columnar::Column* out);
  // Once per chunk, at its first dictionary page of strings: the bytes the chunk's later
  // positions will take if they are like this page's (`page_bytes` over `page_values`), when the
  // budget's reservation allowance has them; else 0. Without it a column of strings from a small
  // dictionary doubles its buffer again and again (its chunk's compressed size says nothing).
  int64_t ExtrapolatedBytes(int64_t page_bytes, int64_t page_values);
  Status DecodeDenseValues(int64_t count, Encoding encoding, std::string_view values,
                           const columnar::Column** dense);
  // The values just decoded into scratch_->raw, charged to the budget and converted to the
  // leaf's type when a conversion applies: *dense is raw or scratch_->converted.
  Status ConvertRaw(const columnar::Column** dense);
  // The bytes of the binary dictionary's entries at indices[0, n).
  int64_t IndexedBytes(const uint32_t* indices, int64_t n) const;
  // Decompresses `input` into exactly `size` bytes (or passes it through when uncompressed).
  Status Decompress(std::string_view input, int64_t size, std::string_view* out);

  const RandomAccessFile* file_;
  FileLayout layout_;
  const LeafColumn* leaf_;
  const ReaderOptions* options_;
  DecodeBudget* budget_;

  ChunkScratch* scratch_;

  // Per chunk.
  Codec* codec_ = nullptr;  // scratch_->codec
  std::unique_ptr<columnar::Column> dictionary_;
  int64_t values_seen_ = 0;
  int64_t chunk_values_ = 0;  // ColumnMetaData.num_values
  bool extrapolated_ = false;
  std::optional<ChunkWindow> window_;
  int page_index_ = 0;
  uint64_t page_offset_ = 0;  // of the page being read
  bool in_parts_ = false;     // ReadRows, not Read
  PartPage part_;
};

// True for parquet-mr before 1.2.9 (also when it wrote no version), whose column chunk sizes
// leave out the dictionary page header.
bool WriterSizesChunksShort(std::string_view created_by);

}  // namespace ferry::parquet
