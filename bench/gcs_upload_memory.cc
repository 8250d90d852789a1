// gcs_upload_memory: the peak memory of a large upload through GcsStore's atomic writer
// (docs/BENCHMARKS.md, "GCS tables"), the sibling of s3_upload_memory.cc. It starts a
// fake-gcs-server of its own (testing::FakeGcs: objects in its memory, `make setup-gcs`), opens
// gs://bench as `ferry run` would (OpenGcsStore with storage_emulator_host: anonymous), then
// measures uploads with the loop of upload_memory.h against the bound of
// storage/gcs/gcs_store.h: a resumable upload takes one chunk (part) at a time, so about
// part_size x 2: the part in flight and the part being filled.
//
//   gcs_upload_memory [--sizes-mib 64,256,1024] [--part-mib 16] [--ferry-malloc]
//
// --ferry-malloc applies ferry's allocator settings (app/allocator.h), as `ferry run` does. The
// emulator keeps each object (and, while a resumable session is open, its chunks) in its own
// memory: its RSS is printed too, for the record, but it is not ferry's.
#include <fmt/format.h>

#include <chrono>
#include <string>

#include "upload_memory.h"

#include "ferry/storage/gcs/gcs_store.h"
#include "ferry/storage/table_uri.h"
#include "ferry/testing/fake_gcs.h"

int main(int argc, char** argv) {
  std::optional<ferry::bench::UploadMemoryArgs> args =
      ferry::bench::ParseUploadMemoryArgs(argc, argv, /*with_in_flight=*/false);
  if (!args) {
    return 2;
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
  ferry::storage::StorageOptions options = {
      {"storage_emulator_host", (*gcs)->endpoint()},
      {"upload_part_size", fmt::format("{}MiB", args->part_mib)}};
  auto store = ferry::storage::gcs::OpenGcsStore(*location, options);
  if (!store.ok()) {
    fmt::print(stderr, "store: {}\n", store.status().ToString());
    return 1;
  }
  fmt::print(
      "part size {} MiB, 1 part in flight (a resumable session is sequential), allocator: {}\n",
      args->part_mib, args->ferry_malloc ? "ferry's settings" : "glibc defaults");
  const std::string emulator_pid = std::to_string((*gcs)->pid());
  return ferry::bench::MeasureUploads(**store, *args, "part x 2 MiB | emulator RSS after MiB", [&] {
    return fmt::format("{} | {}", args->part_mib * 2,
                       ferry::bench::StatusKb("VmRSS", emulator_pid) / 1024);
  });
}
