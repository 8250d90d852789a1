// Decoding of the values section of a Parquet page (parquet-format Encodings.md), the first stage
// of the reader: bytes of one page → raw physical values appended to a column. Dictionary indices
// are decoded here too; looking them up is the caller's business (column_chunk_reader.h).
//
// Decoders append to a column whose *storage class* matches the physical type; its logical type
// may differ (an INT32 DATE column decodes straight into a DateColumn, both
// PrimitiveColumn<int32_t>):
//   BOOLEAN     PrimitiveColumn<uint8_t> (0/1)   INT32    PrimitiveColumn<int32_t>
//   INT64       PrimitiveColumn<int64_t>         INT96    BinaryColumn of 12-byte values
//   FLOAT       PrimitiveColumn<float>           DOUBLE   PrimitiveColumn<double>
//   BYTE_ARRAY  BinaryColumn                     FIXED_LEN_BYTE_ARRAY  BinaryColumn, n bytes each
//
// Every decoder is bounds-checked against its input: data shorter than `count` values, a length
// pointing past the end, or a count the bytes cannot hold is DataLoss, checked before anything
// is allocated. Output is bounded by `count` values (which the caller bounds) and by the input
// bytes, except DELTA_BYTE_ARRAY, whose values share prefixes and may grow past the input: its
// output is capped by `max_output_bytes` (ResourceExhausted).
//
// Thread-safety: the functions are thread-safe; the column they append to is the caller's.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "ferry/base/status.h"
#include "ferry/columnar/column.h"
#include "ferry/parquet/metadata.h"

namespace ferry::parquet {

// The physical type of a leaf column and, for FIXED_LEN_BYTE_ARRAY, its width in bytes.
struct PhysicalSpec {
  PhysicalType type = PhysicalType::kInt32;
  int32_t type_length = 0;
};

// The columnar type whose storage holds raw values of `spec` (the table above).
columnar::DataTypePtr StorageTypeFor(const PhysicalSpec& spec);
// True when a column of type `type` has the storage class of `physical`.
bool HasStorageOf(const columnar::DataType& type, PhysicalType physical);

// Decodes `count` values from `data` in a value encoding (PLAIN, RLE for booleans,
// DELTA_BINARY_PACKED, DELTA_LENGTH_BYTE_ARRAY, DELTA_BYTE_ARRAY, BYTE_STREAM_SPLIT) and appends
// them to `out`. REQUIRES: HasStorageOf(out->type(), spec.type), count >= 0.
// Errors: DataLoss (malformed input), NotSupported (an encoding not defined for the type, or
// unknown), ResourceExhausted (DELTA_BYTE_ARRAY output above max_output_bytes).
Status DecodeValues(Encoding encoding, const PhysicalSpec& spec, std::string_view data,
                    int64_t count, int64_t max_output_bytes, columnar::Column* out);

// PLAIN (also the encoding of dictionary pages).
Status DecodePlain(const PhysicalSpec& spec, std::string_view data, int64_t count,
                   columnar::Column* out);
// PLAIN, for a page decoded in parts: the first `count` values of *data, which is then advanced
// past them. Not for BOOLEAN (its values are bits; Internal).
Status DecodePlainPrefix(const PhysicalSpec& spec, std::string_view* data, int64_t count,
                         columnar::Column* out);

// BYTE_STREAM_SPLIT for FLOAT, DOUBLE, INT32, INT64 and FIXED_LEN_BYTE_ARRAY.
Status DecodeByteStreamSplit(const PhysicalSpec& spec, std::string_view data, int64_t count,
                             columnar::Column* out);

// The indices of an RLE_DICTIONARY / PLAIN_DICTIONARY data page: a 1-byte bit width, then the
// RLE/bit-packed hybrid. Replaces *out with `count` indices; each is checked below
// `dictionary_size`.
Status DecodeDictionaryIndices(std::string_view data, int64_t count, int64_t dictionary_size,
                               std::vector<uint32_t>* out);

}  // namespace ferry::parquet
