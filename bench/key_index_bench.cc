// Upsert key index benchmark (docs/BENCHMARKS.md, "Upserts"): the memory and CPU of the key
// index (pipeline/key_index.h) over a table of N keys, phase by phase:
//   rebuild  KeyIndex::Rebuild from the table's files (the key column of every file)
//   persist  encoding the index and writing its file beside the table: the caller's part (the
//            whole of it for the old index; the encoding for the new one)
//   write    waiting for the new index's writer thread to finish the file
//   free     destroying the rebuilt index
//   load     KeyIndex::Load from that file (no data file read)
//   free     destroying the loaded index
// For each: CPU seconds (user + sys, every thread, getrusage), wall seconds, RSS after it and
// its peak RSS (VmHWM, reset before each phase through /proc/self/clear_refs). CPU-seconds are
// the figure to compare on a shared machine.
//
//   cmake --build build/release --target key_index_bench
//   build/release/bench/key_index_bench --dir /tmp/kib --rows 10000000 --files 10
// The table (id BIGINT NOT NULL, n BIGINT; ids 0..N-1 in N/files-row files) is made on the first
// run and reused by the next ones with the same --dir (so that builds of two versions of the
// index can be compared on one table); --create-only makes it and exits.
#include <fmt/format.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "ferry/app/allocator.h"
#include "ferry/columnar/column.h"
#include "ferry/columnar/ddl.h"
#include "ferry/delta/table.h"
#include "ferry/delta/table_writer.h"
#include "ferry/delta/transaction.h"
#include "ferry/pipeline/change_keys.h"
#include "ferry/pipeline/key_index.h"
#include "ferry/storage/local_store.h"

#if __has_include("ferry/pipeline/key_table.h")
#define FERRY_BENCH_KEY_TABLE 1  // the index of key_table.h (one copy of each key)
#endif

namespace ferry {
namespace {

struct Options {
  std::string dir = "/tmp/ferry-key-index-bench";
  int64_t rows = 10'000'000;
  int64_t files = 10;
  bool create_only = false;
};

double CpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

// A field of /proc/self/status in MiB ("VmRSS", "VmHWM").
double StatusMiB(const std::string& field) {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.starts_with(field + ":")) {
      return std::stod(line.substr(field.size() + 1)) / 1024.0;
    }
  }
  return -1;
}

void ResetPeak() {
  std::ofstream("/proc/self/clear_refs") << "5";
}

struct Phase {
  std::string name;
  double cpu = 0;
  double wall = 0;
  double rss = 0;
  double peak = 0;
};

template <typename F>
Phase Measure(const std::string& name, F&& f) {
  ResetPeak();
  const double cpu = CpuSeconds();
  const auto start = std::chrono::steady_clock::now();
  f();
  return Phase{
      .name = name,
      .cpu = CpuSeconds() - cpu,
      .wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
      .rss = StatusMiB("VmRSS"),
      .peak = StatusMiB("VmHWM")};
}

void Check(const Status& st, const char* what) {
  if (!st.ok()) {
    fmt::print(stderr, "{}: {}\n", what, st.ToString());
    std::exit(1);
  }
}

Status CreateTable(const delta::Table& table, const Options& options) {
  auto schema = std::make_shared<const columnar::Schema>(
      *columnar::ParseDdlSchema("id BIGINT NOT NULL, n BIGINT"));
  FERRY_ASSIGN_OR_RETURN(delta::Snapshot snapshot, table.Create({.schema = schema}));
  const int64_t per_file = options.rows / options.files;
  for (int64_t f = 0; f < options.files; ++f) {
    delta::TableWriterOptions writer_options;
    writer_options.target_file_size = int64_t{1} << 40;
    FERRY_ASSIGN_OR_RETURN(auto writer,
                           delta::TableWriter::Create(table, snapshot, writer_options));
    constexpr int64_t kChunk = 1 << 20;
    const int64_t first = f * per_file;
    const int64_t end = f + 1 == options.files ? options.rows : first + per_file;
    for (int64_t begin = first; begin < end; begin += kChunk) {
      columnar::RecordBatch batch = columnar::RecordBatch::MakeEmpty(schema);
      auto* ids = static_cast<columnar::Int64Column*>(batch.mutable_column(0));
      auto* ns = static_cast<columnar::Int64Column*>(batch.mutable_column(1));
      for (int64_t id = begin; id < std::min(end, begin + kChunk); ++id) {
        ids->Append(id);
        ns->Append(id * 7);
      }
      FERRY_RETURN_IF_ERROR(writer->Write(batch));
    }
    FERRY_ASSIGN_OR_RETURN(std::vector<delta::AddFile> adds, writer->Finish());
    delta::Transaction txn(table, snapshot);
    txn.AddFiles(std::move(adds));
    FERRY_ASSIGN_OR_RETURN(delta::CommitResult result, txn.Commit());
    snapshot = std::move(result.snapshot);
  }
  return Status::OK();
}

int Main(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (arg == "--dir") {
      options.dir = next();
    } else if (arg == "--rows") {
      options.rows = std::stoll(next());
    } else if (arg == "--files") {
      options.files = std::stoll(next());
    } else if (arg == "--create-only") {
      options.create_only = true;
    } else {
      fmt::print(stderr,
                 "usage: key_index_bench [--dir DIR] [--rows N] [--files F] "
                 "[--create-only]\n");
      return 2;
    }
  }
  app::TuneAllocator();  // as `ferry run`
  std::filesystem::create_directories(options.dir);
  auto store = storage::LocalStore::Create(options.dir);
  Check(store.status(), "store");
  auto table = delta::Table::Open(std::shared_ptr<storage::ObjectStore>(std::move(*store)), "t");
  Check(table.status(), "table");
  if (!std::filesystem::exists(std::filesystem::path(options.dir) / "t" / "_delta_log")) {
    const auto start = std::chrono::steady_clock::now();
    Check(CreateTable(**table, options), "creating the table");
    fmt::print("created {} rows in {} files in {:.1f} s\n", options.rows, options.files,
               std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  if (options.create_only) {
    return 0;
  }
  auto snapshot = (*table)->LoadSnapshot();
  Check(snapshot.status(), "snapshot");
  auto keys = pipeline::ChangeKeys::Create(*snapshot->schema(), {"id"}, "");
  Check(keys.status(), "keys");
  const std::string name = "bench";
  (void)(*table)->store().Delete(pipeline::KeyIndex::IndexFileKey(**table, name));
  const double base_rss = StatusMiB("VmRSS");
  std::vector<Phase> phases;
#ifdef FERRY_BENCH_KEY_TABLE
  const char* version = "one copy of each key (key_table.h)";
  auto make = [&] {
    return std::make_unique<pipeline::KeyIndex>(*keys, pipeline::KeyIndexOptions{.name = name});
  };
  // Persist() encodes on the calling thread (the pipeline's writer thread) and hands the bytes
  // to the index's writer thread: "persist" is the caller's part, "write" waits for the rest.
  auto persist = [&](pipeline::KeyIndex& index) { index.Persist(**table, *snapshot); };
  auto wait = [&](pipeline::KeyIndex& index) { index.WaitForWrite(); };
  auto load = [&](pipeline::KeyIndex& index) { return index.Load(**table, *snapshot); };
#else
  const char* version = "unordered_map<string> + per-file strings";
  auto make = [&] { return std::make_unique<pipeline::KeyIndex>(*keys); };
  auto persist = [&](pipeline::KeyIndex& index) {
    Check(index.Persist(**table, *snapshot, name), "persist");
  };
  auto load = [&](pipeline::KeyIndex& index) { return index.Load(**table, *snapshot, name); };
  auto wait = [&](pipeline::KeyIndex&) {};
#endif
  std::unique_ptr<pipeline::KeyIndex> index = make();
  phases.push_back(
      Measure("rebuild", [&] { Check(index->Rebuild(**table, *snapshot), "rebuild"); }));
  const size_t keys_indexed = index->live_keys();
  phases.push_back(Measure("persist", [&] { persist(*index); }));
  phases.push_back(Measure("write", [&] { wait(*index); }));
  phases.push_back(Measure("free", [&] { index.reset(); }));
  index = make();
  phases.push_back(Measure("load", [&] { Check(load(*index), "load"); }));
  const bool loaded = !index->last_load().rebuilt;
  phases.push_back(Measure("free", [&] { index.reset(); }));
  auto file = (*table)->store().Stat(pipeline::KeyIndex::IndexFileKey(**table, name));
  fmt::print("key index: {}; {} keys ({} files); load {}; file {:.1f} MiB; RSS before {:.0f} MiB\n",
             version, keys_indexed, options.files, loaded ? "from the file" : "REBUILT",
             file.ok() ? static_cast<double>(file->size) / (1 << 20) : -1.0, base_rss);
  fmt::print("{:<8} {:>8} {:>8} {:>12} {:>12}\n", "phase", "cpu s", "wall s", "RSS MiB",
             "peak MiB");
  for (const Phase& p : phases) {
    fmt::print("{:<8} {:>8.2f} {:>8.2f} {:>12.0f} {:>12.0f}\n", p.name, p.cpu, p.wall, p.rss,
               p.peak);
  }
  return 0;
}

}  // namespace
}  // namespace ferry

int main(int argc, char** argv) {
  return ferry::Main(argc, argv);
}
