// s3_upload_memory: the peak memory of a multipart upload through S3Store's writer
// (docs/BENCHMARKS.md, "S3 tables"). It starts a radosgw of its own
// (testing::RadosGw, memstore sized for the largest file), then for each size writes one object
// through OpenAtomicWriter in 1 MiB appends, as the Parquet writer streams a data file, and
// reports the process's peak RSS above its RSS before the upload (VmHWM, reset before each
// upload through /proc/self/clear_refs) against the bound of storage/s3/s3_store.h: about
// part_size x (parts_in_flight + 1): the part being filled and the parts in flight.
//
//   s3_upload_memory [--sizes-mib 64,256,1024] [--part-mib 16] [--in-flight 4] [--ferry-malloc]
//
// --ferry-malloc applies ferry's allocator settings (app/allocator.h: 16 MiB parts then stay in
// the heap instead of being unmapped when freed), as `ferry run` does.
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "ferry/app/allocator.h"
#include "ferry/storage/s3/s3_store.h"
#include "ferry/testing/radosgw.h"

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

}  // namespace

int main(int argc, char** argv) {
  std::vector<int64_t> sizes_mib = {64, 256, 1024};
  int64_t part_mib = 16;
  int64_t in_flight = 4;
  bool ferry_malloc = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--sizes-mib" && has_value) {
      sizes_mib = ParseList(argv[++i]);
    } else if (arg == "--part-mib" && has_value) {
      part_mib = std::strtoll(argv[++i], nullptr, 10);
    } else if (arg == "--in-flight" && has_value) {
      in_flight = std::strtoll(argv[++i], nullptr, 10);
    } else if (arg == "--ferry-malloc") {
      ferry_malloc = true;
    } else {
      fmt::print(stderr,
                 "usage: {} [--sizes-mib 64,256,1024] [--part-mib 16] [--in-flight 4] "
                 "[--ferry-malloc]\n",
                 argv[0]);
      return 2;
    }
  }
  if (ferry_malloc && !ferry::app::TuneAllocator()) {
    fmt::print(stderr, "ferry's allocator settings were not applied\n");
  }
  int64_t largest = 0;
  for (int64_t s : sizes_mib) {
    largest = std::max(largest, s);
  }
  // memstore keeps every object in the OSD's memory and refuses writes past ~95 %: room for the
  // largest object, its parts while they are assembled, and the pools' own objects.
  const int64_t memstore = (2 * largest + 512) << 20;
  auto start = std::chrono::steady_clock::now();
  auto rgw = ferry::testing::RadosGw::Start({.memstore_bytes = memstore});
  if (!rgw.ok()) {
    fmt::print(stderr, "radosgw: {}\n", rgw.status().ToString());
    return 1;
  }
  if (ferry::Status st = (*rgw)->CreateBucket("bench"); !st.ok()) {
    fmt::print(stderr, "create bucket: {}\n", st.ToString());
    return 1;
  }
  fmt::print("radosgw up in {:.1f} s, memstore {} MiB\n",
             std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
             memstore >> 20);
  ferry::storage::StorageOptions options = {{"aws_endpoint_url", (*rgw)->endpoint()},
                                            {"aws_access_key_id", (*rgw)->access_key()},
                                            {"aws_secret_access_key", (*rgw)->secret_key()},
                                            {"aws_region", (*rgw)->region()},
                                            {"aws_allow_http", "true"},
                                            {"upload_part_size", fmt::format("{}MiB", part_mib)},
                                            {"upload_parts_in_flight", std::to_string(in_flight)}};
  auto store = ferry::storage::s3::OpenS3Store("bench", "", options);
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
  const int64_t bound_in_flight = part_mib * in_flight;
  const int64_t bound_with_buffer = part_mib * (in_flight + 1);
  fmt::print("part size {} MiB, {} parts in flight, allocator: {}\n", part_mib, in_flight,
             ferry_malloc ? "ferry's settings" : "glibc defaults");
  fmt::print(
      "| file | upload s | MiB/s | RSS before MiB | peak RSS MiB | peak above before MiB | "
      "part x in flight MiB | part x (in flight + 1) MiB |\n|---|---|---|---|---|---|---|---|\n");
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
               (peak_kb - before_kb) / 1024, bound_in_flight, bound_with_buffer);
    std::fflush(stdout);
    if (ferry::Status removed = (*store)->Delete(key); !removed.ok()) {
      fmt::print(stderr, "delete {}: {}\n", key, removed.ToString());
    }
  }
  return status;
}
