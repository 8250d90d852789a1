// The measuring loop that s3_upload_memory and gcs_upload_memory share (docs/BENCHMARKS.md):
// for each size, one object written through the store's OpenAtomicWriter in 1 MiB appends, as
// the Parquet writer streams a data file, and the process's peak RSS above its RSS before the
// upload (VmHWM, reset before each upload through /proc/self/clear_refs), printed as a Markdown
// table whose last columns each benchmark names (the bound of its store, an emulator's RSS).
// Each object's stored size is checked and the object deleted afterwards.
#pragma once

#include <fmt/format.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "ferry/app/allocator.h"
#include "ferry/storage/object_store.h"

namespace ferry::bench {

// A field of /proc/<pid>/status in KiB ("VmRSS", "VmHWM"); -1 when absent.
inline int64_t StatusKb(const char* field, const std::string& pid = "self") {
  std::ifstream in("/proc/" + pid + "/status");
  std::string line;
  const size_t n = std::strlen(field);
  while (std::getline(in, line)) {
    if (line.compare(0, n, field) == 0 && line.size() > n && line[n] == ':') {
      return std::strtoll(line.c_str() + n + 1, nullptr, 10);
    }
  }
  return -1;
}

// Resets VmHWM to the current RSS (Linux >= 4.0).
inline bool ResetPeak() {
  std::ofstream out("/proc/self/clear_refs");
  out << "5";
  return static_cast<bool>(out.flush());
}

struct UploadMemoryArgs {
  std::vector<int64_t> sizes_mib = {64, 256, 1024};
  int64_t part_mib = 16;
  int64_t in_flight = 4;  // only where the store has the knob (with_in_flight)
  bool ferry_malloc = false;
};

// [--sizes-mib 64,256,1024] [--part-mib 16] [--in-flight 4] [--ferry-malloc]; prints the usage
// and returns nullopt on anything else. --ferry-malloc applies ferry's allocator settings
// (app/allocator.h), as `ferry run` does.
inline std::optional<UploadMemoryArgs> ParseUploadMemoryArgs(int argc, char** argv,
                                                             bool with_in_flight) {
  auto list = [](const std::string& text) {
    std::vector<int64_t> out;
    std::stringstream in(text);
    std::string item;
    while (std::getline(in, item, ',')) {
      out.push_back(std::strtoll(item.c_str(), nullptr, 10));
    }
    return out;
  };
  UploadMemoryArgs args;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--sizes-mib" && has_value) {
      args.sizes_mib = list(argv[++i]);
    } else if (arg == "--part-mib" && has_value) {
      args.part_mib = std::strtoll(argv[++i], nullptr, 10);
    } else if (with_in_flight && arg == "--in-flight" && has_value) {
      args.in_flight = std::strtoll(argv[++i], nullptr, 10);
    } else if (arg == "--ferry-malloc") {
      args.ferry_malloc = true;
    } else {
      fmt::print(stderr, "usage: {} [--sizes-mib 64,256,1024] [--part-mib 16]{} [--ferry-malloc]\n",
                 argv[0], with_in_flight ? " [--in-flight 4]" : "");
      return std::nullopt;
    }
  }
  if (args.ferry_malloc && !app::TuneAllocator()) {
    fmt::print(stderr, "ferry's allocator settings were not applied\n");
  }
  return args;
}

// Writes, checks and deletes one object per size through `store` and prints a table row for
// each; `extra_headers` ("a MiB | b MiB") name the last columns, `extra_cells()` fills them after
// each upload. Returns the process's exit status: 0, or 1 when an upload failed.
inline int MeasureUploads(storage::ObjectStore& store, const UploadMemoryArgs& args,
                          const std::string& extra_headers,
                          const std::function<std::string()>& extra_cells) {
  // 1 MiB of random bytes, appended again and again (its pages are in the baseline).
  std::string chunk(1 << 20, '\0');
  std::mt19937_64 rng(42);
  for (size_t i = 0; i + 8 <= chunk.size(); i += 8) {
    uint64_t v = rng();
    std::memcpy(chunk.data() + i, &v, 8);
  }
  int columns = 6;
  for (char c : extra_headers) {
    columns += c == '|' ? 1 : 0;
  }
  ++columns;
  std::string rule = "|";
  for (int i = 0; i < columns; ++i) {
    rule += "---|";
  }
  fmt::print(
      "| file | upload s | MiB/s | RSS before MiB | peak RSS MiB | peak above before MiB | {} |\n"
      "{}\n",
      extra_headers, rule);
  int status = 0;
  for (int64_t size_mib : args.sizes_mib) {
    const std::string key = fmt::format("upload-{}MiB", size_mib);
    if (!ResetPeak()) {
      fmt::print(stderr, "cannot reset the peak RSS (/proc/self/clear_refs)\n");
      return 1;
    }
    const int64_t before_kb = StatusKb("VmRSS");
    const auto t0 = std::chrono::steady_clock::now();
    auto writer = store.OpenAtomicWriter(key);
    Status st = writer.status();
    for (int64_t i = 0; st.ok() && i < size_mib; ++i) {
      st = (*writer)->Append(chunk);
    }
    if (st.ok()) {
      st = (*writer)->Close();
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const int64_t peak_kb = StatusKb("VmHWM");
    const std::string extra = extra_cells();
    if (!st.ok()) {
      fmt::print(stderr, "{}: {}\n", key, st.ToString());
      status = 1;
      continue;
    }
    auto info = store.Stat(key);
    if (!info.ok() || info->size != static_cast<uint64_t>(size_mib) << 20) {
      fmt::print(stderr, "{}: stored size {} != {} MiB\n", key,
                 info.ok() ? std::to_string(info->size) : info.status().ToString(), size_mib);
      status = 1;
    }
    fmt::print("| {} MiB | {:.1f} | {:.0f} | {} | {} | {} | {} |\n", size_mib, seconds,
               static_cast<double>(size_mib) / seconds, before_kb / 1024, peak_kb / 1024,
               (peak_kb - before_kb) / 1024, extra);
    std::fflush(stdout);
    if (Status removed = store.Delete(key); !removed.ok()) {
      fmt::print(stderr, "delete {}: {}\n", key, removed.ToString());
    }
  }
  return status;
}

}  // namespace ferry::bench
