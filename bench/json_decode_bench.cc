// JSON decode throughput of JsonDecoder on the 9-column row of the Parquet benchmark (issue 2):
// int64 id, int32, double, two short strings, a 100-byte string, a timestamp, a date and a
// nullable string with 20 % nulls. Reports rows/s ("items_per_second") for timestamps written as
// ISO-8601 strings and as epoch milliseconds.
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
#include "ferry/transform/json_decoder.h"

namespace {

constexpr const char* kSchema =
    "id BIGINT NOT NULL, qty INT, price DOUBLE, code STRING, city STRING, body STRING, "
    "ts TIMESTAMP, day DATE, note STRING";

std::vector<std::string> MakeMessages(bool epoch_millis, size_t n) {
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
    std::string ts =
        epoch_millis
            ? fmt::format("{}", sec * 1000 + static_cast<int64_t>(rng() % 1000))
            : fmt::format("\"2026-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z\"", rng() % 12 + 1,
                          rng() % 28 + 1, rng() % 24, rng() % 60, rng() % 60, rng() % 1000);
    std::string note = rng() % 5 == 0 ? "null" : fmt::format("\"note-{}\"", rng() % 1000);
    out.push_back(fmt::format(
        R"({{"id":{},"qty":{},"price":{:.2f},"code":"c{:04}","city":"{}","body":"{}","ts":{},)"
        R"("day":"2026-{:02}-{:02}","note":{}}})",
        i, rng() % 100000, static_cast<double>(rng() % 1000000) / 100.0, rng() % 10000,
        cities[rng() % 8], body, ts, rng() % 12 + 1, rng() % 28 + 1, note));
  }
  return out;
}

void DecodeRows(benchmark::State& state, bool epoch_millis) {
  auto schema =
      std::make_shared<const ferry::columnar::Schema>(*ferry::columnar::ParseDdlSchema(kSchema));
  ferry::transform::JsonDecoderOptions options;
  options.epoch_unit = ferry::transform::EpochUnit::kMillis;
  auto decoder = std::move(*ferry::transform::JsonDecoder::Create(schema, options));
  std::vector<std::string> messages = MakeMessages(epoch_millis, 10000);
  auto batch = ferry::columnar::RecordBatch::MakeEmpty(schema);
  size_t bytes = 0;
  size_t i = 0;
  for (auto _ : state) {
    const std::string& m = messages[i++ % messages.size()];
    if (!decoder->Append(m, &batch).ok()) {
      state.SkipWithError("decode failed");
      break;
    }
    bytes += m.size();
    if (batch.num_rows() == 65536) {
      batch.Clear();  // the pipeline hands full batches to the Parquet writer
    }
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
}

void BM_JsonDecodeIsoTimestamps(benchmark::State& state) {
  DecodeRows(state, false);
}
void BM_JsonDecodeEpochMillis(benchmark::State& state) {
  DecodeRows(state, true);
}
BENCHMARK(BM_JsonDecodeIsoTimestamps);
BENCHMARK(BM_JsonDecodeEpochMillis);

}  // namespace

BENCHMARK_MAIN();
