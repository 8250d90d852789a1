// The ferry side of the Parquet benchmark (issue 2, docs/BENCHMARKS.md), on the 9-column row:
// int64 id, int32, double, two short strings, a 100-byte string, a timestamp, a date and a
// nullable string with 20 % nulls. tools/run_benchmarks.sh drives it next to DuckDB
// (bench/duckdb_parquet_bench.mjs) and prints the ratios.
//
//   parquet_bench gen-json ROWS OUT.jsonl      the rows as JSON lines (seeded, deterministic)
//   parquet_bench write IN.jsonl OUT.parquet   decodes IN into in-memory batches of 65,536 rows
//                                              (not timed), then times writing them to a zstd
//                                              Parquet file, one thread, Close() included
//   parquet_bench read FILE [BATCH_ROWS]       times reading every row group of FILE into
//                                              batches of BATCH_ROWS rows (default 16,384,
//                                              one reused batch: FileReader::ReadBatches),
//                                              every column decoded;
//                                              BATCH_ROWS 0: each row group whole (ReadRowGroup)
// write and read print one line:
//   `<mode> rows=<n> seconds=<wall s> cpu_seconds=<user + system s> rows_per_second=<r>`.
#include <fmt/format.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "ferry/app/allocator.h"
#include "ferry/columnar/ddl.h"
#include "ferry/columnar/record_batch.h"
#include "ferry/parquet/atomic_file.h"
#include "ferry/parquet/file_reader.h"
#include "ferry/parquet/writer.h"
#include "ferry/transform/json_decoder.h"

namespace {

using Clock = std::chrono::steady_clock;

// CPU seconds (user + system) of this process so far.
double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto s = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec);
  };
  return s(u.ru_utime) + s(u.ru_stime);
}

void Report(const char* mode, int64_t rows, Clock::time_point start, double cpu_start) {
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  std::printf("%s rows=%lld seconds=%.3f cpu_seconds=%.3f rows_per_second=%.0f\n", mode,
              static_cast<long long>(rows), seconds, CpuSeconds() - cpu_start,
              static_cast<double>(rows) / seconds);
}

constexpr const char* kSchema =
    "id BIGINT NOT NULL, qty INT, price DOUBLE, code STRING, city STRING, body STRING, "
    "ts TIMESTAMP, day DATE, note STRING";

int Fail(const ferry::Status& s) {
  std::fprintf(stderr, "parquet_bench: %s\n", s.ToString().c_str());
  return 1;
}

int GenJson(int64_t rows, const std::string& out_path) {
  std::mt19937_64 rng(42);
  const char* cities[] = {"Paris", "Lyon", "Berlin", "Oslo", "Madrid", "Rome", "Lisbon", "Kyiv"};
  std::FILE* out = std::fopen(out_path.c_str(), "wb");
  if (out == nullptr) {
    std::perror(out_path.c_str());
    return 1;
  }
  std::string body(100, 'a');
  for (int64_t i = 0; i < rows; i++) {
    for (char& c : body) {
      c = static_cast<char>('a' + rng() % 26);
    }
    std::string note = rng() % 5 == 0 ? "null" : fmt::format("\"note-{}\"", rng() % 1000);
    std::string line = fmt::format(
        R"({{"id":{},"qty":{},"price":{:.2f},"code":"c{:04}","city":"{}","body":"{}",)"
        R"("ts":"2026-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}Z","day":"2026-{:02}-{:02}","note":{}}})"
        "\n",
        i, rng() % 100000, static_cast<double>(rng() % 1000000) / 100.0, rng() % 10000,
        cities[rng() % 8], body, rng() % 12 + 1, rng() % 28 + 1, rng() % 24, rng() % 60, rng() % 60,
        rng() % 1000000, rng() % 12 + 1, rng() % 28 + 1, note);
    std::fwrite(line.data(), 1, line.size(), out);
  }
  return std::fclose(out) == 0 ? 0 : 1;
}

ferry::columnar::SchemaPtr Schema() {
  return std::make_shared<const ferry::columnar::Schema>(*ferry::columnar::ParseDdlSchema(kSchema));
}

int Write(const std::string& in_path, const std::string& out_path, int level) {
  auto schema = Schema();
  auto decoder = std::move(*ferry::transform::JsonDecoder::Create(schema, {}));
  std::ifstream in(in_path);
  std::vector<ferry::columnar::RecordBatch> batches;
  batches.push_back(ferry::columnar::RecordBatch::MakeEmpty(schema));
  std::string line;
  int64_t rows = 0;
  while (std::getline(in, line)) {
    if (batches.back().num_rows() == 65536) {
      batches.push_back(ferry::columnar::RecordBatch::MakeEmpty(schema));
    }
    ferry::Status s = decoder->Append(line, &batches.back());
    if (!s.ok()) {
      return Fail(s);
    }
    rows++;
  }
  double cpu_start = CpuSeconds();
  auto start = Clock::now();
  auto sink = ferry::parquet::AtomicFileOutputStream::Create(out_path);
  if (!sink.ok()) {
    return Fail(sink.status());
  }
  ferry::parquet::WriterOptions options;
  options.compression_level = level;
  auto writer = ferry::parquet::FileWriter::Open(std::move(*sink), schema, options);
  if (!writer.ok()) {
    return Fail(writer.status());
  }
  for (const auto& b : batches) {
    ferry::Status s = (*writer)->Write(b);
    if (!s.ok()) {
      return Fail(s);
    }
  }
  ferry::Status s = (*writer)->Close();
  if (!s.ok()) {
    return Fail(s);
  }
  Report("write", rows, start, cpu_start);
  return 0;
}

int Read(const std::string& path, int64_t batch_rows) {
  double cpu_start = CpuSeconds();
  auto start = Clock::now();
  auto reader = ferry::parquet::FileReader::OpenLocal(path);
  if (!reader.ok()) {
    return Fail(reader.status());
  }
  int64_t rows = 0;
  if (batch_rows > 0) {
    ferry::Status st =
        (*reader)->ReadBatches({}, batch_rows, [&](const ferry::columnar::RecordBatch& batch) {
          rows += batch.num_rows();
          return ferry::Status::OK();
        });
    if (!st.ok()) {
      return Fail(st);
    }
  }
  for (int rg = 0; batch_rows == 0 && rg < (*reader)->num_row_groups(); rg++) {
    auto batch = (*reader)->ReadRowGroup(rg);
    if (!batch.ok()) {
      return Fail(batch.status());
    }
    rows += batch->num_rows();
  }
  Report("read", rows, start, cpu_start);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // The writer and the reader run inside `ferry`, whose main() tunes glibc's allocator first
  // (app/allocator.h); measured without it, reading DuckDB's file re-faulted its buffers at every
  // row group (22,300 page faults against 18,800, 0.47 against 0.40 s of CPU on 2026-12-03).
  ferry::app::TuneAllocator();
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() == 3 && args[0] == "gen-json") {
    return GenJson(std::stoll(args[1]), args[2]);
  }
  if ((args.size() == 3 || args.size() == 4) && args[0] == "write") {
    return Write(args[1], args[2], args.size() == 4 ? std::stoi(args[3]) : 0);
  }
  if ((args.size() == 2 || args.size() == 3) && args[0] == "read") {
    return Read(args[1], args.size() == 3 ? std::stoll(args[2]) : 16384);
  }
  std::fprintf(
      stderr,
      "usage: parquet_bench gen-json ROWS OUT.jsonl | write IN.jsonl OUT.parquet [ZSTD_LEVEL] | "
      "read FILE [BATCH_ROWS]\n");
  return 2;
}
