// libFuzzer target: JSON messages decoded into a fixed nested schema (transform/json_decoder.h).
// The first byte picks the decoder options (plain, or every coercion switched the other way:
// unknown fields kept, no string<->number coercions, epoch millis, Spark patterns, a zone with
// DST, a shallow depth limit); the rest is split on '\n' into messages appended to one batch.
// Each Append must either add exactly one row or leave the batch as it was, and the batch must
// stay valid: anything else aborts.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "ferry/base/check.h"
#include "ferry/columnar/ddl.h"
#include "ferry/columnar/record_batch.h"
#include "ferry/transform/json_decoder.h"

namespace {

constexpr std::string_view kSchema =
    "id BIGINT NOT NULL, b BOOLEAN, i8 TINYINT, i16 SMALLINT, i32 INT, u64 UINT64, f FLOAT, "
    "d DOUBLE, s STRING, j JSON, bin BINARY, fx FIXED(2), dt DATE, ts TIMESTAMP, "
    "ntz TIMESTAMP_NTZ, tsm TIMESTAMP_MILLIS, dec DECIMAL(12,2), big DECIMAL(38,10), "
    "tags ARRAY<STRING>, m MAP<STRING, ARRAY<INT>>, "
    "loc STRUCT<lat: DOUBLE, lon: DOUBLE NOT NULL, "
    "meta STRUCT<k: STRING, v: ARRAY<STRUCT<a: INT, at: TIMESTAMP>>>>, extra STRING";

ferry::columnar::SchemaPtr Schema() {
  static const ferry::columnar::SchemaPtr schema = [] {
    auto parsed = ferry::columnar::ParseDdlSchema(kSchema);
    FERRY_CHECK(parsed.ok());
    return std::make_shared<const ferry::columnar::Schema>(std::move(*parsed));
  }();
  return schema;
}

std::unique_ptr<ferry::transform::JsonDecoder> MakeDecoder(uint8_t variant) {
  ferry::transform::JsonDecoderOptions options;
  if ((variant & 1) != 0) {
    options.unknown_fields_column = "extra";
    options.numbers_as_strings = false;
    options.strings_as_numbers = false;
    options.epoch_unit = ferry::transform::EpochUnit::kMillis;
    options.timestamp_formats = {"yyyy-MM-dd HH:mm:ss", "dd/MM/yyyy HH:mm:ss.SSS Z"};
    options.date_formats = {"MM/dd/yyyy", "yyyyMMdd"};
    options.time_zone = "Europe/Paris";
    options.max_depth = 8;
  }
  if ((variant & 2) != 0) {
    options.epoch_unit = ferry::transform::EpochUnit::kMicros;
  }
  auto decoder = ferry::transform::JsonDecoder::Create(Schema(), std::move(options));
  FERRY_CHECK(decoder.ok());
  return std::move(*decoder);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) {
    return 0;
  }
  static std::unique_ptr<ferry::transform::JsonDecoder> decoders[4] = {
      MakeDecoder(0), MakeDecoder(1), MakeDecoder(2), MakeDecoder(3)};
  ferry::transform::JsonDecoder& decoder = *decoders[data[0] & 3];
  std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  auto batch = ferry::columnar::RecordBatch::MakeEmpty(Schema());
  while (true) {
    size_t end = rest.find('\n');
    std::string_view message = rest.substr(0, end);
    int64_t before = batch.num_rows();
    ferry::Status status = decoder.Append(message, &batch);
    // A bad message is InvalidArgument and leaves no half row; a good one adds exactly one.
    FERRY_CHECK_MSG(status.ok() || status.code() == ferry::StatusCode::kInvalidArgument,
                    status.ToString());
    FERRY_CHECK(batch.num_rows() == before + (status.ok() ? 1 : 0));
    ferry::Status valid = batch.Validate();
    FERRY_CHECK_MSG(valid.ok(), valid.ToString());
    if (end == std::string_view::npos) {
      break;
    }
    rest.remove_prefix(end + 1);
  }
  return 0;
}
