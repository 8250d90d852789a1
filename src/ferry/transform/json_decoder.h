// JsonDecoder: schema-driven decoding of one JSON object per message into a row (simdjson
// On-Demand underneath; its headers stay inside json_decoder.cc).
//
// Mapping: top-level fields to columns by exact name; nested objects into STRUCT columns (by
// name), arrays into ARRAY columns, objects into MAP<STRING, V> columns. Unknown fields are
// ignored (but must still be valid JSON) or, with `unknown_fields_column`, kept as one JSON
// object text in that STRING column (null when a message has none). A missing or null field is
// null; in a NOT NULL field it is an error. A key repeated in one object: the last one wins
// (as Spark's JSON reader does). The coercion table is in docs/transform.md; in short:
//   integers: JSON integers (range-checked), and numbers with a zero fraction ("3.0", "3e2");
//   floats: any number; decimals: exactly from the number's text, rounded half up to the scale;
//   STRING: strings, numbers and booleans as written, objects and arrays as their JSON text;
//   BINARY: base64 strings; BOOLEAN: true/false;
//   DATE/TIMESTAMP: strings in ISO-8601 (datetime_cast.h) or the configured Spark patterns;
//   TIMESTAMP from numbers: epoch seconds, millis or micros per `epoch_unit`;
//   strings into numbers, decimals and booleans when `strings_as_numbers` is on.
//
// Performance: Create() compiles a plan (one node per schema field, a name index per struct);
// Append() walks the message once, matching keys by predicting the next field and falling back
// to a hash lookup, and appends straight into the columns: no allocation per field or value.
// The payload is copied into a reused padded buffer (simdjson reads up to 64 bytes past the end).
//
// Thread-safety: one decoder per thread (Decoder).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/columnar/types.h"
#include "ferry/transform/decoder.h"

namespace ferry::transform {

enum class EpochUnit : uint8_t { kSeconds, kMillis, kMicros };

struct JsonDecoderOptions {
  // Batch columns filled from the message, by name; empty means every column of the schema.
  std::vector<std::string> columns;
  // A STRING column (also listed in `columns` when that is given) that receives the unknown
  // top-level fields as a JSON object, e.g. {"extra":1}. Empty: unknown fields are dropped.
  std::string unknown_fields_column;
  // What a JSON number in a TIMESTAMP column counts since 1970-01-01T00:00:00Z.
  EpochUnit epoch_unit = EpochUnit::kSeconds;
  // Spark datetime patterns tried in order for strings in TIMESTAMP / DATE columns; empty means
  // the ISO-8601 reading of CAST (datetime_cast.h).
  std::vector<std::string> timestamp_formats;
  std::vector<std::string> date_formats;
  // Zone of timestamps written without an offset (java.time names, time_zone.h).
  std::string time_zone = "UTC";
  // JSON numbers and booleans into STRING columns (as written in the message).
  bool numbers_as_strings = true;
  // Strings into integer, float, decimal, boolean columns, and digit strings into TIMESTAMP.
  bool strings_as_numbers = true;
  // Deepest nesting accepted anywhere in a message.
  int max_depth = 1000;
  // Schema evolution (decoder.h): report the fields the schema lacks, at any depth, with the
  // type their values ask for (json_infer.h), and take a field that differs from a column only
  // in case for that column (Delta's names are case-insensitive).
  bool observe = false;
  // Also report values that fail to decode but would fit a wider type (json_infer.h NeededType).
  bool observe_misfits = false;
  // With observe_misfits: a DATE field whose string has a time of day other than midnight fails
  // (and is reported as needing TIMESTAMP_NTZ) instead of losing the time, as Spark's cast does.
  bool dates_keep_time = false;
};

class JsonDecoder final : public Decoder {
 public:
  // InvalidArgument for options that do not fit the schema (unknown column names, a MAP whose
  // key is not STRING, a bad datetime pattern or time zone).
  static Result<std::unique_ptr<JsonDecoder>> Create(columnar::SchemaPtr schema,
                                                     JsonDecoderOptions options);
  ~JsonDecoder() override;

  const std::vector<int>& output_columns() const override;
  Status Append(std::string_view json, columnar::RecordBatch* batch) override;

  class Impl;

 private:
  explicit JsonDecoder(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ferry::transform
