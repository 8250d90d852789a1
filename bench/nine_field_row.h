// The nine-field row of the JSON decoding and Parquet benchmarks (bench/json_decode_bench.cc):
// id BIGINT NOT NULL, qty INT, price DOUBLE, two short strings, a 100-byte string, a timestamp, a
// date and a nullable string with 20 % nulls. One seeded generator for the Avro benchmarks
// (avro_decode_bench.cc, avro_produce.cc), so that the same rows go out as Avro datums of
// kNineFieldAvroSchema and as JSON text, as json_decode_bench writes them (ISO-8601 timestamps
// with milliseconds).
//
// The Avro encoder is written here by hand from the Avro 1.11 specification ("Binary Encoding"):
// zigzag varints for int and long, a long length before a string's bytes, 8 little-endian bytes
// for a double, the branch index (a long) before a union's value. It knows this one record only.
//
// Thread-safety: a NineFieldRows generator is not thread-safe; the functions are.
#pragma once

#include <fmt/format.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <optional>
#include <random>
#include <string>

#include "ferry/transform/avro_bytes_for_test.h"

namespace ferry::bench {

constexpr const char* kNineFieldDdl =
    "id BIGINT NOT NULL, qty INT, price DOUBLE, code STRING, city STRING, body STRING, "
    "ts TIMESTAMP, day DATE, note STRING";

constexpr const char* kNineFieldAvroSchema = R"({
  "type": "record", "name": "NineFields", "namespace": "ferry.bench",
  "fields": [
    {"name": "id", "type": "long"},
    {"name": "qty", "type": "int"},
    {"name": "price", "type": "double"},
    {"name": "code", "type": "string"},
    {"name": "city", "type": "string"},
    {"name": "body", "type": "string"},
    {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-micros"}},
    {"name": "day", "type": {"type": "int", "logicalType": "date"}},
    {"name": "note", "type": ["null", "string"], "default": null}
  ]
})";

struct NineFieldRow {
  int64_t id = 0;
  int32_t qty = 0;
  int64_t price_cents = 0;  // price = price_cents / 100.0 (two decimals in JSON)
  std::string code;
  std::string city;
  std::string body;
  int32_t ts_month = 1, ts_day = 1, ts_hour = 0, ts_minute = 0, ts_second = 0, ts_millis = 0;
  int32_t day_month = 1, day_day = 1;  // 2026-MM-DD
  std::optional<std::string> note;

  double price() const { return static_cast<double>(price_cents) / 100.0; }
  int64_t ts_micros() const {
    auto d = std::chrono::sys_days{std::chrono::year{2026} / ts_month / ts_day};
    int64_t seconds =
        int64_t{d.time_since_epoch().count()} * 86400 + ts_hour * 3600 + ts_minute * 60 + ts_second;
    return seconds * 1'000'000 + int64_t{ts_millis} * 1000;
  }
  int32_t date_days() const {
    auto d = std::chrono::sys_days{std::chrono::year{2026} / day_month / day_day};
    return static_cast<int32_t>(d.time_since_epoch().count());
  }
};

class NineFieldRows {
 public:
  explicit NineFieldRows(uint64_t seed = 42) : rng_(seed) {}

  NineFieldRow Next(int64_t id) {
    static constexpr const char* kCities[] = {"Paris",  "Lyon", "Berlin", "Oslo",
                                              "Madrid", "Rome", "Lisbon", "Kyiv"};
    NineFieldRow r;
    r.id = id;
    r.qty = static_cast<int32_t>(rng_() % 100000);
    r.price_cents = static_cast<int64_t>(rng_() % 1000000);
    r.code = fmt::format("c{:04}", rng_() % 10000);
    r.city = kCities[rng_() % 8];
    r.body.resize(100);
    for (char& c : r.body) {
      c = static_cast<char>('a' + rng_() % 26);
    }
    r.ts_month = Draw(12) + 1;
    r.ts_day = Draw(28) + 1;
    r.ts_hour = Draw(24);
    r.ts_minute = Draw(60);
    r.ts_second = Draw(60);
    r.ts_millis = Draw(1000);
    r.day_month = Draw(12) + 1;
    r.day_day = Draw(28) + 1;
    if (rng_() % 5 != 0) {
      r.note = fmt::format("note-{}", rng_() % 1000);
    }
    return r;
  }

 private:
  int32_t Draw(uint64_t n) { return static_cast<int32_t>(rng_() % n); }

  std::mt19937_64 rng_;
};

// As json_decode_bench's rows with ISO-8601 timestamps.
inline std::string ToJson(const NineFieldRow& r) {
  return fmt::format(
      R"({{"id":{},"qty":{},"price":{:.2f},"code":"{}","city":"{}","body":"{}",)"
      R"("ts":"2026-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z","day":"2026-{:02}-{:02}","note":{}}})",
      r.id, r.qty, r.price(), r.code, r.city, r.body, r.ts_month, r.ts_day, r.ts_hour, r.ts_minute,
      r.ts_second, r.ts_millis, r.day_month, r.day_day,
      r.note ? fmt::format("\"{}\"", *r.note) : std::string("null"));
}

// The row as the seeds' Spark job receives it (json_decode_bench's "SparkDateTime" rows): the
// timestamp as a `dateTime` string in 'MM/dd/yyyy - HH:mm:ss Z' (UTC, whole seconds), the rest as
// ToJson. Schema: kNineFieldSparkDdl; the job derives `date_only` from `dateTime`.
constexpr const char* kNineFieldSparkDdl =
    "id BIGINT NOT NULL, qty INT, price DOUBLE, code STRING, city STRING, body STRING, "
    "dateTime STRING, day DATE, note STRING";

inline std::string ToSparkJson(const NineFieldRow& r) {
  return fmt::format(
      R"({{"id":{},"qty":{},"price":{:.2f},"code":"{}","city":"{}","body":"{}",)"
      R"("dateTime":"{:02}/{:02}/2026 - {:02}:{:02}:{:02} +0000","day":"2026-{:02}-{:02}","note":{}}})",
      r.id, r.qty, r.price(), r.code, r.city, r.body, r.ts_month, r.ts_day, r.ts_hour, r.ts_minute,
      r.ts_second, r.day_month, r.day_day,
      r.note ? fmt::format("\"{}\"", *r.note) : std::string("null"));
}

// One datum of kNineFieldAvroSchema, unframed.
inline std::string ToAvro(const NineFieldRow& r) {
  std::string out;
  out += ferry::transform::avro_test::Long(r.id);
  out += ferry::transform::avro_test::Long(r.qty);
  char price[8];
  double p = r.price();
  std::memcpy(price, &p, 8);  // little-endian, as the host (x86-64, arm64)
  out.append(price, 8);
  out += ferry::transform::avro_test::Str(r.code);
  out += ferry::transform::avro_test::Str(r.city);
  out += ferry::transform::avro_test::Str(r.body);
  out += ferry::transform::avro_test::Long(r.ts_micros());
  out += ferry::transform::avro_test::Long(r.date_days());
  if (r.note) {
    out += ferry::transform::avro_test::Long(1);
    out += ferry::transform::avro_test::Str(*r.note);
  } else {
    out += ferry::transform::avro_test::Long(0);
  }
  return out;
}

}  // namespace ferry::bench
