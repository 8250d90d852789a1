// The JSON form of columnar values that `ferry parquet cat` prints (one object per row) and
// `ferry parquet inspect --json` uses for statistics:
//   boolean          true / false
//   integers         numbers, exact (64-bit values too: the text is exact, parsers may not be)
//   float, double    numbers in the shortest form that reads back exactly; NaN, Infinity and
//                    -Infinity as the strings "NaN", "Infinity", "-Infinity"
//   decimal          numbers with exactly `scale` fraction digits (12.30 for DECIMAL(4,2))
//   string, json     strings (JSON values are not embedded: a file may hold invalid JSON);
//                    invalid UTF-8 becomes U+FFFD
//   binary, fixed    base64 strings (RFC 4648, padded)
//   date             "YYYY-MM-DD" (proleptic Gregorian; years outside 0000-9999 with a sign)
//   timestamp        ISO-8601 "YYYY-MM-DDThh:mm:ss[.fraction]" with "Z" when UTC-adjusted; the
//                    fraction has the unit's digits (3, 6, 9) and is left out when zero
//   struct           object of its fields
//   list             array
//   map              object when the keys are strings, else an array of {"key", "value"} objects
//   null             null
//
// Thread-safety: thread-safe functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "ferry/columnar/column.h"
#include "ferry/columnar/record_batch.h"

namespace ferry::app {

// Appends the JSON of row `row` of `column`.
void AppendJsonValue(const columnar::Column& column, int64_t row, std::string* out);
// Appends row `row` of `batch` as one JSON object (no newline).
void AppendJsonRow(const columnar::RecordBatch& batch, int64_t row, std::string* out);
// Appends `s` as a JSON string literal.
void AppendJsonString(std::string_view s, std::string* out);

}  // namespace ferry::app
