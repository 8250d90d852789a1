// gcs_upload_memory: the peak memory of a large upload through GcsStore's atomic writer
// (docs/BENCHMARKS.md, "GCS tables"), the sibling of s3_upload_memory.cc. It starts a
// fake-gcs-server of its own (testing::FakeGcs: objects in its memory, `make setup-gcs`), opens
// gs://bench as `ferry run` would (OpenGcsStore with storage_emulator_host: anonymous), then for
// each size writes one object through OpenAtomicWriter in 1 MiB appends, as the Parquet writer
// streams a data file, and reports the process's peak RSS above its RSS before the upload
// (VmHWM, reset before each upload through /proc/self/clear_refs) against the bound of
// storage/gcs/gcs_store.h: a resumable upload takes one chunk (part) at a time, so about
// part_size x 2: the part in flight and the part being filled.
//
//   gcs_upload_memory [--sizes-mib 64,256,1024] [--part-mib 16] [--ferry-malloc]
//
// --ferry-malloc applies ferry's allocator settings (app/allocator.h), as `ferry run` does. The
// emulator keeps each object (and, while a resumable session is open, its chunks) in its own
// memory: its RSS is printed too, for the record, but it is not ferry's.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "ferry/app/allocator.h"
#include "ferry/storage/gcs/gcs_store.h"
#include "ferry/storage/table_uri.h"
#include "ferry/testing/fake_gcs.h"

namespace {

// A field of /proc/self/status in KiB ("VmRSS", "VmHWM").
int64_t StatusKb(const char* field) {
  std::ifstream in("/proc/self/status");
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
bool ResetPeak() {
  std::ofstream out("/proc/self/clear_refs");
  out << "5";
  return static_cast<bool>(out.flush());
}

std::vector<int64_t> ParseList(const std::string& text) {
  std::vector<int64_t> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    out.push_back(std::strtoll(item.c_str(), nullptr, 10));
  }
  return out;
}

// VmRSS of another process in KiB.
int64_t ProcessRssKb(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) {
      return std::strtoll(line.c_str() + 6, nullptr, 10);
    }
  }
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int64_t> sizes_mib = {64, 256, 1024};
  int64_t part_mib = 16;
  bool ferry_malloc = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--sizes-mib" && has_value) {
      sizes_mib = ParseList(argv[++i]);
    } else if (arg == "--part-mib" && has_value) {
      part_mib = std::strtoll(argv[++i], nullptr, 10);
    } else if (arg == "--ferry-malloc") {
      ferry_malloc = true;
    } else {
      fmt::print(stderr, "usage: {} [--sizes-mib 64,256,1024] [--part-mib 16] [--ferry-malloc]\n",
                 argv[0]);
      return 2;
    }
  }
  if (ferry_malloc && !ferry::app::TuneAllocator()) {
    fmt::print(stderr, "ferry's allocator settings were not applied\n");
  }
  auto start = std::chrono::steady_clock::now();
  auto gcs = ferry::testing::FakeGcs::Start();
  if (!gcs.ok()) {
    fmt::print(stderr, "fake-gcs-server: {}\n", gcs.status().ToString());
    return 1;
  }
  if (ferry::Status st = (*gcs)->CreateBucket("bench"); !st.ok()) {
    fmt::print(stderr, "create bucket: {}\n", st.ToString());
    return 1;
  }
  fmt::print("fake-gcs-server {} up in {:.1f} s at {}\n", ferry::testing::FakeGcs::Version(),
             std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
             (*gcs)->endpoint());
  auto location = ferry::storage::ParseTableUri("gs://bench/uploads");
  if (!location.ok()) {
    fmt::print(stderr, "location: {}\n", location.status().ToString());
    return 1;
  }
  ferry::storage::StorageOptions options = {{"storage_emulator_host", (*gcs)->endpoint()},
                                            {"upload_part_size", fmt::format("{}MiB", part_mib)}};
  auto store = ferry::storage::gcs::OpenGcsStore(*location, options);
  if (!store.ok()) {
    fmt::print(stderr, "store: {}\n", store.status().ToString());
    return 1;
  }
  // 1 MiB of random bytes, appended again and again (its pages are in the baseline).
  std::string chunk(1 << 20, '\0');
  std::mt19937_64 rng(42);
  for (size_t i = 0; i + 8 <= chunk.size(); i += 8) {
    uint64_t v = rng();
    std::memcpy(chunk.data() + i, &v, 8);
  }
  fmt::print(
      "part size {} MiB, 1 part in flight (a resumable session is sequential), allocator: {}\n",
      part_mib, ferry_malloc ? "ferry's settings" : "glibc defaults");
  fmt::print(
      "| file | upload s | MiB/s | RSS before MiB | peak RSS MiB | peak above before MiB | "
      "part x 2 MiB | emulator RSS after MiB |\n|---|---|---|---|---|---|---|---|\n");
  int status = 0;
  for (int64_t size_mib : sizes_mib) {
    const std::string key = fmt::format("upload-{}MiB", size_mib);
    if (!ResetPeak()) {
      fmt::print(stderr, "cannot reset the peak RSS (/proc/self/clear_refs)\n");
      return 1;
    }
    const int64_t before_kb = StatusKb("VmRSS");
    const auto t0 = std::chrono::steady_clock::now();
    auto writer = (*store)->OpenAtomicWriter(key);
    ferry::Status st = writer.status();
    for (int64_t i = 0; st.ok() && i < size_mib; ++i) {
      st = (*writer)->Append(chunk);
    }
    if (st.ok()) {
      st = (*writer)->Close();
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const int64_t peak_kb = StatusKb("VmHWM");
    const int64_t emulator_kb = ProcessRssKb((*gcs)->pid());
    if (!st.ok()) {
      fmt::print(stderr, "{}: {}\n", key, st.ToString());
      status = 1;
      continue;
    }
    auto info = (*store)->Stat(key);
    if (!info.ok() || info->size != static_cast<uint64_t>(size_mib) << 20) {
      fmt::print(stderr, "{}: stored size {} != {} MiB\n", key,
                 info.ok() ? std::to_string(info->size) : info.status().ToString(), size_mib);
      status = 1;
    }
    fmt::print("| {} MiB | {:.1f} | {:.0f} | {} | {} | {} | {} | {} |\n", size_mib, seconds,
               static_cast<double>(size_mib) / seconds, before_kb / 1024, peak_kb / 1024,
               (peak_kb - before_kb) / 1024, part_mib * 2, emulator_kb / 1024);
    std::fflush(stdout);
    if (ferry::Status removed = (*store)->Delete(key); !removed.ok()) {
      fmt::print(stderr, "delete {}: {}\n", key, removed.ToString());
    }
  }
  return status;
}
