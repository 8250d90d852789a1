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
#include <memory>
#include <optional>
#include <string>

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

class ValueWriter {
 public:
  virtual ~ValueWriter() = default;

  // Appends the values of `slice` to the current page. InvalidArgument for values the column
  // cannot hold (a FIXED_LEN_BYTE_ARRAY value of the wrong width).
  virtual Status Append(const ShreddedLeaf& slice) = 0;
  // Encoded bytes of the current page's values so far (an estimate for dictionary indices).
  virtual int64_t PageBytes() const = 0;
  // Appends the current page's encoded values to *out and returns their encoding; sets the
  // min/max fields of *page_stats and folds them into the chunk's; starts a new page.
  virtual Encoding FinishPage(std::string* out, Statistics* page_stats) = 0;

  virtual bool DictionaryFull() const { return false; }
  virtual void FallBackToPlain() {}
  // Bytes held by the chunk's dictionary (its PLAIN encoding).
  virtual int64_t DictionaryBytes() const { return 0; }
  // If the chunk used a dictionary, appends its PLAIN-encoded entries to *out and returns their
  // number; otherwise returns nullopt. Starts a new dictionary for the next chunk.
  virtual std::optional<int32_t> FinishDictionary(std::string* /*out*/) { return std::nullopt; }

  // Sets the min/max fields of *chunk_stats for the chunk and folds them into the file's;
  // starts a new chunk.
  virtual void FinishChunk(Statistics* chunk_stats) = 0;
  // The file's min/max so far in typed form (statistics.h).
  virtual void FileMinMax(std::optional<StatValue>* min, std::optional<StatValue>* max) const = 0;
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
