// Inside the column writer: the value half of a column chunk. ColumnWriter (column_writer.h)
// owns levels, pages, compression and chunk metadata; a ValueWriter owns what depends on the
// physical type: encoding the values of a page (PLAIN or dictionary indices), the dictionary, and
// min/max statistics. One implementation per physical type, as in DuckDB:
//   BOOLEAN                 column_writer_numeric.cc  (PLAIN bit-packed, no dictionary)
//   INT32 INT64 FLOAT DOUBLE column_writer_numeric.cc  (PLAIN or RLE_DICTIONARY)
//   BYTE_ARRAY FIXED_LEN    column_writer_binary.cc   (PLAIN or RLE_DICTIONARY)
// Values are converted from the columnar storage type in bulk per slice (no per-value virtual
// calls): int8 → INT32, uint32 → INT32 bit pattern, Int128 decimals → INT32/INT64/big-endian
// FIXED_LEN_BYTE_ARRAY.
//
// Dictionary protocol: while dictionary encoding is on, values go to the dictionary and the page
// holds indices. When DictionaryFull() turns true after an Append, ColumnWriter flushes the page
// (still dictionary-encoded) and calls FallBackToPlain(): the rest of the chunk is PLAIN, and so
// is every later chunk of the column (a column that outgrew its dictionary once is assumed
// high-cardinality). FinishDictionary() hands out the dictionary page of the chunk.
//
// Thread-safety: not thread-safe.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "ferry/base/result.h"
#include "ferry/parquet/column_descriptor.h"
#include "ferry/parquet/metadata.h"
#include "ferry/parquet/shredder.h"
#include "ferry/parquet/statistics.h"

namespace ferry::parquet::internal {

struct ValueWriterOptions {
  bool enable_dictionary = true;
  int64_t dictionary_max_bytes = 1 << 20;
};

// A chunk's first dictionary-encoded page of at least this many values decides whether the
// dictionary pays: when the dictionary plus the page's indices are not smaller than the PLAIN
// values, the rest of the column is PLAIN (parquet-mr's check). Unique ids, UUIDs and random
// payloads then skip hashing every value into a dictionary that only grows the file.
inline constexpr size_t kDictionaryCheckMinValues = 1000;
inline bool DictionaryPays(size_t indices_bytes, int64_t dictionary_bytes, int64_t plain_bytes) {
  return static_cast<int64_t>(indices_bytes) + dictionary_bytes < plain_bytes;
}

// The bytes of a page being formed: bytes[start, end). What lies before `start` is unused room
// (see PlainPageValues).
struct PageBuffer {
  std::string bytes;
  size_t start = 0;

  std::string_view view() const { return std::string_view(bytes).substr(start); }
  size_t size() const { return bytes.size() - start; }
  void Clear() {
    bytes.clear();
    start = 0;
  }
};

// A page's PLAIN values, kept behind room for the page's levels: a data page v1 is its levels
// and then its values, and copying a few kilobytes of levels into the room is cheaper than
// copying a megabyte of values after the levels (3 % of `ferry parquet from-json`'s CPU was
// that copy). When the levels do not fit, the values are copied after them.
class PlainPageValues {
 public:
  size_t size() const { return bytes_.empty() ? 0 : bytes_.size() - kRoom; }
  // Extends the values by n bytes and returns where they go.
  char* Extend(size_t n) {
    if (bytes_.empty()) {
      bytes_.reserve(capacity_hint_);  // no regrowth copies when the last page was handed over
      bytes_.resize(kRoom);
    }
    size_t at = bytes_.size();
    bytes_.resize(at + n);
    return bytes_.data() + at;
  }
  void Append(const void* data, size_t n) {
    if (n > 0) {
      std::memcpy(Extend(n), data, n);
    }
  }
  // Appends the values to *page, after what it holds, and starts a new page. The page's buffer
  // and ours may be swapped.
  void MoveTo(PageBuffer* page) {
    if (bytes_.empty()) {
      return;
    }
    size_t front = page->size();
    if (front <= kRoom) {
      size_t at = kRoom - front;
      if (front > 0) {
        std::memcpy(bytes_.data() + at, page->bytes.data() + page->start, front);
      }
      page->bytes.swap(bytes_);
      page->start = at;
      capacity_hint_ = page->bytes.capacity();
    } else {
      page->bytes.append(bytes_, kRoom);
    }
    bytes_.clear();
  }

 private:
  // Levels of a 60,000-value page at one bit each fit (a v1 page's levels with length prefixes).
  static constexpr size_t kRoom = 8192;
  std::string bytes_;  // kRoom bytes of room, then the values; empty when there are none
  size_t capacity_hint_ = 0;
};

class ValueWriter {
 public:
  virtual ~ValueWriter() = default;

  // Appends the values of `slice` to the current page. InvalidArgument for values the column
  // cannot hold (a FIXED_LEN_BYTE_ARRAY value of the wrong width).
  virtual Status Append(const ShreddedLeaf& slice) = 0;
  // Encoded bytes of the current page's values so far (an estimate for dictionary indices).
  virtual int64_t PageBytes() const = 0;
  // Appends the current page's encoded values to *out (after the levels it may hold) and
  // returns their encoding; sets the min/max fields of *page_stats and folds them into the
  // chunk's; starts a new page.
  virtual Encoding FinishPage(PageBuffer* out, Statistics* page_stats) = 0;

  virtual bool DictionaryFull() const { return false; }
  virtual void FallBackToPlain() {}
  // FallBackToPlain() was called (here or by the writer itself when its dictionary did not pay).
  virtual bool FellBackToPlain() const { return false; }
  // Bytes held by the chunk's dictionary (its PLAIN encoding).
  virtual int64_t DictionaryBytes() const { return 0; }
  // If the chunk used a dictionary, appends its PLAIN-encoded entries to *out and returns their
  // number; otherwise returns nullopt. Starts a new dictionary for the next chunk.
  virtual std::optional<int32_t> FinishDictionary(std::string* /*out*/) { return std::nullopt; }

  // Sets the min/max fields of *chunk_stats for the chunk and folds them into the file's;
  // starts a new chunk.
  virtual void FinishChunk(Statistics* chunk_stats) = 0;
  // The file's min/max so far in typed form (statistics.h). `whole_bounds`: byte bounds longer
  // than kMaxStatisticsValueBytes are returned too (they are never written to the file).
  virtual void FileMinMax(std::optional<StatValue>* min, std::optional<StatValue>* max,
                          bool whole_bounds) const = 0;
};

// The value writer for a leaf of columnar type `type` stored as `column`.
Result<std::unique_ptr<ValueWriter>> MakeValueWriter(const ColumnDescriptor& column,
                                                     const columnar::DataType& type,
                                                     const ValueWriterOptions& options);

// Implementations (column_writer_numeric.cc, column_writer_binary.cc).
Result<std::unique_ptr<ValueWriter>> MakeNumericValueWriter(const ColumnDescriptor& column,
                                                            const columnar::DataType& type,
                                                            const ValueWriterOptions& options);
Result<std::unique_ptr<ValueWriter>> MakeBinaryValueWriter(const ColumnDescriptor& column,
                                                           const columnar::DataType& type,
                                                           const ValueWriterOptions& options);

// Calls fn(row) for each leaf row holding a value of the slice, in order.
template <typename Fn>
inline void ForEachValueRow(const ShreddedLeaf& slice, int16_t max_def, Fn&& fn) {
  if (!slice.dense) {
    for (int64_t row : slice.value_rows) {
      fn(row);
    }
  } else if (slice.def_levels.empty() || slice.num_values == slice.num_levels) {
    for (int64_t row = slice.begin; row < slice.end; ++row) {
      fn(row);
    }
  } else {
    const int16_t* def = slice.def_levels.data();
    for (int64_t i = 0, n = slice.end - slice.begin; i < n; ++i) {
      if (def[i] == max_def) {
        fn(slice.begin + i);
      }
    }
  }
}

}  // namespace ferry::parquet::internal
