// Delta log benchmark (docs/BENCHMARKS.md, "Delta log"): builds a table of N commits on local
// disk (LocalStore, fsync on) the way a streaming writer does -- each commit one add with
// Spark-style stats and one txn position, a classic checkpoint every `interval` commits -- and
// reports:
//   - commit latency (Transaction::Commit: put-if-absent with fsync of file and directory, plus
//     the checkpoint when one is due), p50/p90/p99/max, for all commits and for those without
//     a checkpoint;
//   - snapshot load time (Table::LoadSnapshot from a cold Table object) at the latest version,
//     at latest - 1 (checkpoint + interval - 1 commits), and by time travel to the middle;
//   - for comparison, the latest snapshot with every checkpoint removed (pure JSON replay).
// The adds name no real data files: a snapshot load reads only the log.
//
//   cmake --build build/release --target delta_log_bench
//   build/release/bench/delta_log_bench [--commits 10000] [--interval 10] [--dir DIR]
// DIR (default: a fresh directory under /tmp) must be on the disk to measure; it is removed at
// the end unless --keep. A DIR that already holds the table (from --keep) is reused and kept:
// only the loads are measured (for profiling).
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "ferry/base/clock.h"
#include "ferry/delta/log_files.h"
#include "ferry/delta/table.h"
#include "ferry/delta/transaction.h"
#include "ferry/storage/local_store.h"

namespace ferry {
namespace {

struct Options {
  int64_t commits = 10000;
  int64_t interval = 10;
  std::string dir;
  bool keep = false;
};

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) {
    return 0;
  }
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(p / 100.0 * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

void PrintLatencies(const char* what, const std::vector<double>& ms) {
  fmt::print("{:<34} n={:<6} p50={:.2f} ms  p90={:.2f} ms  p99={:.2f} ms  max={:.2f} ms\n", what,
             ms.size(), Percentile(ms, 50), Percentile(ms, 90), Percentile(ms, 99),
             ms.empty() ? 0.0 : *std::max_element(ms.begin(), ms.end()));
}

// Loads a snapshot `runs` times from a fresh Table; returns the median in ms.
double TimeLoad(std::shared_ptr<storage::ObjectStore> store, std::optional<int64_t> version,
                int runs, int64_t* loaded_version, int64_t* files) {
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    auto table = *delta::Table::Open(store, "t");
    int64_t start = MonotonicMicros();
    auto snap = table->LoadSnapshot(version);
    int64_t end = MonotonicMicros();
    if (!snap.ok()) {
      fmt::print(stderr, "load failed: {}\n", snap.status().ToString());
      std::exit(1);
    }
    *loaded_version = snap->version();
    *files = snap->num_files();
    ms.push_back(static_cast<double>(end - start) / 1000.0);
  }
  return Percentile(ms, 50);
}

int MeasureLoads(const Options& o, const std::string& dir,
                 const std::shared_ptr<storage::ObjectStore>& store);

int Run(const Options& o) {
  std::string dir = o.dir;
  if (dir.empty()) {
    char tmpl[] = "/tmp/ferry-delta-bench-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) {
      return 1;
    }
    dir = tmpl;
  }
  std::filesystem::create_directories(dir);
  std::shared_ptr<storage::ObjectStore> store = *storage::LocalStore::Create(dir);
  if (std::filesystem::exists(dir + "/t/_delta_log")) {
    fmt::print("table: reusing {}\n", dir);
    return MeasureLoads(o, dir, store);
  }
  auto table = *delta::Table::Open(store, "t");
  delta::TableSpec spec;
  spec.schema = std::make_shared<const columnar::Schema>(
      std::vector<columnar::Field>{{"id", columnar::DataType::Int64(), false, {}},
                                   {"body", columnar::DataType::String(), true, {}},
                                   {"ts", columnar::DataType::Timestamp(), true, {}},
                                   {"day", columnar::DataType::Date(), true, {}}});
  spec.partition_columns = {"day"};
  spec.configuration = {{"delta.checkpointInterval", std::to_string(o.interval)}};
  auto created = table->Create(spec);
  if (!created.ok()) {
    fmt::print(stderr, "create: {}\n", created.status().ToString());
    return 1;
  }
  delta::Snapshot snap = std::move(*created);
  std::vector<double> all;
  std::vector<double> plain;
  std::vector<double> with_checkpoint;
  int64_t build_start = MonotonicMicros();
  for (int64_t c = 1; c <= o.commits; ++c) {
    delta::AddFile add;
    add.path = fmt::format(
        "day=2024-01-{:02}/part-00000-{:08x}-0000-0000-0000-000000000000-c000"
        ".zstd.parquet",
        1 + c % 28, c);
    add.partition_values = {{"day", fmt::format("2024-01-{:02}", 1 + c % 28)}};
    add.size = 1000000 + c;
    add.modification_time = 1700000000000 + c;
    add.stats = fmt::format(
        R"({{"numRecords":10000,"minValues":{{"id":{},"body":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",)"
        R"("ts":"2024-01-01T00:00:00.000Z"}},"maxValues":{{"id":{},"body":"zzzzzzzzzzzzzzzzzzzz",)"
        R"("ts":"2024-01-01T23:59:59.999Z"}},"nullCount":{{"id":0,"body":12,"ts":0}}}})",
        c * 10000, c * 10000 + 9999);
    delta::Transaction txn(*table, std::move(snap));
    txn.Add(std::move(add));
    txn.SetPosition("ferry/kafka/events/0", c * 10000 + 9999);
    txn.SetOperation("STREAMING UPDATE", {{"outputMode", "Append"}});
    int64_t start = MonotonicMicros();
    auto result = txn.Commit();
    double ms = static_cast<double>(MonotonicMicros() - start) / 1000.0;
    if (!result.ok()) {
      fmt::print(stderr, "commit {}: {}\n", c, result.status().ToString());
      return 1;
    }
    all.push_back(ms);
    (result->checkpoint_version.has_value() ? with_checkpoint : plain).push_back(ms);
    snap = std::move(result->snapshot);
  }
  double build_s = static_cast<double>(MonotonicMicros() - build_start) / 1e6;
  fmt::print("table: {} commits, checkpoint every {}, {} (built in {:.1f} s)\n", o.commits,
             o.interval, dir, build_s);
  PrintLatencies("commit latency, all", all);
  PrintLatencies("commit latency, no checkpoint", plain);
  PrintLatencies("commit latency, with checkpoint", with_checkpoint);

  int rc = MeasureLoads(o, dir, store);
  if (!o.keep) {
    std::filesystem::remove_all(dir);
  }
  return rc;
}

int MeasureLoads(const Options& o, const std::string& dir,
                 const std::shared_ptr<storage::ObjectStore>& store) {
  int64_t v = 0;
  int64_t files = 0;
  double ms = TimeLoad(store, std::nullopt, 5, &v, &files);
  fmt::print("snapshot load, latest (v{}, {} files):      {:.1f} ms (median of 5)\n", v, files, ms);
  ms = TimeLoad(store, o.commits - 1, 5, &v, &files);
  fmt::print("snapshot load, v{} (checkpoint + {} commits): {:.1f} ms\n", v,
             (o.commits - 1) % o.interval, ms);
  ms = TimeLoad(store, o.commits / 2 + o.interval / 2, 5, &v, &files);
  fmt::print("snapshot load, time travel to v{}:          {:.1f} ms\n", v, ms);
  // No checkpoints: every commit's JSON is read. They are moved aside and back.
  std::string aside = dir + "/checkpoints-aside";
  std::filesystem::create_directories(aside);
  for (const auto& entry : std::filesystem::directory_iterator(dir + "/t/_delta_log")) {
    std::string name = entry.path().filename().string();
    if (name.find(".checkpoint.") != std::string::npos || name == "_last_checkpoint") {
      std::filesystem::rename(entry.path(), aside + "/" + name);
    }
  }
  ms = TimeLoad(store, std::nullopt, 3, &v, &files);
  fmt::print("snapshot load, latest without checkpoints:  {:.1f} ms (JSON replay of {} commits)\n",
             ms, v + 1);
  for (const auto& entry : std::filesystem::directory_iterator(aside)) {
    std::filesystem::rename(entry.path(),
                            dir + "/t/_delta_log/" + entry.path().filename().string());
  }
  std::filesystem::remove(aside);
  return 0;
}

}  // namespace
}  // namespace ferry

int main(int argc, char** argv) {
  ferry::Options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    bool has_value = i + 1 < argc;
    if (arg == "--commits" && has_value) {
      o.commits = std::atoll(argv[++i]);
    } else if (arg == "--interval" && has_value) {
      o.interval = std::atoll(argv[++i]);
    } else if (arg == "--dir" && has_value) {
      o.dir = argv[++i];
    } else if (arg == "--keep") {
      o.keep = true;
    } else {
      std::fprintf(stderr,
                   "usage: delta_log_bench [--commits N] [--interval K] [--dir DIR] [--keep]\n");
      return 2;
    }
  }
  if (o.commits < 2 || o.interval < 1) {
    std::fprintf(stderr, "--commits must be >= 2 and --interval >= 1\n");
    return 2;
  }
  return ferry::Run(o);
}
