// Avro decoding rows/s (issue 20, docs/BENCHMARKS.md "Avro decoding") on the nine-field row of
// the JSON benchmark (nine_field_row.h): the same ROWS rows (default 1,000,000) as unframed Avro
// datums and as JSON text, decoded by
//   ferry_avro  AvroDecoder with `.writer_schema` (the pipeline's decoder for unframed messages:
//               AvroRowReader straight into the batch's columns);
//   avro_c      the peer: a bare decode loop with avro-c's generic reader: one memory reader and
//               one generic value of the schema, reused; avro_value_read of each datum, then
//               every field read out (avro_value_get_by_index, get_long, get_string, the union's
//               branch), so that nothing is skipped;
//   ferry_json  JsonDecoder on the same rows as JSON (ISO-8601 timestamps, as json_decode_bench).
// ferry's decoders append into a RecordBatch of the table's schema, cleared every 65,536 rows as
// the pipeline hands full batches on. Each round times the three in turn on the whole data set;
// the figures are the medians over ROUNDS (default 5) rounds of the wall time and of the
// thread's CPU time (steadier on a shared machine), printed as
//   `<name> rows=<n> median_seconds=<s> median_cpu_seconds=<s> rows_per_second=<r> ...`
// and then the ratios ferry_avro / avro_c (target >= 3) and ferry_avro / ferry_json, both ways.
// Before timing, the first 65,536 rows decoded from Avro and from JSON are compared column by
// column, so the three decode the same values.
//
//   cmake --preset release && cmake --build --preset release --target avro_decode_bench
//   build/release/bench/avro_decode_bench [ROWS] [ROUNDS] [ONLY]
// ONLY (ferry_avro, avro_c or ferry_json) times that one alone, for a profiler (no ratios).
#include <avro.h>
#include <fmt/format.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "nine_field_row.h"

#include "ferry/columnar/ddl.h"
#include "ferry/columnar/record_batch.h"
#include "ferry/transform/avro_decoder.h"
#include "ferry/transform/avro_schema.h"
#include "ferry/transform/json_decoder.h"

namespace {

using Clock = std::chrono::steady_clock;
constexpr int64_t kBatchRows = 65536;

// CPU seconds of this thread: on a shared machine, less noisy than the wall clock.
double ThreadCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// Wall and CPU seconds of one timed pass.
struct Timing {
  double wall = 0;
  double cpu = 0;
};

class Stopwatch {
 public:
  Timing Stop() const {
    return {std::chrono::duration<double>(Clock::now() - wall_).count(), ThreadCpuSeconds() - cpu_};
  }

 private:
  Clock::time_point wall_ = Clock::now();
  double cpu_ = ThreadCpuSeconds();
};

// Messages back to back in one buffer (a million small strings would time the allocator).
struct Messages {
  std::string data;
  std::vector<size_t> ends;

  size_t size() const { return ends.size(); }
  std::string_view operator[](size_t i) const {
    size_t begin = i == 0 ? 0 : ends[i - 1];
    return std::string_view(data).substr(begin, ends[i] - begin);
  }
  void Add(const std::string& m) {
    data += m;
    ends.push_back(data.size());
  }
};

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "avro_decode_bench: %s\n", what.c_str());
  std::exit(1);
}

// Decodes every message with `decoder` into batches of kBatchRows.
Timing TimeFerry(ferry::transform::Decoder* decoder, const Messages& messages,
                 const ferry::columnar::SchemaPtr& schema) {
  auto batch = ferry::columnar::RecordBatch::MakeEmpty(schema);
  Stopwatch watch;
  for (size_t i = 0; i < messages.size(); ++i) {
    ferry::Status st = decoder->Append(messages[i], &batch);
    if (!st.ok()) {
      Die(fmt::format("message {}: {}", i, st.ToString()));
    }
    if (batch.num_rows() == kBatchRows) {
      batch.Clear();  // the pipeline hands full batches to the Parquet writer
    }
  }
  return watch.Stop();
}

// avro-c's generic reader over the same datums; `checksum` keeps every field read.
class AvroCLoop {
 public:
  AvroCLoop() {
    if (avro_schema_from_json_length(ferry::bench::kNineFieldAvroSchema,
                                     std::strlen(ferry::bench::kNineFieldAvroSchema),
                                     &schema_) != 0) {
      Die(fmt::format("avro-c: {}", avro_strerror()));
    }
    iface_ = avro_generic_class_from_schema(schema_);
    if (iface_ == nullptr || avro_generic_value_new(iface_, &value_) != 0) {
      Die(fmt::format("avro-c: {}", avro_strerror()));
    }
    reader_ = avro_reader_memory(nullptr, 0);
  }
  ~AvroCLoop() {
    avro_reader_free(reader_);
    avro_value_decref(&value_);
    avro_value_iface_decref(iface_);
    avro_schema_decref(schema_);
  }
  AvroCLoop(const AvroCLoop&) = delete;
  AvroCLoop& operator=(const AvroCLoop&) = delete;

  Timing Time(const Messages& messages, uint64_t* checksum) {
    Stopwatch watch;
    uint64_t sum = 0;
    for (size_t i = 0; i < messages.size(); ++i) {
      std::string_view m = messages[i];
      avro_reader_memory_set_source(reader_, m.data(), static_cast<int64_t>(m.size()));
      if (avro_value_read(reader_, &value_) != 0) {
        Die(fmt::format("avro-c: message {}: {}", i, avro_strerror()));
      }
      sum += ReadFields();
    }
    *checksum = sum;
    return watch.Stop();
  }

 private:
  // Every field of the record, as a consumer would take it out.
  uint64_t ReadFields() {
    avro_value_t f;
    int64_t l = 0;
    int32_t n = 0;
    double d = 0;
    const char* s = nullptr;
    size_t len = 0;
    uint64_t sum = 0;
    auto field = [&](size_t index) {
      if (avro_value_get_by_index(&value_, index, &f, nullptr) != 0) {
        Die(fmt::format("avro-c: field {}: {}", index, avro_strerror()));
      }
    };
    field(0);
    avro_value_get_long(&f, &l);
    sum += static_cast<uint64_t>(l);
    field(1);
    avro_value_get_int(&f, &n);
    sum += static_cast<uint64_t>(n);
    field(2);
    avro_value_get_double(&f, &d);
    sum += static_cast<uint64_t>(d);
    for (size_t i : {size_t{3}, size_t{4}, size_t{5}}) {
      field(i);
      avro_value_get_string(&f, &s, &len);
      sum += len + static_cast<unsigned char>(s[0]);
    }
    field(6);
    avro_value_get_long(&f, &l);
    sum += static_cast<uint64_t>(l);
    field(7);
    avro_value_get_int(&f, &n);
    sum += static_cast<uint64_t>(n);
    field(8);
    int branch = 0;
    avro_value_get_discriminant(&f, &branch);
    if (branch == 1) {
      avro_value_t note;
      avro_value_get_current_branch(&f, &note);
      avro_value_get_string(&note, &s, &len);
      sum += len;
    }
    return sum;
  }

  avro_schema_t schema_ = nullptr;
  avro_value_iface_t* iface_ = nullptr;
  avro_value_t value_{};
  avro_reader_t reader_ = nullptr;
};

// The first rows decoded by `a` and `b` hold the same values (bit for bit: a price parsed from
// JSON text is the double the Avro writer wrote).
void CheckSame(ferry::transform::Decoder* a, const Messages& ma, ferry::transform::Decoder* b,
               const Messages& mb, const ferry::columnar::SchemaPtr& schema) {
  auto ba = ferry::columnar::RecordBatch::MakeEmpty(schema);
  auto bb = ferry::columnar::RecordBatch::MakeEmpty(schema);
  size_t n = std::min<size_t>(ma.size(), kBatchRows);
  for (size_t i = 0; i < n; ++i) {
    if (!a->Append(ma[i], &ba).ok() || !b->Append(mb[i], &bb).ok()) {
      Die(fmt::format("check: message {} does not decode", i));
    }
  }
  for (int c = 0; c < ba.num_columns(); ++c) {
    const ferry::columnar::Column& x = ba.column(c);
    const ferry::columnar::Column& y = bb.column(c);
    for (int64_t r = 0; r < static_cast<int64_t>(n); ++r) {
      bool same = x.IsValid(r) == y.IsValid(r);
      if (same && x.IsValid(r)) {
        auto cell = [r](const ferry::columnar::Column& col) -> std::string {
          switch (col.type_id()) {
            case ferry::columnar::TypeId::kString:
              return std::string(col.As<ferry::columnar::BinaryColumn>()->Value(r));
            case ferry::columnar::TypeId::kInt32:
            case ferry::columnar::TypeId::kDate:
              return std::to_string(col.As<ferry::columnar::Int32Column>()->Value(r));
            case ferry::columnar::TypeId::kFloat64:
              return fmt::format("{}", col.As<ferry::columnar::DoubleColumn>()->Value(r));
            default:
              return std::to_string(col.As<ferry::columnar::Int64Column>()->Value(r));
          }
        };
        same = cell(x) == cell(y);
      }
      if (!same) {
        Die(fmt::format("check: row {} column {} differs between Avro and JSON", r,
                        schema->fields()[static_cast<size_t>(c)].name));
      }
    }
  }
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  const auto rows = static_cast<size_t>(argc > 1 ? std::atoll(argv[1]) : 1'000'000);
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 5;
  const std::string only = argc > 3 ? argv[3] : "";
  if (rows == 0 || rounds <= 0) {
    Die("usage: avro_decode_bench [ROWS] [ROUNDS]");
  }

  Messages avro;
  Messages json;
  ferry::bench::NineFieldRows gen;
  for (size_t i = 0; i < rows; ++i) {
    ferry::bench::NineFieldRow r = gen.Next(static_cast<int64_t>(i));
    avro.Add(ferry::bench::ToAvro(r));
    json.Add(ferry::bench::ToJson(r));
  }

  auto schema = std::make_shared<const ferry::columnar::Schema>(
      *ferry::columnar::ParseDdlSchema(ferry::bench::kNineFieldDdl));
  auto writer = ferry::transform::avro::Schema::Parse(ferry::bench::kNineFieldAvroSchema);
  if (!writer.ok()) {
    Die(writer.status().ToString());
  }
  auto avro_decoder = ferry::transform::AvroDecoder::Create(
      schema, {.writer_schema =
                   std::make_shared<const ferry::transform::avro::Schema>(std::move(*writer))});
  auto json_decoder = ferry::transform::JsonDecoder::Create(schema, {});
  if (!avro_decoder.ok() || !json_decoder.ok()) {
    Die("cannot create the decoders");
  }
  CheckSame(avro_decoder->get(), avro, json_decoder->get(), json, schema);
  AvroCLoop avro_c;

  std::printf("avro_decode_bench: %zu rows, Avro %.1f MiB (%.0f B/row), JSON %.1f MiB, %d rounds\n",
              rows, static_cast<double>(avro.data.size()) / (1 << 20),
              static_cast<double>(avro.data.size()) / static_cast<double>(rows),
              static_cast<double>(json.data.size()) / (1 << 20), rounds);
  std::vector<Timing> t_avro;
  std::vector<Timing> t_c;
  std::vector<Timing> t_json;
  uint64_t checksum = 0;
  for (int i = 0; i < rounds; ++i) {
    if (only.empty() || only == "ferry_avro") {
      t_avro.push_back(TimeFerry(avro_decoder->get(), avro, schema));
    }
    if (only.empty() || only == "avro_c") {
      t_c.push_back(avro_c.Time(avro, &checksum));
    }
    if (only.empty() || only == "ferry_json") {
      t_json.push_back(TimeFerry(json_decoder->get(), json, schema));
    }
    if (!only.empty()) {
      continue;
    }
    std::printf(
        "round %d: ferry_avro %.3f s (CPU %.3f), avro_c %.3f s (CPU %.3f), ferry_json %.3f s (CPU "
        "%.3f)\n",
        i + 1, t_avro.back().wall, t_avro.back().cpu, t_c.back().wall, t_c.back().cpu,
        t_json.back().wall, t_json.back().cpu);
  }
  if (!only.empty()) {
    return 0;
  }
  const double n = static_cast<double>(rows);
  struct Rates {
    double wall;
    double cpu;
  };
  auto report = [&](const char* name, const std::vector<Timing>& t) {
    std::vector<double> wall;
    std::vector<double> cpu;
    for (const Timing& x : t) {
      wall.push_back(x.wall);
      cpu.push_back(x.cpu);
    }
    double w = Median(wall);
    double c = Median(cpu);
    std::printf(
        "%s rows=%zu median_seconds=%.3f median_cpu_seconds=%.3f rows_per_second=%.0f "
        "rows_per_cpu_second=%.0f\n",
        name, rows, w, c, n / w, n / c);
    return Rates{n / w, n / c};
  };
  Rates r_avro = report("ferry_avro", t_avro);
  Rates r_c = report("avro_c", t_c);
  Rates r_json = report("ferry_json", t_json);
  std::printf("ratio ferry_avro / avro_c: %.2f wall, %.2f CPU (target >= 3)\n",
              r_avro.wall / r_c.wall, r_avro.cpu / r_c.cpu);
  std::printf("ratio ferry_avro / ferry_json: %.2f wall, %.2f CPU\n", r_avro.wall / r_json.wall,
              r_avro.cpu / r_json.cpu);
  std::printf("avro_c checksum: %llu\n", static_cast<unsigned long long>(checksum));
  return 0;
}
