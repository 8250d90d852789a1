// JSON decode throughput of JsonDecoder on the 9-column row of the Parquet benchmark (issue 2):
// int64 id, int32, double, two short strings, a 100-byte string, a timestamp, a date and a
// nullable string with 20 % nulls. Reports rows/s ("items_per_second") for timestamps written as
// ISO-8601 strings and as epoch milliseconds; and, on rows with a Spark-style `dateTime` string,
// decode alone next to decode plus the derived column of issue 6
// (from_unixtime(unix_timestamp(dateTime, 'MM/dd/yyyy - HH:mm:ss Z'), 'MM/dd/yyyy')), evaluated
// on every batch of 65,536 rows, and decode plus that column plus the dedup of the pipeline
// (pipeline::DedupIndex on `id`: filter the batch against committed keys, then remember them).
//
//   cmake --preset release && cmake --build --preset release --target json_decode_bench
//   build/release/bench/json_decode_bench
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <random>
#include <string>
#include <vector>

#include "ferry/columnar/ddl.h"
#include "ferry/columnar/record_batch.h"
#include "ferry/pipeline/dedup_index.h"
#include "ferry/transform/expression.h"
#include "ferry/transform/json_decoder.h"

namespace {

constexpr const char* kSchema =
    "id BIGINT NOT NULL, qty INT, price DOUBLE, code STRING, city STRING, body STRING, "
    "ts TIMESTAMP, day DATE, note STRING";
constexpr const char* kDateTimeSchema =
    "id BIGINT NOT NULL, qty INT, price DOUBLE, code STRING, city STRING, body STRING, "
    "dateTime STRING, day DATE, note STRING";
constexpr const char* kDateOnly =
    "from_unixtime(unix_timestamp(dateTime, 'MM/dd/yyyy - HH:mm:ss Z'), 'MM/dd/yyyy')";

enum class TsStyle { kIso, kEpochMillis, kSparkDateTime };

std::vector<std::string> MakeMessages(TsStyle style, size_t n) {
  std::mt19937_64 rng(42);
  const char* cities[] = {"Paris", "Lyon", "Berlin", "Oslo", "Madrid", "Rome", "Lisbon", "Kyiv"};
  std::vector<std::string> out;
  out.reserve(n);
  for (size_t i = 0; i < n; i++) {
    std::string body(100, 'a');
    for (char& c : body) {
      c = static_cast<char>('a' + rng() % 26);
    }
    int64_t sec = 1'700'000'000 + static_cast<int64_t>(rng() % 100'000'000);
    std::string ts;
    if (style == TsStyle::kEpochMillis) {
      ts = fmt::format("{}", sec * 1000 + static_cast<int64_t>(rng() % 1000));
    } else if (style == TsStyle::kIso) {
      ts = fmt::format("\"2026-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z\"", rng() % 12 + 1,
                       rng() % 28 + 1, rng() % 24, rng() % 60, rng() % 60, rng() % 1000);
    } else {
      ts = fmt::format("\"{:02}/{:02}/2026 - {:02}:{:02}:{:02} +0000\"", rng() % 12 + 1,
                       rng() % 28 + 1, rng() % 24, rng() % 60, rng() % 60);
    }
    std::string note = rng() % 5 == 0 ? "null" : fmt::format("\"note-{}\"", rng() % 1000);
    out.push_back(fmt::format(
        R"({{"id":{},"qty":{},"price":{:.2f},"code":"c{:04}","city":"{}","body":"{}","{}":{},)"
        R"("day":"2026-{:02}-{:02}","note":{}}})",
        i, rng() % 100000, static_cast<double>(rng() % 1000000) / 100.0, rng() % 10000,
        cities[rng() % 8], body, style == TsStyle::kSparkDateTime ? "dateTime" : "ts", ts,
        rng() % 12 + 1, rng() % 28 + 1, note));
  }
  return out;
}

// Decodes messages into batches of 65,536 rows; with `expr`, evaluates it on every full batch.
void DecodeRows(benchmark::State& state, TsStyle style, const char* expr, bool dedup = false) {
  auto schema = std::make_shared<const ferry::columnar::Schema>(*ferry::columnar::ParseDdlSchema(
      style == TsStyle::kSparkDateTime ? kDateTimeSchema : kSchema));
  ferry::transform::JsonDecoderOptions options;
  options.epoch_unit = ferry::transform::EpochUnit::kMillis;
  auto decoder = std::move(*ferry::transform::JsonDecoder::Create(schema, options));
  std::unique_ptr<ferry::transform::Expression> derived;
  if (expr != nullptr) {
    derived = std::move(*ferry::transform::Expression::Compile(expr, *schema));
  }
  std::unique_ptr<ferry::pipeline::DedupIndex> index;
  if (dedup) {
    index = std::move(*ferry::pipeline::DedupIndex::Create(schema, {.key = "id"}));
  }
  std::vector<std::string> messages = MakeMessages(style, 10000);
  auto batch = ferry::columnar::RecordBatch::MakeEmpty(schema);
  size_t bytes = 0;
  size_t i = 0;
  int64_t derived_nulls = 0;
  for (auto _ : state) {
    const std::string& m = messages[i++ % messages.size()];
    if (!decoder->Append(m, &batch).ok()) {
      state.SkipWithError("decode failed");
      break;
    }
    bytes += m.size();
    if (batch.num_rows() == 65536) {
      if (derived) {
        derived_nulls += derived->Evaluate(batch)->null_count();
      }
      if (index) {
        std::vector<std::string> keys;
        std::vector<int64_t> keep = index->Filter(batch, &keys);
        benchmark::DoNotOptimize(keep.data());
        index->Remember(keys, static_cast<int64_t>(i), 0);
      }
      batch.Clear();  // the pipeline hands full batches to the Parquet writer
    }
  }
  if (derived_nulls != 0) {
    state.SkipWithError("the derived column has nulls");
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
}

void BM_JsonDecodeIsoTimestamps(benchmark::State& state) {
  DecodeRows(state, TsStyle::kIso, nullptr);
}
void BM_JsonDecodeEpochMillis(benchmark::State& state) {
  DecodeRows(state, TsStyle::kEpochMillis, nullptr);
}
void BM_JsonDecodeSparkDateTime(benchmark::State& state) {
  DecodeRows(state, TsStyle::kSparkDateTime, nullptr);
}
void BM_JsonDecodeSparkDateTimePlusDateOnly(benchmark::State& state) {
  DecodeRows(state, TsStyle::kSparkDateTime, kDateOnly);
}
void BM_JsonDecodeSparkDateTimePlusDateOnlyPlusDedup(benchmark::State& state) {
  DecodeRows(state, TsStyle::kSparkDateTime, kDateOnly, /*dedup=*/true);
}
BENCHMARK(BM_JsonDecodeIsoTimestamps);
BENCHMARK(BM_JsonDecodeEpochMillis);
BENCHMARK(BM_JsonDecodeSparkDateTime);
BENCHMARK(BM_JsonDecodeSparkDateTimePlusDateOnly);
BENCHMARK(BM_JsonDecodeSparkDateTimePlusDateOnlyPlusDedup);

}  // namespace

BENCHMARK_MAIN();
